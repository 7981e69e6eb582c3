#!/usr/bin/env bash
# Configures and builds the core, the kopt CLI, the addon and the tests into build/ (or $KOPT_BUILD_DIR).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
BUILD_DIR=${KOPT_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${KOPT_BUILD_TYPE:-Release} "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
