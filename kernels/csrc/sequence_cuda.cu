// CUDA implementations of the sequence kernels in puffer_kernels.h, with the per-unit math from
// recurrence.h. Launches are asynchronous on the caller's stream; the return value is the launch
// error. The LSTM runs one block per batch row (its time loop is sequential); the scan one
// thread per (row, column).
#include <cuda_runtime.h>

#include "puffer_kernels.h"
#include "recurrence.h"

namespace {

constexpr int kLstmThreads = 256;
constexpr int kScanThreads = 128;
constexpr size_t kSharedBytes = 48 * 1024;

__device__ bool cut(const uint8_t *starts, int64_t b, int64_t t, int64_t steps) {
    return t > 0 && starts[b * steps + t];
}

template <typename T>
__global__ void lstm_forward_kernel(const T *__restrict__ xproj, const T *__restrict__ bias,
                                    const T *__restrict__ w_hh, const T *__restrict__ h0,
                                    const T *__restrict__ c0, const uint8_t *__restrict__ starts,
                                    T *__restrict__ y, T *__restrict__ c, T *__restrict__ gates,
                                    int64_t steps, int64_t hidden) {
    extern __shared__ unsigned char shared[];
    T *h_prev = reinterpret_cast<T *>(shared); // (H)
    T *c_prev = h_prev + hidden;               // (H)
    T *pre = c_prev + hidden;                  // (4H)
    const int64_t b = blockIdx.x, G = 4 * hidden;
    for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
        h_prev[k] = h0[b * hidden + k];
        c_prev[k] = c0[b * hidden + k];
    }
    __syncthreads();
    for (int64_t t = 0; t < steps; ++t) {
        const bool was_cut = cut(starts, b, t, steps);
        const int64_t row = b * steps + t;
        // One gate unit per thread: its row of W_hh against h_{t-1} (zero after a cut).
        for (int64_t j = threadIdx.x; j < G; j += blockDim.x) {
            T sum = xproj[row * G + j] + bias[j];
            if (!was_cut) {
                const T *w = w_hh + j * hidden;
                for (int64_t k = 0; k < hidden; ++k)
                    sum += w[k] * h_prev[k];
            }
            pre[j] = sum;
        }
        __syncthreads();
        for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
            T act[4], h;
            const T ck =
                puffer::lstm_unit_forward(pre[k], pre[hidden + k], pre[2 * hidden + k],
                                          pre[3 * hidden + k], was_cut ? T(0) : c_prev[k], act, &h);
            for (int q = 0; q < 4; ++q)
                gates[row * G + q * hidden + k] = act[q];
            c[row * hidden + k] = ck;
            y[row * hidden + k] = h;
            c_prev[k] = ck;
            h_prev[k] = h;
        }
        __syncthreads();
    }
}

template <typename T>
__global__ void lstm_backward_kernel(const T *__restrict__ w_hh, const T *__restrict__ c0,
                                     const uint8_t *__restrict__ starts, const T *__restrict__ c,
                                     const T *__restrict__ gates, const T *__restrict__ grad_y,
                                     T *__restrict__ grad_pre, T *__restrict__ grad_h0,
                                     T *__restrict__ grad_c0, int64_t steps, int64_t hidden) {
    extern __shared__ unsigned char shared[];
    T *dh_next = reinterpret_cast<T *>(shared); // (H)
    T *dc_next = dh_next + hidden;              // (H)
    T *dpre = dc_next + hidden;                 // (4H)
    const int64_t b = blockIdx.x, G = 4 * hidden;
    for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x)
        dh_next[k] = dc_next[k] = T(0);
    __syncthreads();
    for (int64_t t = steps - 1; t >= 0; --t) {
        const bool was_cut = cut(starts, b, t, steps);
        const int64_t row = b * steps + t;
        for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
            const T *g = gates + row * G;
            const T act[4] = {g[k], g[hidden + k], g[2 * hidden + k], g[3 * hidden + k]};
            const T c_prev =
                t > 0 ? (was_cut ? T(0) : c[(row - 1) * hidden + k]) : c0[b * hidden + k];
            T d[4];
            const T dc_prev =
                puffer::lstm_unit_backward(act, c[row * hidden + k], c_prev,
                                           grad_y[row * hidden + k] + dh_next[k], dc_next[k], d);
            for (int q = 0; q < 4; ++q) {
                dpre[q * hidden + k] = d[q];
                grad_pre[row * G + q * hidden + k] = d[q];
            }
            dc_next[k] = was_cut ? T(0) : dc_prev;
        }
        __syncthreads();
        // dh_{t-1}[k] = sum_j dpre_t[j] W_hh[j, k]: threads walk k, so reads of W_hh coalesce.
        for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
            T sum = T(0);
            if (!was_cut)
                for (int64_t j = 0; j < G; ++j)
                    sum += dpre[j] * w_hh[j * hidden + k];
            dh_next[k] = sum;
        }
        __syncthreads();
    }
    for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) {
        grad_h0[b * hidden + k] = dh_next[k];
        grad_c0[b * hidden + k] = dc_next[k];
    }
}

