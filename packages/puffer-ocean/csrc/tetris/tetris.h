/* Tetris: PufferLib 3.0's tetris task (a 20x10 well, a queue of three pieces, hold, drop and
 * line rewards), restated in our own code. SPEC.doc holds the rules table.
 *
 * Pieces are 4x4 boxes whose cells touch the box's top and left edges; a piece's position is
 * its box's top-left cell (row, col). Collision uses one bitmask per well row (bit c: column c
 * occupied), so a move test is at most four ANDs. The falling piece never overlaps a locked
 * block (a spawn or a hold that would overlap is refused), so a step that moves the piece only
 * rewrites the cells it left and entered.
 */
#ifndef PUFFER_TETRIS_H
#define PUFFER_TETRIS_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(tetris)

enum { TETRIS_ROWS = 20, TETRIS_COLS = 10, TETRIS_CELLS = TETRIS_ROWS * TETRIS_COLS };
enum { TETRIS_PIECES = 7, TETRIS_ROTATIONS = 4, TETRIS_QUEUE = 3 };
enum { TETRIS_FALL_TICKS = 4 };    /* steps per one-row gravity drop */
enum { TETRIS_MAX_TICKS = 10000 }; /* the first lock at or after this tick ends the episode */
enum { TETRIS_SPAWN_COL = TETRIS_COLS / 2, TETRIS_FULL_ROW = (1 << TETRIS_COLS) - 1 };
enum { TETRIS_PERSONAL_BEST = 12565 }; /* their reference score: perf = score / this */
/* Where each part of the observation starts (see SPEC.doc). */
enum {
    TETRIS_OBS_SCALARS = TETRIS_CELLS,
    TETRIS_OBS_QUEUE = TETRIS_OBS_SCALARS + 6,
    TETRIS_OBS_HOLD = TETRIS_OBS_QUEUE + TETRIS_QUEUE * TETRIS_PIECES,
    TETRIS_OBS = TETRIS_OBS_HOLD + TETRIS_PIECES, /* 234 */
};
enum { TETRIS_OBS_LOCKED = 1, TETRIS_OBS_FALLING = 2 }; /* well cell values */
enum { TETRIS_CELL_PIXELS = 24, TETRIS_PANEL_PIXELS = 112, TETRIS_PREVIEW_PIXELS = 14 };
enum { TETRIS_O, TETRIS_I, TETRIS_S, TETRIS_Z, TETRIS_T, TETRIS_L, TETRIS_J }; /* their ids */
enum {
    TETRIS_NOOP,
    TETRIS_LEFT,
    TETRIS_RIGHT,
    TETRIS_ROTATE, /* clockwise, no wall kicks: refused if the turned piece does not fit */
    TETRIS_SOFT_DROP,
    TETRIS_HARD_DROP,
    TETRIS_HOLD,
};

/* Reward and game score of one lock by lines cleared, and of each row a drop moves. */
static const float TETRIS_LINE_REWARD[5] = {0.0f, 0.1f, 0.3f, 0.5f, 1.0f};
static const int TETRIS_LINE_SCORE[5] = {0, 100, 300, 500, 1000};
#define TETRIS_SOFT_DROP_REWARD 0.01f
#define TETRIS_HARD_DROP_REWARD 0.02f
enum { TETRIS_SOFT_DROP_SCORE = 1, TETRIS_HARD_DROP_SCORE = 2 };

/* Each rotation as 16 bits: nibble r (bits 4r..4r+3) is box row r, bit i of it box column i.
 * Rotations go clockwise; S, Z and I have two distinct ones, O one. */
static const uint16_t TETRIS_SHAPES[TETRIS_PIECES][TETRIS_ROTATIONS] = {
    {0x0033, 0x0033, 0x0033, 0x0033}, /* O */
    {0x1111, 0x000F, 0x1111, 0x000F}, /* I: vertical first */
    {0x0231, 0x0036, 0x0231, 0x0036}, /* S */
    {0x0132, 0x0063, 0x0132, 0x0063}, /* Z */
    {0x0232, 0x0072, 0x0131, 0x0027}, /* T: pointing left first */
    {0x0311, 0x0017, 0x0223, 0x0074}, /* L */
    {0x0322, 0x0071, 0x0113, 0x0047}, /* J */
};

