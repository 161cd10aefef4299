/* Tetris: single-player Tetris on the standard 20x10 well.
 *
 * The seven tetrominoes come from a shuffled 7-bag (each bag holds every piece once). Every
 * step applies one action, then gravity moves the piece down one row every
 * TETRIS_GRAVITY_PERIOD steps; a piece that cannot fall locks, full rows clear and the rows
 * above drop. Rotation has no wall kicks: a rotation that would collide does nothing. The
 * episode terminates when a new piece overlaps the stack, and truncates after `max_steps` (config)
 * steps.
 *
 * Reward: TETRIS_LINE_REWARD[k] when a lock clears k lines (1, 3, 5, 8 tenths: more lines at
 * once pay more per line, as in the game's scoring), nothing otherwise.
 *
 * Actions: Discrete(7): no-op, left, right, rotate clockwise, rotate counter-clockwise, soft
 * drop (down one row), hard drop (down to the stack, then lock).
 *
 * Observation (234 float32, all in [-1, 1]):
 *   [0:200]   the well, row-major from the top: 1 locked block, -1 falling piece, 0 empty
 *   [200:207] one-hot type of the falling piece (I, O, T, S, Z, J, L)
 *   [207:214] one-hot type of the next piece
 *   [214:218] one-hot rotation of the falling piece
 *   [218:228] height of each column / TETRIS_ROWS
 *   [228]     piece column: (x + 3) / 12, x the left of its 4x4 box (x >= -3)
 *   [229]     piece row: y / 18, y the top of its 4x4 box (a box bottoms out at 18)
 *   [230]     gravity phase: steps since the last gravity drop / TETRIS_GRAVITY_PERIOD
 *   [231]     tick / max_steps
 *   [232]     lines cleared by the last lock / 4
 *   [233]     holes (empty cells under a column's top block) / (TETRIS_ROWS * TETRIS_COLS)
 */
#ifndef PUFFER_TETRIS_H
#define PUFFER_TETRIS_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(tetris)

enum { TETRIS_ROWS = 20, TETRIS_COLS = 10, TETRIS_CELLS = TETRIS_ROWS * TETRIS_COLS };
enum { TETRIS_PIECES = 7, TETRIS_ROTATIONS = 4, TETRIS_OBS = 234 };
enum { TETRIS_GRAVITY_PERIOD = 4 };        /* steps per one-row gravity drop */
enum { TETRIS_DEFAULT_MAX_STEPS = 10000 }; /* steps per episode, then truncation */
enum { TETRIS_SPAWN_X = 3 };               /* column of a new piece's 4x4 box */
/* Where each part of the observation starts (see the layout above). */
enum {
    TETRIS_OBS_PIECE = TETRIS_CELLS,
    TETRIS_OBS_NEXT = TETRIS_OBS_PIECE + TETRIS_PIECES,
    TETRIS_OBS_ROTATION = TETRIS_OBS_NEXT + TETRIS_PIECES,
    TETRIS_OBS_HEIGHTS = TETRIS_OBS_ROTATION + TETRIS_ROTATIONS,
    TETRIS_OBS_SCALARS = TETRIS_OBS_HEIGHTS + TETRIS_COLS,
};
_Static_assert(TETRIS_OBS_SCALARS + 6 == TETRIS_OBS, "observation layout adds up");
/* A piece's 4x4 box may hang off the well: its left x lies in [TETRIS_MIN_X, TETRIS_COLS - 1]
 * and its top y in [0, TETRIS_ROWS - 2]; the observation scales both into [0, 1]. */
enum { TETRIS_MIN_X = -3, TETRIS_MAX_LINES = 4 };
enum { TETRIS_CELL_PIXELS = 24 };   /* rendered cell size */
enum { TETRIS_PANEL_PIXELS = 120 }; /* width of the next-piece and score panel */
enum {
    TETRIS_NOOP,
    TETRIS_LEFT,
    TETRIS_RIGHT,
    TETRIS_ROTATE_CW,
    TETRIS_ROTATE_CCW,
    TETRIS_SOFT_DROP, /* down one row now; locks if it cannot */
    TETRIS_HARD_DROP, /* down as far as it goes, then lock */
};

/* Lines cleared by one lock -> reward. */
static const float TETRIS_LINE_REWARD[TETRIS_MAX_LINES + 1] = {0.0f, 0.1f, 0.3f, 0.5f, 0.8f};

/* Each rotation is a 4x4 mask, row-major from the top-left, bit 15 first; rotations go
 * clockwise. */
