// Distance to the limit (issue 49), with LibTorch: the bytes the test ops must move, the CPU probe's
// sizes and its figures (a small run: the real one uses arrays of 4x the last-level cache).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "bandwidth_probe.hpp"
#include "compare.hpp"

using namespace kopt::bench;

TEST(Limits, BytesMovedForTheTestOps) {
  // relu.json: x [64, 256] float32 in, as much out.
  at::Tensor x = at::randn({64, 256});
  EXPECT_EQ(bytes_moved({x}, {at::relu(x)}), 2u * 64 * 256 * 4);
  // linear_relu: x [32, 64], weight [48, 64], bias [48] in; [32, 48] out.
  at::Tensor a = at::randn({32, 64}), w = at::randn({48, 64}), b = at::randn({48});
  EXPECT_EQ(bytes_moved({a, w, b}, {at::relu(at::linear(a, w, b))}), (32u * 64 + 48 * 64 + 48 + 32 * 48) * 4);
  // An in-place op's input is its output: the reference's output aliases it, counted on both sides
  // as the tensors are (the count is per tensor handed in and returned).
  at::Tensor y = at::randn({128});
  EXPECT_EQ(bytes_moved({y}, {y}), 2u * 128 * 4);
  // float16 counts two bytes, int64 eight; a strided view its elements only.
  EXPECT_EQ(bytes_moved({at::zeros({10}, at::kHalf), at::zeros({3}, at::kLong)}, {}), 10u * 2 + 3 * 8);
}

TEST(Limits, StreamArraysAreFarPastTheLastLevelCacheWithinCaps) {
  const size_t MiB = size_t(1) << 20;
  EXPECT_EQ(stream_array_bytes(32 * MiB, 64ull << 30), 128 * MiB);          // 4x a 32 MiB L3
  EXPECT_EQ(stream_array_bytes(1 * MiB, 64ull << 30), 64 * MiB);            // at least 64 MiB
  EXPECT_EQ(stream_array_bytes(260 * MiB, 64ull << 30), 512 * MiB);         // at most 512 MiB
  EXPECT_EQ(stream_array_bytes(260 * MiB, 2ull << 30), 128 * MiB);          // and a sixteenth of the memory
  EXPECT_EQ(stream_array_bytes(0, 0), 64 * MiB);                             // nothing known
  EXPECT_EQ(stream_array_bytes(3 * MiB + 5, 64ull << 30) % (64 * 1024), 0u);  // whole 64 KiB blocks
}

TEST(Limits, TheCpuProbeMeasuresBandwidthAndAMatmul) {
  // Small arrays (16 MiB each, two runs): the figure is a cache's here, but the arithmetic is the one
  // the judge uses.
  const Limits l = probe_cpu_limits(16u << 20, 2);
  EXPECT_GT(l.bandwidth_gbps, 0.1);
  EXPECT_LT(l.bandwidth_gbps, 10000);
  EXPECT_EQ(l.bandwidth_gbps, std::max(l.detail["copy_gbps"].get<double>(), l.detail["triad_gbps"].get<double>()));
  EXPECT_EQ(l.detail["array_mib"], 16);
  EXPECT_NE(l.bandwidth_method.find("STREAM-like copy and triad, 3 double arrays of 16 MiB"), std::string::npos) << l.bandwidth_method;
  ASSERT_TRUE(l.compute_gflops.has_value());
  EXPECT_GT(*l.compute_gflops, 0.1);
  EXPECT_NE(l.compute_method.find("float32 matmul "), std::string::npos) << l.compute_method;
  EXPECT_GT(last_level_cache_bytes(), 0u);
}
