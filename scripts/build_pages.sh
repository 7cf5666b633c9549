#!/usr/bin/env bash
# Build the published leaderboard from the committed results store (leaderboard/) alone: no model,
# no dataset, no network. The Pages workflow (.github/workflows/pages.yml) runs exactly this, and
# tests/test_pages.py runs it on a fresh clone.
#   bash scripts/build_pages.sh [SITE]          (default SITE: site; the tables go to build/tables)
set -euo pipefail
cd "$(dirname "$0")/.."
site=${1:-site}
olmes=${OLMES:-olmes}
"$olmes" tables --store leaderboard --out build/tables
"$olmes" site --store leaderboard --tables build/tables --out "$site"
