#!/usr/bin/env bash
# kopt-bench's GPU check: one prepared command for a machine with an NVIDIA GPU, nvcc and a python3
# whose torch has CUDA — the device tool's image as it is (torch 2.11.0+cu130 in /opt/torch/.venv,
# nvcc 13.0, CMake, ninja; no internet, none of our Debian packages; runs as root).
#   bash evaluator/tests/device/run.sh --prepare   here, once: downloads the Debian packages the image
#       lacks (nlohmann-json3-dev, bubblewrap, libseccomp-dev and their libraries) into .device-prep/
#       (git-ignored), the folder the device call carries
#   bash evaluator/tests/device/run.sh             there (carry .device-prep): unpacks them with
#       dpkg -x into the build folder, finds torch through python3, checks nvcc's CUDA major against
#       torch's, builds with TORCH_CXX_FLAGS everywhere and Landlock's library folders (and with
#       -DKOPT_PYTHON=that python3, for KernelBench-format Python solutions), and runs every GPU check,
#       the Python solutions of candidates/python/ last; stops itself within KOPT_DEVICE_BUDGET_S
#       (default 420 s; the 8-minute limit)
#   bash evaluator/tests/device/run.sh --dry-run   here, no GPU: the same steps on a fake virtual-
#       environment layout (a venv over Debian's CPU torch, a pip-style nvidia/cu13/lib holding the
#       toolkit's libcupti), built with KOPT_BENCH_CUDA=TOOLKIT, one confined CPU evaluation; each GPU
#       check is then named SKIP (needs a GPU)
# Writes $OUT/device-check.log, summary.json, summary.md (and clocks.csv, build-failure.log when
# there are some); OUT defaults to ./device-out. One line "CHECK name: PASS|FAIL|SKIP detail" per check,
# "STEP name: N s" per step; the last line "device check: N passed, M failed, K skipped". Exit: 0 when
# nothing failed (and, on a device, every check was reached), 1 otherwise, 2 when there is no CUDA device.
# Env: PY (python with torch; default python3), NVCC, CUDA_ARCH (default: the GPU's, e.g. 90), BUILD
# (default build-evaluator-gpu), KOPT_DEVICE_BUDGET_S.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE="$ROOT/evaluator/tests/device"
TESTS="$ROOT/evaluator/tests"
FIX="$TESTS/fixtures"
C="$HERE/candidates"
PREP="$ROOT/.device-prep"
# What the image lacks, as Debian packages (unpacked, never installed): the JSON header, bubblewrap
# and the libraries it links, libseccomp (its static library is linked into the runner).
PREP_PKGS=(nlohmann-json3-dev bubblewrap libcap2 libselinux1 libpcre2-8-0 libseccomp2 libseccomp-dev)
. "$TESTS/cuda-env.sh"
. "$TESTS/checks.sh"

MODE=device
case "${1:-}" in
  --prepare) MODE=prepare ;;
  --dry-run) MODE=dry ;;
  "") ;;
  *) echo "usage: $0 [--prepare | --dry-run]" >&2; exit 64 ;;
esac

