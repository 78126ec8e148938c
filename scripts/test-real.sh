#!/usr/bin/env bash
# `pnpm test:real`: installs every real component the *.real.test.ts suites use, then runs them with
# RAG_REQUIRE_REAL=1, so a component that cannot be installed fails the run instead of skipping.
#   - one Python virtual environment per scripts/python/NAME.txt (pinned wheels, under .cache/py/NAME)
#   - the real dense models of `pnpm models:fetch` (under .cache/models/NAME)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for requirements in scripts/python/*.txt; do
  name=$(basename "$requirements" .txt)
  echo "test:real: python environment $name" >&2
  scripts/python-env.sh "$name" >/dev/null
done
pnpm models:fetch
RAG_REQUIRE_REAL=1 LANCEDB_LOG=${LANCEDB_LOG:-error} exec pnpm exec vitest run -c vitest.real.config.ts "$@"
