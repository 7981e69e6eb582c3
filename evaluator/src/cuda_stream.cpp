// current_cuda_stream() (cuda_call.hpp): the one place that asks LibTorch for its current CUDA stream.
#include "cuda_call.hpp"

#ifdef KOPT_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace kopt::bench {

cudaStream_t current_cuda_stream() {
#ifdef KOPT_TORCH_CUDA
  return c10::cuda::getCurrentCUDAStream().stream();
#else
  return cudaStreamLegacy;
#endif
}

}  // namespace kopt::bench
