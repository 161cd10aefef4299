// CPU (OpenMP) implementations of the sequence kernels in puffer_kernels.h: the LSTM with resets
// and the linear scan. Batch rows are independent, so they are the unit of parallel work; the
// time loop runs inside, with the per-unit math from recurrence.h.
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cpu_vectors.h"
#include "puffer_kernels.h"
#include "recurrence.h"

namespace {

using puffer_cpu::load;
using puffer_cpu::store;
using puffer_cpu::Vec;

// Rows of the batch stepped together: each weight row read from cache serves this many.
constexpr int64_t kRows = 8;

// A store to a sequence output written once and not read in this pass (the forward's gates
// and c, the backward's grad_pre: (B, T, .) blocks of many MB): non-temporal where the vector
// is aligned, so it neither reads each line in before writing it nor evicts the weights and row
// state from cache (backward 15 %, forward 2-5 % faster on the 2-core Sapphire Rapids Xeon).
template <typename T, typename V>
__attribute__((always_inline)) inline void store_stream(T *p, V v) {
#if defined(__x86_64__) && defined(__GNUC__)
    if constexpr (sizeof v == 64) { // AVX-512 row work only: the portable clone has no vmovntps
        if (reinterpret_cast<uintptr_t>(p) % 64 == 0) {
            asm("vmovntps %1, %0" : "=m"(*reinterpret_cast<V *>(p)) : "v"(v));
            return;
        }
    }
#endif
    store(p, v);
}

// Orders this thread's streaming stores before what follows (they are weakly ordered): called
// once each thread's share of a pass is done, before the region's closing barrier.
inline void stream_fence() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_ia32_sfence();
#endif
}

// The row product out[r, :n] += sum_k in[r, k] * W[k, :n] reads W (inner, n) packed in panels:
// panel p holds the columns [p P, (p + 1) P), P = two vectors, for every k in turn, so a register
// tile walks 2 B contiguous bytes per k. Read from a row-major W the tile's two vectors for one k
// sit a whole row apart (4H floats, 2 KiB at H = 128) and every k of a tile falls in the same few
// L1 sets (packed: forward 4 %, backward 2 % faster, interleaved runs on a 2-core AVX-512 Xeon).
// Columns past the last full panel follow the panels row-major, (inner, n mod P).
template <typename T, typename At>
std::vector<T> pack_panels(int64_t inner, int64_t n, int64_t panel, At at) {
    std::vector<T> packed(inner * n);
    const int64_t panels = n / panel, tail = n - panels * panel;
    for (int64_t p = 0; p < panels; ++p)
        for (int64_t k = 0; k < inner; ++k)
            for (int64_t j = 0; j < panel; ++j)
                packed[(p * inner + k) * panel + j] = at(k, p * panel + j);
    T *rest = packed.data() + panels * panel * inner;
    for (int64_t k = 0; k < inner; ++k)
        for (int64_t j = 0; j < tail; ++j)
            rest[k * tail + j] = at(k, panels * panel + j);
    return packed;
}

// One panel of R rows: out[r, :P] += sum_k in[r, k] * panel[k, :P] for r < R, out rows n apart.
// The R x 2 accumulators stay in registers over k, so each loaded weight vector feeds R FMAs
// instead of one load-FMA-store per element.
template <int R, int B, typename T>
__attribute__((always_inline)) inline void gemm_tile(T *__restrict__ out, const T *__restrict__ in,
                                                     const T *__restrict__ panel, int64_t inner,
                                                     int64_t n) {
    constexpr int64_t L = B / sizeof(T);
    Vec<T, B> acc[R][2];
    for (int r = 0; r < R; ++r) {
        acc[r][0] = load<B>(out + r * n);
        acc[r][1] = load<B>(out + r * n + L);
    }
    for (int64_t k = 0; k < inner; ++k) {
        const Vec<T, B> w0 = load<B>(panel + k * 2 * L), w1 = load<B>(panel + k * 2 * L + L);
        for (int r = 0; r < R; ++r) {
            const T x = in[r * inner + k];
            acc[r][0] += x * w0;
            acc[r][1] += x * w1;
        }
    }
    for (int r = 0; r < R; ++r) {
        store(out + r * n, acc[r][0]);
        store(out + r * n + L, acc[r][1]);
    }
}

