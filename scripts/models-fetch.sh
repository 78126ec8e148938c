#!/usr/bin/env bash
# `pnpm models:fetch`: real models under .cache/models/<name>/: the dense embedders (scripts/models/fetch.py),
# then llama.cpp's server and its GGUF models (scripts/models/gguf/fetch_gguf.py).
# Idempotent: verified folders are kept, and then nothing is installed or downloaded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v python3 >/dev/null || { echo "models:fetch needs python3 (3.10+)" >&2; exit 2; }
python3 "$root/scripts/models/fetch.py" "$@"
exec python3 "$root/scripts/models/gguf/fetch_gguf.py"
