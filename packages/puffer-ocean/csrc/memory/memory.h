/* Memory: recall a cue after a delay, a task only a policy with memory can solve.
 *
 * An episode is `delay + 2` steps (`delay` is config). The first observation shows one of
 * MEMORY_CUES cues (one-hot); the next `delay` observations are all zeros; the last one raises
 * the query flag. The action taken on the query observation is graded: MEMORY_CORRECT_REWARD if
 * it names the cue, else 0, and the episode terminates. Actions before the query are ignored.
 * The query observation is the same whatever the cue, so a memoryless policy scores
 * 1 / MEMORY_CUES in expectation; a recurrent policy can score 1.
 *
 * Observation (MEMORY_OBS float32 in {0, 1}): [0:MEMORY_CUES] the cue, one-hot, on the first
 * step only; [MEMORY_CUES] the query flag. Actions: Discrete(MEMORY_CUES).
 */
#ifndef PUFFER_MEMORY_H
#define PUFFER_MEMORY_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(memory)

enum { MEMORY_CUES = 4, MEMORY_OBS = MEMORY_CUES + 1 };
enum { MEMORY_DEFAULT_DELAY = 8 }; /* blank steps between cue and query */
enum { MEMORY_CELL_PIXELS = 64 };  /* rendered cell size */

static const float MEMORY_CORRECT_REWARD = 1.0f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* 1 if the answer was right: its mean is the accuracy */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations;  /* (1, MEMORY_OBS), caller-owned */
    int32_t *actions;     /* (1,) */
    float *rewards;       /* (1,) */
    uint8_t *terminals;   /* (1,) */
    uint8_t *truncations; /* (1,) */
    int num_agents;
    uint64_t rng;
    Log log;
    int delay; /* config: blank steps */
    int tick;
    int cue;
} Memory;

static const PufferField CONFIG[] = {
    {"delay", offsetof(Memory, delay), PUFFER_INT, MEMORY_DEFAULT_DELAY, 1, 1e9,
     "blank steps between the cue and the query; an episode is delay + 2 steps"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void memory_observe(Memory *env) {
    memset(env->observations, 0, MEMORY_OBS * sizeof(float));
    if (env->tick == 0) env->observations[env->cue] = 1.0f;
    if (env->tick == env->delay + 1) env->observations[MEMORY_CUES] = 1.0f;
}

/* Starts a new episode without touching rewards or flags (see c_step). */
static void memory_new_episode(Memory *env) {
    env->tick = 0;
    env->cue = rng_int(&env->rng, MEMORY_CUES);
    memory_observe(env);
}

static void c_init(Memory *env) {
    env->num_agents = 1;
}

static void c_reset(Memory *env) {
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    memory_new_episode(env);
}

static void c_step(Memory *env) {
    env->truncations[0] = 0;
    if (env->tick <= env->delay) {
        env->tick++;
        env->rewards[0] = 0.0f;
        env->terminals[0] = 0;
        memory_observe(env);
        return;
    }
    const int correct = env->actions[0] == env->cue;
    const float reward = correct ? MEMORY_CORRECT_REWARD : 0.0f;
    env->rewards[0] = reward;
    env->terminals[0] = 1;
    env->log.episode_return += reward;
    env->log.episode_length += (float)(env->tick + 1);
    env->log.score += (float)correct;
    env->log.n += 1.0f;
    memory_new_episode(env);
}

static void c_frame_size(const Memory *env, int *width, int *height) {
    (void)env;
    *width = MEMORY_OBS * MEMORY_CELL_PIXELS;
    *height = MEMORY_CELL_PIXELS + MEMORY_CELL_PIXELS / 2;
}

/* One cell per observation entry, lit when it is 1 (cues green, query yellow), and the tick. */
static void c_render(const Memory *env, Canvas *canvas) {
    const int px = MEMORY_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i < MEMORY_OBS; i++) {
        const int lit =
            i < MEMORY_CUES ? env->tick == 0 && env->cue == i : env->tick == env->delay + 1;
        const Color on = i < MEMORY_CUES ? COLOR_GREEN : COLOR_YELLOW;
        raster_rect(canvas, i * px + 4, 4, px - 8, px - 8, lit ? on : COLOR_GRID);
    }
    raster_number(canvas, 4, px + 4, env->tick, 4, COLOR_WHITE);
}

static void c_close(Memory *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {MEMORY_CUES};
static const PufferKey KEYS[] = {{"1", 0, 0}, {"2", 0, 1}, {"3", 0, 2}, {"4", 0, 3}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "See one of 4 cues, wait `delay` blank steps, then name the cue when queried: reward "
           "1 if right, else 0, and a terminal. Actions before the query are ignored. The query "
           "looks the same whatever the cue, so a memoryless policy scores 1/4 on average; a "
           "recurrent one, 1. Observation: (5,) float32 in {0, 1}: the cue one-hot (first step "
           "only), then the query flag (last step only). Action: Discrete(4).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = MEMORY_OBS,
    .obs_low = 0,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Memory),
};

PUFFER_ENV_END(memory, Memory)

#endif
