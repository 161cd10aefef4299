/* The sanitizer harness for every Ocean env header, no Python involved. test_ocean_sanitize.py
 * builds it once per env with AddressSanitizer + UBSan (leak checks on) and only
 *   -DENV_HEADER='"breakout/breakout.h"'
 * Everything else comes from the header's SPEC, as in the binding: the config defaults, the
 * agents per env (c_init), the action space, the observation bounds and the state layout.
 *
 * argv[1] random in-range steps from seed argv[2], poisoning rewards and flags before each step
 * and checking after it that c_step wrote every reward (finite) and flag (0 or 1) and that every
 * observation is inside the declared bounds; a frame is rendered every
 * RENDER_EVERY steps. Then: a rerun of the first COMPARED steps with the same seed must match bit
 * for bit and one with another seed must differ; and halfway through, the state is saved,
 * COMPARED steps are taken, the state is loaded and the same steps must repeat bit for bit.
 * Prints "ok steps=... episodes=..." and exits 0; prints the first failure and exits 1.
 */
#include <stdio.h>

#include ENV_HEADER

enum { RENDER_EVERY = 997 };             /* prime, so frames land on varied states */
enum { COMPARED = 20000 };               /* steps compared between reruns and across save/load */
static const uint8_t FLAG_POISON = 0xAA; /* a bool c_step must overwrite with 0 or 1 */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        exit(1);                                                                                   \
    } while (0)

typedef __typeof__(*((OceanEnv *)0)->observations) Obs;
typedef __typeof__(*((OceanEnv *)0)->actions) Act;

typedef struct {
    OceanEnv env;
    int agents, act_size;
    size_t obs_bytes;
    Obs *observations;
    Act *actions;
    float *rewards;
    uint8_t *terminals, *truncations;
    Canvas canvas;
    uint64_t action_rng;
} Run;

static void run_open(Run *r, uint64_t seed) {
    memset(r, 0, sizeof(*r));
    r->env.num_agents = 1;
    puffer_set_defaults(&SPEC, &r->env);
    if (SPEC.check && SPEC.check(&r->env))
        FAIL("default config refused: %s\n", SPEC.check(&r->env));
    c_init(&r->env);
    const int agents = r->agents = r->env.num_agents;
    r->act_size = SPEC.action_heads ? SPEC.action_heads : SPEC.action_dim;
    r->obs_bytes = (size_t)agents * SPEC.obs_size * sizeof(Obs);
    r->observations = (Obs *)calloc((size_t)agents * SPEC.obs_size, sizeof(Obs));
    r->actions = (Act *)calloc((size_t)agents * r->act_size, sizeof(Act));
    r->rewards = (float *)calloc((size_t)agents, sizeof(float));
    r->terminals = (uint8_t *)calloc((size_t)agents, 1);
    r->truncations = (uint8_t *)calloc((size_t)agents, 1);
    r->env.observations = r->observations;
    r->env.actions = r->actions;
    r->env.rewards = r->rewards;
    r->env.terminals = r->terminals;
    r->env.truncations = r->truncations;
    r->env.rng = seed;
    r->action_rng = seed ^ 0x5DEECE66DULL;
    c_reset(&r->env);
    int width = 0, height = 0;
    c_frame_size(&r->env, &width, &height);
    r->canvas.pixels = (uint8_t *)malloc((size_t)width * (size_t)height * 3);
    r->canvas.width = width;
    r->canvas.height = height;
}

static void run_close(Run *r) {
    c_close(&r->env);
    free(r->canvas.pixels);
    free(r->observations);
    free(r->actions);
    free(r->rewards);
    free(r->terminals);
    free(r->truncations);
}

static uint64_t fnv(uint64_t h, const void *data, size_t size) {
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 0x100000001B3ULL;
    return h;
}

