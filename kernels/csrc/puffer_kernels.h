/* C ABI of puffer's training kernels (puff advantage, segment priorities, categorical PPO loss,
 * LSTM with resets, linear scan).
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
 * final_values: (S, T) float32, V(final obs) of the episode a truncated row ends (read only where
 * truncations is set); next_values: (S,) float32, V of the observation after each segment's last
 * row. */
int puffer_advantage_cpu(const float *values, const float *rewards, const uint8_t *terminals,
                         const uint8_t *truncations, const float *final_values, const float *ratio,
                         const float *next_values, float *advantages, int64_t segments,
                         int64_t horizon, float gamma, float lam, float rho_clip, float c_clip,
                         int num_threads);

/* Segment priorities p_i = (sum_t |A_it|)^alpha / sum_j (...), uniform when all sums are 0.
 * advantages: (S, T) float32; probs: (S,) float32. */
int puffer_segment_priorities_cpu(const float *advantages, float *probs, int64_t segments,
                                  int64_t horizon, float alpha, int num_threads);

int puffer_advantage_cuda(const float *values, const float *rewards, const uint8_t *terminals,
                          const uint8_t *truncations, const float *final_values, const float *ratio,
                          const float *next_values, float *advantages, int64_t segments,
                          int64_t horizon, float gamma, float lam, float rho_clip, float c_clip,
                          void *stream);

int puffer_segment_priorities_cuda(const float *advantages, float *probs, int64_t segments,
                                   int64_t horizon, float alpha, void *stream);

const char *puffer_cuda_error_string(int error);

/* The categorical PPO loss (puffer.train.ppo.ppo_loss over CategoricalHead.evaluate), CPU,
 * float32, over N = B * T rows of B segments (row i belongs to segment i / horizon):
 * logits (N, K, W): K branches of W logits (padding and illegal choices at a large negative
 * value); actions (N, K) int64; new_value, old_logprob, old_value, advantage, mask, value_mask
 * (N,); weight (B,) importance weights; adv_mean, adv_std the minibatch's advantage norms.
 *   forward:  -> probs, logp (N, K, W) per branch (kept for backward); ratio (N,) pi_new/pi_old;
 *             sums (5,) float64 over rows: mask * policy term, value_mask * value error,
 *             mask * entropy, mask * approx KL, mask * clipped.
 *   backward: from forward's probs, logp and ratio, and the loss's gradient per summed term
 *             (grad_policy = dL/d(policy sum), likewise the value-error and entropy sums) ->
 *             grad_logits (N, K, W), grad_value (N,). */
int puffer_ppo_categorical_forward_cpu(const float *logits, const int64_t *actions,
                                       const float *new_value, const float *old_logprob,
                                       const float *old_value, const float *advantage,
                                       const float *weight, const float *mask,
                                       const float *value_mask, float *probs, float *logp,
                                       float *ratio, double *sums, int64_t rows, int64_t horizon,
                                       int64_t branches, int64_t width, float adv_mean,
                                       float adv_std, float clip, float vf_clip, int num_threads);
int puffer_ppo_categorical_backward_cpu(
    const float *logits, const int64_t *actions, const float *new_value, const float *old_logprob,
    const float *old_value, const float *advantage, const float *weight, const float *mask,
    const float *value_mask, const float *probs, const float *logp, const float *ratio,
    float *grad_logits, float *grad_value, int64_t rows, int64_t horizon, int64_t branches,
    int64_t width, float adv_mean, float adv_std, float clip, float vf_clip, float grad_policy,
    float grad_value_error, float grad_entropy, int num_threads);

