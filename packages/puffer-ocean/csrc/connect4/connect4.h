/* Connect4: the standard 6x7 Connect Four against a scripted opponent.
 *
 * The agent drops a piece into one of 7 columns; four in a row (horizontal, vertical or
 * diagonal) wins. The opponent plays after each agent move: it takes an immediate win if it has
 * one, otherwise blocks the agent's immediate win, otherwise picks a random non-full column.
 * Who moves first is drawn per episode (CONNECT4_OPPONENT_FIRST_PROB).
 *
 * Rewards: +1 win, -1 loss, 0 draw (full board), all terminal. An illegal move (into a full
 * column) loses at once: reward CONNECT4_ILLEGAL_REWARD and a terminal, so a policy learns
 * legality from the same signal as play; Log.illegal counts these.
 *
 * Observation (42 float32 in {-1, 0, 1}): cell (row r, column c) at index r * 7 + c, row 0 at
 * the bottom; +1 is the agent's piece, -1 the opponent's, 0 empty. Actions: Discrete(7).
 */
#ifndef PUFFER_CONNECT4_H
#define PUFFER_CONNECT4_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(connect4)

enum { CONNECT4_ROWS = 6, CONNECT4_COLS = 7, CONNECT4_OBS = CONNECT4_ROWS * CONNECT4_COLS };
enum { CONNECT4_WIN_LENGTH = 4 };   /* pieces in a row that win */
enum { CONNECT4_CELL_PIXELS = 64 }; /* rendered cell size */
enum { CONNECT4_EMPTY = 0, CONNECT4_AGENT = 1, CONNECT4_OPPONENT = -1 };
typedef enum { CONNECT4_WIN, CONNECT4_LOSS, CONNECT4_DRAW, CONNECT4_ILLEGAL } Connect4Outcome;

/* Indexed by Connect4Outcome. */
static const float CONNECT4_REWARDS[4] = {1.0f, -1.0f, 0.0f, -1.0f};
static const float CONNECT4_OPPONENT_FIRST_PROB = 0.5f; /* chance the opponent opens */

typedef struct {
    float episode_return;
    float episode_length; /* agent moves */
    float win;            /* 1 for a win, else 0: its mean is the win rate */
    float draw;
    float loss; /* includes illegal moves */
    float illegal;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "win", "draw",
                                  "loss",           "illegal",        "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations;  /* (1, CONNECT4_OBS), caller-owned */
    int32_t *actions;     /* (1,) */
    float *rewards;       /* (1,) */
    uint8_t *terminals;   /* (1,) */
    uint8_t *truncations; /* (1,) */
    int num_agents;
    uint64_t rng;
    Log log;
    int tick;
    int8_t board[CONNECT4_ROWS][CONNECT4_COLS];
    uint64_t bits[2]; /* the agent's and the opponent's pieces as bitboards (see below) */
    int heights[CONNECT4_COLS];
    int moves; /* pieces on the board, both players */
} Connect4;

