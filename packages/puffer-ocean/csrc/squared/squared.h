/* Squared: walk to the target on an 11x11 grid, PufferLib 3.0's squared task. The simplest
 * Ocean env and the template for the others: one agent, one target, a step limit.
 *
 * Rules (SPEC.doc has the table): start in the centre, target uniform on the other 120 cells.
 * Reaching it pays +1; stepping off the grid or living past 3 * 11 = 33 steps pays -1; all three
 * end the episode with a terminal (the time limit is a loss, not a truncation, as in theirs).
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
    float score; /* the final reward: +1 target reached, -1 left the grid or ran out of time */
    float perf;  /* 1 when the target was reached, else 0 */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf", "n"};
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
    int max_steps; /* config: steps survived; the next step ends the episode with -1 */
    int tick;
    int row, col;               /* agent cell */
    int target_row, target_col; /* target cell */
} Squared;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Squared, max_steps), PUFFER_INT, 3 * SQUARED_GRID, 1, 1e9,
     "steps an episode may last; one more ends it with reward -1 (theirs: 3 * size)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Squared *env) {
    env->num_agents = 1;
}

static void c_reset(Squared *env) {
    memset(env->observations, SQUARED_EMPTY, SQUARED_GRID * SQUARED_GRID);
    env->tick = 0;
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

/* Ends the episode with `reward` (a terminal either way) and starts the next one. */
static void squared_end_episode(Squared *env, float reward) {
    env->log.episode_return += reward; /* the only nonzero reward of an episode */
    env->log.episode_length += (float)env->tick;
    env->log.score += reward;
    env->log.perf += (float)(reward > 0.0f);
    env->log.n += 1.0f;
    c_reset(env); /* clears the flags: write this step's after it */
    env->rewards[0] = reward;
    env->terminals[0] = 1;
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
    env->row += (action == SQUARED_DOWN) - (action == SQUARED_UP);
    env->col += (action == SQUARED_RIGHT) - (action == SQUARED_LEFT);
    /* Unsigned compare: one test per axis catches both -1 and SQUARED_GRID. The time limit is
     * checked first, so reaching the target on the step after it still loses (as in theirs). */
    if (env->tick > env->max_steps || (unsigned)env->row >= SQUARED_GRID ||
        (unsigned)env->col >= SQUARED_GRID) {
        squared_end_episode(env, -1.0f);
        return;
    }
    if (env->row == env->target_row && env->col == env->target_col) {
        squared_end_episode(env, 1.0f);
        return;
    }
    env->observations[env->row * SQUARED_GRID + env->col] = SQUARED_AGENT;
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
    .doc = "PufferLib 3.0's squared: one agent walks from the centre of an 11x11 grid to a "
           "target placed uniformly on another cell. Observation: (121,) uint8 cells, "
           "row-major: 0 empty, 1 agent, 2 target. Action: Discrete(5): no-op, down, up, left, "
           "right.\n\n"
           "| rule | value |\n|---|---|\n"
           "| reach the target | +1, terminal |\n"
           "| step off the grid | -1, terminal |\n"
           "| step max_steps + 1 (default 34: 3 * 11 survived) | -1, terminal |\n"
           "| any other step | 0 |\n\n"
           "Differences: their `size` (default 11) is fixed at 11 (our observation width is "
           "static); `max_steps` is theirs 3 * size made a parameter.",
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
