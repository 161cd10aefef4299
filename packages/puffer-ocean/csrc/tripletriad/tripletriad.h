/* Triple Triad: a 3x3 card game against a random opponent (PufferLib 3.0's tripletriad task,
 * rules restated in our own code).
 *
 * Rules:
 * | hands            | 5 cards a side, each with 4 edge values (N, S, E, W) uniform in 1..7 |
 * | turn             | select one of your unplaced cards (actions 0-4), then place it on   |
 * |                  | an empty cell (actions 5-13, cells row-major); the opponent answers |
 * |                  | each placement with a random unplaced card on a random empty cell   |
 * | capture          | a placed card flips each adjacent enemy card whose facing edge is   |
 * |                  | lower than its own; a flip moves one point between the scores       |
 * | scores           | start 5-5; the board fills after your 5th card (9 cells)            |
 * | rewards          | every select action -0.1; a placement with nothing selected or on   |
 * |                  | an occupied cell -0.1; full board: +1 if your score is higher,      |
 * |                  | -1 if lower, 0 on a tie (terminal)                                  |
 * | time limit       | the 30th step of an episode pays -1 and ends it (terminal)          |
 * Observation: (114,) float32: 9 cell owners (1 you, -1 opponent, 0 empty), 15 action flags
 * (1 where a placement cell is taken), the two selected cards (-1 none), the two scores, the 36
 * edge values on the board (0 empty), both hands' 40 edge values, and where each of the 10
 * cards lies (cell 1-9, 0 in hand).
 *
 * Deliberate difference from PufferLib 3.0: the episode resets on the step that ends it (as
 * every Ocean env does) instead of on the next step, which they spend on the reset; their time
 * limit pays -1 without setting a flag, ours sets the terminal.
 */
#ifndef PUFFER_TRIPLETRIAD_H
#define PUFFER_TRIPLETRIAD_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(tripletriad)

enum { TT_OBS = 114, TT_CARDS = 5, TT_CELLS = 9, TT_MAX_STEPS = 30 };
enum { TT_PLACE = 5 }; /* actions 5-13 place on cells 0-8 */
enum { TT_N, TT_S, TT_E, TT_W };
enum { TT_CARD_W = 64, TT_CARD_H = 80 };
static const float TT_STEP_COST = 0.1f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* your cards on the board at the end */
    float perf;  /* 1 for a win */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf", "n"};

typedef struct {
    float *observations; /* (1, 114) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int tick;
    float episode_return;
    int8_t owner[TT_CELLS];          /* 1 you, -1 opponent, 0 empty */
    int8_t cell_values[TT_CELLS][4]; /* edges of the card on each cell */
    int8_t hand[2][TT_CARDS][4];     /* [0] yours, [1] the opponent's */
    int8_t location[2][TT_CARDS];    /* cell + 1, 0 in hand */
    int8_t selected[2];              /* card index, -1 none */
    int8_t score[2];
} TripleTriad;

static const PufferField CONFIG[] = {
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(TripleTriad *env) {
    env->num_agents = 1;
}

static void tt_observe(TripleTriad *env) {
    float *o = env->observations;
    for (int c = 0; c < TT_CELLS; c++)
        *o++ = env->owner[c];
    for (int a = 0; a < 15; a++)
        *o++ = (a >= TT_PLACE && a < TT_PLACE + TT_CELLS) ? (float)(env->owner[a - TT_PLACE] != 0)
                                                          : 0.0f;
    for (int p = 0; p < 2; p++)
        *o++ = env->selected[p];
    for (int p = 0; p < 2; p++)
        *o++ = env->score[p];
    for (int c = 0; c < TT_CELLS; c++)
        for (int k = 0; k < 4; k++)
            *o++ = env->cell_values[c][k];
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < TT_CARDS; i++)
            for (int k = 0; k < 4; k++)
                *o++ = env->hand[p][i][k];
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < TT_CARDS; i++)
            *o++ = env->location[p][i];
}

