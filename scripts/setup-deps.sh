#!/usr/bin/env bash
# Installs what building the core, CLI and addon needs: Debian packages (only the missing ones) and the
# npm devDependencies from the lockfile. Safe to run again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
# The core's list by default; each suite installs its own list (apt-evaluator, apt-browser, …) when it runs.
lists=("$KOPT_ROOT/scripts/deps/apt-core.txt")
if [ "$#" -gt 0 ]; then lists=(); for n in "$@"; do lists+=("$KOPT_ROOT/scripts/deps/apt-$n.txt"); done; fi
apt_install_lists "${lists[@]}"
if [ ! -f node_modules/node-addon-api/napi.h ] || [ ! -f node_modules/node-api-headers/include/node_api.h ]; then
  log "npm ci (build headers)"
  npm ci --ignore-scripts --no-audit --no-fund >/dev/null
fi
