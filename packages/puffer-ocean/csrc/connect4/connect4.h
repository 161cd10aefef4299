/* Connect4: PufferLib 3.0's connect4 task. The agent always opens, then a scripted opponent
 * answers each move: a book reply to the two central openings, else an immediate win if it has
 * one, else the column with the lowest depth-3 negamax score (ties at random). SPEC.doc holds
 * the rules table.
 *
 * The negamax is theirs: a node's value is minus the SUM of its children's values (not their
 * maximum), a side that has just won scores 10^(depth left), and the search stops at depth 0.
 * Values are whole numbers, computed here in integers; the last ply is one bit count (the
 * number of columns that win at once) instead of seven leaf visits, which gives the same sums.
 *
 * Observation (42 float32 in {-1, 0, 1}): column-major, cell (row r, column c) at c * 6 + r,
 * row 0 at the bottom; +1 the agent's pieces, -1 the opponent's. Actions: Discrete(7).
 */
#ifndef PUFFER_CONNECT4_H
#define PUFFER_CONNECT4_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(connect4)

enum { CONNECT4_ROWS = 6, CONNECT4_COLS = 7, CONNECT4_OBS = CONNECT4_ROWS * CONNECT4_COLS };
enum { CONNECT4_DEPTH = 3 };        /* the opponent's search below its own move */
enum { CONNECT4_CELL_PIXELS = 96 }; /* rendered cell size, as theirs */

typedef struct {
    float perf; /* 1 for a win */
    float score;
    float episode_return;
    float episode_length; /* agent moves */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};
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
    uint64_t agent, opponent; /* bitboards (below) */
} Connect4;

