// The recurrences shared by the CPU and CUDA kernels: one source of the math, so the two builds
// cannot drift. Compiled by nvcc these are __host__ __device__; by a C++ compiler, plain inline
// functions. The kernels around them only decide what runs in parallel and where data lives.
#ifndef PUFFER_RECURRENCE_H
#define PUFFER_RECURRENCE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PUFFER_HD __host__ __device__ __forceinline__
#else
// Always inlined, so the vector versions compile into each caller's instruction set (AVX2 or
// AVX-512) and no call passes a vector across the two ABIs (hence -Wpsabi is silenced).
#define PUFFER_HD inline __attribute__((always_inline))
#pragma GCC diagnostic ignored "-Wpsabi"
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
                                 const float *final_values, const float *ratio, float next_value,
                                 float *advantages, int64_t horizon, float gamma, float gamma_lam,
                                 float rho_clip, float c_clip) {
    float adv = 0.0f; // bootstrapped through next_value at the segment end, not A = 0
    for (int64_t t = horizon - 1; t >= 0; --t) {
        const float v = values[t];
        const float done = terminals[t] ? 1.0f : 0.0f;
        const float trunc = truncations[t] ? 1.0f : 0.0f;
        // Under auto-reset the next row of a truncated episode is the next episode's start: a
        // truncation bootstraps from V(final obs), kept beside the row, instead of acting terminal.
        const float nv = truncations[t] ? final_values[t] : next_value;
        const float rho = clip_max(ratio[t], rho_clip);
        const float c = clip_max(ratio[t], c_clip);
        const float delta = rho * (rewards[t] + gamma * nv * (1.0f - done) - v);
        adv = delta + gamma_lam * c * (1.0f - done) * (1.0f - trunc) * adv;
        advantages[t] = adv;
        next_value = v;
    }
}

// ---- LSTM with resets (torch.nn.LSTM gate order i, f, g, o) ----------------------------------

// exp for the cell's activations: expf/exp for scalars (the GPU's, or libm's). The CPU kernel
// runs the same cell functions on 32- or 64-byte vectors (8 or 16 floats: AVX2 or AVX-512),
// where libm has no vector exp: a Cephes-style range reduction and polynomial, within 2 ulp of
// expf, the same lane by lane at either width.
PUFFER_HD float exp_(float x) {
    return expf(x);
}
PUFFER_HD double exp_(double x) {
    return exp(x);
}

#ifndef __CUDACC__
typedef float VecF __attribute__((vector_size(32)));
typedef double VecD __attribute__((vector_size(32)));
typedef int32_t VecI __attribute__((vector_size(32)));
typedef float VecF16 __attribute__((vector_size(64)));
typedef double VecD8 __attribute__((vector_size(64)));
typedef int32_t VecI16 __attribute__((vector_size(64)));

template <typename V, typename VI> PUFFER_HD V exp_floats(V x) {
    const V lo = V{} - 87.3f, hi = V{} + 88.3f, half = V{} + 0.5f;
    x = x < lo ? lo : (x > hi ? hi : x);
    // x = n ln 2 + r with n = round(x / ln 2), |r| <= ln 2 / 2.
    const V t = x * 1.44269504088896341f;
    const VI ni = __builtin_convertvector(t + (t >= 0.0f ? half : -half), VI);
    const V n = __builtin_convertvector(ni, V);
    const V r = x - n * 0.693359375f + n * 2.12194440e-4f;
    V p = V{} + 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const VI bits = (ni + 127) << 23; // 2^n
    return p * reinterpret_cast<const V &>(bits);
}

PUFFER_HD VecF exp_(VecF x) {
    return exp_floats<VecF, VecI>(x);
}
PUFFER_HD VecF16 exp_(VecF16 x) {
    return exp_floats<VecF16, VecI16>(x);
}

// Doubles (the float64 kernels, for tests) lane by lane through libm.
template <typename V> PUFFER_HD V exp_doubles(V x) {
    for (unsigned i = 0; i < sizeof(V) / sizeof(double); ++i)
        x[i] = exp(x[i]);
    return x;
}
PUFFER_HD VecD exp_(VecD x) {
    return exp_doubles(x);
}
PUFFER_HD VecD8 exp_(VecD8 x) {
    return exp_doubles(x);
}
#endif

template <typename V> PUFFER_HD V sigmoid(V x) {
    return 1 / (1 + exp_(-x));
}

// tanh through the same exp: 1 - 2 / (e^{2x} + 1) saturates cleanly at +-1.
template <typename V> PUFFER_HD V tanh_(V x) {
    return 1 - 2 / (exp_(2 * x) + 1);
}

