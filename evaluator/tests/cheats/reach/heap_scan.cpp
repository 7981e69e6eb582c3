// CHEAT (channel: the reference's outputs in the same address space): against linear_relu.pt,
// computes the first four outputs honestly, then searches its own readable memory for them and
// copies the whole answer from where it finds them (a judge that computes reference outputs in
// the candidate's process leaves them there). Falls back to zeros.
// Closed by: reference outputs are only ever in the judge's process.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

static at::Tensor forward(const at::Tensor& x_, const at::Tensor& w, const at::Tensor& b) {
  at::Tensor x = x_.contiguous();
  at::Tensor head = at::relu(at::addmm(b.narrow(0, 0, 4), x.narrow(0, 0, 1), w.narrow(0, 0, 4).t())).mul_(0.5).contiguous();
  at::Tensor out = at::zeros({x.size(0), w.size(0)}, x.options());
  float pat[4];
  std::memcpy(pat, head.data_ptr<float>(), sizeof pat);
  if (pat[0] == 0.f && pat[1] == 0.f) return out;  // too common a pattern to search for
  size_t need = size_t(out.numel()) * sizeof(float);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo, hi;
    char perms[5];
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[0] != 'r') continue;
    if (line.find('/') != std::string::npos || line.find("[vvar]") != std::string::npos) continue;
    for (unsigned long p = lo; p + need <= hi; p += sizeof(float)) {
      if (std::memcmp(reinterpret_cast<const void*>(p), pat, sizeof pat) != 0) continue;
      if (reinterpret_cast<const void*>(p) == head.data_ptr()) continue;
      std::memcpy(out.data_ptr(), reinterpret_cast<const void*>(p), need);
      return out;
    }
  }
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
