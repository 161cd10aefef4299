/* Checkers on an 8x8 board against a random opponent (PufferLib 3.0's checkers task, rules
 * restated in our own code).
 *
 * Rules:
 * | board        | 8x8; your 12 pawns on the dark squares of rows 0-2 move toward row 7,   |
 * |              | the opponent's 12 on rows 5-7 toward row 0; kings move both ways        |
 * | moves        | one diagonal step onto an empty square, or a jump over an enemy piece   |
 * |              | onto the empty square behind it (the piece is removed)                  |
 * | forced jumps | while the side to move has a jump anywhere, only jumps are legal; after |
 * |              | a jump the same side moves again as long as it has a jump               |
 * | promotion    | a pawn reaching the far row becomes a king                              |
 * | game end     | the side to move with no piece or no legal move loses: +1 / -1 (terminal);|
 * |              | max_steps [1000] truncates                                              |
 * | rewards      | a legal move of yours +0.01, a promotion of yours +0.05, each of your    |
 * |              | pieces the opponent jumps -0.05; an illegal action -1 (nothing moves)   |
 * | opponent     | picks a random piece among those with a legal move and plays its first  |
 * |              | legal move in the order of the action encoding                          |
 * Observation: (64,) uint8 squares row-major: 0 empty, 1 your pawn, 2 your king, 3 enemy pawn,
 * 4 enemy king. Action: Discrete(512) = square * 8 + move, moves NW, NE, SW, SE (one step;
 * N is toward row 0) then the same four as jumps.
 *
 * Deliberate differences from PufferLib 3.0, whose rewards are overwritten by the opponent's
 * move and whose turn order breaks after an illegal action or a multi-jump: here the rewards
 * above add up within a step, an illegal action leaves the board and the turn unchanged, the
 * opponent finishes its multi-jumps before you move, and kings jump backwards. Their games have
 * no time limit; ours truncate at max_steps [1000], so a policy that keeps playing illegal
 * actions still finishes episodes (random actions average ~50,000 steps a game).
 */
#ifndef PUFFER_CHECKERS_H
#define PUFFER_CHECKERS_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(checkers)

enum { CK_SIZE = 8, CK_SQUARES = 64, CK_ACTIONS = CK_SQUARES * 8 };
enum { CK_EMPTY = 0, CK_PAWN = 1, CK_KING = 2, CK_ENEMY_PAWN = 3, CK_ENEMY_KING = 4 };
enum { CK_YOU = 0, CK_ENEMY = 1 };
enum { CK_CELL_PIXELS = 40 };
static const float CK_MOVE_REWARD = 0.01f, CK_PROMOTE_REWARD = 0.05f, CK_LOSS_REWARD = 0.05f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* material at the end: pawns 1 + 0.1 per row advanced, kings 2; yours minus theirs
                  */
    float perf;  /* 1 for a win */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf", "n"};

typedef struct {
    uint8_t *observations; /* (1, 64): the board itself */
    int32_t *actions;      /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config */
    int tick;
    float episode_return;
} Checkers;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Checkers, max_steps), PUFFER_INT, 1000, 1, 1e9,
     "steps before the game is truncated (not in PufferLib 3.0; see the header)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static const int CK_DR[8] = {-1, -1, 1, 1, -2, -2, 2, 2};
static const int CK_DC[8] = {-1, 1, -1, 1, -2, 2, -2, 2};

static void c_init(Checkers *env) {
    env->num_agents = 1;
}

static int ck_side(int piece) {
    return piece == CK_EMPTY ? -1 : (piece >= CK_ENEMY_PAWN ? CK_ENEMY : CK_YOU);
}

/* Whether `move` (0-7) of the piece on `square` is legal for `side`, ignoring forced jumps. */
static int ck_legal_shape(const uint8_t *board, int side, int square, int move) {
    const int piece = board[square];
    if (ck_side(piece) != side) return 0;
    const int r = square / CK_SIZE + CK_DR[move], c = square % CK_SIZE + CK_DC[move];
    if (r < 0 || r >= CK_SIZE || c < 0 || c >= CK_SIZE || board[r * CK_SIZE + c]) return 0;
    const int forward = side == CK_YOU ? 1 : -1;
    if ((piece == CK_PAWN || piece == CK_ENEMY_PAWN) && CK_DR[move] * forward < 0) return 0;
    if (move < 4) return 1;
    const int mid =
        (square / CK_SIZE + CK_DR[move] / 2) * CK_SIZE + square % CK_SIZE + CK_DC[move] / 2;
    return ck_side(board[mid]) == 1 - side;
}

static int ck_has_jump(const uint8_t *board, int side) {
    for (int s = 0; s < CK_SQUARES; s++)
        for (int m = 4; m < 8; m++)
            if (ck_legal_shape(board, side, s, m)) return 1;
    return 0;
}

