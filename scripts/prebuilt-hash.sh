#!/usr/bin/env bash
# Prints the SHA-256 that identifies the sources of kopt.node: every file under include/, src/core/,
# src/addon/ plus CMakeLists.txt, lib/anchors.json (built into the core) and the binding headers' versions in package.json, by path and content.
# scripts/update-prebuilt.sh records it beside the prebuilt; scripts/check-prebuilt.sh compares.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  find include src/core src/addon -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.cc' \) | LC_ALL=C sort
  echo CMakeLists.txt
  echo lib/anchors.json
} | while read -r f; do printf '%s %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$f"; done > /tmp/kopt-prebuilt-hash.$$
grep -E '"node-(addon-api|api-headers)"' package.json | tr -d ' ,' >> /tmp/kopt-prebuilt-hash.$$
sha256sum /tmp/kopt-prebuilt-hash.$$ | cut -d' ' -f1
rm -f /tmp/kopt-prebuilt-hash.$$
