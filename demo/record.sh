#!/usr/bin/env bash
# Re-records demo/kernel-opt-demo/session.jsonl.zstd (the demo session scripts/run.sh shows):
# real `dsh web` + this plugin + a scripted model on 127.0.0.1 whose bash calls run kopt-bench on a
# CPU relu kernel (demo/candidates/). Needs the host (scripts/setup-host.sh) and kopt-bench
# (cmake -S evaluator -B build-evaluator). Loopback only; bounded by timeouts.
#   KOPT_BENCH_CACHE   kopt-bench's compile cache (reuse one with a warm precompiled header: the first
#                      compile takes ~1.5 min on 2 cores; with it the whole recording takes ~20-80 s)
#   KOPT_DEMO_KEEP=1   keep the scratch folder (host logs, the workspace after the run)
# The recording runs under danger-full-access (no approval prompts) and ends with
# `/permission workspace-write`, so the demo, continued with a real key, asks as usual.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
HOST_DIR=$(bash scripts/setup-host.sh | tail -n 1)
. "$HOST_DIR/env.sh"
BENCH_DIR=${KOPT_BENCH_DIR:-$ROOT/build-evaluator}
if [ ! -x "$BENCH_DIR/kopt-bench" ]; then
  cmake -S evaluator -B build-evaluator -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build-evaluator -j"$(nproc)"
  BENCH_DIR=$ROOT/build-evaluator
fi
command -v zstd >/dev/null || { echo "[record] zstd is required"; exit 1; }
KOPT_HOST_DIR="$HOST_DIR" KOPT_BENCH_DIR="$BENCH_DIR" timeout -k 10 1300 node demo/record.mjs
if [ -x build/kopt ]; then build/kopt project demo/kernel-opt-demo/session.jsonl.zstd | head -c 400; echo; fi