static const uint16_t TETRIS_SHAPES[TETRIS_PIECES][TETRIS_ROTATIONS] = {
    {0x0F00, 0x2222, 0x00F0, 0x4444}, /* I */
    {0x6600, 0x6600, 0x6600, 0x6600}, /* O */
    {0x0E40, 0x4C40, 0x4E00, 0x4640}, /* T */
    {0x06C0, 0x8C40, 0x6C00, 0x4620}, /* S */
    {0x0C60, 0x4C80, 0xC600, 0x2640}, /* Z */
    {0x0E20, 0x44C0, 0x8E00, 0x6440}, /* J */
    {0x0E80, 0xC440, 0x2E00, 0x4460}, /* L */
};

typedef struct {
    float episode_return;
    float episode_length;
    float score;  /* lines cleared */
    float pieces; /* pieces locked */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "pieces", "n"};
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
    int max_steps; /* config: steps per episode */
    int tick;
    uint8_t well[TETRIS_ROWS][TETRIS_COLS]; /* 0 empty, else piece type + 1 (its color) */
    int piece, rotation, x, y;              /* the falling piece and its box's top-left */
    int bag[TETRIS_PIECES], bag_left;
    int next_piece;
    int gravity_phase;
    int last_lines;
    float episode_return, lines, pieces;
} Tetris;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Tetris, max_steps), PUFFER_INT, TETRIS_DEFAULT_MAX_STEPS, 1, 1e9,
     "steps per episode before truncation"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int tetris_has_block(int piece, int rotation, int bx, int by) {
    return (TETRIS_SHAPES[piece][rotation] >> (15 - (by * 4 + bx))) & 1;
}

static int tetris_fits(const Tetris *env, int rotation, int x, int y) {
    for (int by = 0; by < 4; by++) {
        for (int bx = 0; bx < 4; bx++) {
            if (!tetris_has_block(env->piece, rotation, bx, by)) continue;
            const int col = x + bx, row = y + by;
            if (col < 0 || col >= TETRIS_COLS || row < 0 || row >= TETRIS_ROWS) return 0;
            if (env->well[row][col]) return 0;
        }
    }
    return 1;
}

static int tetris_draw_from_bag(Tetris *env) {
    if (env->bag_left == 0) {
        for (int i = 0; i < TETRIS_PIECES; i++)
            env->bag[i] = i;
        for (int i = TETRIS_PIECES - 1; i > 0; i--) { /* Fisher-Yates */
            const int j = rng_int(&env->rng, i + 1);
            const int t = env->bag[i];
            env->bag[i] = env->bag[j];
            env->bag[j] = t;
        }
        env->bag_left = TETRIS_PIECES;
    }
    return env->bag[--env->bag_left];
}

/* Brings in the next piece; returns 0 if it overlaps the stack (game over). */
static int tetris_spawn(Tetris *env) {
    env->piece = env->next_piece;
    env->next_piece = tetris_draw_from_bag(env);
    env->rotation = 0;
    env->x = TETRIS_SPAWN_X;
    env->y = 0;
    env->gravity_phase = 0;
    return tetris_fits(env, env->rotation, env->x, env->y);
}

/* Writes the piece into the well and clears full rows; returns the number cleared. */
static int tetris_lock(Tetris *env) {
    for (int by = 0; by < 4; by++) {
        for (int bx = 0; bx < 4; bx++) {
            if (tetris_has_block(env->piece, env->rotation, bx, by)) {
                env->well[env->y + by][env->x + bx] = (uint8_t)(env->piece + 1);
            }
        }
    }
    int cleared = 0;
    for (int row = TETRIS_ROWS - 1; row >= 0; row--) {
        int full = 1;
        for (int col = 0; col < TETRIS_COLS && full; col++)
            full = env->well[row][col] != 0;
        if (!full) continue;
        memmove(env->well[1], env->well[0], (size_t)row * TETRIS_COLS);
        memset(env->well[0], 0, TETRIS_COLS);
        cleared++;
        row++; /* the row that fell into place must be checked too */
    }
    return cleared;
}

/* Writes `value` into the observation cells the falling piece covers at (rotation, x, y). */
static void tetris_observe_piece(Tetris *env, int rotation, int x, int y, float value) {
    for (int by = 0; by < 4; by++) {
        for (int bx = 0; bx < 4; bx++) {
            if (tetris_has_block(env->piece, rotation, bx, by)) {
                env->observations[(y + by) * TETRIS_COLS + x + bx] = value;
            }
        }
    }
}

