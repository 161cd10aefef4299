// CUDA implementations of the C ABI in puffer_kernels.h. Launches are asynchronous on the
// caller's stream; the return value is the launch error, never a synchronizing check.
#include <cuda_runtime.h>

#include "puffer_kernels.h"
#include "recurrence.h"

namespace {

// One thread per segment: small blocks spread S = 16k segments over every SM.
constexpr int kAdvantageThreads = 128;
// Priorities run in one block so the normalizing sum needs no second launch or scratch memory;
// one warp per segment reads its row coalesced.
constexpr int kPriorityThreads = 1024;
constexpr int kWarp = 32;

__global__ void
advantage_kernel(const float *__restrict__ values, const float *__restrict__ rewards,
                 const uint8_t *__restrict__ terminals, const uint8_t *__restrict__ truncations,
                 const float *__restrict__ final_values, const float *__restrict__ ratio,
                 const float *__restrict__ next_values, float *__restrict__ advantages,
                 int64_t segments, int64_t horizon, float gamma_lam, float gamma, float rho_clip,
                 float c_clip) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= segments) return;
    const int64_t row = i * horizon;
    puffer::advantage_segment(values + row, rewards + row, terminals + row, truncations + row,
                              final_values + row, ratio + row, next_values[i], advantages + row,
                              horizon, gamma, gamma_lam, rho_clip, c_clip);
}

__global__ void priorities_kernel(const float *__restrict__ advantages, float *__restrict__ probs,
                                  int64_t segments, int64_t horizon, float alpha) {
    // Totals in double: one lane adds thousands of priorities, as the CPU kernel does.
    __shared__ double warp_totals[kPriorityThreads / kWarp];
    const int lane = threadIdx.x % kWarp;
    const int warp = threadIdx.x / kWarp;
    const int warps = blockDim.x / kWarp;
    double total = 0.0;
    for (int64_t i = warp; i < segments; i += warps) {
        const float *row = advantages + i * horizon;
        float sum = 0.0f;
        for (int64_t t = lane; t < horizon; t += kWarp)
            sum += fabsf(row[t]);
        for (int offset = kWarp / 2; offset > 0; offset /= 2)
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (lane == 0) {
            const float p = powf(sum, alpha);
            probs[i] = p;
            total += p;
        }
    }
    if (lane == 0) warp_totals[warp] = total;
    __syncthreads();
    if (threadIdx.x == 0) {
        double all = 0.0;
        for (int w = 0; w < warps; ++w)
            all += warp_totals[w];
        warp_totals[0] = all;
    }
    __syncthreads();
    const double all = warp_totals[0];
    // All-zero advantages give no preference: sample segments uniformly.
    const float uniform = 1.0f / static_cast<float>(segments);
    for (int64_t i = threadIdx.x; i < segments; i += blockDim.x)
        probs[i] = all > 0.0 ? static_cast<float>(probs[i] / all) : uniform;
}

} // namespace

extern "C" const char *puffer_kernels_version(void) {
    return PUFFER_VERSION;
}

extern "C" const char *puffer_cuda_error_string(int error) {
    return cudaGetErrorString(static_cast<cudaError_t>(error));
}

extern "C" int puffer_advantage_cuda(const float *values, const float *rewards,
                                     const uint8_t *terminals, const uint8_t *truncations,
                                     const float *final_values, const float *ratio,
                                     const float *next_values, float *advantages, int64_t segments,
                                     int64_t horizon, float gamma, float lam, float rho_clip,
                                     float c_clip, void *stream) {
    if (segments == 0) return 0;
    const unsigned blocks =
        static_cast<unsigned>((segments + kAdvantageThreads - 1) / kAdvantageThreads);
    advantage_kernel<<<blocks, kAdvantageThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        values, rewards, terminals, truncations, final_values, ratio, next_values, advantages,
        segments, horizon, gamma * lam, gamma, rho_clip, c_clip);
    return static_cast<int>(cudaGetLastError());
}

extern "C" int puffer_segment_priorities_cuda(const float *advantages, float *probs,
                                              int64_t segments, int64_t horizon, float alpha,
                                              void *stream) {
    if (segments == 0) return 0;
    priorities_kernel<<<1, kPriorityThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        advantages, probs, segments, horizon, alpha);
    return static_cast<int>(cudaGetLastError());
}