static void c_reset(TripleTriad *env) {
    env->tick = 0;
    env->episode_return = 0;
    memset(env->owner, 0, sizeof(env->owner));
    memset(env->cell_values, 0, sizeof(env->cell_values));
    memset(env->location, 0, sizeof(env->location));
    for (int p = 0; p < 2; p++) {
        for (int i = 0; i < TT_CARDS; i++)
            for (int k = 0; k < 4; k++)
                env->hand[p][i][k] = (int8_t)(1 + rng_int(&env->rng, 7));
        env->selected[p] = -1;
        env->score[p] = 5;
    }
    tt_observe(env);
}

/* Player p (0 you, 1 opponent) puts its selected card on empty `cell` and flips neighbours. */
static void tt_place(TripleTriad *env, int p, int cell) {
    static const int DR[4] = {-1, 1, 0, 0}, DC[4] = {0, 0, 1, -1};
    static const int FACING[4] = {TT_S, TT_N, TT_W, TT_E};
    const int card = env->selected[p], me = p == 0 ? 1 : -1;
    env->location[p][card] = (int8_t)(cell + 1);
    env->owner[cell] = (int8_t)me;
    memcpy(env->cell_values[cell], env->hand[p][card], 4);
    env->selected[p] = -1;
    const int row = cell / 3, col = cell % 3;
    for (int d = 0; d < 4; d++) {
        const int r = row + DR[d], c = col + DC[d];
        if (r < 0 || r > 2 || c < 0 || c > 2) continue;
        const int next = r * 3 + c;
        if (env->owner[next] != -me) continue;
        if (env->cell_values[next][FACING[d]] < env->cell_values[cell][d]) {
            env->owner[next] = (int8_t)me;
            env->score[p]++;
            env->score[1 - p]--;
        }
    }
}

static void tt_opponent(TripleTriad *env) {
    int cards[TT_CARDS], cells[TT_CELLS], nc = 0, ne = 0;
    for (int i = 0; i < TT_CARDS; i++)
        if (!env->location[1][i]) cards[nc++] = i;
    for (int c = 0; c < TT_CELLS; c++)
        if (!env->owner[c]) cells[ne++] = c;
    if (nc == 0 || ne == 0) return;
    env->selected[1] = (int8_t)cards[rng_int(&env->rng, nc)];
    tt_place(env, 1, cells[rng_int(&env->rng, ne)]);
}

static int tt_board_full(const TripleTriad *env) {
    for (int c = 0; c < TT_CELLS; c++)
        if (!env->owner[c]) return 0;
    return 1;
}

static void c_step(TripleTriad *env) {
    const int action = env->actions[0];
    float reward = 0.0f;
    int done = 0;
    env->tick++;
    if (env->tick >= TT_MAX_STEPS) {
        reward = -1.0f;
        done = 1;
    } else if (action >= 0 && action < TT_CARDS) {
        reward = -TT_STEP_COST;
        if (!env->location[0][action]) env->selected[0] = (int8_t)action;
    } else if (action >= TT_PLACE && action < TT_PLACE + TT_CELLS) {
        const int cell = action - TT_PLACE;
        if (env->selected[0] < 0 || env->owner[cell]) {
            reward = -TT_STEP_COST;
        } else {
            tt_place(env, 0, cell);
            if (tt_board_full(env)) {
                done = 1;
                reward = (float)((env->score[0] > env->score[1]) - (env->score[0] < env->score[1]));
            } else {
                tt_opponent(env);
            }
        }
    }
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)done;
    env->truncations[0] = 0;
    env->episode_return += reward;
    if (done) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += env->score[0];
        env->log.perf += (float)(env->score[0] > env->score[1]);
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    tt_observe(env);
}

static void c_frame_size(const TripleTriad *env, int *width, int *height) {
    (void)env;
    *width = 5 * TT_CARD_W;
    *height = 3 * TT_CARD_H;
}

