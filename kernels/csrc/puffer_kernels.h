/* C ABI of puffer's training kernels (puff advantage, segment priorities).
 *
 * Every array is a dense row-major float32 (or uint8 for flags) block owned by the caller;
 * (S, T) means S segments of T steps, segment i at offset i * T. The kernels never allocate
 * and never keep a pointer. Each function returns 0 on success; the CUDA functions return the
 * cudaError_t of the launch (puffer_cuda_error_string turns it into text). The CUDA entry
 * points take device pointers and enqueue on `stream` (a cudaStream_t) without synchronizing.
 */
#ifndef PUFFER_KERNELS_H
#define PUFFER_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the package the library was built for, e.g. "0.1.0". */
const char *puffer_kernels_version(void);

/* Puff advantage (GAE with V-trace clipping), see packages/puffer-train/README.md.
 * values, rewards, ratio, advantages: (S, T) float32; terminals, truncations: (S, T) uint8 0/1;
 * next_values: (S,) float32, V of the observation after each segment's last row. */
int puffer_advantage_cpu(const float *values, const float *rewards, const uint8_t *terminals,
                         const uint8_t *truncations, const float *ratio, const float *next_values,
                         float *advantages, int64_t segments, int64_t horizon, float gamma,
                         float lam, float rho_clip, float c_clip, int num_threads);

/* Segment priorities p_i = (sum_t |A_it|)^alpha / sum_j (...), uniform when all sums are 0.
 * advantages: (S, T) float32; probs: (S,) float32. */
int puffer_segment_priorities_cpu(const float *advantages, float *probs, int64_t segments,
                                  int64_t horizon, float alpha, int num_threads);

int puffer_advantage_cuda(const float *values, const float *rewards, const uint8_t *terminals,
                          const uint8_t *truncations, const float *ratio, const float *next_values,
                          float *advantages, int64_t segments, int64_t horizon, float gamma,
                          float lam, float rho_clip, float c_clip, void *stream);

int puffer_segment_priorities_cuda(const float *advantages, float *probs, int64_t segments,
                                   int64_t horizon, float alpha, void *stream);

const char *puffer_cuda_error_string(int error);

#ifdef __cplusplus
}
#endif

#endif /* PUFFER_KERNELS_H */