if [ $MODE = prepare ]; then
  mkdir -p "$PREP/debs" && rm -f "$PREP"/debs/*.deb
  (cd "$PREP/debs" && apt-get download "${PREP_PKGS[@]}") || { echo "prepare: apt-get download failed"; exit 1; }
  (cd "$PREP/debs" && sha256sum ./*.deb) > "$PREP/MANIFEST"
  echo "prepared $(ls "$PREP"/debs/*.deb | wc -l) packages, $(du -sh "$PREP" | cut -f1), in $PREP:"
  sed 's/^/  /' "$PREP/MANIFEST"
  echo "carry it: the device call names .device-prep in carry and runs: bash evaluator/tests/device/run.sh"
  exit 0
fi

OUT=${OUT:-$ROOT/device-out}
BUILD=${BUILD:-$ROOT/build-evaluator-gpu}
mkdir -p "$OUT" "$BUILD"
exec > >(tee "$OUT/device-check.log") 2>&1
TEE_PID=$!
WORK=$(mktemp -d /tmp/kopt-device.XXXXXX)
export KOPT_CHECKS_TSV="$WORK/checks.tsv"
: > "$KOPT_CHECKS_TSV"; : > "$WORK/figures.tsv"; : > "$WORK/steps.tsv"
T_START=$(date +%s)
# The budget is the device's (8 minutes a command there); a dry run on 2 cores builds for minutes.
BUDGET=${KOPT_DEVICE_BUDGET_S:-$([ $MODE = dry ] && echo 3600 || echo 420)}
DEADLINE=$((T_START + BUDGET))
STEP="" STEP_T0=$T_START WHY_NOT=""
CACHE="$WORK/cache"

# Every check this script can report, in order: whatever was not reached is reported SKIP with the
# reason in WHY_NOT (no GPU, dry run, a failed build, the budget spent), never left out.
EXPECTED=(prepared cuda_major_match bwrap_namespaces build python_build abi_flags_everywhere cuda_half_linked landlock_library_dirs
  cuda_unit honest_relu_kernel honest_plain_cu honest_cublas cached_eval limits_probe limits_cached clocks_nvml noise_intervals confinement_gpu cupti_used cupti_vs_events
  side_stream_counted_cupti side_stream_counted_no_cupti async_unsynced cheat_l2_persist cheat_l2_persist_no_cupti
  cheat_host_cache cpu_cheats_cuda_build stability_spread no_throttle device_time_floor
  python_torch_ops python_load_inline_cuda python_triton python_cheat)

figure() { printf '%s\t%s\n' "$1" "$2" >> "$WORK/figures.tsv"; echo "FIGURE $1 = $2"; }
left() { echo $((DEADLINE - $(date +%s))); }
step() { # name: closes the previous step (its time), starts this one; false when the budget is spent
  local now; now=$(date +%s)
  if [ -n "$STEP" ]; then echo "STEP $STEP: $((now - STEP_T0)) s"; printf '%s\t%s\n' "$STEP" "$((now - STEP_T0))" >> "$WORK/steps.tsv"; fi
  STEP=$1 STEP_T0=$now
  [ "$1" = end ] && return 0
  echo "== $1 ($((now - T_START)) s in, $(left) s left)"
  if [ "$(left)" -le 0 ]; then WHY_NOT="out of time: the budget of $BUDGET s was spent before this step"; return 1; fi
}
ok() { [ "$1" = 1 ] && echo 0 || echo 1; }             # python's 1/0 -> a check status
pyc() { "$PY" -c "$1" 2>/dev/null || echo 0; }          # a python expression printing 1 or 0
since() { echo $(($(date +%s) - $1)); }
first() { local f; for f in "$@"; do [ -e "$f" ] && { echo "$f"; return 0; }; done; return 1; }  # in argument order

finish() { # [exit status]: the summary; exits 0 when nothing failed (on a device: and every check was reached), else 1
  local name unreached=0
  step end
  for name in "${EXPECTED[@]}"; do
    grep -q "^$name	" "$KOPT_CHECKS_TSV" || { skip "$name" "(not run: ${WHY_NOT:-not reached})"; unreached=$((unreached + 1)); }
  done
  figure total_s "$(since "$T_START")"
  "$PY" - "$KOPT_CHECKS_TSV" "$WORK/figures.tsv" "$WORK/steps.tsv" "$OUT" "$MODE" <<'PYEOF' || true
import json, sys
rows = lambda p: [l.rstrip('\n').split('\t') for l in open(p) if l.strip()]
checks, figs, steps = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
out, mode = sys.argv[4], sys.argv[5]
doc = {"mode": mode, "checks": [{"name": c[0], "result": c[1], "detail": c[2]} for c in checks],
       "figures": {f[0]: f[1] for f in figs}, "steps_s": {s[0]: int(s[1]) for s in steps}}
json.dump(doc, open(out + "/summary.json", "w"), indent=1)
with open(out + "/summary.md", "w") as f:
    f.write("# kopt-bench device check (%s)\n\n| check | result | detail |\n|---|---|---|\n" % mode)
    for c in checks: f.write("| %s | %s | %s |\n" % (c[0], c[1], c[2].replace('|', '/')))
    f.write("\n| figure | value |\n|---|---|\n")
    for k, v in figs: f.write("| %s | %s |\n" % (k, v.replace('|', '/')))
    f.write("\n| step | s |\n|---|---|\n")
    for k, v in steps: f.write("| %s | %s |\n" % (k, v))
PYEOF
  echo "device check: $KOPT_PASS passed, $KOPT_FAIL failed, $KOPT_SKIP skipped ($MODE; $OUT/summary.md)"
  local rc=0
  [ "$KOPT_FAIL" -eq 0 ] || rc=1
  [ $MODE = device ] && [ "$unreached" -gt 0 ] && rc=1
  exit "${1:-$rc}"
}
cleanup() { rm -rf "$WORK"; exec 1>&- 2>&-; wait "$TEE_PID" 2>/dev/null; }
trap cleanup EXIT

# ---------- the machine ----------
step machine
echo "mode $MODE; repository $ROOT; $(uname -srm); $(nproc) cores; user $(id -un)"
have_gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi
if [ $have_gpu -eq 1 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
  figure gpu "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
fi
if [ $MODE = dry ]; then
  # A fake virtual environment over the python that holds torch here (Debian's python3-torch, a CPU
  # build), laid out as the image's: a venv whose python3 finds torch, and a pip-style nvidia/cu13/lib
  # package folder holding CUPTI (the toolkit's libcupti, linked).
  base_py=""
  for p in "${PY:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import torch' 2>/dev/null && { base_py=$(command -v "$p"); break; }
  done
  [ -n "$base_py" ] || { echo "dry run: no python with torch here (apt install python3-torch)"; PY=python3; WHY_NOT="no torch"; finish; }
  venv="$BUILD/fake-venv"
  [ -x "$venv/bin/python3" ] || "$base_py" -m venv --system-site-packages --without-pip "$venv" || { PY=python3; WHY_NOT="venv failed"; finish; }
  PY="$venv/bin/python3"
  site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  nv=$(kopt_find_nvcc) && for f in "$(kopt_cuda_root "$nv")"/lib64/libcupti.so*; do
    mkdir -p "$site/nvidia/cu13/lib" && ln -sf "$f" "$site/nvidia/cu13/lib/"
  done
  echo "dry run: fake venv $venv over $base_py; nvidia package folder $site/nvidia"
else
  PY=${PY:-python3}
fi
# The python's own bin folder first (a venv's cmake and ninja live there).
PATH="$(dirname "$(command -v "$PY")"):$PATH"
# Its path as given (a venv's python3, not the file the link resolves to): CMake's KOPT_PYTHON, the
# interpreter kopt-bench embeds for Python solutions and runs for their build stage and the export.
PY_ABS=$(command -v "$PY" || echo "$PY")
if [ $MODE = device ] && [ $have_gpu -eq 0 ]; then
  echo "NO CUDA DEVICE: nvidia-smi finds no GPU; the device check cannot run here (--dry-run checks what can be)"
  WHY_NOT="no CUDA device on this machine"
  finish 2
fi
for t in cmake ninja g++ readelf nm; do printf '%s: %s\n' "$t" "$(command -v $t || echo MISSING)"; done

# ---------- what the image lacks: the prepared Debian packages, unpacked (dpkg -x), never installed ----------
step unpack
PREFIX="$BUILD/prep-root"
debs=("$PREP"/debs/*.deb)
missing_pkgs=()
for p in "${PREP_PKGS[@]}"; do ls "$PREP"/debs/"${p}"_*.deb >/dev/null 2>&1 || missing_pkgs+=("$p"); done
rm -rf "$PREFIX"; mkdir -p "$PREFIX"
urc=0
if [ -e "${debs[0]}" ]; then
  (cd "$PREP/debs" && sha256sum -c --quiet ../MANIFEST) || urc=1
  for d in "${debs[@]}"; do dpkg -x "$d" "$PREFIX" || urc=1; done
fi
NL_INC=$(dirname "$(dirname "$(first "$PREFIX"/usr/include/nlohmann/json.hpp /usr/include/nlohmann/json.hpp)")")
SECCOMP_A=$(first "$PREFIX"/usr/lib/*/libseccomp.a)
SECCOMP_H=$(first "$PREFIX"/usr/include/seccomp.h)
BWRAP_BIN=$(first "$PREFIX"/usr/bin/bwrap)
check prepared "$([ $urc -eq 0 ] && [ ${#missing_pkgs[@]} -eq 0 ] && [ "$NL_INC" != . ] && [ -n "$SECCOMP_A" ] && [ -n "$BWRAP_BIN" ] && echo 0 || echo 1)" \
  "(${#debs[@]} .deb from $PREP unpacked into $PREFIX${missing_pkgs[*]:+; missing: ${missing_pkgs[*]} (run --prepare here and carry .device-prep)}; json.hpp in ${NL_INC}; libseccomp.a ${SECCOMP_A:-none}; bwrap ${BWRAP_BIN:-none})"
