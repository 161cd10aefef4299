/* G2048: the game 2048 (Gabriele Cirulli, 2014) on a 4x4 board.
 *
 * A move slides every tile toward one side; two equal tiles that meet merge once per move into
 * their sum. A move that changes the board spawns a 2 (probability 1 - G2048_FOUR_PROB) or a 4
 * in a random empty cell. The episode terminates when no move changes the board, and truncates
 * after `max_steps` (config) moves.
 *
 * Reward per move: the sum over its merges of log2(new tile) * G2048_MERGE_REWARD, so merging
 * two 1024s pays 11x what merging two 2s pays instead of 1024x (a scale PPO can learn from); a
 * move that changes nothing pays G2048_INVALID_REWARD so a policy does not stall against a
 * wall. Log.score is the classic game score (the sum of merged tile values).
 *
 * Observation (16 uint8): log2 of each tile in row-major order, 0 for an empty cell. The
 * largest tile a 4x4 board can hold is 2^18, so values lie in [0, G2048_MAX_EXPONENT].
 * Actions: Discrete(4): up, down, left, right.
 */
#ifndef PUFFER_G2048_H
#define PUFFER_G2048_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(g2048)

enum { G2048_SIZE = 4, G2048_OBS = G2048_SIZE * G2048_SIZE, G2048_MAX_EXPONENT = 18 };
enum { G2048_UP, G2048_DOWN, G2048_LEFT, G2048_RIGHT, G2048_MOVES };
enum { G2048_START_TILES = 2 };            /* tiles on the board when an episode starts */
enum { G2048_DEFAULT_MAX_STEPS = 100000 }; /* moves per episode, then truncation */
enum { G2048_CELL_PIXELS = 96 };           /* rendered tile size */

static const float G2048_FOUR_PROB = 0.1f;        /* chance a spawned tile is a 4 */
static const float G2048_MERGE_REWARD = 0.01f;    /* reward per log2 level of a merged tile */
static const float G2048_INVALID_REWARD = -0.01f; /* reward for a move that changes nothing */

typedef struct {
    float episode_return;
    float episode_length;
    float score;    /* classic 2048 score: sum of merged tile values */
    float max_tile; /* largest tile value reached */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "max_tile", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    uint8_t *observations; /* (1, G2048_OBS), caller-owned */
    int32_t *actions;      /* (1,) */
    float *rewards;        /* (1,) */
    uint8_t *terminals;    /* (1,) */
    uint8_t *truncations;  /* (1,) */
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config: moves per episode */
    int tick;
    uint8_t board[G2048_OBS]; /* log2 of each tile, 0 for empty */
    float episode_return;
    float score;
} G2048;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(G2048, max_steps), PUFFER_INT, G2048_DEFAULT_MAX_STEPS, 1, 1e9,
     "moves per episode before truncation (stops a policy stalling forever)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void g2048_spawn(G2048 *env) {
    int empty[G2048_OBS], n = 0;
    for (int i = 0; i < G2048_OBS; i++) {
        if (env->board[i] == 0) empty[n++] = i;
    }
    if (n == 0) return;
    const int cell = empty[rng_int(&env->rng, n)];
    env->board[cell] = rng_float(&env->rng) < G2048_FOUR_PROB ? 2 : 1;
}

/* Index of the k-th cell of `line` when tiles slide in `move`: k = 0 is where they slide to. */
static int g2048_cell(int move, int line, int k) {
    switch (move) {
    case G2048_UP:
        return k * G2048_SIZE + line;
    case G2048_DOWN:
        return (G2048_SIZE - 1 - k) * G2048_SIZE + line;
    case G2048_LEFT:
        return line * G2048_SIZE + k;
    default:
        return line * G2048_SIZE + (G2048_SIZE - 1 - k);
    }
}

/* Slides and merges toward `move`. Returns whether the board changed; adds the merges' log2
 * levels to *levels and their classic points to *points. */
static int g2048_slide(G2048 *env, int move, int *levels, float *points) {
    int changed = 0;
    for (int line = 0; line < G2048_SIZE; line++) {
        uint8_t out[G2048_SIZE] = {0, 0, 0, 0};
        int n = 0, merged_last = 0;
        for (int k = 0; k < G2048_SIZE; k++) {
            const uint8_t v = env->board[g2048_cell(move, line, k)];
            if (v == 0) continue;
            /* A tile merges at most once per move: "2 2 4" slides to "4 4", not "8". */
            if (n > 0 && out[n - 1] == v && !merged_last) {
                out[n - 1] = (uint8_t)(v + 1);
                *levels += v + 1;
                *points += (float)(1u << (v + 1));
                merged_last = 1;
            } else {
                out[n++] = v;
                merged_last = 0;
            }
        }
        for (int k = 0; k < G2048_SIZE; k++) {
            const int cell = g2048_cell(move, line, k);
            changed |= env->board[cell] != out[k];
            env->board[cell] = out[k];
        }
    }
    return changed;
}

