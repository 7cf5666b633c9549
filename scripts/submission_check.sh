#!/usr/bin/env bash
# The submission check (.github/workflows/submission.yml): verify a pull request's results store with
# the BASE branch's code, never the pull request's. Run from a clone that has both revisions:
#
#   scripts/submission_check.sh BASE_REF PR_REF
#
# 1. every path the PR changes (git diff --name-only BASE...PR) must lie in leaderboard/: a PR that
#    changes code (olmes/store/verify.py, a workflow, this script) and the store together would verify
#    itself, so it fails here in one line; code changes go in a separate PR;
# 2. a worktree of BASE (the code that verifies) gets the PR's leaderboard/ changes applied, only those;
# 3. a change of store.json's logprob_hosts (where the log-prob files are fetched from) is named;
# 4. $OLMES (default: olmes, the install of the base's checkout) fetches the store's log-prob files and
#    verifies the store against BASE, in the worktree.
# With $GITHUB_STEP_SUMMARY set, each line said here and verify's report go to the job summary.
# Exit status: 0 verified, 1 refused or a problem found.
set -euo pipefail

if [ "$#" -ne 2 ]; then
  echo "usage: scripts/submission_check.sh BASE_REF PR_REF" >&2
  exit 2
fi
base=$1
pr=$2
OLMES="${OLMES:-olmes}"
PYTHON="${PYTHON:-python3}"
summary="${GITHUB_STEP_SUMMARY:-}"

say() {
  echo "submission: $1"
  if [ -n "$summary" ]; then
    printf '%s\n\n' "$1" >>"$summary"
  fi
}

base_commit=$(git rev-parse --verify --quiet "$base^{commit}") || {
  say "the base revision '$base' is not a commit of this repository"
  exit 1
}
pr_commit=$(git rev-parse --verify --quiet "$pr^{commit}") || {
  say "the pull request's revision '$pr' is not a commit of this repository"
  exit 1
}

# 1. only leaderboard/ may change
outside=()
while IFS= read -r path; do
  case "$path" in
    leaderboard/*) ;;
    *) outside+=("$path") ;;
  esac
done < <(git diff --name-only "$base_commit...$pr_commit")
if [ "${#outside[@]}" -gt 0 ]; then
  shown=$(printf '%s, ' "${outside[@]:0:5}")
  shown=${shown%, }
  if [ "${#outside[@]}" -gt 5 ]; then
    shown="$shown and $((${#outside[@]} - 5)) more"
  fi
  say "refused: this pull request changes ${#outside[@]} path(s) outside leaderboard/ ($shown); a submission changes only leaderboard/, and is verified by the base branch's code: put code changes in a separate pull request"
  exit 1
fi

# 2. the base's code, the PR's store changes
work=$(mktemp -d "${TMPDIR:-/tmp}/olmes-submission.XXXXXX")
tree="$work/base"
cleanup() {
  git worktree remove --force "$tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add --quiet --detach "$tree" "$base_commit"
git diff --binary "$base_commit...$pr_commit" -- leaderboard >"$work/store.diff"
if [ -s "$work/store.diff" ] && ! git -C "$tree" apply --index --whitespace=nowarn "$work/store.diff"; then
  say "refused: the pull request's leaderboard/ changes do not apply onto the base ($base): rebase it onto the base branch"
  exit 1
fi

# 3. where the log-prob files come from
hosts() {
  git show "$1:leaderboard/store.json" 2>/dev/null | "$PYTHON" -c '
import json, sys
try:
    print(json.dumps(json.load(sys.stdin).get("logprob_hosts", [])))
except Exception:
    print("(store.json unreadable)")
' || true
}
old_hosts=$(hosts "$base_commit")
new_hosts=$(hosts "$pr_commit")
if [ "$old_hosts" != "$new_hosts" ]; then
  say "store.json's logprob_hosts change: $old_hosts -> $new_hosts (the log-prob files are fetched from the new hosts)"
fi

# 4. fetch, then verify with the base's code; a file not fetched is left to verify, which names it
cd "$tree"
$OLMES fetch-logprobs --store leaderboard || say "fetch-logprobs failed; verify names what is missing"
verify_summary=()
if [ -n "$summary" ]; then
  verify_summary=(--summary "$work/verify.md")
fi
status=0
$OLMES verify leaderboard --base "$base_commit" "${verify_summary[@]}" || status=$?
if [ -n "$summary" ] && [ -f "$work/verify.md" ]; then
  cat "$work/verify.md" >>"$summary"
fi
exit "$status"