// Tile rows per vector width: R x 2 accumulators and 2 weight vectors fill the registers (16
// ymm with AVX2, 32 zmm with AVX-512); more rows per tile means fewer weight reads from L2.
template <int B> constexpr int kTileRows = B == 64 ? 8 : 4;

// A tile of exactly `rows` rows, 1 <= rows <= R.
template <int R, int B, typename T>
__attribute__((always_inline)) inline void gemm_tile_of(T *out, const T *in, const T *panel,
                                                        int64_t rows, int64_t inner, int64_t n) {
    if constexpr (R > 1) {
        if (rows < R) return gemm_tile_of<R - 1, B>(out, in, panel, rows, inner, n);
    }
    gemm_tile<R, B>(out, in, panel, inner, n);
}

// out (rows, n) += in (rows, inner) @ W, W packed by pack_panels with panels of 2 B bytes.
template <int B, typename T>
__attribute__((always_inline)) inline void gemm_rows(T *out, const T *in, const T *w, int64_t rows,
                                                     int64_t inner, int64_t n) {
    constexpr int R = kTileRows<B>;
    constexpr int64_t P = 2 * B / sizeof(T);
    const int64_t panels = n / P, tail = n - panels * P;
    const T *rest = w + panels * P * inner;
    for (int64_t r0 = 0; r0 < rows; r0 += R) {
        const int64_t m = rows - r0 < R ? rows - r0 : R;
        for (int64_t p = 0; p < panels; ++p)
            gemm_tile_of<R, B>(out + r0 * n + p * P, in + r0 * inner, w + p * P * inner, m, inner,
                               n);
        for (int64_t k = 0; k < inner && tail; ++k)
            for (int64_t r = r0; r < r0 + m; ++r)
                for (int64_t j = 0; j < tail; ++j)
                    out[r * n + panels * P + j] += in[r * inner + k] * rest[k * tail + j];
    }
}

// One step of a row's cells, forward: pre (4H) -> gates (4H), c and y (H); the row's state
// (h, c) is updated in place. The cell math of recurrence.h runs on whole vectors of units
// (libm's scalar expf/tanhf cost more than the matrix products), scalars for the tail.
// Stream: the sequence's gates and c, read back only by its backward, bypass the cache; y is
// read next (the policy's head), and the inference cell's outputs are the next step's input.
template <int B, bool Stream, typename T>
__attribute__((always_inline)) inline void
cells_forward(const T *__restrict__ pre, T *__restrict__ gates, T *__restrict__ c_out,
              T *__restrict__ y_out, T *__restrict__ h_state, T *__restrict__ c_state,
              int64_t hidden) {
    constexpr int64_t L = B / sizeof(T);
    int64_t k = 0;
    for (; k + L <= hidden; k += L) {
        Vec<T, B> act[4], h;
        const Vec<T, B> c = puffer::lstm_unit_forward(
            load<B>(pre + k), load<B>(pre + hidden + k), load<B>(pre + 2 * hidden + k),
            load<B>(pre + 3 * hidden + k), load<B>(c_state + k), act, &h);
        if constexpr (Stream) {
            for (int q = 0; q < 4; ++q)
                store_stream(gates + q * hidden + k, act[q]);
            store_stream(c_out + k, c);
        } else {
            for (int q = 0; q < 4; ++q)
                store(gates + q * hidden + k, act[q]);
            store(c_out + k, c);
        }
        store(c_state + k, c);
        store(y_out + k, h), store(h_state + k, h);
    }
    for (; k < hidden; ++k) {
        T act[4], h;
        const T c = puffer::lstm_unit_forward(pre[k], pre[hidden + k], pre[2 * hidden + k],
                                              pre[3 * hidden + k], c_state[k], act, &h);
        for (int q = 0; q < 4; ++q)
            gates[q * hidden + k] = act[q];
        c_out[k] = c_state[k] = c;
        y_out[k] = h_state[k] = h;
    }
}