static inline int tetris_row_bits(int piece, int rotation, int row) {
    return (TETRIS_SHAPES[piece][rotation] >> (4 * row)) & 0xF;
}

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* game score: 100/300/500/1000 per lock by lines, 1 per soft, 2 per hard row */
    float perf;  /* score / 12565 */
    float lines_deleted;
    float avg_combo; /* lines per line-clearing lock (1 when none) */
    float atn_frac_soft_drop;
    float atn_frac_hard_drop;
    float atn_frac_rotate;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return",
                                  "episode_length",
                                  "score",
                                  "perf",
                                  "lines_deleted",
                                  "avg_combo",
                                  "atn_frac_soft_drop",
                                  "atn_frac_hard_drop",
                                  "atn_frac_rotate",
                                  "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations;  /* (1, TETRIS_OBS), caller-owned */
    int32_t *actions;     /* (1,) */
    float *rewards;       /* (1,) */
    uint8_t *terminals;   /* (1,) */
    uint8_t *truncations; /* (1,) */
    int num_agents;
    uint64_t rng;
    Log log;
    uint8_t well[TETRIS_ROWS][TETRIS_COLS]; /* 0 empty, else piece id + 1 (its colour) */
    uint16_t filled[TETRIS_ROWS];           /* bit c: column c of the row is occupied */
    int queue[TETRIS_QUEUE];                /* queue[0] falls now; the others come next */
    int hold;                               /* held piece id, -1 for none */
    int can_hold;                           /* 0 after a hold, until the next lock */
    int row, col, rotation;                 /* the falling piece's box */
    int tick, fall_tick;
    int score, lines, combos, soft_drops, hard_drops, rotates;
    float episode_return;
} Tetris;

