#!/usr/bin/env bash
# Real KernelBench problems (problems/, sources in SOURCES.md) through export-ref and kopt-bench, the
# way a kernel engineer uses them: honest candidates pass, wrong ones fail, each for the stated
# reason. usage: run.sh KOPT_BENCH CACHE_DIR (candidates compile once into the shared CACHE_DIR;
# --no-timing: this is about verdicts, timing is covered by the suite).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$1 CACHE=$2
X="$here/../../tools/export-ref"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
failed=0
bad() { printf 'FAIL: %s\n' "$*" >&2; failed=1; }
field() { /usr/bin/python3 -c "import json,sys; print(json.dumps(eval(sys.argv[2], {'s': json.load(open(sys.argv[1]))})))" "$@"; }
export_() { local p=$1 as=$2; shift 2; "$X" "$here/problems/$p.py" -o "$d/$as.pt" -s "$d/$as.json" "$@"; }
bench() {
  local p=$1 c=$2; shift 2
  "$B" --ref "$d/$p.pt" --inputs "$d/$p.json" --solution "$here/candidates/$c.cpp" --cache-dir "$CACHE" \
    --baseline "$d/$p.$c.baseline.json" --no-timing "$@" 2>&1
}
accept() {  # accept PROBLEM CANDIDATE [options]
  local out
  if ! out=$(bench "$@") || ! grep -q '^CORRECT: True$' <<<"$out"; then bad "honest $2 rejected on $1: $out"; fi
}
reject() {  # reject PATTERN PROBLEM CANDIDATE [options]: incorrect, and the output matches PATTERN
  local pat=$1 out; shift
  if out=$(bench "$@"); then bad "wrong $2 accepted on $1: $out"; return; fi
  grep -q '^CORRECT: False$' <<<"$out" || bad "$2 on $1: no CORRECT: False: $out"
  grep -Eq -- "$pat" <<<"$out" || bad "$2 on $1: expected /$pat/ in: $out"
}

# ---- export: the problem as KernelBench defines it ----
for p in level1_1_Square_matrix_multiplication_ level1_19_ReLU level1_23_Softmax level1_33_BatchNorm \
         level1_40_LayerNorm level1_94_MSELoss level1_95_CrossEntropyLoss level2_1_Conv2D_ReLU_BiasAdd \
         level2_12_Gemm_Multiply_LeakyReLU level2_33_Gemm_Scale_BatchNorm level2_76_Gemm_Add_ReLU \
         level2_84_Gemm_BatchNorm_Scaling_Softmax; do
  export_ $p $p >"$d/$p.out" 2>&1 || bad "export of $p failed: $(cat "$d/$p.out")"
done
for p in level1_33_BatchNorm level2_33_Gemm_Scale_BatchNorm level2_84_Gemm_BatchNorm_Scaling_Softmax; do
  [ "$(field "$d/$p.json" 's["mode"]')" = '"train"' ] || bad "$p (BatchNorm) not kept in training mode"
done
[ "$(field "$d/level1_95_CrossEntropyLoss.json" 's["inputs"][1]["dist"]')" = '{"kind": "randint", "low": 0, "high": 512}' ] ||
  bad "CrossEntropy targets not drawn from [0, 512)"
[ "$(field "$d/level2_1_Conv2D_ReLU_BiasAdd.json" 's["params"]')" = '["conv.weight", "conv.bias", "bias"]' ] ||
  bad "level2_1 parameters not in declaration order"
grep -Pzq '  in0: Tensor float32 \[4, 3, 16, 16\]\n  conv.weight: Tensor float32 \[8, 3, 3, 3\]\n  conv.bias: Tensor float32 \[8\]\n  bias: Tensor float32 \[8, 1, 1\]\n' \
  "$d/level2_1_Conv2D_ReLU_BiasAdd.out" || bad "level2_1 signature not printed: $(cat "$d/level2_1_Conv2D_ReLU_BiasAdd.out")"