// Backward of one step of a row's cells: dh_next/dc_next (H) hold dL/dh_t, dL/dc_t from step
// t + 1 on entry and dL/dc_{t-1} * keep on exit in dc_next; dL/dpre_t (4H) goes to dpre, read
// by the step's product, and to grad_pre, the output.
template <int B, typename T>
__attribute__((always_inline)) inline void
cells_backward(const T *__restrict__ gates, const T *__restrict__ c, const T *__restrict__ c_prev,
               const T *__restrict__ grad_y, const T *__restrict__ dh_next, T *__restrict__ dc_next,
               T *__restrict__ dpre, T *__restrict__ grad_pre, T keep, int64_t hidden) {
    constexpr int64_t L = B / sizeof(T);
    int64_t k = 0;
    for (; k + L <= hidden; k += L) {
        const Vec<T, B> act[4] = {load<B>(gates + k), load<B>(gates + hidden + k),
                                  load<B>(gates + 2 * hidden + k), load<B>(gates + 3 * hidden + k)};
        Vec<T, B> d[4];
        const Vec<T, B> dc_prev = puffer::lstm_unit_backward(
            act, load<B>(c + k), load<B>(c_prev + k), load<B>(grad_y + k) + load<B>(dh_next + k),
            load<B>(dc_next + k), d);
        for (int q = 0; q < 4; ++q) {
            store(dpre + q * hidden + k, d[q]);
            store_stream(grad_pre + q * hidden + k, d[q]);
        }
        store(dc_next + k, dc_prev * keep);
    }
    for (; k < hidden; ++k) {
        const T act[4] = {gates[k], gates[hidden + k], gates[2 * hidden + k],
                          gates[3 * hidden + k]};
        T d[4];
        const T dc_prev =
            puffer::lstm_unit_backward(act, c[k], c_prev[k], grad_y[k] + dh_next[k], dc_next[k], d);
        for (int q = 0; q < 4; ++q)
            dpre[q * hidden + k] = grad_pre[q * hidden + k] = d[q];
        dc_next[k] = dc_prev * keep;
    }
}

#define PUFFER_ROW_WORK(T, B, ATTR, NAME)                                                          \
    ATTR void gemm_##NAME(T *out, const T *in, const T *w, int64_t rows, int64_t inner,            \
                          int64_t n) {                                                             \
        gemm_rows<B>(out, in, w, rows, inner, n);                                                  \
    }                                                                                              \
    ATTR void cells_fwd_##NAME(const T *pre, T *gates, T *c_out, T *y_out, T *h_state, T *c_state, \
                               int64_t hidden) {                                                   \
        cells_forward<B, true>(pre, gates, c_out, y_out, h_state, c_state, hidden);                \
    }                                                                                              \
    ATTR void cells_step_##NAME(const T *pre, T *gates, T *c_out, T *y_out, T *h_state,            \
                                T *c_state, int64_t hidden) {                                      \
        cells_forward<B, false>(pre, gates, c_out, y_out, h_state, c_state, hidden);               \
    }                                                                                              \
    ATTR void cells_bwd_##NAME(const T *gates, const T *c, const T *c_prev, const T *grad_y,       \
                               const T *dh_next, T *dc_next, T *dpre, T *grad_pre, T keep,         \
                               int64_t hidden) {                                                   \
        cells_backward<B>(gates, c, c_prev, grad_y, dh_next, dc_next, dpre, grad_pre, keep,        \
                          hidden);                                                                 \
    }
PUFFER_ROW_WORK(float, 32, PUFFER_W32, f32_w32)
PUFFER_ROW_WORK(double, 32, PUFFER_W32, f64_w32)
PUFFER_ROW_WORK(float, 64, PUFFER_W64, f32_w64)
PUFFER_ROW_WORK(double, 64, PUFFER_W64, f64_w64)
#undef PUFFER_ROW_WORK

