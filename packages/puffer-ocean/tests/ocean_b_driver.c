/* Standalone check of one Ocean env header, no Python involved: built by
 * test_ocean_b_sanitize.py with AddressSanitizer and UBSan, once per env, with
 *   -DENV_HEADER='"tetris/tetris.h"' -DENV_TYPE=Tetris -DOBS_SIZE=234 -DOBS_LOW=-1
 *   -DOBS_HIGH=1 -DACT_SIZE=1 -DACT_NVEC='{7}'

 * (the spaces come from the env's Python class, so this also checks C against Python).
 *
 * It runs `steps` (argv[1]) uniformly random steps from a seed, checking every step that
 * observations stay inside [OBS_LOW, OBS_HIGH] and that rewards, terminals and truncations were
 * written (they are poisoned before each step), and renders a frame every RENDER_EVERY steps. A
 * second run with the same seed must match bit for bit and a run with another seed must differ.
 * Prints one summary line and exits nonzero on the first failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include ENV_HEADER

enum { RENDER_EVERY = 1000 };            /* steps between rendered frames */
static const uint8_t FLAG_POISON = 0xAA; /* a bool the env must overwrite with 0 or 1 */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        exit(1);                                                                                   \
    } while (0)

typedef __typeof__(*((ENV_TYPE *)0)->observations) Obs;

static uint64_t fnv(uint64_t h, const void *data, size_t size) {
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 0x100000001B3ULL;
    return h;
}

/* A seeded random rollout; returns a hash of everything the env wrote in its first
 * `hash_steps` steps. */
static uint64_t rollout(uint64_t seed, long steps, long hash_steps, Log *log) {
    static const int nvec[ACT_SIZE] = ACT_NVEC;
    ENV_TYPE *env = (ENV_TYPE *)calloc(1, sizeof(ENV_TYPE));
    c_init(env);
    const int agents = env->num_agents;
    env->observations = (Obs *)calloc((size_t)agents * OBS_SIZE, sizeof(Obs));
    env->actions = (int32_t *)calloc((size_t)agents * ACT_SIZE, sizeof(int32_t));
    env->rewards = (float *)calloc((size_t)agents, sizeof(float));
    env->terminals = (uint8_t *)calloc((size_t)agents, 1);
    env->truncations = (uint8_t *)calloc((size_t)agents, 1);
    env->rng = seed;
    c_reset(env);
    int width = 0, height = 0;
    c_frame_size(env, &width, &height);
    Canvas canvas = {(uint8_t *)malloc((size_t)width * (size_t)height * 3), width, height};
    uint64_t action_rng = seed ^ 0x5DEECE66DULL, h = 0xCBF29CE484222325ULL;
    for (long t = 0; t < steps; t++) {
        for (int i = 0; i < agents * ACT_SIZE; i++) {
            env->actions[i] = rng_int(&action_rng, nvec[i % ACT_SIZE]);
        }
        for (int i = 0; i < agents; i++) {
            env->rewards[i] = NAN;
            env->terminals[i] = env->truncations[i] = FLAG_POISON;
        }
        c_step(env);
        for (int i = 0; i < agents; i++) {
            if (!isfinite(env->rewards[i]) || env->terminals[i] > 1 || env->truncations[i] > 1) {
                FAIL("step %ld agent %d: reward, terminal or truncation not written\n", t, i);
            }
        }
        for (int i = 0; i < agents * OBS_SIZE; i++) {
            const double v = (double)env->observations[i];
            if (!(v >= OBS_LOW && v <= OBS_HIGH)) {
                FAIL("step %ld: observation[%d] = %g outside [%g, %g]\n", t, i, v, (double)OBS_LOW,
                     (double)OBS_HIGH);
            }
        }
        if (t % RENDER_EVERY == 0) c_render(env, &canvas);
        if (t >= hash_steps) continue;
        h = fnv(h, env->observations, (size_t)agents * OBS_SIZE * sizeof(Obs));
        h = fnv(h, env->rewards, (size_t)agents * sizeof(float));
        h = fnv(h, env->terminals, (size_t)agents);
        h = fnv(h, env->truncations, (size_t)agents);
    }
    *log = env->log;
    c_close(env);
    free(canvas.pixels);
    free(env->observations);
    free(env->actions);
    free(env->rewards);
    free(env->terminals);
    free(env->truncations);
    free(env);
    return h;
}

/* argv[1]: steps of the checked run; argv[2]: steps compared between seeds (a prefix of it,
 * so the determinism reruns stay short). */
int main(int argc, char **argv) {
    const long steps = argc > 1 ? atol(argv[1]) : 100000;
    const long compared = argc > 2 && atol(argv[2]) < steps ? atol(argv[2]) : steps;
    Log log, again_log, other_log;
    const uint64_t first = rollout(1, steps, compared, &log);
    const uint64_t again = rollout(1, compared, compared, &again_log);
    const uint64_t other = rollout(2, compared, compared, &other_log);
    if (first != again) FAIL("seed 1 gave two different trajectories\n");
    if (first == other) FAIL("seeds 1 and 2 gave the same trajectory\n");
    if (log.n < 1.0f) FAIL("no episode finished in %ld steps\n", steps);
    printf("ok steps=%ld episodes=%.0f mean_return=%.4f mean_length=%.1f\n", steps, (double)log.n,
           (double)(log.episode_return / log.n), (double)(log.episode_length / log.n));
    return 0;
}