static const PufferField CONFIG[] = {
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* Bitboards: cell (row, col) is bit col * 7 + row; bit 6 of each column stays 0, so no line of
 * four can wrap from one column into the next. */
enum { CONNECT4_STRIDE = CONNECT4_ROWS + 1 };
#define CONNECT4_BOTTOMS 0x40810204081ull           /* row 0 of every column */
#define CONNECT4_BOARD (CONNECT4_BOTTOMS * 0x3Full) /* rows 0-5 of every column */

static inline uint64_t connect4_bit(int row, int col) {
    return 1ull << (col * CONNECT4_STRIDE + row);
}

static inline uint64_t connect4_column(int col) {
    return 0x3Full << (col * CONNECT4_STRIDE);
}

static inline int connect4_full(uint64_t mask, int col) {
    return (mask & connect4_bit(CONNECT4_ROWS - 1, col)) != 0;
}

/* The cell a piece dropped into `col` lands on (0 if the column is full). */
static inline uint64_t connect4_landing(uint64_t mask, int col) {
    return (mask + connect4_bit(0, col)) & connect4_column(col);
}

static inline int connect4_has_line(uint64_t b) {
    /* vertical, horizontal, the two diagonals */
    static const int STRIDES[4] = {1, CONNECT4_STRIDE, CONNECT4_STRIDE + 1, CONNECT4_STRIDE - 1};
    for (int d = 0; d < 4; d++) {
        const uint64_t pairs = b & (b >> STRIDES[d]);
        if (pairs & (pairs >> (2 * STRIDES[d]))) return 1;
    }
    return 0;
}

/* Empty cells that would complete a line of four for `b`. */
static inline uint64_t connect4_threats(uint64_t b, uint64_t mask) {
    uint64_t cells = (b << 1) & (b << 2) & (b << 3); /* on top of three */
    for (int s = CONNECT4_STRIDE - 1; s <= CONNECT4_STRIDE + 1; s++) {
        const uint64_t back2 = (b << s) & (b << 2 * s), ahead2 = (b >> s) & (b >> 2 * s);
        cells |= (back2 & (b << 3 * s)) | (back2 & (b >> s));
        cells |= (ahead2 & (b >> 3 * s)) | (ahead2 & (b << s));
    }
    return cells & (CONNECT4_BOARD ^ mask);
}

static inline int connect4_popcount(uint64_t b) {
    int n = 0;
    for (; b; b &= b - 1)
        n++;
    return n;
}

/* Their negamax for `mover` to play against `other`, `depth` plies left (see the top). */
static long connect4_negamax(uint64_t mover, uint64_t other, int depth) {
    static const long POWERS[CONNECT4_DEPTH + 1] = {1, 10, 100, 1000};
    const uint64_t mask = mover | other;
    if (connect4_has_line(other)) return POWERS[depth];
    if (connect4_has_line(mover) || depth == 0 || mask == CONNECT4_BOARD) return 0;
    if (depth == 1) { /* each child is 1 if that move wins, else 0 */
        const uint64_t playable = (mask + CONNECT4_BOTTOMS) & CONNECT4_BOARD;
        return -connect4_popcount(connect4_threats(mover, mask) & playable);
    }
    long value = 0;
    for (int col = 0; col < CONNECT4_COLS; col++) {
        if (connect4_full(mask, col)) continue;
        value -= connect4_negamax(other, mover | connect4_landing(mask, col), depth - 1);
    }
    return value;
}

/* The opponent's column: the book, an immediate win, else the lowest score, ties at random. */
static int connect4_opponent_column(Connect4 *env) {
    const uint64_t mask = env->agent | env->opponent;
    /* The book: centre opening (column 3) -> column 2; column 4 -> column 3. */
    if (env->opponent == 0 && env->agent == connect4_bit(0, 3)) return 2;
    if (env->opponent == 0 && env->agent == connect4_bit(0, 4)) return 3;
    long values[CONNECT4_COLS], best = 0;
    int legal[CONNECT4_COLS], n = 0;
    for (int col = 0; col < CONNECT4_COLS; col++) {
        if (connect4_full(mask, col)) continue;
        const uint64_t mine = env->opponent | connect4_landing(mask, col);
        if (connect4_has_line(mine)) return col;
        values[col] = -connect4_negamax(env->agent, mine, CONNECT4_DEPTH);
        best = n == 0 || values[col] < best ? values[col] : best;
        legal[n++] = col;
    }
    if (n == 0) return 0; /* unreachable: the agent never fills the board */
    int ties = 0;
    for (int k = 0; k < n; k++)
        ties += values[legal[k]] == best;
    int pick = rng_int(&env->rng, ties);
    for (int k = 0; k < n; k++) {
        if (values[legal[k]] == best && pick-- == 0) return legal[k];
    }
    return legal[0];
}

/* Drops a piece for the agent (+1) or the opponent (-1) and writes its observation cell;
 * returns whether it completes a line. */
static int connect4_drop(Connect4 *env, int col, int agent) {
    const uint64_t mask = env->agent | env->opponent, cell = connect4_landing(mask, col);
    uint64_t *mine = agent ? &env->agent : &env->opponent;
    *mine |= cell;
    const int row = connect4_popcount(mask & connect4_column(col));
    env->observations[col * CONNECT4_ROWS + row] = agent ? 1.0f : -1.0f;
    return connect4_has_line(*mine);
}

static void connect4_new_game(Connect4 *env) {
    memset(env->observations, 0, CONNECT4_OBS * sizeof(float));
    env->agent = env->opponent = 0;
    env->tick = 0;
}

static void c_init(Connect4 *env) {
    env->num_agents = 1;
}

static void c_reset(Connect4 *env) {
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    connect4_new_game(env);
}

static void connect4_end(Connect4 *env, float reward) {
    env->rewards[0] = reward;
    env->terminals[0] = 1;
    env->log.perf += (float)(reward > 0.0f);
    env->log.score += reward;
    env->log.episode_return += reward;
    env->log.episode_length += (float)env->tick;
    env->log.n += 1.0f;
    connect4_new_game(env); /* the row shows the next game's empty board */
}

static void c_step(Connect4 *env) {
    env->tick++;
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    const int col = env->actions[0];
    /* A full column loses. A board the opponent filled is their draw: theirs loses on the
     * agent's next (necessarily illegal) move; here the game ends in the filling step with the
     * same -1, so the agent never faces a board without a legal column. */
    if (col < 0 || col >= CONNECT4_COLS || connect4_full(env->agent | env->opponent, col)) {
        connect4_end(env, -1.0f);
    } else if (connect4_drop(env, col, 1)) {
        connect4_end(env, 1.0f);
    } else if (connect4_drop(env, connect4_opponent_column(env), 0) ||
               (env->agent | env->opponent) == CONNECT4_BOARD) {
        connect4_end(env, -1.0f);
    }
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
            const uint64_t bit = connect4_bit(r, c);
            Color color = (env->agent & bit)      ? COLOR_RED
                          : (env->opponent & bit) ? COLOR_YELLOW
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

/* Legal columns (SPEC.action_mask): those not yet full. A game that ended has already been
 * replaced by the next one's empty board, so a mask is never all zero. */
static void connect4_action_mask(const void *env, uint8_t *out) {
    const Connect4 *c4 = (const Connect4 *)env;
    const uint64_t mask = c4->agent | c4->opponent;
    for (int col = 0; col < CONNECT4_COLS; col++)
        out[col] = (uint8_t)!connect4_full(mask, col);
}

static const int ACTION_SIZES[] = {CONNECT4_COLS};
static const PufferKey KEYS[] = {{"1", 0, 0}, {"2", 0, 1}, {"3", 0, 2}, {"4", 0, 3},
                                 {"5", 0, 4}, {"6", 0, 5}, {"7", 0, 6}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's connect4: Connect Four on a 6x7 board, the agent moving first, "
           "against a depth-3 negamax opponent. Observation: (42,) float32 in {-1, 0, 1}, "
           "column-major: cell (row r, column c) at c * 6 + r, row 0 at the bottom; +1 the "
           "agent's pieces, -1 the opponent's. Action: Discrete(7), the column. Legal-action "
           "masks: the columns not yet full (the buffer's action_masks).\n\n"
           "| rule | value |\n|---|---|\n"
           "| win (four in a row) | +1, terminal |\n"
           "| loss, or a move into a full column | -1, terminal |\n"
           "| full board (a draw) | -1, terminal, in the step whose opponent move fills it |\n"
           "| opponent | book: column 3 opening -> 2, column 4 -> 3; else an immediate win "
           "(lowest column); else the lowest depth-3 negamax value (a node is minus the sum of "
           "its children, a won position 10^depth left), ties uniformly at random |\n\n"
           "Differences: a full board ends the game at once (theirs ends it on the agent's "
           "next move, into a full column); the next game starts in the step that ends one (theirs "
           "spends one "
           "more step, action ignored, to show the empty board); the log counts every game "
           "(theirs clears it at each reset).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = CONNECT4_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Connect4),
    .action_mask = connect4_action_mask,
};

PUFFER_ENV_END(connect4, Connect4)

#endif
