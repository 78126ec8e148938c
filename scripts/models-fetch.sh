#!/usr/bin/env bash
# `pnpm models:fetch`: real dense models under .cache/models/<name>/ (see scripts/models/fetch.py).
# Idempotent: verified folders are kept, and then nothing is installed or downloaded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v python3 >/dev/null || { echo "models:fetch needs python3 (3.10+)" >&2; exit 2; }
exec python3 "$root/scripts/models/fetch.py" "$@"
