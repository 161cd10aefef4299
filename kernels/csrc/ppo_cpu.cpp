// The categorical PPO loss (puffer.train.ppo.ppo_loss over CategoricalHead.evaluate) in one
// pass over the rows each way. Forward copies a block of rows' logits into choice-major order
// (choice j of every row contiguous), so every step after that is a contiguous loop over rows
// that runs as vector code, exponentials included; it keeps the probabilities and
// log-probabilities in that order for backward, which is then arithmetic only. Sums run in
// fixed chunks, added in chunk order: results do not depend on the thread count.
#include "puffer_kernels.h"
#include "recurrence.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

constexpr int64_t kChunk = 1024; // rows per unit of parallel work (and of each partial sum)
constexpr int64_t kBlock = 256;  // rows per vector pass (their scratch rows stay in L1)

// Clones for AVX-512 and AVX2 picked at load time; portable builds assume SSE2.
#if defined(__x86_64__) && defined(__GNUC__)
#define PUFFER_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PUFFER_CLONES
#endif

// expf's results from recurrence.h's polynomial (glibc's expf is a call per value): outside
// its clamp 0 below -87.3 (padded and illegal logits get probability 0), infinity above 88.72
// (a diverging ratio stays visible), and NaN for NaN.
__attribute__((always_inline)) inline puffer::VecF16 exp_lanes(puffer::VecF16 x) {
    using puffer::VecF16;
    VecF16 y = puffer::exp_(x);
    y = x < -87.3f ? VecF16{} : y;
    y = x > 88.72283905f ? VecF16{} + INFINITY : y;
    return x != x ? x : y;
}

// exp of `count` floats in place, 16 lanes at a time.
__attribute__((always_inline)) inline void exp_in_place(float *values, int64_t count) {
    puffer::VecF16 x;
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) {
        std::memcpy(&x, values + i, sizeof x);
        x = exp_lanes(x);
        std::memcpy(values + i, &x, sizeof x);
    }
    if (i < count) {
        const size_t tail = sizeof(float) * (count - i);
        x = puffer::VecF16{};
        std::memcpy(&x, values + i, tail);
        x = exp_lanes(x);
        std::memcpy(values + i, &x, tail);
    }
}

// torch.maximum's value (NaN in either operand gives NaN) and its backward's share of the
// gradient for `self` (ties split it).
inline float maximum(float a, float b) {
    const float larger = a > b ? a : b;
    return (a != a || b != b) ? a + b : larger;
}
inline float share(float self, float other) {
    const float half = self == other ? 0.5f : 0.0f;
    return self > other ? 1.0f : half;
}

struct Rows {
    const float *logits;
    const int64_t *actions;
    const float *new_value, *old_logprob, *old_value, *advantage, *weight, *mask, *value_mask;
    int64_t rows, horizon, branches, width;
    float adv_mean, adv_std, clip, vf_clip;
};

// Importance-weighted normalized advantages of rows [first, first + count).
inline void weighted_advantages(const Rows &in, int64_t first, int64_t count, float *adv) {
    // The segment advances every `horizon` rows (a division per row took a third of forward).
    int64_t segment = first / in.horizon, step = first % in.horizon;
    for (int64_t i = 0; i < count; ++i) {
        adv[i] =
            in.weight[segment] * ((in.advantage[first + i] - in.adv_mean) / (in.adv_std + 1e-8f));
        if (++step == in.horizon) {
            step = 0;
            ++segment;
        }
    }
}

