#!/usr/bin/env bash
# Export checks (Python + the exporter only): mode, declaration order, integer ranges, random refusal
# (and NaN outputs that are no randomness).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
X="$here/../../tools/export-ref"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jq_() { /usr/bin/python3 -c "import json,sys; print(json.dumps(eval(sys.argv[2], {'s': json.load(open(sys.argv[1]))})))" "$@"; }

out=$("$X" "$here/conv_bias_bn.py" -o "$d/a.pt" -s "$d/a.json")
[ "$(jq_ "$d/a.json" 's["mode"]')" = '"train"' ] || fail "BatchNorm problem not kept in training mode"
[ "$(jq_ "$d/a.json" 's["params"]')" = '["conv.weight", "conv.bias", "bias", "bn.weight", "bn.bias"]' ] || fail "params not in declaration order"
grep -q '^mode: train (as constructed)' <<<"$out" || fail "output does not say the mode"
grep -q '  bias: Tensor float32 \[8, 1, 1\]' <<<"$out" || fail "signature not printed"

# captured first: `| grep -q` closes the pipe at the first match and pipefail would see the writer's EPIPE
out=$("$X" "$here/conv_bias_bn.py" -o "$d/b.pt" -s "$d/b.json" --mode eval)
grep -q '^mode: eval (requested' <<<"$out" || fail "--mode eval not reported"
[ "$(jq_ "$d/b.json" 's["mode"]')" = '"eval"' ] || fail "--mode eval not recorded"

"$X" "$here/cross_entropy.py" -o "$d/c.pt" -s "$d/c.json" >/dev/null
[ "$(jq_ "$d/c.json" '[s["inputs"][1]["dtype"], s["inputs"][1]["dist"]]')" = '["int64", {"kind": "randint", "low": 0, "high": 512}]' ] || fail "CrossEntropy target range not [0, 512)"

if err=$("$X" "$here/linear_dropout.py" -o "$d/d.pt" -s "$d/d.json" 2>&1); then fail "random reference accepted"; fi
grep -q 'reference is random.*Dropout in training mode.*--mode eval' <<<"$err" || fail "refusal message: $err"
"$X" "$here/linear_dropout.py" -o "$d/d.pt" -s "$d/d.json" --mode eval >/dev/null || fail "--mode eval Dropout refused"
# NaN outputs where the reference has them on every run (sqrt of negatives) are not randomness.
err=$("$X" "$here/../fixtures/nonfinite.py" -o "$d/e.pt" -s "$d/e.json" 2>&1) || fail "a reference with NaN outputs refused: $err"
echo "export checks passed"