/* Sequence kernels, float32 (_f32) and float64 (_f64). (B, T, X) means B rows of T steps of X
 * values, row-major. starts: (B, T) uint8, 1 where an episode began at step t; the state entering
 * such a step is zeroed (cut), except at t = 0, where h0/c0 are the stored, already cut, state.
 *
 * LSTM (torch.nn.LSTM gate order i, f, g, o), H hidden units:
 *   forward:  xproj (B, T, 4H) = x W_ih^T; bias (4H,) = b_ih + b_hh; w_hh (4H, H); h0, c0 (B, H) ->
 *             y (B, T, H) the h_t, c (B, T, H) the c_t, gates (B, T, 4H) the activations.
 *   backward: from forward's c and gates and grad_y = dL/dy ->
 *             grad_pre (B, T, 4H) = dL/dxproj (so dL/dW_hh = sum_t grad_pre_t^T h_{t-1},
 *             dL/dbias = sum of grad_pre, and dL/dW_ih, dL/dx follow by matrix products),
 *             grad_h0, grad_c0 (B, H).
 * Linear scan h_t = a_t h_{t-1} + b_t, width W (a_t = 0 cuts the state):
 *   forward:  a, b (B, T, W); h0 (B, W) -> h (B, T, W).
 *   backward: from a, h0, h and grad_h = dL/dh -> grad_a, grad_b (B, T, W), grad_h0 (B, W).
 * MinGRU layer with a highway gate (PufferNet's; the math in recurrence.h), H units:
 *   forward:  pre (B, T, 3H) = [h~ | g | p] = x W^T; x (B, T, H) the layer's input; h0 (B, H);
 *             starts (B, T) (t > 0: h_{t-1} is cut to 0) -> y (B, T, H) the output,
 *             h (B, T, H) the states.
 *   backward: from forward's inputs, h and grad_y = dL/dy -> grad_pre (B, T, 3H), grad_x
 *             (B, T, H) (the highway's share; x W^T's follows by a matrix product), grad_h0. */
#define PUFFER_SEQUENCE_DECLS(T, SUFFIX, LAST)                                                     \
    int puffer_lstm_forward_##SUFFIX(const T *xproj, const T *bias, const T *w_hh, const T *h0,    \
                                     const T *c0, const uint8_t *starts, T *y, T *c, T *gates,     \
                                     int64_t batch, int64_t steps, int64_t hidden, LAST);          \
    int puffer_lstm_backward_##SUFFIX(const T *w_hh, const T *c0, const uint8_t *starts,           \
                                      const T *c, const T *gates, const T *grad_y, T *grad_pre,    \
                                      T *grad_h0, T *grad_c0, int64_t batch, int64_t steps,        \
                                      int64_t hidden, LAST);                                       \
    int puffer_linear_scan_##SUFFIX(const T *a, const T *b, const T *h0, T *h, int64_t batch,      \
                                    int64_t steps, int64_t width, LAST);                           \
    int puffer_linear_scan_backward_##SUFFIX(const T *a, const T *h0, const T *h, const T *grad_h, \
                                             T *grad_a, T *grad_b, T *grad_h0, int64_t batch,      \
                                             int64_t steps, int64_t width, LAST);                  \
    int puffer_mingru_scan_##SUFFIX(const T *pre, const T *x, const T *h0, const uint8_t *starts,  \
                                    T *y, T *h, int64_t batch, int64_t steps, int64_t hidden,      \
                                    LAST);                                                         \
    int puffer_mingru_scan_backward_##SUFFIX(                                                      \
        const T *pre, const T *x, const T *h0, const uint8_t *starts, const T *h, const T *grad_y, \
        T *grad_pre, T *grad_x, T *grad_h0, int64_t batch, int64_t steps, int64_t hidden, LAST);

/* CPU: the last argument is the OpenMP thread count. */
PUFFER_SEQUENCE_DECLS(float, cpu_f32, int num_threads)
PUFFER_SEQUENCE_DECLS(double, cpu_f64, int num_threads)
/* One LSTM step for inference (CPU only; CUDA has torch's fused cell): pre (B, 4H) = x W_ih^T +
 * h W_hh^T, bias (4H,) = b_ih + b_hh, c_in (B, H) -> h_out, c_out (B, H). */
int puffer_lstm_cell_cpu_f32(const float *pre, const float *bias, const float *c_in, float *h_out,
                             float *c_out, int64_t batch, int64_t hidden, int num_threads);
int puffer_lstm_cell_cpu_f64(const double *pre, const double *bias, const double *c_in,
                             double *h_out, double *c_out, int64_t batch, int64_t hidden,
                             int num_threads);
/* Vector width in bits (512 with AVX-512, else 256) of the CPU sequence kernels' row work; the
 * environment variable PUFFER_KERNELS_VECTOR_BITS=256 keeps them at 256. The widths agree to
 * float rounding. */
int puffer_cpu_vector_bits(void);
/* CUDA: device pointers, enqueued on `stream`. The LSTM keeps 6H values of a row in shared
 * memory (H <= 1024 in float32, 512 in float64; larger H returns cudaErrorInvalidValue). */
PUFFER_SEQUENCE_DECLS(float, cuda_f32, void *stream)
PUFFER_SEQUENCE_DECLS(double, cuda_f64, void *stream)
#undef PUFFER_SEQUENCE_DECLS

#ifdef __cplusplus
}
#endif

#endif /* PUFFER_KERNELS_H */
