/* Grid: find the goal of a random maze from a fixed pool of levels (PufferLib 3.0's grid task
 * as its Python env builds it, rules restated in our own code).
 *
 * Rules (defaults in brackets):
 * | level pool    | num_maps [1000] mazes; level k is a fixed function of k, the same in   |
 * |               | every env and run; each episode draws a level uniformly                 |
 * | maze          | square, side map_size [-1: 5 + uniform in [0, max_size - 5)], minus 1   |
 * |               | if even; max_size [9]. Walls border it; a growing-tree maze links the   |
 * |               | odd cells, taking the newest cell with probability `difficulty` (uniform |
 * |               | per level) and a random active cell otherwise                           |
 * | start / goal  | the agent at (1, 1) heading east; the goal at (side - 2, side - 2)       |
 * | actions       | Discrete(5): 0 stay, 1 forward, 2 turn left, 3 turn right, 4 turn back;  |
 * |               | turning also steps one cell in the new heading; walls block the step    |
 * | goal          | stepping onto it: +1 and terminal                                       |
 * | episode end   | the goal, or 2 * side * side steps: truncation, reward 0                |
 * Observation: (121,) uint8, the 11x11 cells centred on the agent, row-major from the top-left:
 * 0 floor, 1 wall, 3 goal, 6 the agent; cells beyond the maze read 0. Log per episode: score =
 * perf = episode_return = the final reward (1 at the goal), episode_length = steps.
 *
 * Deliberate differences from PufferLib 3.0: the pool is seeded by level index (theirs by the
 * clock), positions are whole cells (theirs are floats moved by cos/sin, whose rounding can
 * shift the view by a cell), the step limit sets truncations (theirs resets silently), and every
 * cell beyond the maze reads 0 (theirs shows walls to its right and leftovers of earlier levels
 * below). Their key and door tiles never appear in these mazes and are left out.
 */
#ifndef PUFFER_GRID_H
#define PUFFER_GRID_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(grid)

enum { GRID_VISION = 5, GRID_VIEW = 2 * GRID_VISION + 1, GRID_OBS = GRID_VIEW * GRID_VIEW };
enum { GRID_MAX = 63, GRID_MIN_SIDE = 5 };
enum { GRID_FLOOR = 0, GRID_WALL = 1, GRID_GOAL = 3, GRID_AGENT = 6, GRID_UNVISITED = 255 };
enum { GRID_STAY, GRID_FORWARD, GRID_LEFT, GRID_RIGHT, GRID_BACK };
static const int GRID_DX[4] = {1, 0, -1, 0}, GRID_DY[4] = {0, 1, 0, -1};

typedef struct {
    float perf;
    float score;
    float episode_return;
    float episode_length;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};

typedef struct {
    uint8_t *observations; /* (1, 121) */
    int32_t *actions;      /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_size, map_size, num_maps; /* config */
    int side, x, y, heading, tick, horizon;
    uint8_t cells[GRID_MAX * GRID_MAX]; /* side x side, row-major; the agent's cell included */
} Grid;

