#!/usr/bin/env bash
# Build the published leaderboard from the committed results store (leaderboard/) alone: no model,
# no dataset, no network. The Pages workflow (.github/workflows/pages.yml) runs exactly this, and
# tests/test_pages.py runs it on a fresh clone. The leaderboard has the OLMES paper's 40 models as
# reported rows (--reported), as the workflow's default target builds it.
#   bash scripts/build_pages.sh [SITE [STORE]]   (default SITE: site, STORE: leaderboard; the tables go
#                                                 to build/tables)
# An existing site in SITE is rebuilt incrementally: what no input of it changed is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
site=${1:-site}
store=${2:-leaderboard}
tables=${OLMES_TABLES_DIR:-build/tables}
olmes=${OLMES:-olmes}
"$olmes" tables --store "$store" --reported --out "$tables"
"$olmes" site --store "$store" --tables "$tables" --out "$site"
