// CUDA MinGRU layer over (B, T) segments with episode resets (puffer_kernels.h): one thread per
// (row, unit) runs the row's time loop with the unit math of recurrence.h, forward and backward.
// Launches are asynchronous on the caller's stream; the return value is the launch error.
#include <cuda_runtime.h>

#include "puffer_kernels.h"
#include "recurrence.h"

namespace {

constexpr int kThreads = 128;

__device__ bool cut(const uint8_t *starts, int64_t b, int64_t t, int64_t steps) {
    return t > 0 && starts[b * steps + t];
}

template <typename T>
__global__ void forward_kernel(const T *__restrict__ pre, const T *__restrict__ x,
                               const T *__restrict__ h0, const uint8_t *__restrict__ starts,
                               T *__restrict__ y, T *__restrict__ h, int64_t batch, int64_t steps,
                               int64_t hidden) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= batch * hidden) return;
    const int64_t b = i / hidden, k = i % hidden;
    T state = h0[i];
    for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = b * steps + t;
        if (cut(starts, b, t, steps)) state = T(0);
        const T *p = pre + row * 3 * hidden + k;
        state = puffer::mingru_unit_forward<T>(p[0], p[hidden], p[2 * hidden], x[row * hidden + k],
                                               state, &y[row * hidden + k]);
        h[row * hidden + k] = state;
    }
}

template <typename T>
__global__ void
backward_kernel(const T *__restrict__ pre, const T *__restrict__ x, const T *__restrict__ h0,
                const uint8_t *__restrict__ starts, const T *__restrict__ h,
                const T *__restrict__ grad_y, T *__restrict__ grad_pre, T *__restrict__ grad_x,
                T *__restrict__ grad_h0, int64_t batch, int64_t steps, int64_t hidden) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= batch * hidden) return;
    const int64_t b = i / hidden, k = i % hidden;
    T dh = T(0);
    for (int64_t t = steps - 1; t >= 0; --t) {
        const int64_t row = b * steps + t, at = row * hidden + k;
        const bool cut_prev = cut(starts, b, t, steps);
        const T prev = cut_prev ? T(0) : (t == 0 ? h0[i] : h[at - hidden]);
        const T *p = pre + row * 3 * hidden + k;
        T *g = grad_pre + row * 3 * hidden + k;
        dh = puffer::mingru_unit_backward<T>(p[0], p[hidden], p[2 * hidden], x[at], prev, h[at],
                                             grad_y[at], dh, &g[0], &g[hidden], &g[2 * hidden],
                                             &grad_x[at]);
        if (cut_prev) dh = T(0);
    }
    grad_h0[i] = dh;
}

unsigned blocks(int64_t batch, int64_t hidden) {
    return static_cast<unsigned>((batch * hidden + kThreads - 1) / kThreads);
}

} // namespace

#define PUFFER_MINGRU_CUDA(T, SUFFIX)                                                              \
    extern "C" int puffer_mingru_scan_cuda_##SUFFIX(                                               \
        const T *pre, const T *x, const T *h0, const uint8_t *starts, T *y, T *h, int64_t batch,   \
        int64_t steps, int64_t hidden, void *stream) {                                             \
        if (batch * hidden == 0) return 0;                                                         \
        forward_kernel<T>                                                                          \
            <<<blocks(batch, hidden), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(           \
                pre, x, h0, starts, y, h, batch, steps, hidden);                                   \
        return static_cast<int>(cudaGetLastError());                                               \
    }                                                                                              \
    extern "C" int puffer_mingru_scan_backward_cuda_##SUFFIX(                                      \
        const T *pre, const T *x, const T *h0, const uint8_t *starts, const T *h, const T *grad_y, \
        T *grad_pre, T *grad_x, T *grad_h0, int64_t batch, int64_t steps, int64_t hidden,          \
        void *stream) {                                                                            \
        if (batch * hidden == 0) return 0;                                                         \
        backward_kernel<T>                                                                         \
            <<<blocks(batch, hidden), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(           \
                pre, x, h0, starts, h, grad_y, grad_pre, grad_x, grad_h0, batch, steps, hidden);   \
        return static_cast<int>(cudaGetLastError());                                               \
    }

PUFFER_MINGRU_CUDA(float, f32)
PUFFER_MINGRU_CUDA(double, f64)
