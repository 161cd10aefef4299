// CPU (OpenMP) implementations of the C ABI in puffer_kernels.h. One segment is one sequential
// backward recursion, so segments are the unit of parallel work.
#include "puffer_kernels.h"

#include <algorithm>
#include <cmath>

extern "C" const char *puffer_kernels_version(void) {
    return PUFFER_VERSION;
}

extern "C" int puffer_advantage_cpu(const float *values, const float *rewards,
                                    const uint8_t *terminals, const uint8_t *truncations,
                                    const float *ratio, const float *next_values, float *advantages,
                                    int64_t segments, int64_t horizon, float gamma, float lam,
                                    float rho_clip, float c_clip, int num_threads) {
    // gamma * lam is formed in float once, as the torch reference does with its scalar.
    const float gamma_lam = gamma * lam;
#pragma omp parallel for schedule(static) num_threads(num_threads)
    for (int64_t i = 0; i < segments; ++i) {
        const int64_t row = i * horizon;
        float next_value = next_values[i]; // bootstrap at the segment end, not A = 0
        float adv = 0.0f;
        for (int64_t t = horizon - 1; t >= 0; --t) {
            const int64_t k = row + t;
            const float v = values[k];
            const float done = terminals[k] ? 1.0f : 0.0f;
            const float trunc = truncations[k] ? 1.0f : 0.0f;
            // Under auto-reset the final observation of a truncated episode is not in the buffer;
            // V_t stands in for its value, so a truncation bootstraps instead of acting terminal.
            const float nv = truncations[k] ? v : next_value;
            const float rho = std::min(ratio[k], rho_clip);
            const float c = std::min(ratio[k], c_clip);
            const float delta = rho * (rewards[k] + gamma * nv * (1.0f - done) - v);
            adv = delta + gamma_lam * c * (1.0f - done) * (1.0f - trunc) * adv;
            advantages[k] = adv;
            next_value = v;
        }
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
