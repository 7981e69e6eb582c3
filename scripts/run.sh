#!/usr/bin/env bash
# The README's run command: from a fresh clone (Debian 12, root or sudo), one command
#   bash scripts/run.sh
# 1. sets up what is missing: Debian packages + the native build (scripts/setup-deps.sh,
#    scripts/build.sh) when no usable kopt.node is there, and the pinned DSH host (scripts/setup-host.sh,
#    .dsh-host/, reused when complete);
# 2. installs this plugin into a project-local DSH home .dsh-home/ (DSH_HOME; profile `web`, with the
#    hmr row docs/install.md requires) through scripts/install-plugin.sh;
# 3. seeds the recorded demo sessions (demo/kernel-opt-demo/ and its comparison partner demo/kernel-opt-demo-b/,
#    working folder demo/workspace/; demo/seed.mjs);
# 4. runs `dsh web` on 127.0.0.1 and prints the URL; Ctrl-C stops it (the whole process group).
# A second run reuses all of it. No API key is needed to look at the demo; with DEEPSEEK_API_KEY set,
# new sessions talk to the model as usual.
# Environment: KOPT_PORT (default 8787; without it the next free port is taken when 8787 is busy),
#   KOPT_HOST_DIR (host folder, see scripts/setup-host.sh), KOPT_REBUILD=1 (run setup-deps + build anyway),
#   KOPT_DEMO_RESEED=1 (replace the seeded demo sessions), KOPT_ADDON (a kopt.node to load),
#   KOPT_DSH_HOME (a DSH home other than .dsh-home/; the browser suite's demo walk runs in a fresh one).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
say() { printf '\033[1m[run]\033[0m %s\n' "$*" >&2; }

# ── 1. native core: the committed prebuilt when there is one, else a build from source ──
PREBUILT=lib/native/linux-x64/kopt.node
if [ "${KOPT_REBUILD:-0}" = 1 ] || { [ -z "${KOPT_ADDON:-}" ] && [ ! -f "$PREBUILT" ] && [ ! -f build/kopt.node ]; }; then
  say "building the native core (scripts/setup-deps.sh, scripts/build.sh)"
  bash scripts/setup-deps.sh
  bash scripts/build.sh
fi

# ── 2. the host (Node 22, pnpm 10, dsh) ──
HOST_DIR=$(bash scripts/setup-host.sh | tail -n 1)
. "$HOST_DIR/env.sh"
command -v dsh >/dev/null || { say "no dsh launcher in $HOST_DIR/bin"; exit 1; }

# ── 3. the project-local DSH home + this plugin ──
export DSH_HOME="${KOPT_DSH_HOME:-$KOPT_ROOT/.dsh-home}"
export DSH_TELEMETRY_DISABLED=1
if [ -z "${KOPT_ADDON:-}" ] && [ ! -f "$PREBUILT" ] && [ -f build/kopt.node ]; then export KOPT_ADDON="$KOPT_ROOT/build/kopt.node"; fi
mkdir -p "$DSH_HOME"
# profile `web` with the hmr row, then our plugin unless the composed profile already has its rows
# (asked as YAML by scripts/host/profile.mjs: the DSH home lies inside this checkout, so any text
# match on the checkout's name would always succeed); the offline CLI is not built here
KOPT_NO_CLI=1 KOPT_HOST_DIR="$HOST_DIR" bash scripts/install-plugin.sh

# ── 4. the demo sessions (the demo, and the second recording to compare it with) ──
DEMO_ID=$(node demo/seed.mjs "$DSH_HOME")
title() { node -p 'require(process.argv[1]).title' "$KOPT_ROOT/demo/$1/meta.json"; }
DEMO_TITLE=$(title kernel-opt-demo)
PARTNER_TITLE=$(title kernel-opt-demo-b)

# ── 5. a port on loopback ──
free_port() { node -e 'const s=require("net").createServer();s.once("error",()=>process.exit(1));s.listen(+process.argv[1],"127.0.0.1",()=>s.close(()=>process.exit(0)))' "$1"; }
if [ -n "${KOPT_PORT:-}" ]; then
  PORT=$KOPT_PORT
  free_port "$PORT" || { say "port $PORT on 127.0.0.1 is busy (KOPT_PORT)"; exit 1; }
else
  PORT=8787
  while ! free_port "$PORT"; do PORT=$((PORT + 1)); [ "$PORT" -lt 8887 ] || { say "no free port in 8787-8886; set KOPT_PORT"; exit 1; }; done
fi

# ── 6. dsh web, in its own process group; stopping this script stops all of it ──
[ -n "${DEEPSEEK_API_KEY:-}" ] || say "DEEPSEEK_API_KEY is not set: the demo opens; new sessions need a key"
set -m
dsh web --no-open --port "$PORT" &
WEB=$!
set +m
echo "$WEB" > "$DSH_HOME/web.pgid"
stop() {
  # ignore further signals while stopping (Ctrl-C may arrive twice, e.g. through `timeout`)
  trap '' INT TERM HUP
  trap - EXIT
  kill -TERM -- "-$WEB" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 -- "-$WEB" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$WEB" 2>/dev/null || true
  rm -f "$DSH_HOME/web.pgid"
}
trap 'stop; exit 130' INT TERM HUP
trap stop EXIT
# GET / answers before every route is registered: wait for the demo's series from the plugin route.
ready=0
for _ in $(seq 1 240); do
  curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/plugins/kernel-opt/series?sessionId=$DEMO_ID" 2>/dev/null && { ready=1; break; }
  kill -0 "$WEB" 2>/dev/null || { say "dsh web exited"; wait "$WEB" || true; exit 1; }
  sleep 0.5
done
[ "$ready" = 1 ] || say "warning: the plugin route /plugins/kernel-opt/series did not answer within 2 min (see the dsh web output above)"
cat >&2 <<MSG

  dsh-kernel-opt is running:  http://127.0.0.1:$PORT/
  demo session (算子优化模式): $DEMO_ID
    first visit: the beta notice 「内测声明」 → 「继续」 (continue); without DEEPSEEK_API_KEY the key dialog
    → 「稍后配置」 (configure later); then in the sidebar, folder workspace → «$DEMO_TITLE» (the
    upper one), tab 「评测」 (Evaluations). Below it, «$PARTNER_TITLE» is a second recording
    to compare with.
  DSH home: $DSH_HOME      stop: Ctrl-C

MSG
wait "$WEB"
