#!/usr/bin/env bash
# Installs what building and testing need: Debian packages (only the missing ones) and the
# npm devDependencies from the lockfile. Safe to run again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
lists=("$KOPT_ROOT"/scripts/deps/apt-*.txt)
if [ "$#" -gt 0 ]; then lists=(); for n in "$@"; do lists+=("$KOPT_ROOT/scripts/deps/apt-$n.txt"); done; fi
apt_install_lists "${lists[@]}"
if [ ! -f node_modules/node-addon-api/napi.h ] || [ ! -f node_modules/node-api-headers/include/node_api.h ]; then
  log "npm ci (build headers)"
  npm ci --ignore-scripts --no-audit --no-fund >/dev/null
fi
