// GPU confinement probe: an honest relu kernel (it needs the /dev/nvidia* nodes the sandbox binds)
// whose op, on every call, also tries two things the confinement must refuse: creating a file outside
// its scratch folder (/var/tmp) and reading another process's environment (its parent's, and pid 1's
// unless that is itself). If either works the output is doubled, so the judge reports it incorrect;
// tests/device/run.sh also looks for the file (confinement_gpu).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <fcntl.h>
#include <unistd.h>
#include <string>

__global__ void relu_scaled(const float* x, float* y, int64_t n, float scale) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = scale * (x[i] > 0.f ? x[i] : 0.f);
}

static bool escaped() {
  bool any = false;
  int fd = ::open("/var/tmp/kopt-confine-probe", O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) {
    any = true;
    ::close(fd);
  }
  for (pid_t p : {getppid(), pid_t(1)}) {
    if (p <= 0 || p == getpid()) continue;
    const std::string path = "/proc/" + std::to_string(p) + "/environ";
    fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) {
      char c;
      if (::read(fd, &c, 1) >= 0) any = true;
      ::close(fd);
    }
  }
  return any;
}

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  const int64_t n = x.numel();
  relu_scaled<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n, escaped() ? 2.f : 1.f);
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
