// The GPU half of the machine's limits (issue 49), torch-free (the CUDA runtime, NVML by dlopen):
// a device copy kernel (hand-written PTX, loaded with cudaLibraryLoadData and JIT-compiled by the
// driver for the device) and the device-to-device cudaMemcpy, beside the peak from the device's
// properties (memory clock x bus width x 2); an FP32 peak from its SM count, clock and FP32 lanes per
// SM; the SM clock and throttle reasons through NVML. Built by every CUDA build (TOOLKIT included);
// NOT YET RUN ON A GPU: tests/device/cuda_nodevice_test.cpp checks the no-device path and ptxas the PTX.
#pragma once
#include <string>

#include "machine_limits.hpp"

namespace kopt::bench {

// The copy kernel's PTX (entry kopt_copy16(dst, src, n16): n16 16-byte elements, grid-stride).
const char* copy_kernel_ptx();

// name, UUID ("GPU-…" as NVML writes it), memory, SM count, driver: throws CudaError without a device.
MachineIdentity cuda_identity(int device);
// The probe; throws CudaError without a device.
Limits probe_cuda_limits(int device);
// FP32 lanes per SM for a compute capability; 0 where this table does not know it.
int fp32_lanes_per_sm(int major, int minor);
// SM clock and throttle reasons from NVML (dlopen libnvidia-ml.so.1); readable false says why.
ClockSample gpu_clock_sample(int device);
// NVML's clock-event reasons that slow the SM clock, in words ("" none): the power cap, thermal and
// hardware slowdowns, the power brake; idle, application clocks and sync boost are not slowdowns.
std::string throttle_words(unsigned long long reasons);

}  // namespace kopt::bench