static void tt_draw_card(Canvas *canvas, int x, int y, const int8_t *values, Color color) {
    raster_rect(canvas, x + 2, y + 2, TT_CARD_W - 4, TT_CARD_H - 4, color);
    const int mx = x + TT_CARD_W / 2 - 3, my = y + TT_CARD_H / 2 - 5;
    raster_number(canvas, mx, y + 6, values[TT_N], 2, COLOR_WHITE);
    raster_number(canvas, mx, y + TT_CARD_H - 16, values[TT_S], 2, COLOR_WHITE);
    raster_number(canvas, x + TT_CARD_W - 14, my, values[TT_E], 2, COLOR_WHITE);
    raster_number(canvas, x + 8, my, values[TT_W], 2, COLOR_WHITE);
}

/* Your hand on the left, the board in the middle, the opponent's hand on the right. */
static void c_render(const TripleTriad *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int c = 0; c < TT_CELLS; c++) {
        const int x = (1 + c % 3) * TT_CARD_W, y = (c / 3) * TT_CARD_H;
        raster_rect(canvas, x, y, TT_CARD_W, TT_CARD_H, COLOR_GRID);
        if (env->owner[c])
            tt_draw_card(canvas, x, y, env->cell_values[c],
                         env->owner[c] > 0 ? COLOR_CYAN : COLOR_RED);
    }
    for (int p = 0; p < 2; p++) {
        for (int i = 0, slot = 0; i < TT_CARDS; i++) {
            if (env->location[p][i]) continue;
            const int x = p == 0 ? 0 : 4 * TT_CARD_W, y = slot++ * (TT_CARD_H / 2);
            const Color color = env->selected[p] == i ? COLOR_YELLOW : (p ? COLOR_RED : COLOR_CYAN);
            tt_draw_card(canvas, x, y, env->hand[p][i], color);
        }
    }
}

static void c_close(TripleTriad *env) {
    (void)env;
}

/* Per-element observation bounds, in the layout's order (see the header comment). */
#define TT_R2(x) x, x
#define TT_R5(x) x, x, x, x, x
#define TT_R10(x) TT_R5(x), TT_R5(x)
#define TT_BOUNDS(owner, sel, score, hand_low)                                                     \
    {TT_R5(owner),     TT_R2(owner),     TT_R2(owner),     TT_R10(0),        TT_R5(0), TT_R2(sel), \
     TT_R2(score),     TT_R10(0),        TT_R10(0),        TT_R10(0),        TT_R5(0), 0,          \
     TT_R10(hand_low), TT_R10(hand_low), TT_R10(hand_low), TT_R10(hand_low), TT_R10(0)}
static const float TT_LOWS[TT_OBS] = TT_BOUNDS(-1, -1, 0, 1);
static const float TT_HIGHS[TT_OBS] = {
    TT_R5(1),  TT_R2(1), TT_R2(1), TT_R10(1), TT_R5(1),  TT_R2(4),  TT_R2(10), TT_R10(7), TT_R10(7),
    TT_R10(7), TT_R5(7), 7,        TT_R10(7), TT_R10(7), TT_R10(7), TT_R10(7), TT_R10(9)};

static const int ACTION_SIZES[] = {14};
static const PufferSpec SPEC = {
    .doc = "Triple Triad on a 3x3 board against a random opponent: select a card (0-4, -0.1 "
           "each), place it (5-13); a card flips adjacent enemy cards with lower facing edges. "
           "Full board: +1 win, -1 loss, 0 tie; the 30th step pays -1 and ends the game. "
           "Observation: (114,) float32 board owners, taken cells, selections, scores, board "
           "and hand edge values, card locations. Action: Discrete(14).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = TT_OBS,
    .obs_low = -1,
    .obs_high = 10,
    .obs_lows = TT_LOWS,
    .obs_highs = TT_HIGHS,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(TripleTriad),
};

PUFFER_ENV_END(tripletriad, TripleTriad)

#endif