// 512 where the CPU runs AVX-512 (F, DQ, BW, VL: x86-64-v4) and PUFFER_KERNELS_VECTOR_BITS is
// not 256, else 256; decided once per process.
int vector_bits() {
    static const int bits = [] {
        int widest = 256;
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
            widest = 512;
#endif
        const char *asked = getenv("PUFFER_KERNELS_VECTOR_BITS");
        return asked != nullptr && atoi(asked) == 256 ? 256 : widest;
    }();
    return bits;
}

// The row work of dtype T at the width vector_bits() picked.
template <typename T> struct RowWork {
    int64_t panel; // gemm's panel width in elements (pack_panels)
    void (*gemm)(T *out, const T *in, const T *w, int64_t rows, int64_t inner, int64_t n);
    void (*cells_fwd)(const T *pre, T *gates, T *c_out, T *y_out, T *h_state, T *c_state,
                      int64_t hidden);
    void (*cells_step)(const T *pre, T *gates, T *c_out, T *y_out, T *h_state, T *c_state,
                       int64_t hidden); // cells_fwd without streaming stores
    void (*cells_bwd)(const T *gates, const T *c, const T *c_prev, const T *grad_y,
                      const T *dh_next, T *dc_next, T *dpre, T *grad_pre, T keep, int64_t hidden);
};

template <typename T> RowWork<T> row_work();
template <> RowWork<float> row_work() {
    if (vector_bits() == 512)
        return {32, gemm_f32_w64, cells_fwd_f32_w64, cells_step_f32_w64, cells_bwd_f32_w64};
    return {16, gemm_f32_w32, cells_fwd_f32_w32, cells_step_f32_w32, cells_bwd_f32_w32};
}
template <> RowWork<double> row_work() {
    if (vector_bits() == 512)
        return {16, gemm_f64_w64, cells_fwd_f64_w64, cells_step_f64_w64, cells_bwd_f64_w64};
    return {8, gemm_f64_w32, cells_fwd_f64_w32, cells_step_f64_w32, cells_bwd_f64_w32};
}

// A step's state is cut (zeroed) when an episode began at it; t = 0 uses the stored state as is.
inline bool cut(const uint8_t *starts, int64_t b, int64_t t, int64_t steps) {
    return t > 0 && starts[b * steps + t];
}

template <typename T>
void lstm_forward(const T *xproj, const T *bias, const T *w_hh, const T *h0, const T *c0,
                  const uint8_t *starts, T *y, T *c, T *gates, int64_t batch, int64_t steps,
                  int64_t hidden, int num_threads) {
    const int64_t G = 4 * hidden;
    const int64_t blocks = (batch + kRows - 1) / kRows;
    const RowWork<T> work = row_work<T>();
    // W_hh^T, (H, 4H): the step's product h_{t-1} W_hh^T.
    const std::vector<T> w_t = pack_panels<T>(
        hidden, G, work.panel, [&](int64_t k, int64_t j) { return w_hh[j * hidden + k]; });
#pragma omp parallel num_threads(num_threads)
    {
        std::vector<T> h_prev(kRows * hidden), c_prev(kRows * hidden), pre(kRows * G);
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; ++blk) {
            const int64_t b0 = blk * kRows;
            const int64_t rows = batch - b0 < kRows ? batch - b0 : kRows;
            memcpy(h_prev.data(), h0 + b0 * hidden, rows * hidden * sizeof(T));
            memcpy(c_prev.data(), c0 + b0 * hidden, rows * hidden * sizeof(T));
            for (int64_t t = 0; t < steps; ++t) {
                for (int64_t r = 0; r < rows; ++r) {
                    if (cut(starts, b0 + r, t, steps)) {
                        memset(&h_prev[r * hidden], 0, hidden * sizeof(T));
                        memset(&c_prev[r * hidden], 0, hidden * sizeof(T));
                    }
                    // The bias joins here, not as a pass of its own over the (B, T, 4H) input.
                    const T *x = xproj + ((b0 + r) * steps + t) * G;
                    for (int64_t j = 0; j < G; ++j)
                        pre[r * G + j] = x[j] + bias[j];
                }
                work.gemm(pre.data(), h_prev.data(), w_t.data(), rows, hidden, G);
                for (int64_t r = 0; r < rows; ++r) {
                    const int64_t row = (b0 + r) * steps + t;
                    work.cells_fwd(&pre[r * G], gates + row * G, c + row * hidden, y + row * hidden,
                                   &h_prev[r * hidden], &c_prev[r * hidden], hidden);
                }
            }
        }
        stream_fence();
    }
}