/* The scalars that change without a lock: piece position, gravity phase, time. */
static void tetris_observe_motion(Tetris *env) {
    float *scalars = env->observations + TETRIS_OBS_SCALARS;
    scalars[0] = (float)(env->x - TETRIS_MIN_X) / (float)(TETRIS_COLS - 1 - TETRIS_MIN_X);
    scalars[1] = (float)env->y / (float)(TETRIS_ROWS - 2);
    scalars[2] = (float)env->gravity_phase / TETRIS_GRAVITY_PERIOD;
    scalars[3] = (float)env->tick / (float)env->max_steps;
}

/* The whole observation; needed only when the well changed (a lock or a new episode). */
static void tetris_observe(Tetris *env) {
    float *obs = env->observations;
    for (int row = 0; row < TETRIS_ROWS; row++) {
        for (int col = 0; col < TETRIS_COLS; col++) {
            obs[row * TETRIS_COLS + col] = env->well[row][col] ? 1.0f : 0.0f;
        }
    }
    tetris_observe_piece(env, env->rotation, env->x, env->y, -1.0f);
    memset(obs + TETRIS_CELLS, 0, (TETRIS_OBS - TETRIS_CELLS) * sizeof(float));
    obs[TETRIS_OBS_PIECE + env->piece] = 1.0f;
    obs[TETRIS_OBS_NEXT + env->next_piece] = 1.0f;
    obs[TETRIS_OBS_ROTATION + env->rotation] = 1.0f;
    int holes = 0;
    for (int col = 0; col < TETRIS_COLS; col++) {
        int top = 0;
        while (top < TETRIS_ROWS && !env->well[top][col])
            top++;
        obs[TETRIS_OBS_HEIGHTS + col] = (float)(TETRIS_ROWS - top) / TETRIS_ROWS;
        for (int row = top; row < TETRIS_ROWS; row++)
            holes += !env->well[row][col];
    }
    tetris_observe_motion(env);
    float *scalars = obs + TETRIS_OBS_SCALARS;
    scalars[4] = (float)env->last_lines / TETRIS_MAX_LINES;
    scalars[5] = (float)holes / TETRIS_CELLS;
}

/* Starts a new episode without touching rewards or flags (see c_step). */
static void tetris_new_episode(Tetris *env) {
    memset(env->well, 0, sizeof(env->well));
    env->bag_left = 0;
    env->next_piece = tetris_draw_from_bag(env);
    tetris_spawn(env); /* an empty well always fits */
    env->tick = 0;
    env->last_lines = 0;
    env->episode_return = env->lines = env->pieces = 0.0f;
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

/* Applies one action; returns whether the piece must lock. */
static int tetris_act(Tetris *env, int action) {
    switch (action) { /* out-of-range actions are no-ops */
    case TETRIS_LEFT:
        env->x -= tetris_fits(env, env->rotation, env->x - 1, env->y);
        break;
    case TETRIS_RIGHT:
        env->x += tetris_fits(env, env->rotation, env->x + 1, env->y);
        break;
    case TETRIS_ROTATE_CW:
    case TETRIS_ROTATE_CCW: {
        const int turn = action == TETRIS_ROTATE_CW ? 1 : TETRIS_ROTATIONS - 1;
        const int rotation = (env->rotation + turn) % TETRIS_ROTATIONS;
        if (tetris_fits(env, rotation, env->x, env->y)) env->rotation = rotation;
        break;
    }
    case TETRIS_SOFT_DROP:
        if (!tetris_fits(env, env->rotation, env->x, env->y + 1)) return 1;
        env->y++;
        break;
    case TETRIS_HARD_DROP:
        while (tetris_fits(env, env->rotation, env->x, env->y + 1))
            env->y++;
        return 1;
    default:
        break;
    }
    if (++env->gravity_phase < TETRIS_GRAVITY_PERIOD) return 0;
    env->gravity_phase = 0;
    if (!tetris_fits(env, env->rotation, env->x, env->y + 1)) return 1;
    env->y++;
    return 0;
}

static void c_step(Tetris *env) {
    env->tick++;
    float reward = 0.0f;
    int game_over = 0;
    const int rotation = env->rotation, x = env->x, y = env->y;
    const int locked = tetris_act(env, env->actions[0]);
    if (locked) {
        env->last_lines = tetris_lock(env);
        reward = TETRIS_LINE_REWARD[env->last_lines];
        env->lines += (float)env->last_lines;
        env->pieces += 1.0f;
        game_over = !tetris_spawn(env);
    }
    env->rewards[0] = reward;
    env->episode_return += reward;
    env->terminals[0] = (uint8_t)game_over;
    env->truncations[0] = (uint8_t)(!game_over && env->tick >= env->max_steps);
    if (env->terminals[0] || env->truncations[0]) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += env->lines;
        env->log.pieces += env->pieces;
        env->log.n += 1.0f;
        tetris_new_episode(env);
        return;
    }
    if (locked) {
        tetris_observe(env);
        return;
    }
    /* Only the falling piece moved: the piece never overlaps locked blocks, so its old cells
     * were empty. */
    tetris_observe_piece(env, rotation, x, y, 0.0f);
    tetris_observe_piece(env, env->rotation, env->x, env->y, -1.0f);
    env->observations[TETRIS_OBS_ROTATION + rotation] = 0.0f;
    env->observations[TETRIS_OBS_ROTATION + env->rotation] = 1.0f;
    tetris_observe_motion(env);
}

