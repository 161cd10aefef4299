/* Squared: walk to the target on an 11x11 grid. The simplest Ocean env, after PufferLib's
 * squared.h, and the template for the others: one agent, one target, a step limit.
 *
 * Observation: 121 uint8 cells, row-major (EMPTY, AGENT, TARGET). Actions: Discrete(5).
 * Reward 1 and a terminal on reaching the target; the step limit truncates with reward 0.
 */
#ifndef PUFFER_SQUARED_H
#define PUFFER_SQUARED_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(squared)

enum { SQUARED_GRID = 11 };        /* cells per side */
enum { SQUARED_CELL_PIXELS = 32 }; /* rendered cell size */
enum { SQUARED_NOOP, SQUARED_DOWN, SQUARED_UP, SQUARED_LEFT, SQUARED_RIGHT };
enum { SQUARED_EMPTY = 0, SQUARED_AGENT = 1, SQUARED_TARGET = 2 };

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* 1 when the target was reached, 0 when truncated */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    uint8_t *observations; /* (1, 121), caller-owned */
    int32_t *actions;      /* (1,) */
    float *rewards;        /* (1,) */
    uint8_t *terminals;    /* (1,) */
    uint8_t *truncations;  /* (1,) */
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config: steps before truncation */
    int tick;
    int row, col;               /* agent cell */
    int target_row, target_col; /* target cell */
    float episode_return;
} Squared;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Squared, max_steps), PUFFER_INT, 3 * SQUARED_GRID, 1, 1e9,
     "steps before an episode is truncated"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Squared *env) {
    env->num_agents = 1;
}

static void c_reset(Squared *env) {
    memset(env->observations, SQUARED_EMPTY, SQUARED_GRID * SQUARED_GRID);
    env->tick = 0;
    env->episode_return = 0.0f;
    env->row = env->col = SQUARED_GRID / 2;
    do {
        env->target_row = rng_int(&env->rng, SQUARED_GRID);
        env->target_col = rng_int(&env->rng, SQUARED_GRID);
    } while (env->target_row == env->row && env->target_col == env->col);
    env->observations[env->row * SQUARED_GRID + env->col] = SQUARED_AGENT;
    env->observations[env->target_row * SQUARED_GRID + env->target_col] = SQUARED_TARGET;
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
}

static void squared_end_episode(Squared *env, float score) {
    env->log.episode_return += env->episode_return;
    env->log.episode_length += (float)env->tick;
    env->log.score += score;
    env->log.n += 1.0f;
    /* c_reset clears the flags; keep this step's reward and flags for the caller. */
    float reward = env->rewards[0];
    uint8_t terminal = env->terminals[0], truncation = env->truncations[0];
    c_reset(env);
    env->rewards[0] = reward;
    env->terminals[0] = terminal;
    env->truncations[0] = truncation;
}

static void c_step(Squared *env) {
    env->tick++;
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    env->observations[env->row * SQUARED_GRID + env->col] = SQUARED_EMPTY;
    /* Branch-free: random actions would mispredict a switch on most steps. An out-of-range
     * action moves nowhere; actions are never used as indices. */
    int action = env->actions[0];
    int row = env->row + (action == SQUARED_DOWN) - (action == SQUARED_UP);
    int col = env->col + (action == SQUARED_RIGHT) - (action == SQUARED_LEFT);
    env->row = row < 0 ? 0 : (row > SQUARED_GRID - 1 ? SQUARED_GRID - 1 : row);
    env->col = col < 0 ? 0 : (col > SQUARED_GRID - 1 ? SQUARED_GRID - 1 : col);
    if (env->row == env->target_row && env->col == env->target_col) {
        env->rewards[0] = 1.0f;
        env->terminals[0] = 1;
        env->episode_return += 1.0f;
        squared_end_episode(env, 1.0f);
        return;
    }
    env->observations[env->row * SQUARED_GRID + env->col] = SQUARED_AGENT;
    if (env->tick >= env->max_steps) {
        env->truncations[0] = 1;
        squared_end_episode(env, 0.0f);
    }
}

static void c_frame_size(const Squared *env, int *width, int *height) {
    (void)env;
    *width = *height = SQUARED_GRID * SQUARED_CELL_PIXELS;
}

static void c_render(const Squared *env, Canvas *canvas) {
    const int px = SQUARED_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i <= SQUARED_GRID; i++) {
        raster_rect(canvas, i * px, 0, 1, canvas->height, COLOR_GRID);
        raster_rect(canvas, 0, i * px, canvas->width, 1, COLOR_GRID);
    }
    raster_rect(canvas, env->target_col * px + 4, env->target_row * px + 4, px - 8, px - 8,
                COLOR_GREEN);
    raster_rect(canvas, env->col * px + 6, env->row * px + 6, px - 12, px - 12, COLOR_RED);
}

static void c_close(Squared *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {5};
static const PufferKey KEYS[] = {{"space", 0, SQUARED_NOOP},  {"down", 0, SQUARED_DOWN},
                                 {"up", 0, SQUARED_UP},       {"left", 0, SQUARED_LEFT},
                                 {"right", 0, SQUARED_RIGHT}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "One agent walks to a target on an 11x11 grid; reward 1 and a terminal on arrival. "
           "Observation: (121,) uint8 cells, row-major: 0 empty, 1 agent, 2 target. Action: "
           "Discrete(5): no-op, down, up, left, right (walls stop the agent).",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = SQUARED_GRID * SQUARED_GRID,
    .obs_low = 0,
    .obs_high = 2,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Squared),
};

PUFFER_ENV_END(squared, Squared)

#endif