# Dropout in training mode: a random reference, refused with the way out; --mode eval exports it.
if out=$(export_ level2_66_Matmul_Dropout_Softmax l2_66 2>&1); then bad "random reference (Dropout) accepted"; fi
grep -q 'reference is random.*Dropout in training mode.*--mode eval' <<<"$out" || bad "Dropout refusal: $out"
export_ level2_66_Matmul_Dropout_Softmax l2_66_eval --mode eval >/dev/null || bad "level2_66 --mode eval refused"
export_ level1_33_BatchNorm l1_33_eval --mode eval >/dev/null || bad "level1_33 --mode eval refused"

# ---- honest candidates ----
accept level1_1_Square_matrix_multiplication_ matmul
accept level1_23_Softmax softmax_loop
accept level1_33_BatchNorm batchnorm_train
accept level1_95_CrossEntropyLoss cross_entropy
accept level2_1_Conv2D_ReLU_BiasAdd conv_relu_bias
accept level2_33_Gemm_Scale_BatchNorm gemm_scale_bn_train
accept l2_66_eval linear_softmax
accept level2_76_Gemm_Add_ReLU gemm_add_relu
accept level2_84_Gemm_BatchNorm_Scaling_Softmax gemm_bn_scale_softmax

# ---- wrong candidates ----
# Eval-mode BatchNorm solves the problem an eval export would have made of it, not KernelBench's.
reject '^DEVIATION: ' level1_33_BatchNorm batchnorm_eval
accept l1_33_eval batchnorm_eval
# A missing Linear bias (a few % on softmax outputs near 1/256): rejected at every seed, not by luck.
for s in 1 2 3 4 5; do reject '^DEVIATION: ' l2_66_eval linear_softmax_no_bias --seed $s; done
reject '^DEVIATION: ' l2_66_eval linear_softmax_no_bias
# A shape mismatch: the ERROR line says it, no DEVIATION line.
reject '^ERROR: incorrect: trial 0: output 0 has shape \[64\], the reference.s is \[\]' level1_95_CrossEntropyLoss cross_entropy_per_sample
out=$(bench level1_95_CrossEntropyLoss cross_entropy_per_sample || true)
! grep -q '^DEVIATION' <<<"$out" || bad "a shape mismatch printed a DEVIATION line: $out"
# Parameters in another order than the export passes: reported as an order mistake.
reject 'argument order: .*argument 2 \(parameter 1\) has the shape of `bias` \[8, 1, 1\], where the export passes `conv.weight` \[8, 3, 3, 3\]' \
  level2_1_Conv2D_ReLU_BiasAdd conv_relu_bias_named_order
reject 'argument order: the candidate is right when its parameters are passed in the order bias, gemm.weight' \
  level2_76_Gemm_Add_ReLU gemm_add_relu_swapped

# ---- docs/evaluator.md's worked example, its bash block as written, from a tree shaped like the
# repository root (evaluator/ and build-evaluator/ linked); the default cache is the shared one ----
ex="$d/example"; mkdir -p "$ex"
ln -s "$here/../.." "$ex/evaluator"; ln -s "$(dirname "$B")" "$ex/build-evaluator"
awk '/<!-- kernelbench-example/{f=1; next} f && /^```bash/{g=1; next} g && /^```/{exit} g' "$here/../../../docs/evaluator.md" >"$d/example.sh"
[ -s "$d/example.sh" ] || bad "docs/evaluator.md: no kernelbench-example block"
if ! out=$(cd "$ex" && KOPT_BENCH_CACHE="$CACHE" bash -e "$d/example.sh" 2>&1); then bad "the docs' example failed: $out"; fi
grep -q '^mode: train (as constructed)$' <<<"$out" || bad "docs example: no mode line: $out"
[ "$(grep -c '^CORRECT: True$' <<<"$out")" = 2 ] || bad "docs example: steps 3 and 4 not both correct: $out"
grep -q '^REF_SOURCE: frozen baseline' <<<"$out" || bad "docs example: step 4 did not reuse the frozen baseline: $out"
grep -q '"ref_runtime_fresh_ms":' <<<"$out" || bad "docs example: no drift check fields in step 4: $out"
grep -q 'argument order: the candidate is right when its parameters are passed in the order bias, gemm.weight' <<<"$out" ||
  bad "docs example: step 5 did not name the order mistake: $out"

[ $failed = 0 ] || exit 1
echo "kernelbench problems passed"