static int ck_legal(const uint8_t *board, int side, int square, int move) {
    if (!ck_legal_shape(board, side, square, move)) return 0;
    return move >= 4 || !ck_has_jump(board, side);
}

/* Plays a legal move; returns 1 if it promoted a pawn. */
static int ck_play(uint8_t *board, int square, int move) {
    int piece = board[square];
    const int r = square / CK_SIZE + CK_DR[move], c = square % CK_SIZE + CK_DC[move];
    board[square] = CK_EMPTY;
    if (move >= 4)
        board[(square / CK_SIZE + CK_DR[move] / 2) * CK_SIZE + square % CK_SIZE + CK_DC[move] / 2] =
            CK_EMPTY;
    int promoted = 0;
    if (piece == CK_PAWN && r == CK_SIZE - 1) piece = CK_KING, promoted = 1;
    if (piece == CK_ENEMY_PAWN && r == 0) piece = CK_ENEMY_KING, promoted = 1;
    board[r * CK_SIZE + c] = (uint8_t)piece;
    return promoted;
}

/* The first legal move of a random piece among those that have one, or -1 if none. */
static int ck_opponent_action(Checkers *env) {
    const uint8_t *board = env->observations;
    int first[CK_SQUARES], count = 0;
    for (int s = 0; s < CK_SQUARES; s++) {
        for (int m = 0; m < 8; m++) {
            if (ck_legal(board, CK_ENEMY, s, m)) {
                first[count++] = s * 8 + m;
                break;
            }
        }
    }
    return count ? first[rng_int(&env->rng, count)] : -1;
}

static int ck_can_move(const uint8_t *board, int side) {
    for (int s = 0; s < CK_SQUARES; s++)
        for (int m = 0; m < 8; m++)
            if (ck_legal_shape(board, side, s, m)) return 1;
    return 0;
}

static float ck_material(const uint8_t *board) {
    float score = 0.0f;
    for (int s = 0; s < CK_SQUARES; s++) {
        const int r = s / CK_SIZE;
        if (board[s] == CK_PAWN) score += 1.0f + 0.1f * (float)r;
        if (board[s] == CK_KING) score += 2.0f;
        if (board[s] == CK_ENEMY_PAWN) score -= 1.0f + 0.1f * (float)(CK_SIZE - 1 - r);
        if (board[s] == CK_ENEMY_KING) score -= 2.0f;
    }
    return score;
}

static void c_reset(Checkers *env) {
    env->tick = 0;
    env->episode_return = 0;
    for (int s = 0; s < CK_SQUARES; s++) {
        const int r = s / CK_SIZE, c = s % CK_SIZE, dark = (r + c) % 2;
        env->observations[s] =
            !dark ? CK_EMPTY : (r < 3 ? CK_PAWN : (r >= CK_SIZE - 3 ? CK_ENEMY_PAWN : CK_EMPTY));
    }
}

/* Your move (and any jumps that must follow are yours to choose); then the opponent's turn. */
static void c_step(Checkers *env) {
    uint8_t *board = env->observations;
    const int action = env->actions[0];
    env->tick++;
    float reward = 0.0f;
    int winner = -1;
    if (action < 0 || action >= CK_ACTIONS || !ck_legal(board, CK_YOU, action / 8, action % 8)) {
        reward = -1.0f;
    } else {
        const int jumped = action % 8 >= 4;
        reward +=
            CK_MOVE_REWARD + CK_PROMOTE_REWARD * (float)ck_play(board, action / 8, action % 8);
        if (!(jumped && ck_has_jump(board, CK_YOU))) {
            if (!ck_can_move(board, CK_ENEMY)) {
                winner = CK_YOU;
            } else {
                /* The opponent's turn, jumping on while it can. */
                int jumping;
                do {
                    const int enemy = ck_opponent_action(env), square = enemy / 8, move = enemy % 8;
                    const int mid = (square / CK_SIZE + CK_DR[move] / 2) * CK_SIZE +
                                    square % CK_SIZE + CK_DC[move] / 2;
                    jumping = move >= 4;
                    if (jumping && ck_side(board[mid]) == CK_YOU) reward -= CK_LOSS_REWARD;
                    ck_play(board, square, move);
                    jumping = jumping && ck_has_jump(board, CK_ENEMY);
                } while (jumping);
                if (!ck_can_move(board, CK_YOU)) winner = CK_ENEMY;
            }
        }
    }
    if (winner >= 0) reward = winner == CK_YOU ? 1.0f : -1.0f;
    const int truncated = winner < 0 && env->tick >= env->max_steps;
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)(winner >= 0);
    env->truncations[0] = (uint8_t)truncated;
    env->episode_return += reward;
    if (winner >= 0 || truncated) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += ck_material(board);
        env->log.perf += (float)(winner == CK_YOU);
        env->log.n += 1.0f;
        c_reset(env);
    }
}