# bubblewrap from the package, with the libraries it needs from the unpacked ones when the machine
# lacks them: through the dynamic loader's --library-path (set for bwrap alone, not inherited).
BWRAP=""
if [ -n "$BWRAP_BIN" ]; then
  BWRAP=$BWRAP_BIN
  deps=$(ldd "$BWRAP_BIN" 2>&1)
  if grep -q 'not found' <<< "$deps"; then
    libs=$(ls -d "$PREFIX"/lib/*-linux-gnu "$PREFIX"/usr/lib/*-linux-gnu 2>/dev/null | tr '\n' ':')
    loader=$(first /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1)
    BWRAP="$PREFIX/bwrap"
    printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$loader" "${libs%:}" "$BWRAP_BIN" > "$BWRAP"
    chmod +x "$BWRAP"
    echo "bwrap lacks libraries here ($(grep 'not found' <<< "$deps" | awk '{print $1}' | tr '\n' ' ')): through $BWRAP"
  fi
fi

# ---------- torch through python3, the toolkit, their CUDA majors ----------
step torch
"$PY" - > "$WORK/torch.env" <<'PYEOF'
import os, shlex, torch, torch.utils
def say(k, v): print("%s=%s" % (k, shlex.quote(str(v))))
say("TORCH_VERSION", torch.__version__)
say("TORCH_CUDA", torch.version.cuda or "")
say("TORCH_PREFIX", torch.utils.cmake_prefix_path)
say("TORCH_DIR", os.path.dirname(os.path.realpath(torch.__file__)))
say("TORCH_ABI", int(torch._C._GLIBCXX_USE_CXX11_ABI))
dirs = []
try:
    import nvidia
    dirs = sorted({os.path.realpath(p) for p in nvidia.__path__})
except ImportError:
    pass
say("NVIDIA_DIRS", ";".join(dirs))
say("GPU_ARCH", "%d%d" % torch.cuda.get_device_capability(0) if torch.cuda.is_available() else "")
PYEOF
[ -s "$WORK/torch.env" ] || { echo "no torch in $PY"; WHY_NOT="python3 ($PY) cannot import torch"; finish; }
# shellcheck disable=SC1091
. "$WORK/torch.env"
NVCC=$(kopt_find_nvcc) || NVCC=""
CUDA_ROOT="" NVCC_VER=""
if [ -n "$NVCC" ]; then CUDA_ROOT=$(kopt_cuda_root "$NVCC"); NVCC_VER=$(kopt_nvcc_version "$NVCC"); fi
figure torch "$TORCH_VERSION (CUDA ${TORCH_CUDA:-none}, cxx11 ABI $TORCH_ABI) at $TORCH_DIR via $PY"
figure nvcc "${NVCC:-none} (CUDA ${NVCC_VER:-?})"
if [ $MODE = dry ] && [ -z "$TORCH_CUDA" ]; then
  skip cuda_major_match "(torch here is a CPU build: nvcc $NVCC_VER has nothing to match; on the device torch's CUDA major is compared with nvcc's)"
else
  check cuda_major_match "$([ -n "$NVCC_VER" ] && [ "${NVCC_VER%%.*}" = "${TORCH_CUDA%%.*}" ] && echo 0 || echo 1)" \
    "(nvcc ${NVCC_VER:-not found} vs torch's CUDA ${TORCH_CUDA:-none}: one libcudart per process only when the majors agree)"
fi
[ -n "$NVCC" ] || { WHY_NOT="no nvcc on this machine"; finish; }
# CUPTI for the runner (dlopened after Landlock: its folder goes on LD_LIBRARY_PATH, which the
# runner's Landlock list includes): the pip package's beside torch first (the copy torch itself would
# load), else the toolkit's.
cupti_globs=()
IFS=';' read -r -a nvdirs <<< "$NVIDIA_DIRS"
for d in "${nvdirs[@]}"; do cupti_globs+=("$d"/*/lib/libcupti.so*); done
cupti_globs+=("$CUDA_ROOT"/extras/CUPTI/lib64/libcupti.so* "$CUDA_ROOT"/lib64/libcupti.so*)
CUPTI_DIR=$(dirname "$(first "${cupti_globs[@]}")")
figure cupti_dir "$CUPTI_DIR"
[ "$CUPTI_DIR" = . ] || export LD_LIBRARY_PATH="$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---------- bubblewrap's namespaces on this machine ----------
step bwrap
if [ -n "$BWRAP" ]; then
  "$BWRAP" --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev true > "$WORK/bwrap.log" 2>&1
  rc=$?
  check bwrap_namespaces $rc "($BWRAP --unshare-all ... true: exit $rc $(head -c 200 "$WORK/bwrap.log"))"
else
  rc=1
  check bwrap_namespaces 1 "(no bubblewrap: not prepared)"
fi
# kopt-bench refuses to run with less confinement than promised; where this machine has no working
# namespaces (the check above fails), the rest of the run still checks the GPU by asking for less,
# and the isolation checks below report what it got.
WEAKER=()
[ "$rc" -eq 0 ] || WEAKER=(--allow-weaker-isolation)

