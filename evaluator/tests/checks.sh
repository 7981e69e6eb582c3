# shellcheck shell=bash
# Named checks for the evaluator's shell suites (tests/cuda-build.sh, tests/device/run.sh), sourced.
# One line per check, "CHECK name: PASS|FAIL|SKIP detail", counted in KOPT_PASS/KOPT_FAIL/KOPT_SKIP;
# with KOPT_CHECKS_TSV set, also appended there as name<TAB>result<TAB>detail. A SKIP is never a pass:
# it names what did not run and why.
KOPT_PASS=0 KOPT_FAIL=0 KOPT_SKIP=0
kopt_record() { [ -n "${KOPT_CHECKS_TSV:-}" ] && printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$KOPT_CHECKS_TSV"; return 0; }
check() { # name, status (0 = pass), detail
  if [ "$2" -eq 0 ]; then KOPT_PASS=$((KOPT_PASS + 1)); echo "CHECK $1: PASS $3"; kopt_record "$1" PASS "$3"
  else KOPT_FAIL=$((KOPT_FAIL + 1)); echo "CHECK $1: FAIL $3"; kopt_record "$1" FAIL "$3"; fi
}
skip() { # name, why
  KOPT_SKIP=$((KOPT_SKIP + 1)); echo "CHECK $1: SKIP $2"; kopt_record "$1" SKIP "$2"
}
# The KERNEL_EVAL json of kopt-bench's output on stdin, a python expression over `d`: prints ERR when
# there is no such line or the expression fails.
kopt_field() {
  "${PY:-python3}" -c "import json,sys
ls=[l for l in sys.stdin.read().splitlines() if l.startswith('KERNEL_EVAL=')]
if not ls: print('ERR'); sys.exit()
d=json.loads(ls[-1][len('KERNEL_EVAL='):])
try: print($1)
except Exception as e: print('ERR')"
}

# Issue 49: "1 <what>" when the payload's latency_ci_ms holds latency_ms, reference_ci_ms holds
# latency_ms x speedup and samples equals native_metrics.trials, else "0 <what>" (ERR: no payload).
kopt_noise_line() { # name; the output on stdin
  kopt_field "(lambda m, l, c, r: '%d $1: latency %s in %s, reference %s in %s, samples %s of %s trials, bytes %s, %s GB/s' % (int(c is not None and c[0] <= l <= c[1] and r is not None and r[0] <= l * m['speedup'] <= r[1] and d.get('samples') == m.get('trials')), l, c, l * m['speedup'], r, d.get('samples'), m.get('trials'), m.get('bytes_moved'), m.get('bandwidth_gbps')))(d['native_metrics'], d['latency_ms'], d.get('latency_ci_ms'), d.get('reference_ci_ms'))"
}

# abi_flags_everywhere: LibTorch's TORCH_CXX_FLAGS (recorded by CMake) on every C++ compile of ours
# in BUILD's compile_commands.json, torch-free targets included.
kopt_check_abi_flags() { # build dir
  local r
  r=$("${PY:-python3}" - "$1" <<'PYEOF'
import json, re, shlex, sys
b = sys.argv[1]
try:
    cache = open(b + "/CMakeCache.txt").read()
    cmds = json.load(open(b + "/compile_commands.json"))
except OSError as e:
    print("1 (%s)" % e); sys.exit()
m = re.search(r"^KOPT_TORCH_CXX_FLAGS_USED:INTERNAL=(.*)$", cache, re.M)
if not m: print("1 (KOPT_TORCH_CXX_FLAGS_USED not in CMakeCache.txt)"); sys.exit()
flags = shlex.split(m.group(1))
ours = [c for c in cmds if "/evaluator/" in c["file"] or "/src/core/" in c["file"]]
def args(c): return shlex.split(c["command"]) if "command" in c else c.get("arguments", [])
bad = sorted({c["file"].split("/")[-1] for c in ours if not all(f in args(c) for f in flags)})
print("%d (%d compile commands; flags: %s%s)" % (int(bool(bad) or not ours), len(ours), " ".join(flags) or "none declared",
      "; missing on: " + " ".join(bad[:8]) if bad else ""))
PYEOF
)
  check abi_flags_everywhere "${r%% *}" "${r#* }"
}

# cuda_half_linked: the runner and the worker need the toolkit's libcudart.so.MAJOR, and the runner
# defines the GPU timer its CUDA branch makes.
kopt_check_cuda_linked() { # build dir, CUDA major
  local b rc=0 detail="" syms
  for b in kopt-bench-runner kopt-bench-worker; do
    # whole outputs first: grep -q stopping early would fail the pipe under pipefail
    syms=$(readelf -d "$1/$b" 2>/dev/null)
    if grep -q "NEEDED.*libcudart\.so\.$2\]" <<< "$syms"; then detail+="$b needs libcudart.so.$2; "
    else rc=1; detail+="$b does not need libcudart.so.$2; "; fi
  done
  syms=$(nm -C "$1/kopt-bench-runner" 2>/dev/null)
  if grep -q " T kopt::bench::make_cuda_timer(" <<< "$syms"; then detail+="the runner defines make_cuda_timer"
  else rc=1; detail+="make_cuda_timer is not in the runner"; fi
  check cuda_half_linked $rc "($detail)"
}

# torch_cuda_syntax: translation units that only a LibTorch with CUDA compiles (KOPT_TORCH_CUDA), checked
# with g++ -fsyntax-only -Werror against BUILD's LibTorch headers (a CPU LibTorch ships c10/cuda but not
# the generated cuda_cmake_macros.h, which is stubbed) and the toolkit's headers.
kopt_check_torch_cuda_syntax() { # build dir, CUDA root, sources relative to evaluator/...
  local b=$1 cuda=$2 ev f rc=0 bad="" flags inc d stub
  shift 2
  ev=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  stub=$(mktemp -d "${TMPDIR:-/tmp}/kopt-stub.XXXXXX")
  inc=$(sed -n 's/^#define KOPT_CFG_TORCH_INCLUDES "\(.*\)"$/\1/p' "$b/gen/kopt_bench_config.hpp")
  read -r -a flags <<< "$(sed -n 's/^KOPT_TORCH_CXX_FLAGS_USED:INTERNAL=//p' "$b/CMakeCache.txt")"
  flags+=(-std=c++17 -Wall -Wextra -Werror -fsyntax-only -DKOPT_WITH_CUDA=1 -DKOPT_TORCH_CUDA=1 -DKOPT_HAVE_CUPTI_H=1
          -isystem "$stub" -isystem "$cuda/include" -I"$ev/src" -I"$ev/../include" -I"$b/gen")
  for d in ${inc//;/ }; do
    [ "$d" = /usr/include ] || [ "$d" = /usr/local/include ] || flags+=(-isystem "$d")
    if [ -f "$d/c10/cuda/CUDAStream.h" ] && [ ! -f "$d/c10/cuda/impl/cuda_cmake_macros.h" ]; then
      mkdir -p "$stub/c10/cuda/impl" && echo '#pragma once' > "$stub/c10/cuda/impl/cuda_cmake_macros.h"
    fi
  done
  for f in "$@"; do
    if ! g++ "${flags[@]}" "$ev/$f" > "$stub/log" 2>&1; then rc=1; bad+=" $f"; head -20 "$stub/log"; fi
  done
  rm -rf "$stub"
  check torch_cuda_syntax $rc "(g++ -fsyntax-only -Werror -DKOPT_TORCH_CUDA=1: $*${bad:+; failed:$bad})"
}