template <typename T>
void lstm_backward(const T *w_hh, const T *c0, const uint8_t *starts, const T *c, const T *gates,
                   const T *grad_y, T *grad_pre, T *grad_h0, T *grad_c0, int64_t batch,
                   int64_t steps, int64_t hidden, int num_threads) {
    const int64_t G = 4 * hidden;
    const int64_t blocks = (batch + kRows - 1) / kRows;
    const RowWork<T> work = row_work<T>();
    // W_hh, (4H, H): the step's product dh_{t-1} = dpre_t W_hh.
    const std::vector<T> w = pack_panels<T>(
        G, hidden, work.panel, [&](int64_t k, int64_t j) { return w_hh[k * hidden + j]; });
#pragma omp parallel num_threads(num_threads)
    {
        // dh_next, dc_next: gradients reaching step t's state from step t + 1.
        std::vector<T> dh_next(kRows * hidden), dc_next(kRows * hidden), dpre(kRows * G);
        const std::vector<T> zeros(hidden, T(0)); // c_{t-1} where the state was cut
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; ++blk) {
            const int64_t b0 = blk * kRows;
            const int64_t rows = batch - b0 < kRows ? batch - b0 : kRows;
            for (auto &v : dh_next)
                v = T(0);
            for (auto &v : dc_next)
                v = T(0);
            for (int64_t t = steps - 1; t >= 0; --t) {
                for (int64_t r = 0; r < rows; ++r) {
                    const int64_t b = b0 + r, row = b * steps + t;
                    const bool was_cut = cut(starts, b, t, steps);
                    const T *c_prev = t == 0 ? c0 + b * hidden
                                             : (was_cut ? zeros.data() : c + (row - 1) * hidden);
                    work.cells_bwd(gates + row * G, c + row * hidden, c_prev, grad_y + row * hidden,
                                   &dh_next[r * hidden], &dc_next[r * hidden], &dpre[r * G],
                                   grad_pre + row * G, was_cut ? T(0) : T(1), hidden);
                }
                // dh_{t-1} = dpre_t W_hh, except where the state was cut before step t.
                for (auto &v : dh_next)
                    v = T(0);
                work.gemm(dh_next.data(), dpre.data(), w.data(), rows, G, hidden);
                for (int64_t r = 0; r < rows; ++r)
                    if (cut(starts, b0 + r, t, steps))
                        memset(&dh_next[r * hidden], 0, hidden * sizeof(T));
            }
            memcpy(grad_h0 + b0 * hidden, dh_next.data(), rows * hidden * sizeof(T));
            memcpy(grad_c0 + b0 * hidden, dc_next.data(), rows * hidden * sizeof(T));
        }
        stream_fence();
    }
}

// One LSTM step for inference: the products (x W_ih^T + h W_hh^T, BLAS in torch) plus the bias
// go through the cell in one vectorized pass; torch.lstm_cell on CPU spends longer on its
// separate elementwise passes than on the two products, and a bias added by torch costs a pass
// of its own over the (B, 4H) block.
template <typename T>
void lstm_cell(const T *pre, const T *bias, const T *c_in, T *h_out, T *c_out, int64_t batch,
               int64_t hidden, int num_threads) {
    const int64_t G = 4 * hidden;
    const RowWork<T> work = row_work<T>();
#pragma omp parallel num_threads(num_threads)
    {
        std::vector<T> row(G), gates(G), h(hidden), c(hidden);
#pragma omp for schedule(static)
        for (int64_t b = 0; b < batch; ++b) {
            for (int64_t j = 0; j < G; ++j)
                row[j] = pre[b * G + j] + bias[j];
            memcpy(c.data(), c_in + b * hidden, hidden * sizeof(T));
            work.cells_step(row.data(), gates.data(), c_out + b * hidden, h_out + b * hidden,
                            h.data(), c.data(), hidden);
        }
    }
}