static const PufferField CONFIG[] = {
    {"max_size", offsetof(Grid, max_size), PUFFER_INT, 9, 6, GRID_MAX,
     "bound on maze sides: random sides are below it"},
    {"map_size", offsetof(Grid, map_size), PUFFER_INT, -1, -1, GRID_MAX,
     "maze side (made odd); -1: random per level"},
    {"num_maps", offsetof(Grid, num_maps), PUFFER_INT, 1000, 1, 1e9, "levels in the pool"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static const char *grid_check(const void *self) {
    const Grid *env = (const Grid *)self;
    if (env->map_size == -1) return NULL;
    return env->map_size >= GRID_MIN_SIDE && env->map_size <= env->max_size
               ? NULL
               : "map_size must be -1 (random) or in [5, max_size]";
}

static void c_init(Grid *env) {
    env->num_agents = 1;
}

/* Carves level `k` into env->cells (growing-tree maze; the level's own RNG stream). */
static void grid_build(Grid *env, int k) {
    uint64_t rng = 0x6D617A65ull * 0x9E3779B97F4A7C15ull ^ (uint64_t)k;
    rng_next(&rng);
    int side = env->map_size;
    if (side == -1) side = GRID_MIN_SIDE + rng_int(&rng, env->max_size - GRID_MIN_SIDE);
    if (side % 2 == 0) side--;
    const float difficulty = rng_float(&rng);
    env->side = side;
    for (int r = 0; r < side; r++)
        for (int c = 0; c < side; c++)
            env->cells[r * side + c] = r % 2 && c % 2 ? GRID_UNVISITED : GRID_WALL;
    /* Active cells, as x + y * side; every odd cell enters once. */
    int16_t active[(GRID_MAX / 2) * (GRID_MAX / 2)];
    const int odd = side / 2;
    int count = 0;
    const int sx = 1 + 2 * rng_int(&rng, odd), sy = 1 + 2 * rng_int(&rng, odd);
    env->cells[sy * side + sx] = GRID_FLOOR;
    active[count++] = (int16_t)(sy * side + sx);
    while (count > 0) {
        if (rng_float(&rng) >= difficulty) {
            const int i = rng_int(&rng, count);
            const int16_t tmp = active[i];
            active[i] = active[count - 1];
            active[count - 1] = tmp;
        }
        const int at = active[count - 1], x = at % side, y = at / side;
        int dirs[4] = {0, 1, 2, 3}, carved = 0;
        for (int i = 0; i < 4 && !carved; i++) {
            const int j = i + rng_int(&rng, 4 - i), d = dirs[j];
            dirs[j] = dirs[i];
            dirs[i] = d;
            const int nx = x + 2 * GRID_DX[d], ny = y + 2 * GRID_DY[d];
            if (nx <= 0 || ny <= 0 || nx >= side - 1 || ny >= side - 1) continue;
            if (env->cells[ny * side + nx] != GRID_UNVISITED) continue;
            env->cells[ny * side + nx] = GRID_FLOOR;
            env->cells[(y + GRID_DY[d]) * side + x + GRID_DX[d]] = GRID_FLOOR;
            active[count++] = (int16_t)(ny * side + nx);
            carved = 1;
        }
        if (!carved) count--;
    }
    env->cells[(side - 2) * side + side - 2] = GRID_GOAL;
}

static void grid_observe(Grid *env) {
    uint8_t *obs = env->observations;
    memset(obs, 0, GRID_OBS);
    const int r0 = env->y - GRID_VISION, c0 = env->x - GRID_VISION;
    for (int r = r0 < 0 ? 0 : r0; r <= r0 + GRID_VIEW - 1 && r < env->side; r++) {
        const int c_lo = c0 < 0 ? 0 : c0,
                  c_hi = c0 + GRID_VIEW < env->side ? c0 + GRID_VIEW : env->side;
        memcpy(obs + (r - r0) * GRID_VIEW + (c_lo - c0), env->cells + r * env->side + c_lo,
               (size_t)(c_hi - c_lo));
    }
}

static void c_reset(Grid *env) {
    grid_build(env, rng_int(&env->rng, env->num_maps));
    env->x = env->y = 1;
    env->heading = 0;
    env->tick = 0;
    env->horizon = 2 * env->side * env->side;
    env->cells[env->side + 1] = GRID_AGENT;
    grid_observe(env);
}

static void c_step(Grid *env) {
    static const int TURN[5] = {0, 0, 3, 1, 2};
    const int action = env->actions[0];
    float reward = 0.0f;
    env->tick++;
    if (action != GRID_STAY) {
        env->heading = (env->heading + TURN[action]) % 4;
        const int x = env->x + GRID_DX[env->heading], y = env->y + GRID_DY[env->heading];
        uint8_t *dest = &env->cells[y * env->side + x];
        if (*dest != GRID_WALL) {
            reward = *dest == GRID_GOAL ? 1.0f : 0.0f;
            env->cells[env->y * env->side + env->x] = GRID_FLOOR;
            *dest = GRID_AGENT;
            env->x = x, env->y = y;
        }
    }
    const int done = reward > 0.0f, truncated = !done && env->tick >= env->horizon;
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)done;
    env->truncations[0] = (uint8_t)truncated;
    if (done || truncated) {
        env->log.perf += reward;
        env->log.score += reward;
        env->log.episode_return += reward;
        env->log.episode_length += (float)env->tick;
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    grid_observe(env);
}

static int grid_cell_pixels(const Grid *env) {
    return env->max_size <= 16 ? 32 : 16;
}

static void c_frame_size(const Grid *env, int *width, int *height) {
    *width = *height = env->max_size * grid_cell_pixels(env);
}

static void c_render(const Grid *env, Canvas *canvas) {
    const int px = grid_cell_pixels(env);
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int r = 0; r < env->side; r++) {
        for (int c = 0; c < env->side; c++) {
            const int cell = env->cells[r * env->side + c];
            if (cell == GRID_WALL) raster_rect(canvas, c * px, r * px, px, px, COLOR_GRAY);
            if (cell == GRID_GOAL) raster_rect(canvas, c * px, r * px, px, px, COLOR_GREEN);
        }
    }
    const int cx = env->x * px + px / 2, cy = env->y * px + px / 2;
    raster_circle(canvas, cx, cy, px / 2 - 2, COLOR_YELLOW);
    raster_circle(canvas, cx + GRID_DX[env->heading] * px / 4, cy + GRID_DY[env->heading] * px / 4,
                  px / 8, COLOR_BLACK);
}

static void c_close(Grid *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {5};
static const PufferKey KEYS[] = {{"idle", 0, GRID_STAY}, {"up", 0, GRID_FORWARD},
                                 {"left", 0, GRID_LEFT}, {"right", 0, GRID_RIGHT},
                                 {"down", 0, GRID_BACK}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Find the goal of a random maze (a pool of num_maps levels, sides 5 to max_size): the "
           "agent starts at (1, 1); reaching the far corner's goal gives +1 and ends the "
           "episode, which is truncated after 2 * side**2 steps. Observation: (121,) uint8, the "
           "11x11 cells around the agent (0 floor, 1 wall, 3 goal, 6 agent). Action: "
           "Discrete(5): stay, forward, turn left, turn right, turn back (turns also step).",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = GRID_OBS,
    .obs_low = 0,
    .obs_high = GRID_AGENT,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Grid),
    .check = grid_check,
};

PUFFER_ENV_END(grid, Grid)

#endif
