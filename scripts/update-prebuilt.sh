#!/usr/bin/env bash
# Rebuilds kopt.node from the current sources and stores it as the prebuilt the package ships
# (lib/native/linux-x64/kopt.node), with a record of the sources it came from. Commit both files.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { log "the shipped prebuilt is linux-x64; build on such a machine"; exit 1; }
bash scripts/setup-deps.sh
BUILD_DIR=${KOPT_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target kopt_addon
dest=lib/native/linux-x64
mkdir -p "$dest"
cp "$BUILD_DIR/kopt.node" "$dest/kopt.node.tmp" && mv "$dest/kopt.node.tmp" "$dest/kopt.node"
hash=$(bash scripts/prebuilt-hash.sh)
glibc=$(objdump -T "$dest/kopt.node" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1 || true)
cat > "$dest/kopt.node.json" <<JSON
{
  "sources": "$hash",
  "platform": "linux-x64",
  "napiVersion": 8,
  "requires": "${glibc:-unknown}",
  "compiler": "$(c++ --version | head -n 1)"
}
JSON
log "prebuilt updated: $dest/kopt.node (sources $hash)"