# ---------- the build ----------
step build
if [ $MODE = dry ]; then CUDA_MODE=TOOLKIT; ARCH=${CUDA_ARCH:-90}; else CUDA_MODE=ON; ARCH=${CUDA_ARCH:-${GPU_ARCH:-90}}; fi
LIBDIRS="$TORCH_DIR${NVIDIA_DIRS:+;$NVIDIA_DIRS}"
cfg=(-S "$ROOT/evaluator" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKOPT_BENCH_TESTS=OFF -DKOPT_BENCH_CUDA="$CUDA_MODE"
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DCUDAToolkit_ROOT="$CUDA_ROOT" -DKOPT_BENCH_CUDA_ARCHS="$ARCH"
  -DKOPT_BENCH_LIBRARY_DIRS="$LIBDIRS" -DKOPT_BENCH_BWRAP="$BWRAP" -DKOPT_PYTHON="$PY_ABS")
[ $CUDA_MODE = ON ] && cfg+=(-DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="$ARCH")
[ "$NL_INC" != . ] && [ "$NL_INC" != /usr/include ] && cfg+=(-DKOPT_NLOHMANN_INCLUDE="$NL_INC")
[ -n "$SECCOMP_A" ] && [ -n "$SECCOMP_H" ] && cfg+=(-DKOPT_SECCOMP_LIB="$SECCOMP_A" -DKOPT_SECCOMP_INCLUDE="$(dirname "$SECCOMP_H")")
command -v ninja >/dev/null && [ ! -f "$BUILD/CMakeCache.txt" ] && cfg+=(-G Ninja)
targets=(kopt-bench kopt-bench-worker kopt-bench-runner)
if [ $CUDA_MODE = ON ]; then targets+=(kopt_bench_cuda_test); else targets+=(kopt_bench_cuda_nodevice); fi
t0=$(date +%s)
cmake "${cfg[@]}" > "$WORK/configure.log" 2>&1
rc=$?
grep -E 'kopt-bench:|CUDA detected|Caffe2: CUDA|libcudart' "$WORK/configure.log" | sed 's/^/  /'
brc=1
if [ $rc -eq 0 ]; then
  timeout "$(( $(left) > 60 ? $(left) : 60 ))" cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}" > "$WORK/build.log" 2>&1
  brc=$?
fi
if [ $rc -ne 0 ] || [ $brc -ne 0 ]; then
  cat "$WORK/configure.log" "$WORK/build.log" 2>/dev/null | tail -300 > "$OUT/build-failure.log"
  tail -40 "$WORK/configure.log"; [ $rc -eq 0 ] && tail -40 "$WORK/build.log"
fi
check build "$([ $rc -eq 0 ] && [ $brc -eq 0 ] && echo 0 || echo 1)" \
  "(KOPT_BENCH_CUDA=$CUDA_MODE, sm_$ARCH, configure exit $rc, build exit $brc, $(since "$t0") s; targets ${targets[*]})"