template <typename T>
__global__ void linear_scan_kernel(const T *__restrict__ a, const T *__restrict__ b,
                                   const T *__restrict__ h0, T *__restrict__ h, int64_t batch,
                                   int64_t steps, int64_t width) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= batch * width) return;
    const int64_t row = i / width, w = i % width, base = row * steps * width + w;
    puffer::linear_scan_column(a + base, b + base, h0[i], h + base, steps, width);
}

template <typename T>
__global__ void linear_scan_backward_kernel(const T *__restrict__ a, const T *__restrict__ h0,
                                            const T *__restrict__ h, const T *__restrict__ grad_h,
                                            T *__restrict__ grad_a, T *__restrict__ grad_b,
                                            T *__restrict__ grad_h0, int64_t batch, int64_t steps,
                                            int64_t width) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= batch * width) return;
    const int64_t row = i / width, w = i % width, base = row * steps * width + w;
    grad_h0[i] = puffer::linear_scan_column_backward(a + base, h0[i], h + base, grad_h + base,
                                                     grad_a + base, grad_b + base, steps, width);
}

template <typename T> size_t lstm_shared_bytes(int64_t hidden) {
    return static_cast<size_t>(6 * hidden) * sizeof(T);
}

unsigned scan_blocks(int64_t batch, int64_t width) {
    return static_cast<unsigned>((batch * width + kScanThreads - 1) / kScanThreads);
}

} // namespace

#define PUFFER_SEQUENCE_CUDA(T, SUFFIX)                                                            \
    extern "C" int puffer_lstm_forward_cuda_##SUFFIX(                                              \
        const T *xproj, const T *bias, const T *w_hh, const T *h0, const T *c0,                    \
        const uint8_t *starts, T *y, T *c, T *gates, int64_t batch, int64_t steps, int64_t hidden, \
        void *stream) {                                                                            \
        const size_t bytes = lstm_shared_bytes<T>(hidden);                                         \
        if (bytes > kSharedBytes) return static_cast<int>(cudaErrorInvalidValue);                  \
        if (batch == 0) return 0;                                                                  \
        lstm_forward_kernel<T><<<static_cast<unsigned>(batch), kLstmThreads, bytes,                \
                                 static_cast<cudaStream_t>(stream)>>>(                             \
            xproj, bias, w_hh, h0, c0, starts, y, c, gates, steps, hidden);                        \
        return static_cast<int>(cudaGetLastError());                                               \
    }                                                                                              \
    extern "C" int puffer_lstm_backward_cuda_##SUFFIX(                                             \
        const T *w_hh, const T *c0, const uint8_t *starts, const T *c, const T *gates,             \
        const T *grad_y, T *grad_pre, T *grad_h0, T *grad_c0, int64_t batch, int64_t steps,        \
        int64_t hidden, void *stream) {                                                            \
        const size_t bytes = lstm_shared_bytes<T>(hidden);                                         \
        if (bytes > kSharedBytes) return static_cast<int>(cudaErrorInvalidValue);                  \
        if (batch == 0) return 0;                                                                  \
        lstm_backward_kernel<T><<<static_cast<unsigned>(batch), kLstmThreads, bytes,               \
                                  static_cast<cudaStream_t>(stream)>>>(                            \
            w_hh, c0, starts, c, gates, grad_y, grad_pre, grad_h0, grad_c0, steps, hidden);        \
        return static_cast<int>(cudaGetLastError());                                               \
    }                                                                                              \
    extern "C" int puffer_linear_scan_cuda_##SUFFIX(const T *a, const T *b, const T *h0, T *h,     \
                                                    int64_t batch, int64_t steps, int64_t width,   \
                                                    void *stream) {                                \
        if (batch * width == 0) return 0;                                                          \
        linear_scan_kernel<T>                                                                      \
            <<<scan_blocks(batch, width), kScanThreads, 0, static_cast<cudaStream_t>(stream)>>>(   \
                a, b, h0, h, batch, steps, width);                                                 \
        return static_cast<int>(cudaGetLastError());                                               \
    }                                                                                              \
    extern "C" int puffer_linear_scan_backward_cuda_##SUFFIX(                                      \
        const T *a, const T *h0, const T *h, const T *grad_h, T *grad_a, T *grad_b, T *grad_h0,    \
        int64_t batch, int64_t steps, int64_t width, void *stream) {                               \
        if (batch * width == 0) return 0;                                                          \
        linear_scan_backward_kernel<T>                                                             \
            <<<scan_blocks(batch, width), kScanThreads, 0, static_cast<cudaStream_t>(stream)>>>(   \
                a, h0, h, grad_h, grad_a, grad_b, grad_h0, batch, steps, width);                   \
        return static_cast<int>(cudaGetLastError());                                               \
    }

PUFFER_SEQUENCE_CUDA(float, f32)
PUFFER_SEQUENCE_CUDA(double, f64)