static int g2048_can_move(const G2048 *env) {
    for (int r = 0; r < G2048_SIZE; r++) {
        for (int c = 0; c < G2048_SIZE; c++) {
            const uint8_t v = env->board[r * G2048_SIZE + c];
            if (v == 0) return 1;
            if (c + 1 < G2048_SIZE && env->board[r * G2048_SIZE + c + 1] == v) return 1;
            if (r + 1 < G2048_SIZE && env->board[(r + 1) * G2048_SIZE + c] == v) return 1;
        }
    }
    return 0;
}

/* Starts a new episode without touching rewards or flags (see c_step). */
static void g2048_new_episode(G2048 *env) {
    memset(env->board, 0, sizeof(env->board));
    for (int i = 0; i < G2048_START_TILES; i++)
        g2048_spawn(env);
    env->tick = 0;
    env->episode_return = 0.0f;
    env->score = 0.0f;
    memcpy(env->observations, env->board, G2048_OBS);
}

static void c_init(G2048 *env) {
    env->num_agents = 1;
}

static void c_reset(G2048 *env) {
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    g2048_new_episode(env);
}

static void c_step(G2048 *env) {
    env->tick++;
    int levels = 0;
    float points = 0.0f;
    float reward = G2048_INVALID_REWARD;
    const int move = env->actions[0];
    /* An out-of-range action changes nothing, like a move against a wall. */
    if (move >= 0 && move < G2048_MOVES && g2048_slide(env, move, &levels, &points)) {
        g2048_spawn(env);
        reward = (float)levels * G2048_MERGE_REWARD;
    }
    env->rewards[0] = reward;
    env->episode_return += reward;
    env->score += points;
    env->terminals[0] = (uint8_t)!g2048_can_move(env);
    env->truncations[0] = (uint8_t)(!env->terminals[0] && env->tick >= env->max_steps);
    if (env->terminals[0] || env->truncations[0]) {
        uint8_t top = 0;
        for (int i = 0; i < G2048_OBS; i++)
            top = env->board[i] > top ? env->board[i] : top;
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += env->score;
        env->log.max_tile += (float)(1u << top);
        env->log.n += 1.0f;
        g2048_new_episode(env);
        return;
    }
    memcpy(env->observations, env->board, G2048_OBS);
}

static void c_frame_size(const G2048 *env, int *width, int *height) {
    (void)env;
    *width = *height = G2048_SIZE * G2048_CELL_PIXELS;
}

static void c_render(const G2048 *env, Canvas *canvas) {
    const int px = G2048_CELL_PIXELS;
    raster_clear(canvas, COLOR_GRID);
    for (int i = 0; i < G2048_OBS; i++) {
        const int x = (i % G2048_SIZE) * px, y = (i / G2048_SIZE) * px;
        const int e = env->board[i];
        /* Warmer and brighter as the tile grows. */
        Color color = {(uint8_t)(e ? 120 + 7 * e : 30), (uint8_t)(e ? 200 - 10 * e : 50),
                       (uint8_t)(e ? 80 : 50)};
        raster_rect(canvas, x + 4, y + 4, px - 8, px - 8, color);
        if (e) raster_number(canvas, x + 10, y + px / 2 - 7, 1 << e, 3, COLOR_WHITE);
    }
}

static void c_close(G2048 *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {4};
static const PufferKey KEYS[] = {
    {"up", 0, 0}, {"down", 0, 1}, {"left", 0, 2}, {"right", 0, 3}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "2048: slide and merge tiles; a 2 or 4 spawns after every move that changes the "
           "board. Reward: 0.01 * log2(new tile) summed over a move's merges; -0.01 for a move "
           "that changes nothing. Terminal when no move is possible. The log's `score` is the "
           "classic game score. Observation: (16,) uint8, log2 of each tile row-major (0 empty), "
           "in [0, 18]. Action: Discrete(4): up, down, left, right.",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = G2048_OBS,
    .obs_low = 0,
    .obs_high = G2048_MAX_EXPONENT,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(G2048),
};

PUFFER_ENV_END(g2048, G2048)

#endif
