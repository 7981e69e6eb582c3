# Device check (relu_problem.py): an honest CUDA relu through load_inline (cuda_sources: a grid-stride
# kernel and its launcher on torch's current stream), compiled in kopt-bench's build stage.
# Expected: correct, native_metrics.backend cuda.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

__global__ void kopt_dev_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)blockDim.x * gridDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    y[i] = v < 0.0f ? 0.0f : v;  // NaN stays NaN, as torch.relu
  }
}

torch::Tensor relu(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "relu: expects a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "relu: float32 only");
  torch::Tensor xc = x.contiguous();
  torch::Tensor y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int threads = 256;
  const int64_t want = (n + threads - 1) / threads;
  const int blocks = (int)(want < 65535 * 8 ? want : 65535 * 8);
  kopt_dev_relu_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_CPP = "torch::Tensor relu(torch::Tensor x);"

_ext = load_inline(name="kopt_device_check_relu_cuda", cpp_sources=[_CPP], cuda_sources=[_CUDA],
                   functions=["relu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu(x)