/* One checked step, as the binding takes it; returns `h` extended by what the step wrote. */
static uint64_t run_step(Run *r, long t, uint64_t h) {
    const int agents = r->agents;
    for (int i = 0; i < agents * r->act_size; i++) {
        if (SPEC.action_heads) {
            r->actions[i] = (Act)rng_int(&r->action_rng, SPEC.action_sizes[i % r->act_size]);
        } else {
            r->actions[i] =
                (Act)rng_uniform(&r->action_rng, (float)SPEC.action_low, (float)SPEC.action_high);
        }
    }
    /* Poison: c_step must write every reward and flag (the binding does not clear them). */
    for (int i = 0; i < agents; i++) {
        r->rewards[i] = NAN;
        r->terminals[i] = r->truncations[i] = FLAG_POISON;
    }
    c_step(&r->env);
    for (int i = 0; i < agents; i++) {
        if (!isfinite(r->rewards[i]) || r->terminals[i] > 1 || r->truncations[i] > 1) {
            FAIL("step %ld agent %d: reward %g terminal %d truncation %d\n", t, i,
                 (double)r->rewards[i], r->terminals[i], r->truncations[i]);
        }
    }
    for (int i = 0; i < agents * SPEC.obs_size; i++) {
        const int k = i % SPEC.obs_size;
        const double low = SPEC.obs_lows ? (double)SPEC.obs_lows[k] : SPEC.obs_low;
        const double high = SPEC.obs_highs ? (double)SPEC.obs_highs[k] : SPEC.obs_high;
        const double v = (double)r->observations[i];
        if (!(v >= low && v <= high)) {
            FAIL("step %ld: observation[%d] = %g outside [%g, %g]\n", t, i, v, low, high);
        }
    }
    if (t % RENDER_EVERY == 0) c_render(&r->env, &r->canvas);
    h = fnv(h, r->observations, r->obs_bytes);
    h = fnv(h, r->rewards, (size_t)agents * sizeof(float));
    h = fnv(h, r->terminals, (size_t)agents);
    return fnv(h, r->truncations, (size_t)agents);
}

static uint64_t rollout(uint64_t seed, long steps) {
    Run r;
    run_open(&r, seed);
    uint64_t h = 0xCBF29CE484222325ULL;
    for (long t = 0; t < steps; t++)
        h = run_step(&r, t, h);
    run_close(&r);
    return h;
}

int main(int argc, char **argv) {
    const long steps = argc > 1 ? atol(argv[1]) : 100000;
    const uint64_t seed = argc > 2 ? (uint64_t)atoll(argv[2]) : 1;
    const long compared = steps < COMPARED ? steps : COMPARED;
    Run r;
    run_open(&r, seed);
    uint64_t h = 0xCBF29CE484222325ULL, prefix = 0, saved_hash = 0, saved_action_rng = 0;
    uint8_t *state = NULL;
    const long save_at = steps / 2;
    const long check_at = save_at + compared < steps ? save_at + compared : steps;
    for (long t = 0; t < steps; t++) {
        if (t == save_at) {
            state = (uint8_t *)malloc(puffer_state_size(&SPEC, &r.env, r.obs_bytes));
            puffer_state_save(&SPEC, &r.env, r.obs_bytes, state);
            saved_action_rng = r.action_rng;
            saved_hash = h;
        }
        h = run_step(&r, t, h);
        if (t + 1 == compared) prefix = h;
        if (t + 1 == check_at) {
            /* Back to the saved state: the same steps must write the same bytes. */
            puffer_state_load(&SPEC, &r.env, r.obs_bytes, state);
            r.action_rng = saved_action_rng;
            uint64_t again = saved_hash;
            for (long u = save_at; u <= t; u++)
                again = run_step(&r, u, again);
            if (again != h) FAIL("steps %ld-%ld differ after load_state\n", save_at, t);
            free(state);
        }
    }
    const double episodes = (double)r.env.log.n;
    run_close(&r);
    if (rollout(seed, compared) != prefix) FAIL("one seed gave two different trajectories\n");
    if (rollout(seed + 1, compared) == prefix) FAIL("two seeds gave the same trajectory\n");
    if (episodes < 1.0) FAIL("no episode finished in %ld steps\n", steps);
    printf("ok steps=%ld episodes=%g\n", steps, episodes);
    return 0;
}