// One hidden unit of one step (or a vector of units: T is a scalar or a vector type above).
// pre_*: gate pre-activations (x W_ih^T + b + h_{t-1} W_hh^T); writes the activations to
// gates[0..3] (i, f, g, o) and returns c_t, with h_t in *h.
template <typename T>
PUFFER_HD T lstm_unit_forward(T pre_i, T pre_f, T pre_g, T pre_o, T c_prev, T gates[4], T *h) {
    const T i = sigmoid(pre_i), f = sigmoid(pre_f), g = tanh_(pre_g), o = sigmoid(pre_o);
    const T c = f * c_prev + i * g;
    gates[0] = i;
    gates[1] = f;
    gates[2] = g;
    gates[3] = o;
    *h = o * tanh_(c);
    return c;
}

// Its backward: dh = dL/dh_t (output and recurrent), dc = dL/dc_t from step t + 1. Writes the
// pre-activation gradients to grad_pre[0..3] and returns dL/dc_{t-1}.
template <typename T>
PUFFER_HD T lstm_unit_backward(const T gates[4], T c, T c_prev, T dh, T dc, T grad_pre[4]) {
    const T i = gates[0], f = gates[1], g = gates[2], o = gates[3];
    const T tc = tanh_(c);
    dc += dh * o * (1 - tc * tc);
    grad_pre[0] = dc * g * i * (1 - i);
    grad_pre[1] = dc * c_prev * f * (1 - f);
    grad_pre[2] = dc * i * (1 - g * g);
    grad_pre[3] = dh * tc * o * (1 - o);
    return dc * f;
}

// ---- Linear scan h_t = a_t h_{t-1} + b_t (the MinGRU recurrence; a_t = 0 cuts the state) -----

// Forward over one column of `steps` entries `stride` apart; h_prev is h_{-1}.
template <typename T>
PUFFER_HD void linear_scan_column(const T *a, const T *b, T h_prev, T *h, int64_t steps,
                                  int64_t stride) {
    for (int64_t t = 0; t < steps; ++t) {
        h_prev = a[t * stride] * h_prev + b[t * stride];
        h[t * stride] = h_prev;
    }
}

// Backward of one column: grad_h = dL/dh_t from outside the scan. Returns dL/dh_{-1}.
template <typename T>
PUFFER_HD T linear_scan_column_backward(const T *a, T h_init, const T *h, const T *grad_h,
                                        T *grad_a, T *grad_b, int64_t steps, int64_t stride) {
    T carry = T(0); // dL/dh_t through h_{t+1}
    for (int64_t t = steps - 1; t >= 0; --t) {
        const int64_t k = t * stride;
        const T dh = grad_h[k] + carry;
        grad_b[k] = dh;
        grad_a[k] = dh * (t > 0 ? h[k - stride] : h_init);
        carry = dh * a[k];
    }
    return carry;
}

// ---- MinGRU layer with a highway gate (PufferNet's): gates, scan and highway in one pass -----
//
// Per unit, from the layer's pre-activations [h~, g, p] (one bias-free product of the input x):
//   z = sigmoid(g), c = phi(h~) (h~ + 1/2 for h~ >= 0, sigmoid(h~) below: positive),
//   h_t = h_{t-1} + z (c - h_{t-1}),  s = sigmoid(p),  y_t = s h_t + (1 - s) x_t.
// S is the scalar type, V the scalar or a vector of it (the CPU's row work).

template <typename S, typename V> PUFFER_HD V mingru_candidate(V pre) {
    return pre >= S(0) ? pre + S(0.5) : sigmoid(pre);
}

// Forward of one unit (or vector of units): returns h_t; writes y_t.
template <typename S, typename V>
PUFFER_HD V mingru_unit_forward(V pre_h, V pre_g, V pre_p, V x, V h_prev, V *y) {
    const V h = h_prev + sigmoid(pre_g) * (mingru_candidate<S>(pre_h) - h_prev);
    *y = x + sigmoid(pre_p) * (h - x);
    return h;
}

// Backward of one unit: dh = dL/dh_t through h_{t+1}, dy = dL/dy_t. Writes the pre-activation
// gradients and the highway's share of dL/dx_t; returns dL/dh_{t-1}.
template <typename S, typename V>
PUFFER_HD V mingru_unit_backward(V pre_h, V pre_g, V pre_p, V x, V h_prev, V h, V dy, V dh,
                                 V *grad_h, V *grad_g, V *grad_p, V *grad_x) {
    const V z = sigmoid(pre_g), s = sigmoid(pre_p), sig_h = sigmoid(pre_h);
    const V c = pre_h >= S(0) ? pre_h + S(0.5) : sig_h;
    *grad_p = dy * (h - x) * s * (1 - s);
    *grad_x = dy * (1 - s);
    const V d_total = dh + dy * s;
    const V d_c = d_total * z;
    *grad_g = d_total * (c - h_prev) * z * (1 - z);
    *grad_h = pre_h >= S(0) ? d_c : d_c * sig_h * (1 - sig_h);
    return d_total * (1 - z);
}

} // namespace puffer

#endif // PUFFER_RECURRENCE_H
