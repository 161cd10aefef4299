/* Shared by every Ocean env header: fixed-width types, the per-env RNG and the config table.
 *
 * Plain C11, header-only, no globals. The RNG is splitmix64: one uint64_t of state per env,
 * seeded by the binding (seed mixed with the env index), so runs are reproducible and envs never
 * share a stream. Never use rand(): it is global and not thread-safe.
 */
#ifndef PUFFER_H
#define PUFFER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The headers compile as C11 and as C++ (the binding includes them): spell the C keyword once. */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

/* One tunable field of an env struct that Python sets by name before c_init. An env lists its
 * fields in `static const PufferField CONFIG[]`, terminated by an entry whose name is NULL. */
typedef enum { PUFFER_INT, PUFFER_FLOAT } PufferFieldType;
typedef struct {
    const char *name;
    size_t offset;
    PufferFieldType type;
} PufferField;

static inline uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n), n > 0 (multiply-shift: no modulo bias worth measuring). */
static inline int rng_int(uint64_t *state, int n) {
    return (int)(((rng_next(state) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform float in [0, 1). */
static inline float rng_float(uint64_t *state) {
    return (float)(rng_next(state) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform float in [low, high). */
static inline float rng_uniform(uint64_t *state, float low, float high) {
    return low + (high - low) * rng_float(state);
}

#endif
