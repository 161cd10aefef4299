// CPU (OpenMP) MinGRU layer over (B, T) segments with episode resets: PufferNet's gates, scan
// and highway (recurrence.h) in one pass forward and one backward. Batch rows are the unit of
// parallel work; each step's H units run as B-byte vectors (64 with AVX-512, else 32) with a
// scalar tail. Layouts in puffer_kernels.h.
#include "cpu_vectors.h"
#include "puffer_kernels.h"
#include "recurrence.h"

namespace {

using puffer_cpu::load;
using puffer_cpu::store;
using puffer_cpu::Vec;

inline bool cut(const uint8_t *starts, int64_t b, int64_t t, int64_t steps) {
    return t > 0 && starts[b * steps + t];
}

// One step of one row: pre (3H) = [h~ | g | p], x, h_prev (H; ignored and read as 0 when cut).
template <int B, typename T>
__attribute__((always_inline)) inline void step_forward(const T *pre, const T *x, const T *h_prev,
                                                        bool cut_prev, T *y, T *h, int64_t hidden) {
    using V = Vec<T, B>;
    constexpr int64_t L = B / sizeof(T);
    int64_t k = 0;
    for (; k + L <= hidden; k += L) {
        V out;
        const V prev = cut_prev ? V{} : load<B>(h_prev + k);
        const V now = puffer::mingru_unit_forward<T>(load<B>(pre + k), load<B>(pre + hidden + k),
                                                     load<B>(pre + 2 * hidden + k), load<B>(x + k),
                                                     prev, &out);
        store(y + k, out);
        store(h + k, now);
    }
    for (; k < hidden; ++k) {
        const T prev = cut_prev ? T(0) : h_prev[k];
        h[k] = puffer::mingru_unit_forward<T>(pre[k], pre[hidden + k], pre[2 * hidden + k], x[k],
                                              prev, &y[k]);
    }
}

// Backward of one step of one row: dh (H) holds dL/dh_t through h_{t+1} and leaves holding
// dL/dh_{t-1} (0 where the step cut the state).
template <int B, typename T>
__attribute__((always_inline)) inline void
step_backward(const T *pre, const T *x, const T *h_prev, bool cut_prev, const T *h, const T *dy,
              T *dh, T *grad_pre, T *grad_x, int64_t hidden) {
    using V = Vec<T, B>;
    constexpr int64_t L = B / sizeof(T);
    int64_t k = 0;
    for (; k + L <= hidden; k += L) {
        V gh, gg, gp, gx;
        const V prev = cut_prev ? V{} : load<B>(h_prev + k);
        const V d_prev = puffer::mingru_unit_backward<T>(
            load<B>(pre + k), load<B>(pre + hidden + k), load<B>(pre + 2 * hidden + k),
            load<B>(x + k), prev, load<B>(h + k), load<B>(dy + k), load<B>(dh + k), &gh, &gg, &gp,
            &gx);
        store(grad_pre + k, gh);
        store(grad_pre + hidden + k, gg);
        store(grad_pre + 2 * hidden + k, gp);
        store(grad_x + k, gx);
        store(dh + k, cut_prev ? V{} : d_prev);
    }
    for (; k < hidden; ++k) {
        const T prev = cut_prev ? T(0) : h_prev[k];
        const T d_prev = puffer::mingru_unit_backward<T>(
            pre[k], pre[hidden + k], pre[2 * hidden + k], x[k], prev, h[k], dy[k], dh[k],
            &grad_pre[k], &grad_pre[hidden + k], &grad_pre[2 * hidden + k], &grad_x[k]);
        dh[k] = cut_prev ? T(0) : d_prev;
    }
}

// One batch row's time loop, forward.
template <int B, typename T>
__attribute__((always_inline)) inline void forward_row(const T *pre, const T *x, const T *h0,
                                                       const uint8_t *starts, T *y, T *h, int64_t b,
                                                       int64_t steps, int64_t hidden) {
    for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = b * steps + t;
        const T *h_prev = t == 0 ? h0 + b * hidden : h + (row - 1) * hidden;
        step_forward<B>(pre + row * 3 * hidden, x + row * hidden, h_prev, cut(starts, b, t, steps),
                        y + row * hidden, h + row * hidden, hidden);
    }
}

