#!/usr/bin/env bash
# Export -> kopt-bench, shell-level (stable flags only): usage e2e.sh KOPT_BENCH CACHE_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$1 CACHE=$2
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$here/../../tools/export-ref" "$here/conv_bias_bn.py" -o "$d/ref.pt" -s "$d/in.json" >/dev/null
bench() { "$B" --ref "$d/ref.pt" --inputs "$d/in.json" --solution "$here/candidates/$1" --cache-dir "$CACHE" --baseline "$d/b.json" --no-timing; }
out=$(bench conv_bias_bn_train.cpp) || fail "honest training-mode BatchNorm candidate rejected: $out"
grep -q '^CORRECT: True' <<<"$out" || fail "$out"
if out=$(bench conv_bias_bn_eval.cpp); then fail "eval-mode BatchNorm candidate accepted on a training-mode problem"; fi
grep -q '^CORRECT: False' <<<"$out" || fail "$out"
echo "export e2e passed"
