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

/* One tunable field of an env struct, set by name before c_init. An env lists its fields in
 * `static const PufferField CONFIG[]`, terminated by an entry whose name is NULL. The default
 * and the inclusive range are the only place these numbers are stated: Python builds the env's
 * config dataclass (and the CLI its defaults) from them, and the binding refuses values outside. */
typedef enum { PUFFER_INT, PUFFER_FLOAT } PufferFieldType;
typedef struct {
    const char *name;
    size_t offset;
    PufferFieldType type;
    double value;    /* default */
    double min, max; /* inclusive range */
    const char *doc; /* one line: meaning and unit */
} PufferField;

typedef enum { PUFFER_UINT8, PUFFER_INT8, PUFFER_FLOAT32 } PufferDtype;

/* A heap array an env owns (allocated in c_init): the offset of its pointer in the env struct
 * and its size in bytes. save_state copies the bytes; the pointer itself is never saved. */
typedef struct {
    size_t offset;
    size_t bytes;
} PufferBlock;
enum { PUFFER_MAX_BLOCKS = 8 };

/* Everything Python and the binding know about an env, declared once per header as
 * `static const PufferSpec SPEC`. Observations are flat rows of `obs_size` elements; actions
 * are `action_heads` int32 choices per agent (1 head: Discrete, more: MultiDiscrete) or, with
 * action_heads == 0, `action_dim` float32 values. */
typedef struct {
    const char *doc; /* the env's rules, observation and action; the Python docstring */
    PufferDtype obs_dtype;
    int obs_size;                      /* elements in one agent's observation row */
    double obs_low, obs_high;          /* bounds of every element, unless per element: */
    const float *obs_lows, *obs_highs; /* obs_size bounds each, or NULL */
    int action_heads;                  /* discrete choices per agent; 0: continuous */
    const int *action_sizes;           /* action_heads sizes */
    int action_dim;                    /* continuous: floats per agent */
    double action_low, action_high;    /* continuous: bounds (the policy clips; NaN/inf refused) */
    const PufferField *config;         /* NULL-terminated */
    const char *const *log_names;      /* one per Log float, the last "n" */
    int log_size;
    size_t env_size; /* sizeof the env struct: its plain data is the saved state */
    size_t rows[5];  /* offsets of observations, actions, rewards, terminals, truncations */
    /* Heap arrays the env owns, written to `out` (at most PUFFER_MAX_BLOCKS); NULL: none. */
    int (*blocks)(const void *env, PufferBlock *out);
    /* Re-derives pointers into those arrays after a load; NULL: none needed. */
    void (*relink)(void *env);
    /* A config problem the ranges cannot express, as a message, or NULL if fine. */
    const char *(*check)(const void *env);
    /* Legal actions, for envs that declare them (NULL: every action is always legal). Writes
     * one byte per action (1 legal, 0 not) for each agent of `env`, sum(action_sizes) bytes a
     * row, into `out`. A pure function of the env's state: the binding calls it after every
     * reset, step and load_state and exports the rows as the buffer's `action_masks`. */
    void (*action_mask)(const void *env, uint8_t *out);
} PufferSpec;

/* One entry of an env's key map: how a person plays it (`puffer play`). Holding `key` (a pygame
 * key name: "left", "space", "a", "1") sets action head `head` (a continuous env: action element
 * `head`) to `value`. The key "idle" names the action while no key is held and makes play real
 * time (a step every frame); an env without it is turn-based (a step per key press), and its
 * keys may be sequences, names separated by spaces ("c 4": c, then 4). Each header
 * declares its map in one line, `static const PufferKey KEYS[] = {..., {NULL, 0, 0}};`, which
 * the binding exports as the spec's "keys" (a header without one exports none). */
typedef struct {
    const char *key;
    int head;
    double value;
} PufferKey;

#define PUFFER_ROWS(Env)                                                                           \
    {offsetof(Env, observations), offsetof(Env, actions), offsetof(Env, rewards),                  \
     offsetof(Env, terminals), offsetof(Env, truncations)}
#define PUFFER_COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))
/* The SPEC fields every header fills the same way, from its CONFIG, LOG_NAMES and struct. Fields
 * a SPEC leaves out are zero/NULL: no per-element bounds, no heap arrays, no hooks. */
#define PUFFER_SPEC_TABLES(Env)                                                                    \
    .config = CONFIG, .log_names = LOG_NAMES, .log_size = PUFFER_COUNT(LOG_NAMES),                 \
    .env_size = sizeof(Env), .rows = PUFFER_ROWS(Env)

/* Wraps an env header. In C it names the env struct `OceanEnv` (the sanitizer harness steps
 * any header through that name); in the C++ binding it also puts the header in namespace
 * `name` and registers the env with the module, so including the header is its registration. */