static void c_frame_size(const Tetris *env, int *width, int *height) {
    (void)env;
    *width = TETRIS_COLS * TETRIS_CELL_PIXELS + TETRIS_PANEL_PIXELS;
    *height = TETRIS_ROWS * TETRIS_CELL_PIXELS;
}

static void tetris_draw_piece(Canvas *canvas, int piece, int rotation, int x, int y, int px,
                              Color color) {
    for (int by = 0; by < 4; by++) {
        for (int bx = 0; bx < 4; bx++) {
            if (tetris_has_block(piece, rotation, bx, by)) {
                raster_rect(canvas, x + bx * px + 1, y + by * px + 1, px - 2, px - 2, color);
            }
        }
    }
}

static void c_render(const Tetris *env, Canvas *canvas) {
    static const Color PIECE_COLORS[TETRIS_PIECES] = {{0, 187, 187}, {230, 200, 0}, {187, 0, 187},
                                                      {0, 187, 0},   {187, 0, 0},   {0, 120, 220},
                                                      {230, 120, 0}};
    const int px = TETRIS_CELL_PIXELS, well_width = TETRIS_COLS * TETRIS_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    raster_rect(canvas, well_width, 0, TETRIS_PANEL_PIXELS, canvas->height, COLOR_GRID);
    for (int row = 0; row < TETRIS_ROWS; row++) {
        for (int col = 0; col < TETRIS_COLS; col++) {
            const int cell = env->well[row][col];
            if (cell) {
                raster_rect(canvas, col * px + 1, row * px + 1, px - 2, px - 2,
                            PIECE_COLORS[cell - 1]);
            }
        }
    }
    tetris_draw_piece(canvas, env->piece, env->rotation, env->x * px, env->y * px, px,
                      PIECE_COLORS[env->piece]);
    raster_text(canvas, well_width + 8, 8, "NEXT", 3, COLOR_WHITE);
    tetris_draw_piece(canvas, env->next_piece, 0, well_width + 12, 32, px,
                      PIECE_COLORS[env->next_piece]);
    raster_text(canvas, well_width + 8, 140, "LINES", 3, COLOR_WHITE);
    raster_number(canvas, well_width + 8, 164, (int)env->lines, 3, COLOR_WHITE);
}

static void c_close(Tetris *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {7};
static const PufferKey KEYS[] = {{"idle", 0, 0}, {"left", 0, 1}, {"right", 0, 2}, {"up", 0, 3},
                                 {"z", 0, 4},    {"down", 0, 5}, {"space", 0, 6}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Tetris: place falling tetrominoes; full rows clear. Reward 0.1, 0.3, 0.5, 0.8 for "
           "clearing 1-4 lines at once; terminal when a new piece cannot enter the well. "
           "Observation: (234,) float32 in [-1, 1]: the 20x10 well row-major from the top (200; "
           "1 locked, -1 falling piece, 0 empty), one-hot falling piece (7), next piece (7) and "
           "rotation (4), column heights / 20 (10), then piece column, piece row, gravity phase, "
           "episode progress, lines cleared by the last lock / 4 and holes / 200 (6). Action: "
           "Discrete(7): no-op, left, right, rotate clockwise, rotate counter-clockwise, soft "
           "drop, hard drop. Gravity drops the piece one row every 4 steps.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = TETRIS_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Tetris),
};

PUFFER_ENV_END(tetris, Tetris)

#endif
