/* Standalone random rollout of one Ocean env header, no Python: test_ocean_sanitize.py builds it
 * with AddressSanitizer + UBSan once per env, with the env's config and spaces from its Python
 * class:
 *   -DENV_HEADER='"breakout/breakout.h"' -DENV_TYPE=Breakout -DOBS_SIZE=118 -DOBS_LOW=-1
 *   -DOBS_HIGH=1 -DACTIONS=3 '-DSET_CONFIG(env)=env->frameskip=4;env->max_steps=10000;'
 * ACTIONS=0 means one float action in [-1, 1]. argv[1] steps are taken from argv[2] as seed;
 * bounds are checked every step, a frame is rendered every RENDER_EVERY steps, and the env is
 * closed at the end so leaks show. Prints "ok" and the episode count; exits 1 on a failure.
 */
#include <stdio.h>

#include ENV_HEADER

enum { RENDER_EVERY = 997 }; /* prime, so frames land on varied states */

typedef __typeof__(*((ENV_TYPE *)0)->observations) Obs;
typedef __typeof__(*((ENV_TYPE *)0)->actions) Act;

int main(int argc, char **argv) {
    long steps = argc > 1 ? atol(argv[1]) : 1000;
    uint64_t seed = argc > 2 ? (uint64_t)atoll(argv[2]) : 1;
    ENV_TYPE *env = (ENV_TYPE *)calloc(1, sizeof(ENV_TYPE));
    env->num_agents = 1;
    SET_CONFIG(env);
    c_init(env);
    const int agents = env->num_agents;
    env->observations = (Obs *)calloc((size_t)agents * OBS_SIZE, sizeof(Obs));
    env->actions = (Act *)calloc((size_t)agents, sizeof(Act));
    env->rewards = (float *)calloc((size_t)agents, sizeof(float));
    env->terminals = (uint8_t *)calloc((size_t)agents, 1);
    env->truncations = (uint8_t *)calloc((size_t)agents, 1);
    env->rng = seed;
    c_reset(env);
    int width = 0, height = 0;
    c_frame_size(env, &width, &height);
    Canvas canvas = {(uint8_t *)malloc((size_t)width * height * 3), width, height};
    uint64_t action_rng = seed + 1;
    for (long t = 0; t < steps; t++) {
        for (int i = 0; i < agents; i++) {
            env->actions[i] = ACTIONS ? (Act)rng_int(&action_rng, ACTIONS)
                                      : (Act)rng_uniform(&action_rng, -1.0f, 1.0f);
        }
        c_step(env);
        for (int i = 0; i < agents * OBS_SIZE; i++) {
            double value = (double)env->observations[i];
            if (!(value >= OBS_LOW && value <= OBS_HIGH)) {
                fprintf(stderr, "step %ld: observation %d is %g, outside [%g, %g]\n", t, i, value,
                        (double)OBS_LOW, (double)OBS_HIGH);
                return 1;
            }
        }
        if (t % RENDER_EVERY == 0) c_render(env, &canvas);
    }
    printf("ok steps=%ld episodes=%g\n", steps, (double)env->log.n);
    c_close(env);
    free(canvas.pixels);
    free(env->observations);
    free(env->actions);
    free(env->rewards);
    free(env->terminals);
    free(env->truncations);
    free(env);
    return 0;
}
