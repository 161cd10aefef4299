// CPU (OpenMP) implementations of the C ABI in puffer_kernels.h. One segment is one sequential
// backward recursion, so segments are the unit of parallel work.
#include "puffer_kernels.h"
#include "recurrence.h"

#include <cmath>

extern "C" const char *puffer_kernels_version(void) {
    return PUFFER_VERSION;
}

extern "C" int puffer_advantage_cpu(const float *values, const float *rewards,
                                    const uint8_t *terminals, const uint8_t *truncations,
                                    const float *final_values, const float *ratio,
                                    const float *next_values, float *advantages, int64_t segments,
                                    int64_t horizon, float gamma, float lam, float rho_clip,
                                    float c_clip, int num_threads) {
    // gamma * lam is formed in float once, as the torch reference does with its scalar.
    const float gamma_lam = gamma * lam;
#pragma omp parallel for schedule(static) num_threads(num_threads)
    for (int64_t i = 0; i < segments; ++i) {
        const int64_t row = i * horizon;
        puffer::advantage_segment(values + row, rewards + row, terminals + row, truncations + row,
                                  final_values + row, ratio + row, next_values[i], advantages + row,
                                  horizon, gamma, gamma_lam, rho_clip, c_clip);
    }
    return 0;
}

// The priority pass is bound by how fast one row is summed; an AVX2 clone picked at load time
// (portable builds only assume SSE2) brings it from behind torch's vectorized sum to ahead.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
static float abs_sum(const float *row, int64_t n) {
    float sum = 0.0f;
    // simd lets the compiler reorder the sum into vector lanes (within 1e-6 of torch's order).
#pragma omp simd reduction(+ : sum)
    for (int64_t t = 0; t < n; ++t)
        sum += std::fabs(row[t]);
    return sum;
}

extern "C" int puffer_segment_priorities_cpu(const float *advantages, float *probs,
                                             int64_t segments, int64_t horizon, float alpha,
                                             int num_threads) {
    double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(num_threads)
    for (int64_t i = 0; i < segments; ++i) {
        probs[i] = std::pow(abs_sum(advantages + i * horizon, horizon), alpha);
        total += probs[i];
    }
    // All-zero advantages (e.g. a constant reward that V already predicts) give no preference.
    const float uniform = segments > 0 ? 1.0f / static_cast<float>(segments) : 0.0f;
    for (int64_t i = 0; i < segments; ++i)
        probs[i] = total > 0.0 ? static_cast<float>(probs[i] / total) : uniform;
    return 0;
}