#ifdef __cplusplus
/* Inside an env's namespace, `KEYS` is its own key map; for a header without one, lookup falls
 * through to this empty map (C has no namespaces, and only Python reads key maps). */
static const PufferKey *const KEYS = nullptr;
#define PUFFER_ENV_BEGIN(name) namespace name {
#define PUFFER_ENV_END(name, Env)                                                                  \
    typedef Env OceanEnv;                                                                          \
    static const PufferKey *const KEY_MAP = KEYS;                                                  \
    }                                                                                              \
    static const bool name##_registered =                                                          \
        puffer_register<name::Env>(#name, #Env, __FILE__, &name::SPEC, name::KEY_MAP);
#else
#define PUFFER_ENV_BEGIN(name)
#define PUFFER_ENV_END(name, Env) typedef Env OceanEnv;
#endif

/* Writes `value` into the env's config field (rounded toward zero for int fields). */
static inline void puffer_set_field(void *env, const PufferField *field, double value) {
    char *at = (char *)env + field->offset;
    if (field->type == PUFFER_INT) {
        int v = (int)value;
        memcpy(at, &v, sizeof(v));
    } else {
        float v = (float)value;
        memcpy(at, &v, sizeof(v));
    }
}

/* Sets every config field to the default the header declares (before c_init). */
static inline void puffer_set_defaults(const PufferSpec *spec, void *env) {
    for (const PufferField *f = spec->config; f->name; f++)
        puffer_set_field(env, f, f->value);
}

static inline void *puffer_pointer(const void *env, size_t offset) {
    void *pointer;
    memcpy(&pointer, (const char *)env + offset, sizeof(pointer));
    return pointer;
}

static inline void puffer_set_pointer(void *env, size_t offset, void *pointer) {
    memcpy((char *)env + offset, &pointer, sizeof(pointer));
}

static inline int puffer_blocks(const PufferSpec *spec, const void *env, PufferBlock *out) {
    return spec->blocks ? spec->blocks(env, out) : 0;
}

/* Bytes of one env's saved state: its struct, its heap arrays and its observation rows (some
 * envs update observations in place, so they are state too). */
static inline size_t puffer_state_size(const PufferSpec *spec, const void *env, size_t obs_bytes) {
    PufferBlock blocks[PUFFER_MAX_BLOCKS];
    size_t size = spec->env_size + obs_bytes;
    for (int i = 0, n = puffer_blocks(spec, env, blocks); i < n; i++)
        size += blocks[i].bytes;
    return size;
}

/* Writes puffer_state_size bytes. Pointers are saved as zeros, so equal states are equal bytes. */
static inline void puffer_state_save(const PufferSpec *spec, const void *env, size_t obs_bytes,
                                     uint8_t *out) {
    PufferBlock blocks[PUFFER_MAX_BLOCKS];
    const int n = puffer_blocks(spec, env, blocks);
    memcpy(out, env, spec->env_size);
    for (int i = 0; i < 5; i++)
        puffer_set_pointer(out, spec->rows[i], NULL);
    for (int i = 0; i < n; i++)
        puffer_set_pointer(out, blocks[i].offset, NULL);
    out += spec->env_size;
    for (int i = 0; i < n; i++) {
        memcpy(out, puffer_pointer(env, blocks[i].offset), blocks[i].bytes);
        out += blocks[i].bytes;
    }
    memcpy(out, puffer_pointer(env, spec->rows[0]), obs_bytes);
}

/* Restores what puffer_state_save wrote into an env built with the same config, keeping this
 * env's own rows and heap arrays (only their contents change). */
static inline void puffer_state_load(const PufferSpec *spec, void *env, size_t obs_bytes,
                                     const uint8_t *in) {
    PufferBlock blocks[PUFFER_MAX_BLOCKS];
    void *rows[5], *heap[PUFFER_MAX_BLOCKS];
    const int n = puffer_blocks(spec, env, blocks);
    for (int i = 0; i < 5; i++)
        rows[i] = puffer_pointer(env, spec->rows[i]);
    for (int i = 0; i < n; i++)
        heap[i] = puffer_pointer(env, blocks[i].offset);
    memcpy(env, in, spec->env_size);
    for (int i = 0; i < 5; i++)
        puffer_set_pointer(env, spec->rows[i], rows[i]);
    for (int i = 0; i < n; i++)
        puffer_set_pointer(env, blocks[i].offset, heap[i]);
    in += spec->env_size;
    for (int i = 0; i < n; i++) {
        memcpy(heap[i], in, blocks[i].bytes);
        in += blocks[i].bytes;
    }
    memcpy(rows[0], in, obs_bytes);
    if (spec->relink) spec->relink(env);
}

/* v limited to [lo, hi] by plain comparisons (fminf / fmaxf compile to library calls). */
static inline float puffer_clip(float v, float lo, float hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

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
