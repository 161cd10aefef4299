/* Corridor: walk to the goal at one end of a 9-cell corridor. The README's example env: a
 * complete header in the order every env follows (constants, Log, struct, CONFIG, functions,
 * SPEC), registered by one line in csrc/envs.h.
 *
 * The agent starts in the middle; the goal is at the left or the right end, drawn per episode,
 * so a policy must read the observation to pick the way. Reward 1 and a terminal on reaching the
 * goal; `max_steps` truncates. Observation: 9 uint8 cells (EMPTY, AGENT, GOAL). Actions:
 * Discrete(2), left and right; a step into the wall stays put.
 */
#ifndef PUFFER_CORRIDOR_H
#define PUFFER_CORRIDOR_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(corridor)

enum { CORRIDOR_LENGTH = 9 };       /* cells */
enum { CORRIDOR_CELL_PIXELS = 32 }; /* rendered cell size */
enum { CORRIDOR_LEFT, CORRIDOR_RIGHT };
enum { CORRIDOR_EMPTY = 0, CORRIDOR_AGENT = 1, CORRIDOR_GOAL = 2 };

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* 1 when the goal was reached, 0 when truncated */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};

typedef struct {
    uint8_t *observations; /* (1, 9), caller-owned */
    int32_t *actions;      /* (1,) */
    float *rewards;        /* (1,); c_step writes rewards and both flags every step */
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config */
    int tick;
    int position, goal; /* cells */
} Corridor;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Corridor, max_steps), PUFFER_INT, 32, 1, 1e9,
     "steps before an episode is truncated"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Corridor *env) {
    env->num_agents = 1;
}

static void corridor_observe(Corridor *env) {
    memset(env->observations, CORRIDOR_EMPTY, CORRIDOR_LENGTH);
    env->observations[env->goal] = CORRIDOR_GOAL;
    env->observations[env->position] = CORRIDOR_AGENT;
}

static void c_reset(Corridor *env) {
    env->tick = 0;
    env->position = CORRIDOR_LENGTH / 2;
    env->goal = rng_int(&env->rng, 2) ? CORRIDOR_LENGTH - 1 : 0;
    corridor_observe(env);
}

static void c_step(Corridor *env) {
    const int move = env->actions[0] == CORRIDOR_RIGHT ? 1 : -1;
    const int next = env->position + move;
    env->position = next < 0 ? 0 : (next >= CORRIDOR_LENGTH ? CORRIDOR_LENGTH - 1 : next);
    env->tick++;
    const int reached = env->position == env->goal;
    const int truncated = !reached && env->tick >= env->max_steps;
    env->rewards[0] = (float)reached;
    env->terminals[0] = (uint8_t)reached;
    env->truncations[0] = (uint8_t)truncated;
    if (reached || truncated) {
        env->log.episode_return += (float)reached;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)reached;
        env->log.n += 1.0f;
        c_reset(env); /* auto-reset: the row already shows the next episode */
        return;
    }
    corridor_observe(env);
}

static void c_frame_size(const Corridor *env, int *width, int *height) {
    (void)env;
    *width = CORRIDOR_LENGTH * CORRIDOR_CELL_PIXELS;
    *height = CORRIDOR_CELL_PIXELS;
}

static void c_render(const Corridor *env, Canvas *canvas) {
    const int px = CORRIDOR_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i <= CORRIDOR_LENGTH; i++)
        raster_rect(canvas, i * px, 0, 1, px, COLOR_GRID);
    raster_rect(canvas, env->goal * px + 4, 4, px - 8, px - 8, COLOR_GREEN);
    raster_rect(canvas, env->position * px + 6, 6, px - 12, px - 12, COLOR_RED);
}

static void c_close(Corridor *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {2};
static const PufferKey KEYS[] = {{"left", 0, 0}, {"right", 0, 1}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Walk to the goal at one end of a 9-cell corridor, starting in the middle; the goal "
           "end is drawn per episode. Reward 1 and a terminal on reaching it. Observation: (9,) "
           "uint8 cells: 0 empty, 1 agent, 2 goal. Action: Discrete(2): left, right.",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = CORRIDOR_LENGTH,
    .obs_low = 0,
    .obs_high = 2,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Corridor),
};

PUFFER_ENV_END(corridor, Corridor)

#endif
