#!/usr/bin/env python3
"""Re-creates problems/ from a checkout of ScalingIntelligence/KernelBench (MIT): each file is copied
as published, with only its module-level shape constants replaced by CPU-sized ones (listed in
SHRINK below) and a header naming its source. Usage: import.py /path/to/KernelBench-checkout COMMIT"""
import os, re, sys

SHRINK = {
    "level1/1_Square_matrix_multiplication_.py": {"N": "64"},
    "level1/19_ReLU.py": {"batch_size": "16", "dim": "1024"},
    "level1/23_Softmax.py": {"batch_size": "16", "dim": "512"},
    "level1/33_BatchNorm.py": {"batch_size": "8", "features": "8", "dim1": "16", "dim2": "16"},
    "level1/40_LayerNorm.py": {"batch_size": "4", "features": "8", "dim1": "16", "dim2": "16"},
    "level1/94_MSELoss.py": {"batch_size": "64", "input_shape": "(256,)"},
    "level1/95_CrossEntropyLoss.py": {"batch_size": "64", "num_classes": "512"},
    "level2/1_Conv2D_ReLU_BiasAdd.py": {"batch_size": "4", "in_channels": "3", "out_channels": "8",
                                        "height = width": "16"},
    "level2/12_Gemm_Multiply_LeakyReLU.py": {"batch_size": "32", "in_features": "256", "out_features": "128"},
    "level2/33_Gemm_Scale_BatchNorm.py": {"batch_size": "64", "in_features": "128", "out_features": "64"},
    "level2/66_Matmul_Dropout_Softmax.py": {"batch_size": "32", "in_features": "1024", "out_features": "256"},
    "level2/76_Gemm_Add_ReLU.py": {"batch_size": "32", "in_features": "256", "out_features": "128"},
    "level2/84_Gemm_BatchNorm_Scaling_Softmax.py": {"batch_size": "64", "in_features": "256", "out_features": "128"},
}

def main():
    root, commit = sys.argv[1], sys.argv[2]
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "problems")
    for rel, sub in SHRINK.items():
        text = open(os.path.join(root, "KernelBench", rel)).read()
        changed = []
        for var, val in sub.items():
            pat = re.compile(r"^(" + re.escape(var) + r")\s*=\s*(.*?)\s*$", re.M)
            m = pat.search(text)
            if not m:
                sys.exit(f"{rel}: no '{var} = ...' line")
            changed.append(f"{var} {m.group(2)} -> {val}")
            text = pat.sub(lambda m: f"{m.group(1)} = {val}", text, count=1)
        head = (f"# Source: ScalingIntelligence/KernelBench, KernelBench/{rel} at {commit} (MIT License,\n"
                f"# see THIRD_PARTY_NOTICES.md). Unchanged except shapes shrunk for CPU: {'; '.join(changed)}.\n")
        open(os.path.join(here, rel.replace("/", "_")), "w").write(head + text.rstrip("\n") + "\n")

main()
