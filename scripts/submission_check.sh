#!/usr/bin/env bash
# The submission check (.github/workflows/submission.yml): verify a pull request's results store with
# the BASE branch's code, never the pull request's. Run from a clone that has both revisions:
#
#   scripts/submission_check.sh BASE_REF PR_REF
#
# 1. `olmes check-submission` (the base's install): every path the PR changes (renames as a deletion and an
#    addition) must be a file of a model folder at a place the store's layout defines, a task file olmes
#    makes, or a row of the README's table of store results; anything else (code, workflows, dotfiles,
#    locks, leftovers, store.json, reproductions/, links, submodules) is refused in one line, before
#    anything of the PR is fetched, applied or run (olmes/store/submission.py);
# 2. a worktree of BASE (the code that verifies) gets the PR's accepted changes applied, only those;
# 3. $OLMES (default: olmes, the install of the base's checkout) fetches the store's log-prob files and
#    verifies the store against BASE, in the worktree.
# 4. with $OLMES_REPRODUCE_LIMIT set (the workflow: 5), each model the PR adds or changes is reproduced on
#    this machine: its first N instances of every task recomputed from the named weights and compared
#    with the PR's log-probs (olmes reproduce), where its weights fit ($OLMES_REPRODUCE_MAX_GB, default
#    3: a float32 copy of 3 GB of weights in the runner's 16 GB), else why not is said; DIFFERS refuses.
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

# 1. only the paths a submission may change
if ! accepted=$($OLMES check-submission "$base_commit" "$pr_commit" 2>&1); then
  say "${accepted#olmes: error: }"
  exit 1
fi
while IFS= read -r line; do
  say "${line#olmes: check-submission: }"
done <<<"$accepted"

# 2. the base's code, the PR's store changes
work=$(mktemp -d "${TMPDIR:-/tmp}/olmes-submission.XXXXXX")
tree="$work/base"
cleanup() {
  git worktree remove --force "$tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add --quiet --detach "$tree" "$base_commit"
git diff --binary --no-renames "$base_commit...$pr_commit" -- leaderboard README.md >"$work/store.diff"
if [ -s "$work/store.diff" ] && ! git -C "$tree" apply --index --whitespace=nowarn "$work/store.diff"; then
  say "refused: the pull request's changes do not apply onto the base ($base): rebase it onto the base branch"
  exit 1
fi

# 3. fetch, then verify with the base's code; a file not fetched is left to verify, which names it
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
if [ "$status" -ne 0 ] || [ -z "${OLMES_REPRODUCE_LIMIT:-}" ]; then
  exit "$status"
fi

# 4. reproduce a sample of each model the PR adds or changes, where its weights fit this machine
models=$(git -C "$tree" diff --cached --name-only --no-renames "$base_commit" -- leaderboard/models |
  cut -d/ -f3 | sort -u)
for model in $models; do
  [ -f "leaderboard/models/$model/model.json" ] || continue
  if ! $OLMES reproduce "$model" --store leaderboard --limit "$OLMES_REPRODUCE_LIMIT" \
    --max-weights-gb "${OLMES_REPRODUCE_MAX_GB:-3}" --workdir "$work/reproduce/$model" \
    --output "$work/reproduce/$model.json" 2>"$work/reproduce.log"; then
    say "reproduce $model failed: $(tail -n 1 "$work/reproduce.log")"
    status=1
    continue
  fi
  while IFS= read -r line; do
    say "$line"
  done < <(grep -v '^olmes: loaded\|^Loading' "$work/reproduce.log")
  if grep -q '"verdict": "DIFFERS"' "$work/reproduce/$model.json" 2>/dev/null; then
    say "refused: $model's log-probs are not those its weights give here (reproduce: DIFFERS)"
    status=1
  fi
done
exit "$status"
