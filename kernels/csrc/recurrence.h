// The per-segment recurrences shared by the CPU and CUDA kernels: one source of the math, so the
// two builds cannot drift. Compiled by nvcc these are __host__ __device__; by a C++ compiler,
// plain inline functions.
#ifndef PUFFER_RECURRENCE_H
#define PUFFER_RECURRENCE_H

#include <stdint.h>

#ifdef __CUDACC__
#define PUFFER_HD __host__ __device__ __forceinline__
#else
#define PUFFER_HD inline
#endif

namespace puffer {

// min that propagates a NaN in `a` like torch.clamp(max=b) (and std::min) does.
PUFFER_HD float clip_max(float a, float b) {
    return b < a ? b : a;
}

// Puff advantage of one segment (see puffer_kernels.h), backwards over its `horizon` rows. All
// pointers are offset to the segment's first row; `next_value` is V after its last row.
PUFFER_HD void advantage_segment(const float *values, const float *rewards,
                                 const uint8_t *terminals, const uint8_t *truncations,
                                 const float *ratio, float next_value, float *advantages,
                                 int64_t horizon, float gamma, float gamma_lam, float rho_clip,
                                 float c_clip) {
    float adv = 0.0f; // bootstrapped through next_value at the segment end, not A = 0
    for (int64_t t = horizon - 1; t >= 0; --t) {
        const float v = values[t];
        const float done = terminals[t] ? 1.0f : 0.0f;
        const float trunc = truncations[t] ? 1.0f : 0.0f;
        // Under auto-reset the final observation of a truncated episode is not in the buffer;
        // V_t stands in for its value, so a truncation bootstraps instead of acting terminal.
        const float nv = truncations[t] ? v : next_value;
        const float rho = clip_max(ratio[t], rho_clip);
        const float c = clip_max(ratio[t], c_clip);
        const float delta = rho * (rewards[t] + gamma * nv * (1.0f - done) - v);
        adv = delta + gamma_lam * c * (1.0f - done) * (1.0f - trunc) * adv;
        advantages[t] = adv;
        next_value = v;
    }
}

} // namespace puffer

#endif // PUFFER_RECURRENCE_H