figure build_s "$(since "$t0")"
# Python solutions: CMake embeds KOPT_PYTHON only with its development files (Python.h, libpython;
# find_package(Python3 ... Development.Embed)) and says so in one line. When they are OFF, the Python
# checks at the end are reported FAIL with this reason, not skipped.
PY_ON=0 PY_WHY=""
if [ $rc -eq 0 ]; then
  grep -q 'kopt-bench: Python solutions ON' "$WORK/configure.log" && PY_ON=1
  py_line=$(grep -m1 'kopt-bench: Python solutions' "$WORK/configure.log" | sed 's/^-- //')
  py_dev=$("$PY_ABS" -c '
import os, sysconfig as s
inc = s.get_paths()["include"]; lib = os.path.join(s.get_config_var("LIBDIR") or "?", s.get_config_var("LDLIBRARY") or "?")
have = lambda p: "present" if os.path.exists(p) else "MISSING"
print("Python %s; %s/Python.h %s; %s %s" % (s.get_python_version(), inc, have(os.path.join(inc, "Python.h")), lib, have(lib)))' 2>&1 | tail -1)
  PY_WHY="${py_line:-no \"kopt-bench: Python solutions\" line in the configure log}; $py_dev"
  figure python "$PY_ABS: $PY_WHY"
  check python_build "$([ $PY_ON = 1 ] && echo 0 || echo 1)" "(configured with -DKOPT_PYTHON=$PY_ABS: $PY_WHY)"
fi
B="$BUILD/kopt-bench"
if [ $rc -ne 0 ] || [ $brc -ne 0 ]; then WHY_NOT="the build failed (build-failure.log)"; finish; fi
"$B" --version | head -3
kopt_check_abi_flags "$BUILD"
kopt_check_cuda_linked "$BUILD" "${NVCC_VER%%.*}"

bench() { # ref, inputs, solution, extra args...: one kopt-bench evaluation, its output on stdout; killed
  # after 240 s, or 30 s past the budget, whichever comes first
  local ref=$1 inp=$2 sol=$3 lim; shift 3
  lim=$(($(left) + 30)); [ "$lim" -lt 240 ] || lim=240; [ "$lim" -gt 10 ] || lim=10
  timeout "$lim" "$B" --ref "$FIX/$ref" --inputs "$inp" --solution "$sol" --cache-dir "$CACHE" "${WEAKER[@]}" "$@" 2>&1
}
# KernelBench-format Python solutions (candidates/python/): the problem is relu_problem.py itself,
# exported by kopt-bench (no --inputs: the judge draws the inputs on the device from the exported spec).
PYC="$C/python"
pybench() { # solution file in candidates/python, extra args...: as bench
  local sol=$1 lim; shift
  lim=$(($(left) + 30)); [ "$lim" -lt 240 ] || lim=240; [ "$lim" -gt 10 ] || lim=10
  timeout "$lim" "$B" --ref "$PYC/relu_problem.py" --solution "$PYC/$sol" --cache-dir "$CACHE" "${WEAKER[@]}" "$@" 2>&1
}
# The confinement an evaluation reported (native_metrics.isolation), against what this run expects:
# bubblewrap's namespaces, seccomp, Landlock applied with the library folders of torch, of its nvidia
# packages, of the toolkit and of CUPTI, and with gpu=1 the /dev/nvidia* nodes bound. Prints
# "0 detail" when all hold, else "1 detail".
isolation_verdict() { # output of an evaluation, gpu (1|0)
  echo "$1" | "$PY" -c '
import json, sys
want, gpu = [p for p in sys.argv[1].split(";") if p and p != "."], sys.argv[2] == "1"
ls = [l for l in sys.stdin.read().splitlines() if l.startswith("KERNEL_EVAL=")]
if not ls: print("1 (no KERNEL_EVAL line)"); sys.exit()
i = json.loads(ls[-1][len("KERNEL_EVAL="):]).get("native_metrics", {}).get("isolation", {})
L = i.get("landlock", {})
nodes = i.get("device_nodes", [])
miss = [p for p in want if p not in L.get("library_dirs", [])]
bad = [w for w, b in (("not namespaces", i.get("level") != "namespaces"), ("no seccomp", i.get("seccomp") is not True),
                      ("landlock not applied", bool(L.get("problem")) or not L.get("rules")),
                      ("no /dev/nvidia* bound", gpu and not any(n.startswith("/dev/nvidia") for n in nodes))) if b]
print("%d (level %s, seccomp %s, landlock abi %s with %s rules%s; device nodes %s%s%s)" % (
    int(bool(miss or bad)), i.get("level"), i.get("seccomp"), L.get("abi"), L.get("rules"),
    ", problem: %s" % L["problem"] if L.get("problem") else "", " ".join(nodes) or "none",
    "; missing from library_dirs: " + " ".join(miss) if miss else "", "; " + ", ".join(bad) if bad else ""))
' "$LIBDIRS;$CUDA_ROOT;$CUPTI_DIR" "$2"
}

if [ $MODE = dry ]; then
  step confined_cpu_eval
  out=$(bench relu.pt "$FIX/relu.json" "$TESTS/honest/relu_loop.cpp" --device cpu --no-timing --baseline "$WORK/b-cpu.json")
  code=$?
  v=$(isolation_verdict "$out" 0)
  correct=$(echo "$out" | kopt_field "int(d['correct'] is True)")
  check landlock_library_dirs "$([ $code -eq 0 ] && [ "$correct" = 1 ] && [ "${v%% *}" = 0 ] && echo 0 || echo 1)" \
    "(a confined CPU evaluation through this build: exit $code, correct $correct; ${v#* })"
  [ "$code" -eq 0 ] || echo "$out" | tail -15
  # Here only (not on the device, where the real build compiles them): the translation units only a
  # LibTorch with CUDA compiles, and the no-device units in place of cuda_unit.
  step torch_cuda_syntax
  kopt_check_torch_cuda_syntax "$BUILD" "$CUDA_ROOT" src/cuda_stream.cpp src/guards.cpp tests/device/cuda_timer_test.cpp
  step nodevice_units
  KOPT_EXPECT_CUPTI=1 timeout 60 "$BUILD/kopt_bench_cuda_nodevice" > "$WORK/unit.log" 2>&1
  rc=$?; sed 's/^/  /' "$WORK/unit.log"
  check nodevice_units $rc "(kopt_bench_cuda_nodevice: exit $rc, $(grep -c ': PASS' "$WORK/unit.log") passed, $(grep -c ': FAIL' "$WORK/unit.log") failed; the no-device path, in place of cuda_unit)"
  WHY_NOT="needs a GPU: dry run"
  finish
fi

# ================= on the GPU =================
step cuda_unit
timeout 120 "$BUILD/kopt_bench_cuda_test" > "$WORK/unit.log" 2>&1
rc=$?; sed 's/^/  /' "$WORK/unit.log"
check cuda_unit $rc "(kopt_bench_cuda_test: $(grep -c ': PASS' "$WORK/unit.log") passed, $(grep -c ': FAIL' "$WORK/unit.log") failed; checked calls, RAII, side-stream and current-stream timing with and without CUPTI, persisting L2, snapshot)"

# Compile every GPU candidate once, in parallel (nvcc with torch's headers takes tens of seconds each),
# so the timed evaluations below reuse the cache. The first one alone: it also builds the precompiled header.
if step warm_compile; then
  bench relu.pt "$FIX/relu.json" "$TESTS/cheats/pointer_replay.cpp" --device cpu --no-timing --baseline "$WORK/w0.json" > "$WORK/w0.out"
  i=0
  for sol in "$C/relu_kernel.cu" "$C/plain_cu/op.cpp,$C/plain_cu/relu.cu" "$C/confine_probe.cu" "$C/side_stream.cu" \
             "$C/deferred_launch.cu" "$C/l2_persist.cu" "$C/host_cache.cu"; do
    i=$((i + 1)); bench relu.pt "$HERE/relu_big.json" "$sol" --device cuda --no-timing --baseline "$WORK/w$i.json" > "$WORK/w$i.out" &
  done
  bench matmul_k.pt "$FIX/matmul_k.json" "$C/matmul_cublas.cpp" --device cuda --no-timing --baseline "$WORK/wm.json" > "$WORK/wm.out" &
  for c in deferred_thread alias_output; do
    bench relu.pt "$FIX/relu.json" "$TESTS/cheats/$c.cpp" --device cpu --no-timing --baseline "$WORK/wc-$c.json" > "$WORK/wc-$c.out" &
  done
  # The Python solutions' build stage (the problem's export, load_inline's nvcc, about a minute; Triton's
  # JIT), one after another beside the C++ compiles: the python_* checks at the end then find them cached.
  if [ "$PY_ON" = 1 ]; then
    (for s in relu_inline_cuda relu_triton relu_torch pointer_replay; do
       pybench "$s.py" --device cuda --no-timing --baseline "$WORK/wpy-$s.json" > "$WORK/wpy-$s.out"
     done) &
  fi
  wait
  grep -h '^COMPILED' "$WORK"/w*.out | sort | uniq -c | sed 's/^/  /'
fi

if step honest; then
  honest() { # name, ref, inputs, solution
    local t out code
    t=$(date +%s); out=$(bench "$2" "$3" "$4" --device cuda --baseline "$WORK/b-$1.json"); code=$?
    echo "$out" | grep -E '^(COMPILED|CORRECT|TIMER|RUNTIME|KERNEL_TIME|REWARD_HACK|ERROR|ADVISORY)' | sed 's/^/  /'
    echo "$out" > "$WORK/honest-$1.out"
    local good; good=$(echo "$out" | kopt_field "int(d['correct'] is True and not d.get('reward_hacks'))")
    check "honest_$1" "$([ $code -eq 0 ] && [ "$good" = 1 ] && echo 0 || echo 1)" \
      "(exit $code; $(echo "$out" | kopt_field "'%s ms (reference %s ms), timer %s' % (d.get('latency_ms'), d['native_metrics'].get('ref_runtime_ms'), d['native_metrics'].get('timer'))"); $(since "$t") s)"
  }
  honest relu_kernel relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu"
  honest plain_cu relu.pt "$HERE/relu_big.json" "$C/plain_cu/op.cpp,$C/plain_cu/relu.cu"
  honest cublas matmul_k.pt "$FIX/matmul_k.json" "$C/matmul_cublas.cpp"
  HONEST_MS=$(kopt_field "d.get('latency_ms')" < "$WORK/honest-relu_kernel.out")
  t=$(date +%s); bench relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu" --device cuda --baseline "$WORK/b-relu_kernel.json" > "$WORK/cached.out"
  rc=$?
  check cached_eval $rc "(the whole evaluation with the candidate and reference cached: $(since "$t") s)"
  # Issue 49: the machine's limits on the GPU (bandwidth_probe_cuda.cpp; never run on a device before):
  # the probed copy bandwidth within reach of the properties' peak, a fraction for the point, the probe
  # cached for the next evaluation, and NVML's SM clock read around the timing.
  LIM=$(kopt_field "json.dumps([d['native_metrics'].get('machine_limits', {}), d['native_metrics'].get('bandwidth_fraction'), d['native_metrics']['stage_ms'].get('probing the machine')])" < "$WORK/honest-relu_kernel.out")
  check limits_probe "$(ok "$(pyc "import json; ml,f,ms=json.loads('''$LIM'''); bw,pk=ml.get('bandwidth_gbps',0),ml.get('peak_bandwidth_gbps',0); print(int(bw>0 and pk>0 and 0.3<bw/pk<=1.05 and 'failed' not in ml.get('bandwidth_method','') and f is not None and 0<f<1.5))")")" "($LIM)"
  figure limits_gbps "$(pyc "import json; print(json.loads('''$LIM''')[0].get('bandwidth_gbps'))")"
  check limits_cached "$(ok "$(kopt_field "int(d['native_metrics']['machine_limits']['source'].startswith('cached') and d['native_metrics']['stage_ms']['probing the machine'] < 50)" < "$WORK/cached.out")")" "($(kopt_field "d['native_metrics']['machine_limits']['source']" < "$WORK/cached.out"))"
  check clocks_nvml "$(ok "$(kopt_field "int(d['native_metrics']['clocks'].get('before',{}).get('mhz',0) > 0)" < "$WORK/honest-relu_kernel.out")")" "($(kopt_field "json.dumps(d['native_metrics'].get('clocks'))" < "$WORK/honest-relu_kernel.out"))"
  # Issue 49: the intervals on a GPU evaluation, as printed (fresh reference, then the frozen one's ci95_ms):
  # each line "1 ..." when latency_ci_ms holds latency_ms, reference_ci_ms holds latency x speedup and samples = trials.
  NOISE_V=$(for f in honest-relu_kernel cached; do kopt_noise_line "$f" < "$WORK/$f.out"; done)
  check noise_intervals "$(echo "$NOISE_V" | grep -qv '^1 ' && echo 1 || echo 0)" "($(echo $NOISE_V))"
  figure honest_relu_ms "$HONEST_MS"
fi

if step confinement; then
  v=$(isolation_verdict "$(cat "$WORK/honest-relu_kernel.out" 2>/dev/null)" 1)
  check landlock_library_dirs "${v%% *}" "(the honest GPU evaluation's isolation: ${v#* })"
  rm -f /var/tmp/kopt-confine-probe
  out=$(bench relu.pt "$HERE/relu_big.json" "$C/confine_probe.cu" --device cuda --no-timing --baseline "$WORK/b-probe.json"); code=$?
  pv=$(isolation_verdict "$out" 1)
  correct=$(echo "$out" | kopt_field "int(d['correct'] is True)")
  leaked=0; [ -e /var/tmp/kopt-confine-probe ] && leaked=1
  check confinement_gpu "$([ $code -eq 0 ] && [ "$correct" = 1 ] && [ $leaked -eq 0 ] && [ "${pv%% *}" = 0 ] && echo 0 || echo 1)" \
    "(a GPU kernel under the sandbox that also tries /var/tmp and /proc/1/environ: exit $code, correct $correct (doubled if anything escaped), file outside scratch $([ $leaked -eq 1 ] && echo CREATED || echo absent); ${pv#* })"
  rm -f /var/tmp/kopt-confine-probe
fi

if step cupti_vs_events; then
  cu=$(cat "$WORK/honest-relu_kernel.out" 2>/dev/null)
  ev=$(KOPT_BENCH_NO_CUPTI=1 bench relu.pt "$HERE/relu_big.json" "$C/relu_kernel.cu" --device cuda --baseline "$WORK/b-event.json")
  timer=$(echo "$cu" | kopt_field "d['native_metrics'].get('timer')")
  kern=$(echo "$cu" | kopt_field "d['native_metrics'].get('kernel_ms', -1)")
  launches=$(echo "$cu" | kopt_field "d['native_metrics'].get('launches', -1)")
  evt=$(echo "$ev" | kopt_field "d.get('latency_ms', -1)")
  evtimer=$(echo "$ev" | kopt_field "d['native_metrics'].get('timer')")
  figure cupti_kernel_ms "$kern (launches per call $launches)"
  figure event_latency_ms "$evt (timer $evtimer)"
  check cupti_used "$([ "$timer" = cupti ] && echo 0 || echo 1)" "(timer=$timer; $(echo "$cu" | grep -m1 '^TIMER'))"
  check cupti_vs_events "$(ok "$(pyc "k,e=float('$kern'),float('$evt');print(int(k>0 and e>0 and 0.5<k/e<=1.05 and '$evtimer'=='cuda_event'))")")" \
    "(CUPTI kernel-only $kern ms / CUDA-event time $evt ms without CUPTI; expect (0.5, 1.05])"
fi

if step side_streams; then
  for mode in cupti no_cupti; do
    nc=0; [ $mode = no_cupti ] && nc=1
    out=$(KOPT_BENCH_NO_CUPTI=$nc bench relu.pt "$HERE/relu_big.json" "$C/side_stream.cu" --device cuda --baseline "$WORK/b-side-$mode.json")
    echo "$out" | grep -E '^(CORRECT|TIMER|RUNTIME|REWARD_HACK|ADVISORY)' | sed 's/^/  /'
    sms=$(echo "$out" | kopt_field "d.get('latency_ms')")
    figure "side_stream_ms_$mode" "$sms (honest same-size kernel $HONEST_MS)"
    check "side_stream_counted_$mode" "$(ok "$(pyc "print(int(float('$sms') >= 0.8 * float('$HONEST_MS')))")")" \
      "(work only on a private stream: $sms ms vs the honest kernel's $HONEST_MS ms; must be >= 0.8x)"
  done
fi

if step async_unsynced; then
  out=$(bench relu.pt "$HERE/relu_big.json" "$C/deferred_launch.cu" --device cuda --baseline "$WORK/b-async.json"); code=$?
  echo "$out" | grep -E '^(CORRECT|TIMER|RUNTIME|REWARD_HACK|ERROR)' | sed 's/^/  /'
  r=$(echo "$out" | kopt_field "'%d %s %s' % (int(d['correct'] is True), d.get('latency_ms'), bool(d.get('reward_hacks')))")
  read -r acorrect ams ahack <<< "$r"
  fast=$(pyc "print(int('$acorrect' == '1' and float('$ams') < 0.8 * float('$HONEST_MS')))")
  check async_unsynced "$([ "$acorrect" != ERR ] && [ "$fast" = 0 ] && echo 0 || echo 1)" \
    "(a kernel launched later from a host thread, unsynchronized: exit $code, correct $acorrect, $ams ms vs honest $HONEST_MS ms, reward hack $ahack; must not be correct and faster)"
fi

if step gpu_cheats; then
  flagged() { # name, expected reward-hack text ("" = any incorrect verdict), solution, KOPT_BENCH_NO_CUPTI value
    local out code f
    out=$(KOPT_BENCH_NO_CUPTI=$4 bench relu.pt "$HERE/relu_big.json" "$3" --device cuda --baseline "$WORK/b-$1.json"); code=$?
    echo "$out" | grep -E '^(CORRECT|TIMER|REWARD_HACK|ERROR|ADVISORY)' | sed 's/^/  /'
    f=$(echo "$out" | kopt_field "int(d['correct'] is False and ('$2' == '' or any('$2' in h for h in d.get('reward_hacks', []))))")
    check "cheat_$1" "$([ "$f" = 1 ] && [ $code -ne 0 ] && echo 0 || echo 1)" "(exit $code; expects CORRECT False${2:+ and a reward hack naming \"$2\"})"
  }
  flagged l2_persist "L2 persistence" "$C/l2_persist.cu" 0
  flagged l2_persist_no_cupti "L2 persistence" "$C/l2_persist.cu" 1
  flagged host_cache "" "$C/host_cache.cu" 1
fi

if step cpu_cheats; then
  caught=0 n=0 names=""
  for c in pointer_replay deferred_thread alias_output; do
    out=$(bench relu.pt "$FIX/relu.json" "$TESTS/cheats/$c.cpp" --device cpu --max-time 5 --baseline "$WORK/b-cpu-$c.json"); code=$?
    n=$((n + 1)); f=$(echo "$out" | kopt_field "int(d['correct'] is False)")
    if [ "$f" = 1 ] && [ $code -ne 0 ]; then caught=$((caught + 1)); else names+=" $c"; fi
  done
  check cpu_cheats_cuda_build "$([ $caught -eq $n ] && echo 0 || echo 1)" "(CPU cheats judged by the CUDA build with --device cpu: $caught of $n caught${names:+; passed:$names})"
fi

if step stability; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown \
    --format=csv,noheader -lms 250 > "$WORK/clocks.csv" 2>/dev/null &
  smi=$!
  : > "$WORK/stab.txt"
  runs=${KOPT_STABILITY_RUNS:-6}
  for i in $(seq 1 "$runs"); do
    [ "$(left)" -gt 20 ] || { echo "  stopping the spread runs early: $(left) s left"; break; }
    o=$(bench relu.pt "$HERE/relu_stab.json" "$C/relu_kernel.cu" --device cuda --max-trials 50 --baseline "$WORK/b-stab.json")
    v=$(echo "$o" | kopt_field "'%s %s' % (d.get('latency_ms'), d['native_metrics'].get('trials'))")
    echo "  run $i: latency_ms trials = $v"; echo "$v" >> "$WORK/stab.txt"
  done
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  read -r med cv maxtr nruns <<< "$("$PY" - "$WORK/stab.txt" <<'PYEOF'
import sys, statistics as s
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
lat = [float(r[0]) for r in rows if r[0] not in ('None', 'ERR')]
tr = [int(r[1]) for r in rows if len(r) > 1 and r[1] not in ('None', 'ERR')]
if len(lat) < 2 or not tr: print('nan nan 0 %d' % len(lat)); sys.exit()
print('%.5f %.3f %d %d' % (s.median(lat), 100 * s.pstdev(lat) / s.mean(lat), max(tr), len(lat)))
PYEOF
)"
  figure stability "median ${med} ms, CV of the reported medians ${cv} % over ${nruns} evaluations, at most ${maxtr} trials each"
  check stability_spread "$(ok "$(pyc "print(int($nruns >= 5 and float('$med') >= 0.05 and 0 < $maxtr <= 50 and float('$cv') <= 1.0))")")" \
    "(8192x4096 relu, $nruns separate evaluations of <= 50 trials: median $med ms (>= 0.05), CV $cv % (goal <= 1 %))"
  thr=$(awk -F', ' '{for (i = 6; i <= 9; i++) if ($i ~ /^Active/) n++} END {print n + 0}' "$WORK/clocks.csv")
  clk=$(awk -F', ' '{gsub(/ MHz/, "", $2); gsub(/ MHz/, "", $3); if (min == "" || $2 < min) min = $2; max = $3} END {print min "/" max " MHz (lowest SM clock seen / max)"}' "$WORK/clocks.csv")
  cp "$WORK/clocks.csv" "$OUT/clocks.csv"
  figure sm_clocks "$clk; $(wc -l < "$WORK/clocks.csv") samples"
  check no_throttle "$([ "$thr" -eq 0 ] && [ -s "$WORK/clocks.csv" ] && echo 0 || echo 1)" \
    "($thr samples with a thermal, power or hardware slowdown reason active; clocks.csv)"