// Rows [first, first + count), count <= kBlock. probs and logp are choice-major, (K * W, rows):
// choice j of row r at j * rows + r. Writes the ratio and adds the five masked sums to sum.
PUFFER_CLONES void forward_block(const Rows &in, int64_t first, int64_t count, float *probs,
                                 float *logp, float *ratio, double *sum) {
    const int64_t choices = in.branches * in.width, n = in.rows;
    for (int64_t i = 0; i < count; ++i) // the logits, choice-major, into logp
        for (int64_t j = 0; j < choices; ++j)
            logp[j * n + first + i] = in.logits[(first + i) * choices + j];
    float new_logprob[kBlock], entropy[kBlock], top[kBlock], total[kBlock], lse[kBlock];
    std::fill(new_logprob, new_logprob + count, 0.0f);
    std::fill(entropy, entropy + count, 0.0f);
    for (int64_t b = 0; b < in.branches; ++b) {
        float *p = probs + b * in.width * n + first, *lp = logp + b * in.width * n + first;
        std::copy(lp, lp + count, top);
        for (int64_t k = 1; k < in.width; ++k)
#pragma omp simd
            for (int64_t i = 0; i < count; ++i)
                top[i] = std::max(top[i], lp[k * n + i]);
        std::fill(total, total + count, 0.0f);
        for (int64_t k = 0; k < in.width; ++k) {
#pragma omp simd
            for (int64_t i = 0; i < count; ++i)
                p[k * n + i] = lp[k * n + i] - top[i];
            exp_in_place(p + k * n, count);
#pragma omp simd
            for (int64_t i = 0; i < count; ++i)
                total[i] += p[k * n + i];
        }
        for (int64_t i = 0; i < count; ++i)
            lse[i] = top[i] + std::log(total[i]);
        for (int64_t k = 0; k < in.width; ++k)
#pragma omp simd
            for (int64_t i = 0; i < count; ++i) {
                const float pk = p[k * n + i] / total[i];
                const float lpk = lp[k * n + i] - lse[i];
                p[k * n + i] = pk;
                lp[k * n + i] = lpk;
                entropy[i] -= pk * lpk;
            }
        for (int64_t i = 0; i < count; ++i)
            new_logprob[i] += lp[in.actions[(first + i) * in.branches + b] * n + i];
    }
    float adv[kBlock];
    weighted_advantages(in, first, count, adv);
    const float *old_logprob = in.old_logprob + first, *old_value = in.old_value + first;
    const float *value = in.new_value + first, *advantage = in.advantage + first;
    const float *mask = in.mask + first, *value_mask = in.value_mask + first;
    float *out = ratio + first, log_ratio[kBlock];
#pragma omp simd
    for (int64_t i = 0; i < count; ++i)
        log_ratio[i] = out[i] = new_logprob[i] - old_logprob[i];
    exp_in_place(out, count);
    const float lo = 1.0f - in.clip, hi = 1.0f + in.clip;
    float policy = 0.0f, value_error = 0.0f, bonus = 0.0f, kl = 0.0f, clipped = 0.0f;
#pragma omp simd reduction(+ : policy, value_error, bonus, kl, clipped)
    for (int64_t i = 0; i < count; ++i) {
        const float r = out[i];
        const float r_clipped = std::min(std::max(r, lo), hi);
        policy += mask[i] * maximum(-adv[i] * r, -adv[i] * r_clipped);
        const float old = old_value[i], returns = advantage[i] + old;
        const float v_clipped = old + std::min(std::max(value[i] - old, -in.vf_clip), in.vf_clip);
        const float plain = value[i] - returns, cut = v_clipped - returns;
        value_error += value_mask[i] * maximum(plain * plain, cut * cut);
        bonus += mask[i] * entropy[i];
        kl += mask[i] * ((r - 1.0f) - log_ratio[i]);
        clipped += std::fabs(r - 1.0f) > in.clip ? mask[i] : 0.0f;
    }
    sum[0] += policy;
    sum[1] += value_error;
    sum[2] += bonus;
    sum[3] += kl;
    sum[4] += clipped;
}

PUFFER_CLONES void backward_block(const Rows &in, const float *probs, const float *logp,
                                  const float *ratio, int64_t first, int64_t count,
                                  float grad_policy, float grad_value_error, float grad_entropy,
                                  float *grad_logits, float *grad_value) {
    const int64_t choices = in.branches * in.width, n = in.rows;
    float adv[kBlock], g_logprob[kBlock], g_entropy[kBlock];
    weighted_advantages(in, first, count, adv);
    const float *r_in = ratio + first, *old_value = in.old_value + first;
    const float *value = in.new_value + first, *advantage = in.advantage + first;
    const float *mask = in.mask + first, *value_mask = in.value_mask + first;
    float *g_value = grad_value + first;
    const float lo = 1.0f - in.clip, hi = 1.0f + in.clip;
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) {
        const float r = r_in[i];
        // policy = max(a, b), a = -adv * ratio, b = -adv * clamp(ratio); d/d ratio of each.
        const float a = -adv[i] * r, b = -adv[i] * std::min(std::max(r, lo), hi);
        const float inside = (r >= lo && r <= hi) ? 1.0f : 0.0f;
        const float d_ratio = -adv[i] * (share(a, b) + share(b, a) * inside);
        // The ratio is exp(new log-prob - old): d ratio / d new log-prob = ratio.
        g_logprob[i] = grad_policy * mask[i] * d_ratio * r;
        g_entropy[i] = grad_entropy * mask[i];
        // value error = max(e1, e2), e1 = (v - R)^2, e2 = (old + clamp(v - old) - R)^2.
        const float old = old_value[i], returns = advantage[i] + old, delta = value[i] - old;
        const float v_clipped = old + std::min(std::max(delta, -in.vf_clip), in.vf_clip);
        const float plain = value[i] - returns, cut = v_clipped - returns;
        const float e1 = plain * plain, e2 = cut * cut;
        const float v_inside = (delta >= -in.vf_clip && delta <= in.vf_clip) ? 1.0f : 0.0f;
        g_value[i] = grad_value_error * value_mask[i] *
                     (share(e1, e2) * 2.0f * plain + share(e2, e1) * v_inside * 2.0f * cut);
    }
    float grad[kBlock], entropy[kBlock];
    for (int64_t b = 0; b < in.branches; ++b) {
        const float *p = probs + b * in.width * n + first, *lp = logp + b * in.width * n + first;
        std::fill(entropy, entropy + count, 0.0f);
        for (int64_t k = 0; k < in.width; ++k)
#pragma omp simd
            for (int64_t i = 0; i < count; ++i)
                entropy[i] -= p[k * n + i] * lp[k * n + i];
        // d log p(action) / dz_k = [k == action] - p_k; d H / dz_k = -p_k (log p_k + H).
        for (int64_t k = 0; k < in.width; ++k) {
#pragma omp simd
            for (int64_t i = 0; i < count; ++i)
                grad[i] = -g_logprob[i] * p[k * n + i] -
                          g_entropy[i] * p[k * n + i] * (lp[k * n + i] + entropy[i]);
            float *g = grad_logits + first * choices + b * in.width + k;
            for (int64_t i = 0; i < count; ++i) // back to row-major
                g[i * choices] = grad[i];
        }
        for (int64_t i = 0; i < count; ++i) {
            const int64_t row = first + i;
            grad_logits[row * choices + b * in.width + in.actions[row * in.branches + b]] +=
                g_logprob[i];
        }
    }
}

