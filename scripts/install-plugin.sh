#!/usr/bin/env bash
# Installs this plugin into your own DSH (README 「装进你自己的 DSH」, docs/install.md):
#   bash scripts/install-plugin.sh
# 1. the pinned host in .dsh-host/ (scripts/setup-host.sh: Node 22, pnpm 10, dsh, the HMR preload;
#    reused when complete; KOPT_HOST_DIR puts it elsewhere, .dsh-host/env.sh then points there);
# 2. the profile `web` in $DSH_HOME (default ~/.dsh): created on first use; its cordis.patch.yml turns
#    the host's `hmr` row on (the published host exits during boot without it), edited as YAML, other
#    entries kept;
# 3. `dsh plugin --profile web add file:<this folder>` unless the composed profile already has our rows
#    (asked structurally: scripts/host/profile.mjs reads `dsh --dump-config` as YAML);
# 4. the offline CLI build/kopt (`kopt report`, `kopt parse`), built from source when missing
#    (scripts/setup-deps.sh + the `kopt` target only; KOPT_NO_CLI=1 skips it);
# 5. kopt-bench, the evaluator the kernel_evaluate tool runs (docs/evaluator.md): when build-evaluator/ has
#    none, it offers to build it (LibTorch from Debian, ~10 min on 2 cores; KOPT_BUILD_EVALUATOR=1 builds
#    without asking, =0 skips; without a terminal it is skipped), then links it as
#    $DSH_HOME/kernel-opt/bin/kopt-bench, where the plugin looks for it.
# Afterwards: `. .dsh-host/env.sh` and `dsh web`. Re-running is safe.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KOPT_ROOT"
PROFILE=${KOPT_PROFILE:-web}

HOST_DIR=$(bash scripts/setup-host.sh | tail -n 1)
. "$HOST_DIR/env.sh"
command -v dsh >/dev/null || { log "no dsh launcher in $HOST_DIR/bin"; exit 1; }
export DSH_TELEMETRY_DISABLED=${DSH_TELEMETRY_DISABLED:-1}
DSH_DIR=${DSH_HOME:-$HOME/.dsh}
PROFILE_DIR="$DSH_DIR/profiles/$PROFILE"
HOST_MODULES="$HOST_DIR/dsh/node_modules"

[ -d "$PROFILE_DIR" ] || timeout 300 dsh --profile "$PROFILE" --dump-config >/dev/null
node scripts/host/profile.mjs "$HOST_MODULES" enable-hmr "$PROFILE_DIR/cordis.patch.yml"

if timeout 300 dsh --profile "$PROFILE" --dump-config 2>/dev/null | node scripts/host/profile.mjs "$HOST_MODULES" has-plugin >/dev/null; then
  log "the plugin is already in profile $PROFILE ($PROFILE_DIR)"
else
  log "dsh plugin --profile $PROFILE add file:$KOPT_ROOT"
  timeout 900 dsh plugin --profile "$PROFILE" add "file:$KOPT_ROOT" >/dev/null
  timeout 300 dsh --profile "$PROFILE" --dump-config 2>/dev/null | node scripts/host/profile.mjs "$HOST_MODULES" has-plugin >/dev/null ||
    { log "dsh plugin add ran, but profile $PROFILE still has no dsh-kernel-opt row"; exit 1; }
fi

if [ "${KOPT_NO_CLI:-0}" != 1 ] && [ ! -x build/kopt ]; then
  log "building the offline CLI build/kopt (scripts/setup-deps.sh, cmake --target kopt)"
  bash scripts/setup-deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target kopt -j"$(nproc)" >/dev/null
fi
BENCH=$KOPT_ROOT/build-evaluator/kopt-bench
if [ ! -x "$BENCH" ]; then
  want=${KOPT_BUILD_EVALUATOR:-}
  if [ -z "$want" ] && [ -t 0 ]; then
    read -r -p "[kopt] build kopt-bench, the evaluator of kernel_evaluate (LibTorch, ~10 min)? [y/N] " answer
    case "$answer" in [yY]*) want=1 ;; *) want=0 ;; esac
  fi
  if [ "$want" = 1 ]; then
    log "building kopt-bench (evaluator/, Debian packages from scripts/deps/apt-evaluator.txt)"
    apt_install_lists "$KOPT_ROOT/scripts/deps/apt-evaluator.txt"
    cmake -S evaluator -B build-evaluator -DCMAKE_BUILD_TYPE=Release -DKOPT_BENCH_TESTS=OFF >/dev/null
    cmake --build build-evaluator -j"$(nproc)" >/dev/null
  else
    log "kopt-bench not built: kernel_evaluate says how to build it (re-run with KOPT_BUILD_EVALUATOR=1)"
  fi
fi
if [ -x "$BENCH" ]; then
  mkdir -p "$DSH_DIR/kernel-opt/bin"
  ln -sfn "$BENCH" "$DSH_DIR/kernel-opt/bin/kopt-bench"
  log "kopt-bench linked: $DSH_DIR/kernel-opt/bin/kopt-bench -> $BENCH"
fi
log "done: . $HOST_DIR/env.sh && dsh web   (profile $PROFILE in $DSH_DIR; offline: build/kopt)"