fi

# The device-time floor the judge owns (issue 37, "the runner is the candidate"; docs/evaluator.md,
# how time is measured): the honest relu kernel's device time stands above the judge's floor (the
# runner's figure is used, no floor advisory), and a device time the candidate's process divides by
# 100 on its way to the judge (cheats/runner/forged_device_time.cpp, a GOT hook on write) is flagged.
if step device_time_floor; then
  hf=$(kopt_field "'%s %s' % (d['native_metrics'].get('device_timing', {}).get('used'), d['native_metrics'].get('device_timing', {}).get('judge_floor_ms'))" < "$WORK/honest-relu_kernel.out" 2>/dev/null || echo ERR)
  out=$(bench ref_square.cpp "$FIX/square.json" "$TESTS/cheats/runner/forged_device_time.cpp" --device cuda --baseline "$WORK/b-forged.json"); code=$?
  echo "$out" | grep -E '^(CORRECT|TIMER|RUNTIME|REWARD_HACK|ADVISORY)' | sed 's/^/  /'
  ff=$(echo "$out" | kopt_field "int(d['correct'] is False and any('forged device time' in h for h in d.get('reward_hacks', [])))")
  fd=$(echo "$out" | kopt_field "d['native_metrics'].get('device_timing')")
  figure device_time_floor "honest relu kernel: used, floor ms = $hf; forged: $fd"
  check device_time_floor "$([ "${hf%% *}" = runner ] && [ "$ff" = 1 ] && [ $code -ne 0 ] && echo 0 || echo 1)" \
    "(honest relu kernel: device time used, floor $hf; forged /100: flagged=$ff, exit $code)"