Rows rows_of(const float *logits, const int64_t *actions, const float *new_value,
             const float *old_logprob, const float *old_value, const float *advantage,
             const float *weight, const float *mask, const float *value_mask, int64_t rows,
             int64_t horizon, int64_t branches, int64_t width, float adv_mean, float adv_std,
             float clip, float vf_clip) {
    return Rows{logits, actions,  new_value,  old_logprob, old_value, advantage,
                weight, mask,     value_mask, rows,        horizon,   branches,
                width,  adv_mean, adv_std,    clip,        vf_clip};
}

} // namespace

extern "C" int puffer_ppo_categorical_forward_cpu(
    const float *logits, const int64_t *actions, const float *new_value, const float *old_logprob,
    const float *old_value, const float *advantage, const float *weight, const float *mask,
    const float *value_mask, float *probs, float *logp, float *ratio, double *sums, int64_t rows,
    int64_t horizon, int64_t branches, int64_t width, float adv_mean, float adv_std, float clip,
    float vf_clip, int num_threads) {
    const Rows in =
        rows_of(logits, actions, new_value, old_logprob, old_value, advantage, weight, mask,
                value_mask, rows, horizon, branches, width, adv_mean, adv_std, clip, vf_clip);
    const int64_t chunks = (rows + kChunk - 1) / kChunk;
    double *parts = new double[5 * chunks]();
#pragma omp parallel for schedule(static) num_threads(num_threads)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        const int64_t end = std::min(rows, (chunk + 1) * kChunk);
        for (int64_t first = chunk * kChunk; first < end; first += kBlock)
            forward_block(in, first, std::min(kBlock, end - first), probs, logp, ratio,
                          parts + 5 * chunk);
    }
    for (int k = 0; k < 5; ++k) {
        sums[k] = 0.0;
        for (int64_t chunk = 0; chunk < chunks; ++chunk)
            sums[k] += parts[5 * chunk + k];
    }
    delete[] parts;
    return 0;
}

extern "C" int puffer_ppo_categorical_backward_cpu(
    const float *logits, const int64_t *actions, const float *new_value, const float *old_logprob,
    const float *old_value, const float *advantage, const float *weight, const float *mask,
    const float *value_mask, const float *probs, const float *logp, const float *ratio,
    float *grad_logits, float *grad_value, int64_t rows, int64_t horizon, int64_t branches,
    int64_t width, float adv_mean, float adv_std, float clip, float vf_clip, float grad_policy,
    float grad_value_error, float grad_entropy, int num_threads) {
    const Rows in =
        rows_of(logits, actions, new_value, old_logprob, old_value, advantage, weight, mask,
                value_mask, rows, horizon, branches, width, adv_mean, adv_std, clip, vf_clip);
#pragma omp parallel for schedule(static) num_threads(num_threads)
    for (int64_t first = 0; first < rows; first += kBlock)
        backward_block(in, probs, logp, ratio, first, std::min(kBlock, rows - first), grad_policy,
                       grad_value_error, grad_entropy, grad_logits, grad_value);
    return 0;
}
