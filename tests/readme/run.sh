#!/usr/bin/env bash
# Follows the README literally: clone this repository (the current commit) into a temp folder, run
# the README's run command there (`bash scripts/run.sh`) in the background, wait until the web UI
# answers on 127.0.0.1, check that the demo session is listed and that its 评测 series has its points,
# then stop it (process groups) and exit 0/1. Loopback only; every step is bounded.
#   The clone is named dsh-kernel-opt, as `git clone` names it: the plugin must be installed even
#   though every path of the checkout (and of its DSH home) contains the plugin's name.
#   It reuses the host in $KOPT_HOST_DIR (default this checkout's .dsh-host/) when it is complete, so the clone
#   does not install Node/pnpm/dsh again; KOPT_README_FRESH_HOST=1 lets the clone install its own.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
say() { echo "[readme] $*"; }
t0=$SECONDS
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kopt-readme-XXXXXX")
RUN_PG=""
rc=1

# ── a free loopback port (not 8787, which a user's own run may hold) ──
busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=$((20000 + RANDOM % 20000))
while busy "$PORT"; do PORT=$((20000 + RANDOM % 20000)); done

cleanup() {
  trap - EXIT INT TERM
  if [ -n "$RUN_PG" ]; then
    kill -TERM -- "-$RUN_PG" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 -- "-$RUN_PG" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$RUN_PG" 2>/dev/null
  fi
  # dsh web runs in its own process group; scripts/run.sh records it and stops it on exit
  local web_pg
  web_pg=$(cat "$TMP/dsh-kernel-opt/.dsh-home/web.pgid" 2>/dev/null || true)
  if [ -n "$web_pg" ] && kill -0 -- "-$web_pg" 2>/dev/null; then
    say "dsh web still up after run.sh stopped; killing its group"
    kill -KILL -- "-$web_pg" 2>/dev/null
  fi
  if [ "$rc" -ne 0 ] && [ -f "$TMP/run.log" ]; then say "run.log (last 40 lines):"; tail -n 40 "$TMP/run.log"; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ── 1. git clone of the current commit ──
timeout 120 git clone -q --no-hardlinks "$ROOT" "$TMP/dsh-kernel-opt" || { say "git clone failed"; exit 1; }
say "cloned $(git -C "$TMP/dsh-kernel-opt" rev-parse --short HEAD) into $TMP/dsh-kernel-opt"

LIMIT=600
HOST_CAND=${KOPT_HOST_DIR:-$ROOT/.dsh-host}
if [ "${KOPT_README_FRESH_HOST:-0}" != 1 ] && [ -x "$HOST_CAND/bin/dsh" ] && [ -e "$HOST_CAND/dsh/node_modules/@deepseek-ai/dsh/lib/bin.js" ]; then
  export KOPT_HOST_DIR="$HOST_CAND"
  say "reusing the host in $KOPT_HOST_DIR"
else
  LIMIT=2400
  say "the clone installs its own host (up to $LIMIT s)"
fi

# ── 2. the README's run command, in the background, in its own process group ──
cd "$TMP/dsh-kernel-opt" || exit 1
KOPT_PORT=$PORT setsid timeout -k 10 "$LIMIT" bash scripts/run.sh > "$TMP/run.log" 2>&1 < /dev/null &
RUN_PG=$!
say "bash scripts/run.sh started (pgid $RUN_PG, port $PORT)"

# ── 3. wait for the web UI on loopback ──
up=0
for _ in $(seq 1 $((LIMIT * 2))); do
  if curl -fsS -o /dev/null --max-time 3 "http://127.0.0.1:$PORT/" 2>/dev/null && grep -q 'is running:' "$TMP/run.log"; then up=1; break; fi
  kill -0 "$RUN_PG" 2>/dev/null || break
  sleep 0.5
done
[ "$up" = 1 ] || { say "FAIL: the web UI did not answer on 127.0.0.1:$PORT"; exit 1; }
say "web UI answers on 127.0.0.1:$PORT after $((SECONDS - t0)) s"
grep -q "http://127.0.0.1:$PORT/" "$TMP/run.log" || { say "FAIL: run.sh did not print the URL"; exit 1; }
grep -q 'Ctrl-C' "$TMP/run.log" || { say "FAIL: run.sh did not say how to stop"; exit 1; }

# ── 4. the demo session: listed, and its series has the recorded points ──
HOST_ENV="${KOPT_HOST_DIR:-$TMP/dsh-kernel-opt/.dsh-host}/env.sh"
# shellcheck source=/dev/null
. "$HOST_ENV"   # Node 22 for the JSON checks below
DEMO_ID=$(node -p 'require(process.argv[1]).sessionId' "$TMP/dsh-kernel-opt/demo/kernel-opt-demo/meta.json")
api() { # retried: the API gateway may still be registering right after the UI answers
  local out
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    out=$(curl -fsS --max-time 15 "$@" 2>/dev/null) && { printf '%s' "$out"; return 0; }
    sleep 1
  done
  return 1
}
list=$(api -X POST "http://127.0.0.1:$PORT/api/session.list" -H "Host: 127.0.0.1:$PORT" \
  -H 'content-type: application/json' -d '{"type":"client-request","rpcId":"readme-1","method":"session.list","payload":{}}')
node -e '
  const [list, id, cwd] = process.argv.slice(1)
  const items = JSON.parse(list).result.value.items
  const it = items.find(s => s.sessionId === id)
  if (!it) { console.error("[readme] FAIL: demo session not listed: " + list.slice(0, 300)); process.exit(1) }
  if (it.agentPreset !== "kernel-opt" || it.cwd !== cwd) { console.error("[readme] FAIL: demo listed wrongly: " + JSON.stringify(it)); process.exit(1) }
' "$list" "$DEMO_ID" "$TMP/dsh-kernel-opt/demo/workspace" || exit 1
say "ok  the demo session $DEMO_ID is listed (kernel-opt, cwd demo/workspace)"
series=$(api -H "Host: 127.0.0.1:$PORT" "http://127.0.0.1:$PORT/plugins/kernel-opt/series?sessionId=$DEMO_ID")
node -e '
  const s = JSON.parse(process.argv[1]), pts = s.iterations || []
  const fail = m => { console.error("[readme] FAIL: " + m + ": " + process.argv[1].slice(0, 300)); process.exit(1) }
  if (pts.length < 5) fail("fewer than 5 points")
  if (!pts.some(p => p.correct === false && /error/.test(p.error || ""))) fail("no failing point with its compile error")
  // What the README says the demo shows: diffs from the host edit tool, a profile, supervisor notes, the finalize gap.
  if (pts.filter(p => (p.changes || []).some(c => c.tool === "edit" && c.kind === "edit")).length < 3) fail("fewer than 3 points with an edit diff")
  if (!(s.profileSeqs || []).length) fail("no profile (▲)")
  if (!(s.rounds || []).some(r => r.review && r.review !== "ok") || !(s.rounds || []).some(r => r.review === "ok" && r.reviewNote)) fail("no supervisor notes")
  if (!s.chart || !s.chart.final || typeof s.chart.final.gapPct !== "number") fail("no finalize gap on ⚑")
  if (!pts.some(p => p.channel === "replay" && p.tool === "kernel_finalize")) fail("no finalize re-measurement")
  // Every evaluation of the demo is measured by the plugin'"'"'s evaluator (kernel_evaluate), none relayed by the model.
  if (pts.filter(p => p.trust === "plugin").length < 4 || pts.some(p => p.trust === "self-reported")) fail("not every evaluation measured by the plugin'"'"'s evaluator")
  const ok = pts.filter(p => p.trust === "plugin" && p.correct && p.latencyMs > 0).map(p => p.latencyMs)
  if (ok.length < 3 || !(ok[ok.length - 1] < ok[0])) fail("no honest candidates that get faster")
  console.log("[readme] ok  /series: " + pts.length + " points (" + pts.map(p => p.correct === false ? "fail" : p.latencyMs).join(", ") + ")")
' "$series" || exit 1

# ── 5. stop it as Ctrl-C does (SIGINT to its process group); nothing may be left on the port ──
kill -INT -- "-$RUN_PG" 2>/dev/null
for _ in $(seq 1 100); do kill -0 -- "-$RUN_PG" 2>/dev/null || break; sleep 0.1; done
sleep 0.5
if busy "$PORT"; then say "FAIL: something still listens on 127.0.0.1:$PORT after stopping"; exit 1; fi
web_pg=$(cat "$TMP/dsh-kernel-opt/.dsh-home/web.pgid" 2>/dev/null || true)
if [ -n "$web_pg" ] && kill -0 -- "-$web_pg" 2>/dev/null; then say "FAIL: dsh web's process group survived"; exit 1; fi
say "ok  stopped: nothing left on the port"
RUN_PG=""
rc=0
say "PASS in $((SECONDS - t0)) s"