fi

# KernelBench-format Python solutions on the GPU (candidates/python/, relu over 8192x8192 float32):
# torch ops, load_inline with cuda_sources, Triton, and a pointer-keyed replay cheat, each judged with
# a short timing phase (the mutation sentinel and the reuse checks run in it). Built in warm_compile.
PY_CHECKS=(python_torch_ops python_load_inline_cuda python_triton python_cheat)
if [ "$PY_ON" != 1 ]; then
  for name in "${PY_CHECKS[@]}"; do check "$name" 1 "(kopt-bench was built without Python solutions: $PY_WHY)"; done
elif step python_solutions; then
  py_eval() { # name, solution: a short timed evaluation; sets PY_OUT, PY_CODE, PY_SECS
    local t; t=$(date +%s)
    PY_OUT=$(pybench "$2" --device cuda --min-trials 3 --max-trials 10 --baseline "$WORK/bp-$1.json"); PY_CODE=$?
    PY_SECS=$(since "$t")
    echo "$PY_OUT" > "$WORK/py-$1.out"
    echo "$PY_OUT" | grep -E '^(COMPILED|CORRECT|BACKEND|TIMER|RUNTIME|SPEEDUP|REWARD_HACK|ERROR|ADVISORY)' | sed 's/^/  /'
  }
  # What the payload says, on one line (the error's words squeezed, at most 300 characters).
  py_said() {
    echo "$PY_OUT" | kopt_field "(lambda m: 'compiled %s, correct %s, %s ms (reference %s ms), backend %s, timer %s, reward hacks %s%s' % (d.get('compiled'), d.get('correct'), d.get('latency_ms'), m.get('ref_runtime_ms'), m.get('backend'), m.get('timer'), d.get('reward_hacks', []), '; error: ' + ' '.join(str(d['error']).split())[:300] if d.get('error') else ''))(d.get('native_metrics', {}))"
  }
  py_honest() { # check name, solution, what else must hold (a python expression over d, '' = nothing)
    py_eval "$1" "$2"
    local good; good=$(echo "$PY_OUT" | kopt_field "int(d['correct'] is True and not d.get('reward_hack_detected') and (${3:-True}))")
    check "$1" "$([ $PY_CODE -eq 0 ] && [ "$good" = 1 ] && echo 0 || echo 1)" \
      "($2: exit $PY_CODE; $(py_said); $PY_SECS s${3:+; requires $3})"
    [ "$good" = 1 ] || echo "$PY_OUT" | grep -v '^KERNEL_EVAL=' | tail -15 | sed 's/^/  | /'
  }
  py_honest python_torch_ops relu_torch.py ""
  py_honest python_load_inline_cuda relu_inline_cuda.py "d['native_metrics'].get('backend') == 'cuda'"
  if tri=$("$PY_ABS" -c 'import triton; print(triton.__version__)' 2>&1); then
    figure triton "$(echo "$tri" | tail -1)"
    py_honest python_triton relu_triton.py ""
  else
    check python_triton 1 "(import triton fails in $PY_ABS: $(echo "$tri" | tail -1))"
  fi
  # The cheat: compiled, and then either not correct or flagged; never correct and unflagged.
  py_eval python_cheat pointer_replay.py
  caught=$(echo "$PY_OUT" | kopt_field "int(d.get('compiled') is True and (d['correct'] is False or d.get('reward_hack_detected') is True))")
  check python_cheat "$([ "$caught" = 1 ] && echo 0 || echo 1)" \
    "(pointer_replay.py, outputs cached by x.data_ptr(): exit $PY_CODE; $(py_said); $PY_SECS s; must be incorrect or flagged)"
fi
finish