static void c_frame_size(const Checkers *env, int *width, int *height) {
    (void)env;
    *width = *height = CK_SIZE * CK_CELL_PIXELS;
}

static void c_render(const Checkers *env, Canvas *canvas) {
    const int px = CK_CELL_PIXELS;
    for (int s = 0; s < CK_SQUARES; s++) {
        const int r = s / CK_SIZE, c = s % CK_SIZE, piece = env->observations[s];
        raster_rect(canvas, c * px, r * px, px, px, (r + c) % 2 ? COLOR_GRID : COLOR_BACKGROUND);
        if (piece == CK_EMPTY) continue;
        const Color color = ck_side(piece) == CK_YOU ? COLOR_CYAN : COLOR_RED;
        raster_circle(canvas, c * px + px / 2, r * px + px / 2, px / 2 - 4, color);
        if (piece == CK_KING || piece == CK_ENEMY_KING)
            raster_circle(canvas, c * px + px / 2, r * px + px / 2, px / 6, COLOR_YELLOW);
    }
}

static void c_close(Checkers *env) {
    (void)env;
}

/* Your legal actions (SPEC.action_mask): ck_legal for all 512 in one pass over your pieces,
 * plain moves cleared afterwards if any jump was found (forced jumps). A game that ended has
 * already been replaced by the next one's opening position, and a game goes on only while you
 * can move, so a mask is never all zero. */
static void checkers_action_mask(const void *env, uint8_t *out) {
    const uint8_t *board = ((const Checkers *)env)->observations;
    int jump = 0;
    memset(out, 0, CK_ACTIONS);
    for (int s = 0; s < CK_SQUARES; s++) {
        if (ck_side(board[s]) != CK_YOU) continue;
        for (int m = 0; m < 8; m++) {
            const int legal = ck_legal_shape(board, CK_YOU, s, m);
            out[s * 8 + m] = (uint8_t)legal;
            jump |= legal && m >= 4;
        }
    }
    if (jump)
        for (int a = 0; a < CK_ACTIONS; a += 8)
            memset(out + a, 0, 4);
}

static const int ACTION_SIZES[] = {CK_ACTIONS};
/* `puffer play`: a move is the square's column letter and row digit, counted from the top left
 * of the picture, then the move digit 1-8 (NW, NE, SW, SE, then the same as jumps). */
#define CK_KEY(col, row, move, name, move_name)                                                    \
    {name " " move_name, 0, ((row) * CK_SIZE + (col)) * 8 + (move)}
#define CK_KEY_SQUARE(col, row, name)                                                              \
    CK_KEY(col, row, 0, name, "1"), CK_KEY(col, row, 1, name, "2"),                                \
        CK_KEY(col, row, 2, name, "3"), CK_KEY(col, row, 3, name, "4"),                            \
        CK_KEY(col, row, 4, name, "5"), CK_KEY(col, row, 5, name, "6"),                            \
        CK_KEY(col, row, 6, name, "7"), CK_KEY(col, row, 7, name, "8")
#define CK_KEY_ROW(row, digit)                                                                     \
    CK_KEY_SQUARE(0, row, "a " digit), CK_KEY_SQUARE(1, row, "b " digit),                          \
        CK_KEY_SQUARE(2, row, "c " digit), CK_KEY_SQUARE(3, row, "d " digit),                      \
        CK_KEY_SQUARE(4, row, "e " digit), CK_KEY_SQUARE(5, row, "f " digit),                      \
        CK_KEY_SQUARE(6, row, "g " digit), CK_KEY_SQUARE(7, row, "h " digit)
static const PufferKey KEYS[] = {CK_KEY_ROW(0, "1"), CK_KEY_ROW(1, "2"), CK_KEY_ROW(2, "3"),
                                 CK_KEY_ROW(3, "4"), CK_KEY_ROW(4, "5"), CK_KEY_ROW(5, "6"),
                                 CK_KEY_ROW(6, "7"), CK_KEY_ROW(7, "8"), {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Checkers on 8x8 against a random opponent, with forced and multiple jumps and kings. "
           "Win +1, loss -1 (terminal: the side to move with no legal move loses); +0.01 per "
           "legal move, +0.05 per promotion, -0.05 per piece lost, -1 for an illegal action "
           "(nothing moves). Observation: (64,) uint8 board: 0 empty, 1/2 your pawn/king, 3/4 "
           "enemy pawn/king. Action: Discrete(512) = square * 8 + move (NW, NE, SW, SE, then "
           "the four jumps). Legal-action masks: your legal moves, forced jumps included (the "
           "buffer's action_masks; not in PufferLib 3.0, whose policy must learn them).",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = CK_SQUARES,
    .obs_low = 0,
    .obs_high = 4,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Checkers),
    .action_mask = checkers_action_mask,
};

PUFFER_ENV_END(checkers, Checkers)

#endif