// One batch row's time loop, backward; grad_h0's row carries dL/dh through it.
template <int B, typename T>
__attribute__((always_inline)) inline void
backward_row(const T *pre, const T *x, const T *h0, const uint8_t *starts, const T *h,
             const T *grad_y, T *grad_pre, T *grad_x, T *grad_h0, int64_t b, int64_t steps,
             int64_t hidden) {
    T *dh = grad_h0 + b * hidden;
    for (int64_t k = 0; k < hidden; ++k)
        dh[k] = T(0);
    for (int64_t t = steps - 1; t >= 0; --t) {
        const int64_t row = b * steps + t;
        const T *h_prev = t == 0 ? h0 + b * hidden : h + (row - 1) * hidden;
        step_backward<B>(pre + row * 3 * hidden, x + row * hidden, h_prev, cut(starts, b, t, steps),
                         h + row * hidden, grad_y + row * hidden, dh, grad_pre + row * 3 * hidden,
                         grad_x + row * hidden, hidden);
    }
}

// The row functions of one dtype at one width, compiled for the instruction set that has the
// width. They are called from plain OpenMP loops: GCC compiles an outlined parallel region for
// the default target whatever its enclosing function's attributes, so the vector work must sit
// in functions of their own.
#define PUFFER_MINGRU_WORK(T, B, ATTR, NAME)                                                       \
    ATTR void forward_row_##NAME(const T *pre, const T *x, const T *h0, const uint8_t *starts,     \
                                 T *y, T *h, int64_t b, int64_t steps, int64_t hidden) {           \
        forward_row<B>(pre, x, h0, starts, y, h, b, steps, hidden);                                \
    }                                                                                              \
    ATTR void backward_row_##NAME(const T *pre, const T *x, const T *h0, const uint8_t *starts,    \
                                  const T *h, const T *grad_y, T *grad_pre, T *grad_x, T *grad_h0, \
                                  int64_t b, int64_t steps, int64_t hidden) {                      \
        backward_row<B>(pre, x, h0, starts, h, grad_y, grad_pre, grad_x, grad_h0, b, steps,        \
                        hidden);                                                                   \
    }
PUFFER_MINGRU_WORK(float, 32, PUFFER_W32, f32_w32)
PUFFER_MINGRU_WORK(double, 32, PUFFER_W32, f64_w32)
PUFFER_MINGRU_WORK(float, 64, PUFFER_W64, f32_w64)
PUFFER_MINGRU_WORK(double, 64, PUFFER_W64, f64_w64)
#undef PUFFER_MINGRU_WORK

} // namespace

#define PUFFER_MINGRU_CPU(T, SUFFIX)                                                               \
    extern "C" int puffer_mingru_scan_cpu_##SUFFIX(                                                \
        const T *pre, const T *x, const T *h0, const uint8_t *starts, T *y, T *h, int64_t batch,   \
        int64_t steps, int64_t hidden, int num_threads) {                                          \
        const auto row = puffer_cpu_vector_bits() == 512 ? forward_row_##SUFFIX##_w64              \
                                                         : forward_row_##SUFFIX##_w32;             \
        _Pragma("omp parallel for schedule(static) num_threads(num_threads)") for (int64_t b = 0;  \
                                                                                   b < batch; ++b) \
            row(pre, x, h0, starts, y, h, b, steps, hidden);                                       \
        return 0;                                                                                  \
    }                                                                                              \
    extern "C" int puffer_mingru_scan_backward_cpu_##SUFFIX(                                       \
        const T *pre, const T *x, const T *h0, const uint8_t *starts, const T *h, const T *grad_y, \
        T *grad_pre, T *grad_x, T *grad_h0, int64_t batch, int64_t steps, int64_t hidden,          \
        int num_threads) {                                                                         \
        const auto row = puffer_cpu_vector_bits() == 512 ? backward_row_##SUFFIX##_w64             \
                                                         : backward_row_##SUFFIX##_w32;            \
        _Pragma("omp parallel for schedule(static) num_threads(num_threads)") for (int64_t b = 0;  \
                                                                                   b < batch; ++b) \
            row(pre, x, h0, starts, h, grad_y, grad_pre, grad_x, grad_h0, b, steps, hidden);       \
        return 0;                                                                                  \
    }

PUFFER_MINGRU_CPU(float, f32)
PUFFER_MINGRU_CPU(double, f64)
