// CHEAT (a seed that can be recovered; the small-state version): the agent pinned --seed below
// 2^16. Trial seeds used to be an invertible mix of the run seed, each trial's generator
// (mt19937) seeded from it, so the first input the candidate sees gives the run seed away by search;
// from there it regenerates every timed input and computes their answers during that untimed first
// call, and each timed call is a lookup. Closed by: trial seeds that say nothing about each other
// (OS randomness, or for a pinned seed a keyed hash under the judge's key, which the candidate
// cannot read): the search finds nothing and the candidate has to work.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "input_scan.h"

namespace {

// How trial seeds were derived from the run seed (splitmix64).
uint64_t mix(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream * 1000003ULL + index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFFULL;
}
at::Tensor draw(uint64_t seed, at::IntArrayRef shape) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::empty(shape, at::kFloat).normal_(0, 1, gen);
}

bool searched = false;
std::map<uint64_t, at::Tensor> answers;

void recover(const at::Tensor& x) {
  searched = true;
  const float* seen = x.data_ptr<float>();
  for (uint64_t s = 0; s < (1u << 16); ++s) {
    at::Tensor head = draw(mix(s, 1, 0), {16});  // correctness trial 0
    if (std::memcmp(head.data_ptr<float>(), seen, 16 * sizeof(float)) != 0) continue;
    std::fprintf(stderr, "seed recovered: %llu\n", (unsigned long long)s);
    for (uint64_t stream : {3, 5, 4})  // timed, warm-up and sentinel inputs
      for (uint64_t i = 0; i < 200; ++i) {
        at::Tensor in = draw(mix(s, stream, stream == 3 ? 1000000 + i : i), x.sizes());
        answers[kopt_fingerprint(in.data_ptr<float>(), in.numel())] = at::relu(in);
      }
    return;
  }
}

}  // namespace

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  if (!searched) recover(x);
  auto it = answers.find(kopt_fingerprint(x.data_ptr<float>(), x.numel()));
  if (it != answers.end()) {
    at::Tensor y = it->second;
    answers.erase(it);
    return y;
  }
  return at::relu(x);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