template <typename T>
void linear_scan(const T *a, const T *b, const T *h0, T *h, int64_t batch, int64_t steps,
                 int64_t width, int num_threads) {
#pragma omp parallel for schedule(static) num_threads(num_threads)
    for (int64_t i = 0; i < batch; ++i) {
        const int64_t base = i * steps * width;
        for (int64_t w = 0; w < width; ++w)
            puffer::linear_scan_column(a + base + w, b + base + w, h0[i * width + w], h + base + w,
                                       steps, width);
    }
}

template <typename T>
void linear_scan_backward(const T *a, const T *h0, const T *h, const T *grad_h, T *grad_a,
                          T *grad_b, T *grad_h0, int64_t batch, int64_t steps, int64_t width,
                          int num_threads) {
#pragma omp parallel for schedule(static) num_threads(num_threads)
    for (int64_t i = 0; i < batch; ++i) {
        const int64_t base = i * steps * width;
        for (int64_t w = 0; w < width; ++w)
            grad_h0[i * width + w] = puffer::linear_scan_column_backward(
                a + base + w, h0[i * width + w], h + base + w, grad_h + base + w, grad_a + base + w,
                grad_b + base + w, steps, width);
    }
}

} // namespace

#define PUFFER_SEQUENCE_CPU(T, SUFFIX)                                                             \
    extern "C" int puffer_lstm_forward_cpu_##SUFFIX(                                               \
        const T *xproj, const T *bias, const T *w_hh, const T *h0, const T *c0,                    \
        const uint8_t *starts, T *y, T *c, T *gates, int64_t batch, int64_t steps, int64_t hidden, \
        int num_threads) {                                                                         \
        lstm_forward(xproj, bias, w_hh, h0, c0, starts, y, c, gates, batch, steps, hidden,         \
                     num_threads);                                                                 \
        return 0;                                                                                  \
    }                                                                                              \
    extern "C" int puffer_lstm_backward_cpu_##SUFFIX(                                              \
        const T *w_hh, const T *c0, const uint8_t *starts, const T *c, const T *gates,             \
        const T *grad_y, T *grad_pre, T *grad_h0, T *grad_c0, int64_t batch, int64_t steps,        \
        int64_t hidden, int num_threads) {                                                         \
        lstm_backward(w_hh, c0, starts, c, gates, grad_y, grad_pre, grad_h0, grad_c0, batch,       \
                      steps, hidden, num_threads);                                                 \
        return 0;                                                                                  \
    }                                                                                              \
    extern "C" int puffer_lstm_cell_cpu_##SUFFIX(const T *pre, const T *bias, const T *c_in,       \
                                                 T *h_out, T *c_out, int64_t batch,                \
                                                 int64_t hidden, int num_threads) {                \
        lstm_cell(pre, bias, c_in, h_out, c_out, batch, hidden, num_threads);                      \
        return 0;                                                                                  \
    }                                                                                              \
    extern "C" int puffer_linear_scan_cpu_##SUFFIX(const T *a, const T *b, const T *h0, T *h,      \
                                                   int64_t batch, int64_t steps, int64_t width,    \
                                                   int num_threads) {                              \
        linear_scan(a, b, h0, h, batch, steps, width, num_threads);                                \
        return 0;                                                                                  \
    }                                                                                              \
    extern "C" int puffer_linear_scan_backward_cpu_##SUFFIX(                                       \
        const T *a, const T *h0, const T *h, const T *grad_h, T *grad_a, T *grad_b, T *grad_h0,    \
        int64_t batch, int64_t steps, int64_t width, int num_threads) {                            \
        linear_scan_backward(a, h0, h, grad_h, grad_a, grad_b, grad_h0, batch, steps, width,       \
                             num_threads);                                                         \
        return 0;                                                                                  \
    }

extern "C" int puffer_cpu_vector_bits(void) {
    return vector_bits();
}

PUFFER_SEQUENCE_CPU(float, f32)
PUFFER_SEQUENCE_CPU(double, f64)
