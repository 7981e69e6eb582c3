#!/usr/bin/env bash
# docs/evaluator.md's Python example, run as written (from a copy of the repository's files it
# names, in a scratch folder with build-evaluator/ linked): both commands must print CORRECT: True.
#   bash example.sh KOPT_BENCH CACHE_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$1 CACHE=$2
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
awk '/<!-- python-example/{f=1; next} f && /^```bash/{g=1; next} g && /^```/{exit} g' "$root/docs/evaluator.md" >"$d/example.sh"
[ -s "$d/example.sh" ] || { echo "FAIL: docs/evaluator.md has no python-example block" >&2; exit 1; }
# The block names build-evaluator/kopt-bench from the repository root: run it there, with this
# build's kopt-bench in that place.
mkdir -p "$d/root/build-evaluator"
ln -s "$B" "$d/root/build-evaluator/kopt-bench"
ln -s "$(dirname "$B")/kopt-bench-worker" "$d/root/build-evaluator/kopt-bench-worker"
ln -s "$(dirname "$B")/kopt-bench-runner" "$d/root/build-evaluator/kopt-bench-runner"
ln -s "$root/demo" "$d/root/demo"
ln -s "$root/evaluator" "$d/root/evaluator"
sed -i "s#/tmp/kopt-py-example.json#$d/baseline.json#" "$d/example.sh"
if ! out=$(cd "$d/root" && KOPT_BENCH_CACHE="$CACHE" bash -e "$d/example.sh" 2>&1); then
  echo "FAIL: the docs' Python example failed: $out" >&2; exit 1
fi
n=$(grep -c '^CORRECT: True$' <<<"$out" || true)
[ "$n" = 2 ] || { echo "FAIL: the docs' Python example: $n of 2 commands correct: $out" >&2; exit 1; }
# The GUIDE's Python skeleton (preset/kernel-opt/evaluator/GUIDE.md, the first python block), as a
# solution for the demo's relu problem: the agent copies it, so it must build and be correct.
awk '/^```python/{g=1; next} g && /^```/{exit} g' "$root/preset/kernel-opt/evaluator/GUIDE.md" >"$d/guide_kernel.py"
[ -s "$d/guide_kernel.py" ] || { echo "FAIL: the GUIDE has no python block" >&2; exit 1; }
out=$("$B" --ref "$root/demo/workspace/model.py" --solution "$d/guide_kernel.py" --cache-dir "$CACHE" \
  --baseline "$d/guide-baseline.json" --no-timing 2>&1) || true
grep -q '^CORRECT: True$' <<<"$out" || { echo "FAIL: the GUIDE's Python skeleton is not correct: $out" >&2; exit 1; }
echo "python example passed (docs/evaluator.md's block and the GUIDE's skeleton)"