static const PufferField CONFIG[] = {
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* Win checks run on bitboards: cell (row, col) is bit col * CONNECT4_BITS_PER_COL + row, and
 * the spare top bit of each column stays 0 so that lines cannot wrap into the next column. A
 * line of four along a direction with bit stride s is where b & b>>s & b>>2s & b>>3s is set. */
enum { CONNECT4_BITS_PER_COL = CONNECT4_ROWS + 1 };
_Static_assert(CONNECT4_BITS_PER_COL *CONNECT4_COLS <= 64, "board fits a uint64_t");
_Static_assert(CONNECT4_WIN_LENGTH == 4, "connect4_has_line checks lines of four");

static uint64_t connect4_bit(int row, int col) {
    return 1ull << (col * CONNECT4_BITS_PER_COL + row);
}

static int connect4_has_line(uint64_t b) {
    /* vertical, horizontal, diagonal up-right, diagonal down-right */
    static const int STRIDES[4] = {1, CONNECT4_BITS_PER_COL, CONNECT4_BITS_PER_COL + 1,
                                   CONNECT4_BITS_PER_COL - 1};
    for (int d = 0; d < 4; d++) {
        const uint64_t pairs = b & (b >> STRIDES[d]);
        if (pairs & (pairs >> (2 * STRIDES[d]))) return 1;
    }
    return 0;
}

static uint64_t *connect4_bits_of(Connect4 *env, int8_t who) {
    return &env->bits[who == CONNECT4_AGENT ? 0 : 1];
}

/* Drops `who` into `col`, which must not be full, writing the board and its observation cell;
 * returns whether that move wins. */
static int connect4_drop(Connect4 *env, int col, int8_t who) {
    const int row = env->heights[col]++;
    uint64_t *bits = connect4_bits_of(env, who);
    env->board[row][col] = who;
    env->observations[row * CONNECT4_COLS + col] = (float)who;
    *bits |= connect4_bit(row, col);
    env->moves++;
    return connect4_has_line(*bits);
}

/* A column where `who` wins with one move, or -1. */
static int connect4_winning_column(Connect4 *env, int8_t who) {
    const uint64_t bits = *connect4_bits_of(env, who);
    for (int c = 0; c < CONNECT4_COLS; c++) {
        if (env->heights[c] == CONNECT4_ROWS) continue;
        if (connect4_has_line(bits | connect4_bit(env->heights[c], c))) return c;
    }
    return -1;
}

/* The scripted opponent: win, else block, else a uniformly random legal column. */
static int connect4_opponent_column(Connect4 *env) {
    int col = connect4_winning_column(env, CONNECT4_OPPONENT);
    if (col >= 0) return col;
    col = connect4_winning_column(env, CONNECT4_AGENT);
    if (col >= 0) return col;
    int legal[CONNECT4_COLS], n = 0;
    for (int c = 0; c < CONNECT4_COLS; c++) {
        if (env->heights[c] < CONNECT4_ROWS) legal[n++] = c;
    }
    return legal[rng_int(&env->rng, n)];
}

/* Starts a new episode without touching rewards or flags (see connect4_end). */
static void connect4_new_episode(Connect4 *env) {
    memset(env->board, 0, sizeof(env->board));
    memset(env->heights, 0, sizeof(env->heights));
    memset(env->observations, 0, CONNECT4_OBS * sizeof(float));
    env->bits[0] = env->bits[1] = 0;
    env->moves = 0;
    env->tick = 0;
    if (rng_float(&env->rng) < CONNECT4_OPPONENT_FIRST_PROB) {
        connect4_drop(env, connect4_opponent_column(env), CONNECT4_OPPONENT);
    }
}

static void c_init(Connect4 *env) {
    env->num_agents = 1;
}

static void c_reset(Connect4 *env) {
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    connect4_new_episode(env);
}

static void connect4_end(Connect4 *env, Connect4Outcome outcome) {
    const float reward = CONNECT4_REWARDS[outcome];
    env->rewards[0] = reward;
    env->terminals[0] = 1;
    env->log.episode_return += reward;
    env->log.episode_length += (float)env->tick;
    env->log.win += outcome == CONNECT4_WIN ? 1.0f : 0.0f;
    env->log.draw += outcome == CONNECT4_DRAW ? 1.0f : 0.0f;
    env->log.loss += outcome == CONNECT4_LOSS || outcome == CONNECT4_ILLEGAL ? 1.0f : 0.0f;
    env->log.illegal += outcome == CONNECT4_ILLEGAL ? 1.0f : 0.0f;
    env->log.n += 1.0f;
    /* The row keeps this step's reward and terminal but already shows the next episode. */
    connect4_new_episode(env);
}

static void c_step(Connect4 *env) {
    env->tick++;
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    const int col = env->actions[0];
    if (col < 0 || col >= CONNECT4_COLS || env->heights[col] == CONNECT4_ROWS) {
        connect4_end(env, CONNECT4_ILLEGAL);
        return;
    }
    if (connect4_drop(env, col, CONNECT4_AGENT)) {
        connect4_end(env, CONNECT4_WIN);
        return;
    }
    if (env->moves == CONNECT4_OBS) {
        connect4_end(env, CONNECT4_DRAW);
        return;
    }
    if (connect4_drop(env, connect4_opponent_column(env), CONNECT4_OPPONENT)) {
        connect4_end(env, CONNECT4_LOSS);
        return;
    }
    /* Each drop wrote its own observation cell: nothing else to observe. */
    if (env->moves == CONNECT4_OBS) connect4_end(env, CONNECT4_DRAW);
}

static void c_frame_size(const Connect4 *env, int *width, int *height) {
    (void)env;
    *width = CONNECT4_COLS * CONNECT4_CELL_PIXELS;
    *height = CONNECT4_ROWS * CONNECT4_CELL_PIXELS;
}

static void c_render(const Connect4 *env, Canvas *canvas) {
    const int px = CONNECT4_CELL_PIXELS;
    raster_clear(canvas, COLOR_BLUE);
    for (int r = 0; r < CONNECT4_ROWS; r++) {
        for (int c = 0; c < CONNECT4_COLS; c++) {
            const int8_t cell = env->board[r][c];
            Color color = cell == CONNECT4_AGENT      ? COLOR_RED
                          : cell == CONNECT4_OPPONENT ? COLOR_YELLOW
                                                      : COLOR_BACKGROUND;
            /* Row 0 is the bottom of the board, drawn last on screen. */
            raster_circle(canvas, c * px + px / 2, (CONNECT4_ROWS - 1 - r) * px + px / 2,
                          px / 2 - 4, color);
        }
    }
}

static void c_close(Connect4 *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {CONNECT4_COLS};
static const PufferKey KEYS[] = {{"1", 0, 0}, {"2", 0, 1}, {"3", 0, 2}, {"4", 0, 3},
                                 {"5", 0, 4}, {"6", 0, 5}, {"7", 0, 6}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Connect Four on a 6x7 board against an opponent that wins, else blocks, else plays "
           "at random. Reward +1 win, -1 loss, 0 draw; a move into a full column loses (-1, "
           "terminal). Observation: (42,) float32 in {-1, 0, 1}; cell (row r, column c) at r * 7 "
           "+ c, row 0 at the bottom; +1 the agent's pieces, -1 the opponent's. Action: "
           "Discrete(7), the column.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = CONNECT4_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Connect4),
};

PUFFER_ENV_END(connect4, Connect4)

#endif
