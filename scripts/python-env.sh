#!/usr/bin/env bash
# Creates (or reuses) the Python virtual environment .cache/py/NAME from scripts/python/NAME.txt, a pinned
# requirements file. Python is test and evaluation tooling only: the product never runs it.
#   scripts/python-env.sh models        -> prints the venv's python path on the last line
# The venv is rebuilt when its requirements file changes (a stamp holds the file's hash). Pins that pull
# torch go through `torch==2.13.0`, the CPU build that lies on these machines' disk (anything else pulls a
# CUDA build of several GB).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: scripts/python-env.sh NAME}
requirements="$root/scripts/python/$name.txt"
[[ -f "$requirements" ]] || { echo "no requirements file $requirements" >&2; exit 2; }
venv="$root/.cache/py/$name"
stamp="$venv/.requirements-sha256"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  command -v python3 >/dev/null || { echo "python3 is not installed: the $name tooling needs Python 3.10+" >&2; exit 2; }
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  echo "$want" > "$stamp"
fi
echo "$venv/bin/python"