static const PufferField CONFIG[] = {
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* Whether `piece` at `rotation` fits with its box's top-left at (row, col). */
static int tetris_fits(const Tetris *env, int piece, int rotation, int row, int col) {
    if (col < 0) return 0;
    for (int r = 0; r < 4; r++) {
        const int bits = tetris_row_bits(piece, rotation, r) << col;
        if (!bits) break; /* shapes touch the top of their box: no gaps between rows */
        if (row + r >= TETRIS_ROWS || bits > TETRIS_FULL_ROW || (env->filled[row + r] & bits)) {
            return 0;
        }
    }
    return 1;
}

static int tetris_piece_fits(const Tetris *env, int rotation, int row, int col) {
    return tetris_fits(env, env->queue[0], rotation, row, col);
}

/* Writes `value` into the observation cells the falling piece covers. */
static void tetris_observe_piece(Tetris *env, float value) {
    float *cells = env->observations + env->row * TETRIS_COLS + env->col;
    for (int r = 0; r < 4; r++) {
        const int bits = tetris_row_bits(env->queue[0], env->rotation, r);
        for (int i = 0; i < 4; i++)
            if (bits >> i & 1) cells[r * TETRIS_COLS + i] = value;
    }
}

/* The scalars every step changes. */
static void tetris_observe_scalars(Tetris *env) {
    float *s = env->observations + TETRIS_OBS_SCALARS;
    s[0] = (float)env->tick / TETRIS_MAX_TICKS;
    s[1] = (float)env->fall_tick / TETRIS_FALL_TICKS;
    s[2] = (float)env->row / TETRIS_ROWS;
    s[3] = (float)env->col / TETRIS_COLS;
    s[4] = (float)env->rotation; /* unscaled, as theirs */
    s[5] = (float)env->can_hold;
}

/* The whole observation: after a lock, a hold or a new episode. */
static void tetris_observe(Tetris *env) {
    float *obs = env->observations;
    for (int r = 0; r < TETRIS_ROWS; r++)
        for (int c = 0; c < TETRIS_COLS; c++)
            obs[r * TETRIS_COLS + c] = (float)(env->filled[r] >> c & 1);
    tetris_observe_piece(env, TETRIS_OBS_FALLING);
    tetris_observe_scalars(env);
    memset(obs + TETRIS_OBS_QUEUE, 0, (TETRIS_OBS - TETRIS_OBS_QUEUE) * sizeof(float));
    for (int j = 0; j < TETRIS_QUEUE; j++)
        obs[TETRIS_OBS_QUEUE + j * TETRIS_PIECES + env->queue[j]] = 1.0f;
    if (env->hold >= 0) obs[TETRIS_OBS_HOLD + env->hold] = 1.0f;
}

/* Puts the queue's front piece at the top of the well, unturned. */
static void tetris_enter(Tetris *env) {
    env->row = 0;
    env->col = TETRIS_SPAWN_COL;
    env->rotation = 0;
    env->fall_tick = 0;
}

/* Drops the front piece from the queue and draws a new last one. */
static void tetris_advance(Tetris *env) {
    for (int j = 1; j < TETRIS_QUEUE; j++)
        env->queue[j - 1] = env->queue[j];
    env->queue[TETRIS_QUEUE - 1] = rng_int(&env->rng, TETRIS_PIECES);
    tetris_enter(env);
}

static void tetris_new_episode(Tetris *env) {
    memset(env->well, 0, sizeof(env->well));
    memset(env->filled, 0, sizeof(env->filled));
    for (int j = 0; j < TETRIS_QUEUE; j++)
        env->queue[j] = rng_int(&env->rng, TETRIS_PIECES);
    env->hold = -1;
    env->can_hold = 1;
    env->tick = 0;
    env->score = env->lines = env->combos = 0;
    env->soft_drops = env->hard_drops = env->rotates = 0;
    env->episode_return = 0.0f;
    tetris_enter(env);
    tetris_observe(env);
}

static void c_init(Tetris *env) {
    env->num_agents = 1;
}

static void c_reset(Tetris *env) {
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    tetris_new_episode(env);
}

static void tetris_end_episode(Tetris *env) {
    Log *log = &env->log;
    const float ticks = (float)env->tick;
    log->episode_return += env->episode_return;
    log->episode_length += ticks;
    log->score += (float)env->score;
    log->perf += (float)env->score / TETRIS_PERSONAL_BEST;
    log->lines_deleted += (float)env->lines;
    log->avg_combo += env->combos ? (float)env->lines / (float)env->combos : 1.0f;
    log->atn_frac_soft_drop += (float)env->soft_drops / ticks;
    log->atn_frac_hard_drop += (float)env->hard_drops / ticks;
    log->atn_frac_rotate += (float)env->rotates / ticks;
    log->n += 1.0f;
    env->terminals[0] = 1;
    tetris_new_episode(env);
}

/* Locks the falling piece, clears full rows among the ones it covers, pays for them, and
 * brings in the next piece, or ends the episode when that piece cannot enter or time is up. */
static float tetris_lock(Tetris *env) {
    const int piece = env->queue[0];
    int height = 0;
    for (int r = 0; r < 4; r++) {
        const int bits = tetris_row_bits(piece, env->rotation, r);
        if (!bits) break;
        height = r + 1;
        env->filled[env->row + r] |= (uint16_t)(bits << env->col);
        for (int i = 0; i < 4; i++)
            if (bits >> i & 1) env->well[env->row + r][env->col + i] = (uint8_t)(piece + 1);
    }
    int cleared = 0;
    for (int r = env->row + height - 1, left = height; left > 0; left--) {
        if (env->filled[r] != TETRIS_FULL_ROW) {
            r--;
            continue;
        }
        /* Rows above fall one; row r is checked again, now holding the row that fell. */
        memmove(env->well[1], env->well[0], (size_t)r * TETRIS_COLS);
        memmove(env->filled + 1, env->filled, (size_t)r * sizeof(env->filled[0]));
        memset(env->well[0], 0, TETRIS_COLS);
        env->filled[0] = 0;
        cleared++;
    }
    float reward = 0.0f;
    if (cleared) {
        env->combos++;
        env->lines += cleared;
        env->score += TETRIS_LINE_SCORE[cleared];
        reward = TETRIS_LINE_REWARD[cleared];
    }
    env->episode_return += reward;
    env->can_hold = 1;
    if (!tetris_fits(env, env->queue[1], 0, 0, TETRIS_SPAWN_COL) || env->tick >= TETRIS_MAX_TICKS) {
        tetris_end_episode(env);
        return reward;
    }
    tetris_advance(env);
    tetris_observe(env);
    return reward;
}

/* Hold: the falling piece goes to the hold slot and the held one (or, with none, the next in
 * the queue) enters at the top. Refused after a hold until the next lock, or if the incoming
 * piece does not fit where it enters. Returns whether it happened. */
static int tetris_hold(Tetris *env) {
    const int incoming = env->hold >= 0 ? env->hold : env->queue[1];
    if (!env->can_hold || !tetris_fits(env, incoming, 0, 0, TETRIS_SPAWN_COL)) return 0;
    const int current = env->queue[0];
    if (env->hold >= 0) {
        env->queue[0] = env->hold;
        tetris_enter(env);
    } else {
        tetris_advance(env);
    }
    env->hold = current;
    env->can_hold = 0;
    tetris_observe(env);
    return 1;
}

static void c_step(Tetris *env) {
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    env->tick++;
    env->fall_tick++;
    float reward = 0.0f;
    tetris_observe_piece(env, 0.0f); /* cells it leaves; redrawn below unless a lock rewrote all */
    switch (env->actions[0]) {       /* out-of-range actions are no-ops */
    case TETRIS_LEFT:
        env->col -= tetris_piece_fits(env, env->rotation, env->row, env->col - 1);
        break;
    case TETRIS_RIGHT:
        env->col += tetris_piece_fits(env, env->rotation, env->row, env->col + 1);
        break;
    case TETRIS_ROTATE: {
        env->rotates++;
        const int turned = (env->rotation + 1) % TETRIS_ROTATIONS;
        if (tetris_piece_fits(env, turned, env->row, env->col)) env->rotation = turned;
        break;
    }
    case TETRIS_SOFT_DROP:
        env->soft_drops++;
        if (tetris_piece_fits(env, env->rotation, env->row + 1, env->col)) {
            env->row++;
            env->score += TETRIS_SOFT_DROP_SCORE;
            reward += TETRIS_SOFT_DROP_REWARD;
        }
        break;
    case TETRIS_HARD_DROP: {
        env->hard_drops++;
        float drop = 0.0f;
        while (tetris_piece_fits(env, env->rotation, env->row + 1, env->col)) {
            env->row++;
            env->score += TETRIS_HARD_DROP_SCORE;
            drop += TETRIS_HARD_DROP_REWARD;
        }
        env->episode_return += drop + reward;
        env->rewards[0] = drop + reward + tetris_lock(env);
        return;
    }
    case TETRIS_HOLD:
        if (tetris_hold(env)) {
            env->rewards[0] = 0.0f;
            return;
        }
        break;
    default:
        break;
    }
    env->episode_return += reward;
    if (env->fall_tick == TETRIS_FALL_TICKS) {
        env->fall_tick = 0;
        if (!tetris_piece_fits(env, env->rotation, env->row + 1, env->col)) {
            env->rewards[0] = reward + tetris_lock(env);
            return;
        }
        env->row++;
    }
    env->rewards[0] = reward;
    tetris_observe_piece(env, TETRIS_OBS_FALLING);
    tetris_observe_scalars(env);
}

static void c_frame_size(const Tetris *env, int *width, int *height) {
    (void)env;
    *width = TETRIS_COLS * TETRIS_CELL_PIXELS + TETRIS_PANEL_PIXELS;
    *height = TETRIS_ROWS * TETRIS_CELL_PIXELS;
}

static const Color TETRIS_COLORS[TETRIS_PIECES] = {{230, 200, 0}, {0, 187, 187}, {0, 187, 0},
                                                   {187, 0, 0},   {150, 0, 170}, {230, 120, 0},
                                                   {0, 90, 220}};

static void tetris_draw_piece(Canvas *canvas, int piece, int rotation, int x, int y, int px) {
    for (int r = 0; r < 4; r++) {
        const int bits = tetris_row_bits(piece, rotation, r);
        for (int i = 0; i < 4; i++)
            if (bits >> i & 1)
                raster_rect(canvas, x + i * px + 1, y + r * px + 1, px - 2, px - 2,
                            TETRIS_COLORS[piece]);
    }
}

static void c_render(const Tetris *env, Canvas *canvas) {
    const int px = TETRIS_CELL_PIXELS, left = TETRIS_COLS * TETRIS_CELL_PIXELS;
    const int small = TETRIS_PREVIEW_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    raster_rect(canvas, left, 0, TETRIS_PANEL_PIXELS, canvas->height, COLOR_GRID);
    for (int r = 0; r < TETRIS_ROWS; r++)
        for (int c = 0; c < TETRIS_COLS; c++)
            if (env->well[r][c])
                raster_rect(canvas, c * px + 1, r * px + 1, px - 2, px - 2,
                            TETRIS_COLORS[env->well[r][c] - 1]);
    tetris_draw_piece(canvas, env->queue[0], env->rotation, env->col * px, env->row * px, px);
    raster_text(canvas, left + 8, 8, "NEXT", 3, COLOR_WHITE);
    for (int j = 1; j < TETRIS_QUEUE; j++)
        tetris_draw_piece(canvas, env->queue[j], 0, left + 12 + (j - 1) * 3 * small, 32, small);
    raster_text(canvas, left + 8, 112, "HOLD", 3, COLOR_WHITE);
    if (env->hold >= 0) tetris_draw_piece(canvas, env->hold, 0, left + 12, 136, small);
    raster_text(canvas, left + 8, 216, "SCORE", 3, COLOR_WHITE);
    raster_number(canvas, left + 8, 240, env->score, 3, COLOR_WHITE);
    raster_text(canvas, left + 8, 280, "LINES", 3, COLOR_WHITE);
    raster_number(canvas, left + 8, 304, env->lines, 3, COLOR_WHITE);
}

static void c_close(Tetris *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {7};
static const PufferKey KEYS[] = {{"idle", 0, TETRIS_NOOP},      {"left", 0, TETRIS_LEFT},
                                 {"right", 0, TETRIS_RIGHT},    {"up", 0, TETRIS_ROTATE},
                                 {"down", 0, TETRIS_SOFT_DROP}, {"space", 0, TETRIS_HARD_DROP},
                                 {"c", 0, TETRIS_HOLD},         {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's tetris: place falling pieces in a 20x10 well; full rows clear. "
           "Observation: (234,) float32: the well row-major from the top (200; 0 empty, 1 locked, "
           "2 the falling piece), then tick / 10000, gravity phase / 4, piece row / 20, piece "
           "column / 10, rotation (0-3, unscaled), can-hold flag (6); one-hot ids of the three "
           "queued pieces, the falling one first (3 x 7); one-hot held piece, zeros for none (7). "
           "Piece ids: O, I, S, Z, T, L, J. Action: Discrete(7): no-op, left, right, rotate "
           "clockwise, soft drop, hard drop, hold.\n\n"
           "| rule | value |\n|---|---|\n"
           "| pieces | each drawn uniformly at random (no bag); a queue of 3, the first falling; "
           "each enters unturned with its box's top-left at row 0, column 5 |\n"
           "| moves | left, right, rotate (clockwise, no wall kicks), soft drop: refused (a no-op) "
           "when the piece would not fit |\n"
           "| gravity | one row every 4 steps since the piece entered; a piece that cannot fall "
           "then locks |\n"
           "| hard drop | down as far as it fits, then locks at once |\n"
           "| hold | swaps the falling piece with the held one (none held: the next in the queue "
           "enters); once per piece, until the next lock |\n"
           "| reward | soft drop +0.01 per row moved; hard drop +0.02 per row; a lock clearing 1, "
           "2, 3, 4 lines +0.1, 0.3, 0.5, 1.0 |\n"
           "| score (log) | 1 per soft-drop row, 2 per hard-drop row, 100/300/500/1000 per lock "
           "by lines; perf = score / 12565 |\n"
           "| episode end | terminal at a lock after which the next piece does not fit where it "
           "enters, or at the first lock at tick 10,000 or later (the observation shows the "
           "tick) |\n\n"
           "Differences: the well and the queue are fixed at their defaults (theirs are "
           "parameters; the observation width is static here); the queue and hold one-hots start "
           "after the 6 scalars (theirs start 2 floats early, overwriting rotation and the hold "
           "flag, and leave the last 2 floats always 0); a hold is refused if the incoming piece "
           "does not fit where it enters (theirs tests the held piece at the falling piece's "
           "rotation one column to its right, or nothing when none is held).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = TETRIS_OBS,
    .obs_low = 0,
    .obs_high = 3,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Tetris),
};

PUFFER_ENV_END(tetris, Tetris)

#endif
