/* Go on a 7x7 board against a greedy opponent, Tromp-Taylor scoring (PufferLib 3.0's go task,
 * rules restated in our own code).
 *
 * Rules (defaults in brackets):
 * | board       | 7x7; you play black and move first; a move is pass (0) or a point 1-49     |
 * | legality    | an empty point; captures first (enemy groups left without liberties),     |
 * |             | then no suicide, and no simple ko (a move may not recreate the board as it |
 * |             | stood after the same side's previous move)                                 |
 * | rewards     | pass reward_move_pass [-0.25]; illegal move reward_move_invalid [-0.1],    |
 * |             | nothing changes and the opponent does not move; legal move                 |
 * |             | reward_move_valid [0.1]; each stone you capture reward_player_capture      |
 * |             | [0.25]; each of yours the opponent captures reward_opponent_capture        |
 * |             | [-0.25]; a step's sum is clipped to [-1, 1]                                |
 * | opponent    | after your pass or legal move: first any point that captures or saves a    |
 * |             | group in atari (groups in board order, each at its lowest liberty), then   |
 * |             | the liberties of your groups with 2, 3, 4 liberties, else a random legal   |
 * |             | point                                                                      |
 * | game end    | the opponent has no legal point, or step 148 (3 x 49 + 1, whose action is  |
 * |             | not played): Tromp-Taylor score = your stones and territory - theirs -     |
 * |             | komi [7.5]; the reward is +1, -1 or 0 by its sign (terminal)               |
 * Observation: (100,) float32: your stones (49), the opponent's (49), stones captured by you and
 * by the opponent. Action: Discrete(50). Log: score = the final score, perf = wins.
 *
 * Deliberate differences from PufferLib 3.0: your capture rewards count (theirs are overwritten
 * by the move reward), rewards of a move that turns out illegal are not paid, ko applies to
 * your moves too, the opponent reads fresh liberties, and the board size is fixed at their
 * default 7 (their observation size depends on it).
 */
#ifndef PUFFER_GO_H
#define PUFFER_GO_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(go)

enum { GO_N = 7, GO_POINTS = GO_N * GO_N, GO_OBS = 2 * GO_POINTS + 2 };
enum { GO_MAX_STEPS = 3 * GO_POINTS };
enum { GO_EMPTY = 0, GO_BLACK = 1, GO_WHITE = 2 }; /* you are black */
enum { GO_CELL_PIXELS = 40 };

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* Tromp-Taylor: yours - theirs - komi */
    float perf;  /* wins */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf", "n"};

typedef struct {
    float *observations; /* (1, 100) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    float komi, reward_move_pass, reward_move_invalid, reward_move_valid; /* config */
    float reward_player_capture, reward_opponent_capture;                 /* config */
    int tick, captures[2];
    float episode_return;
    int8_t board[GO_POINTS];
    int8_t after_move[2][GO_POINTS]; /* the board after each side's last move (ko) */
} Go;

static const PufferField CONFIG[] = {
    {"komi", offsetof(Go, komi), PUFFER_FLOAT, 7.5, -100, 100, "points given to the opponent"},
    {"reward_move_pass", offsetof(Go, reward_move_pass), PUFFER_FLOAT, -0.25, -1, 1,
     "reward for passing"},
    {"reward_move_invalid", offsetof(Go, reward_move_invalid), PUFFER_FLOAT, -0.1, -1, 1,
     "reward for an illegal move"},
    {"reward_move_valid", offsetof(Go, reward_move_valid), PUFFER_FLOAT, 0.1, -1, 1,
     "reward for a legal move"},
    {"reward_player_capture", offsetof(Go, reward_player_capture), PUFFER_FLOAT, 0.25, -1, 1,
     "reward per opponent stone captured"},
    {"reward_opponent_capture", offsetof(Go, reward_opponent_capture), PUFFER_FLOAT, -0.25, -1, 1,
     "reward per own stone the opponent captures"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Go *env) {
    env->num_agents = 1;
}

/* Marks the group of the stone at `p` in `seen` (1) and returns its liberties; `*first` gets the
 * lowest-numbered liberty. */
static int go_group(const int8_t *board, int p, uint8_t *seen, int *first) {
    int stack[GO_POINTS], top = 0, liberties = 0;
    uint8_t liberty[GO_POINTS] = {0};
    const int color = board[p];
    stack[top++] = p;
    seen[p] = 1;
    *first = GO_POINTS;
    while (top) {
        const int q = stack[--top], r = q / GO_N, c = q % GO_N;
        const int next[4] = {r > 0 ? q - GO_N : -1, r < GO_N - 1 ? q + GO_N : -1,
                             c > 0 ? q - 1 : -1, c < GO_N - 1 ? q + 1 : -1};
        for (int k = 0; k < 4; k++) {
            const int n = next[k];
            if (n < 0) continue;
            if (board[n] == GO_EMPTY && !liberty[n]) {
                liberty[n] = 1;
                liberties++;
                if (n < *first) *first = n;
            } else if (board[n] == color && !seen[n]) {
                seen[n] = 1;
                stack[top++] = n;
            }
        }
    }
    return liberties;
}

/* Plays `color` at `p` into `out` (a copy of the board); returns the stones captured, or -1 if
 * the move is illegal (occupied, suicide or ko). */
static int go_try(const Go *env, int color, int p, int8_t *out) {
    if (env->board[p] != GO_EMPTY) return -1;
    memcpy(out, env->board, GO_POINTS);
    out[p] = (int8_t)color;
    int captured = 0, first;
    const int r = p / GO_N, c = p % GO_N;
    const int next[4] = {r > 0 ? p - GO_N : -1, r < GO_N - 1 ? p + GO_N : -1, c > 0 ? p - 1 : -1,
                         c < GO_N - 1 ? p + 1 : -1};
    for (int k = 0; k < 4; k++) {
        const int n = next[k];
        if (n < 0 || out[n] != 3 - color) continue;
        uint8_t seen[GO_POINTS] = {0};
        if (go_group(out, n, seen, &first) == 0) {
            for (int q = 0; q < GO_POINTS; q++) {
                if (seen[q]) out[q] = GO_EMPTY, captured++;
            }
        }
    }
    uint8_t seen[GO_POINTS] = {0};
    if (go_group(out, p, seen, &first) == 0) return -1;
    if (memcmp(out, env->after_move[color - 1], GO_POINTS) == 0) return -1;
    return captured;
}

/* Commits a legal move found by go_try. */
static void go_commit(Go *env, int color, const int8_t *board, int captured) {
    memcpy(env->board, board, GO_POINTS);
    memcpy(env->after_move[color - 1], board, GO_POINTS);
    env->captures[color - 1] += captured;
}

/* The opponent's move; returns the stones it captured, or -1 if it has no legal point. */
static int go_opponent(Go *env) {
    int8_t next[GO_POINTS];
    uint8_t seen[GO_POINTS] = {0};
    int targets[4][GO_POINTS], count[4] = {0};
    for (int p = 0; p < GO_POINTS; p++) {
        if (env->board[p] == GO_EMPTY || seen[p]) continue;
        int first;
        const int liberties = go_group(env->board, p, seen, &first);
        if (env->board[p] == GO_BLACK && liberties >= 1 && liberties <= 4)
            targets[liberties - 1][count[liberties - 1]++] = first;
        if (env->board[p] == GO_WHITE && liberties == 1) targets[0][count[0]++] = first;
    }
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < count[k]; i++) {
            const int captured = go_try(env, GO_WHITE, targets[k][i], next);
            if (captured >= 0) {
                go_commit(env, GO_WHITE, next, captured);
                return captured;
            }
        }
    }
    int points[GO_POINTS], n = 0;
    for (int p = 0; p < GO_POINTS; p++)
        if (env->board[p] == GO_EMPTY) points[n++] = p;
    for (int i = n - 1; i > 0; i--) { /* shuffle, then take the first legal point */
        const int j = rng_int(&env->rng, i + 1), t = points[i];
        points[i] = points[j], points[j] = t;
    }
    for (int i = 0; i < n; i++) {
        const int captured = go_try(env, GO_WHITE, points[i], next);
        if (captured >= 0) {
            go_commit(env, GO_WHITE, next, captured);
            return captured;
        }
    }
    return -1;
}

/* Tromp-Taylor: stones plus empty regions that reach only one color; black minus white. */
static int go_area(const int8_t *board) {
    uint8_t seen[GO_POINTS] = {0};
    int score = 0;
    for (int p = 0; p < GO_POINTS; p++) {
        if (board[p] != GO_EMPTY) {
            score += board[p] == GO_BLACK ? 1 : -1;
            continue;
        }
        if (seen[p]) continue;
        int stack[GO_POINTS], top = 0, size = 0, borders = 0;
        stack[top++] = p;
        seen[p] = 1;
        while (top) {
            const int q = stack[--top], r = q / GO_N, c = q % GO_N;
            size++;
            const int next[4] = {r > 0 ? q - GO_N : -1, r < GO_N - 1 ? q + GO_N : -1,
                                 c > 0 ? q - 1 : -1, c < GO_N - 1 ? q + 1 : -1};
            for (int k = 0; k < 4; k++) {
                const int n = next[k];
                if (n < 0) continue;
                if (board[n] == GO_EMPTY && !seen[n])
                    seen[n] = 1, stack[top++] = n;
                else if (board[n] != GO_EMPTY)
                    borders |= board[n];
            }
        }
        if (borders == GO_BLACK) score += size;
        if (borders == GO_WHITE) score -= size;
    }
    return score;
}

static void go_observe(Go *env) {
    float *o = env->observations;
    for (int p = 0; p < GO_POINTS; p++) {
        o[p] = (float)(env->board[p] == GO_BLACK);
        o[GO_POINTS + p] = (float)(env->board[p] == GO_WHITE);
    }
    o[2 * GO_POINTS] = (float)env->captures[0];
    o[2 * GO_POINTS + 1] = (float)env->captures[1];
}

static void c_reset(Go *env) {
    env->tick = 0;
    env->captures[0] = env->captures[1] = 0;
    env->episode_return = 0;
    memset(env->board, 0, sizeof(env->board));
    memset(env->after_move, 0xff, sizeof(env->after_move)); /* matches no board */
    go_observe(env);
}

static void c_step(Go *env) {
    const int action = env->actions[0];
    env->tick++;
    float reward = 0.0f;
    int over = env->tick > GO_MAX_STEPS;
    if (!over) {
        int8_t next[GO_POINTS];
        const int captured =
            action >= 1 && action <= GO_POINTS ? go_try(env, GO_BLACK, action - 1, next) : -1;
        if (action >= 1 && captured < 0) {
            reward = env->reward_move_invalid;
        } else {
            if (action == 0) {
                reward = env->reward_move_pass;
            } else {
                go_commit(env, GO_BLACK, next, captured);
                reward = env->reward_move_valid + env->reward_player_capture * (float)captured;
            }
            const int lost = go_opponent(env);
            if (lost < 0)
                over = 1;
            else
                reward += env->reward_opponent_capture * (float)lost;
        }
        reward = reward > 1.0f ? 1.0f : (reward < -1.0f ? -1.0f : reward);
    }
    float score = 0.0f;
    if (over) {
        score = (float)go_area(env->board) - env->komi;
        reward = (float)((score > 0) - (score < 0));
    }
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)over;
    env->truncations[0] = 0;
    env->episode_return += reward;
    if (over) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += score;
        env->log.perf += (float)(score > 0);
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    go_observe(env);
}

static void c_frame_size(const Go *env, int *width, int *height) {
    (void)env;
    *width = *height = (GO_N + 1) * GO_CELL_PIXELS;
}

static void c_render(const Go *env, Canvas *canvas) {
    const int px = GO_CELL_PIXELS, span = (GO_N - 1) * px;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i < GO_N; i++) {
        raster_rect(canvas, px, px + i * px, span, 2, COLOR_GRAY);
        raster_rect(canvas, px + i * px, px, 2, span, COLOR_GRAY);
    }
    for (int p = 0; p < GO_POINTS; p++) {
        if (env->board[p] == GO_EMPTY) continue;
        const Color color = env->board[p] == GO_BLACK ? COLOR_CYAN : COLOR_RED;
        raster_circle(canvas, px + (p % GO_N) * px + 1, px + (p / GO_N) * px + 1, px / 2 - 3,
                      color);
    }
}

static void c_close(Go *env) {
    (void)env;
}

#define GO_R7(x) x, x, x, x, x, x, x
#define GO_R49(x) GO_R7(x), GO_R7(x), GO_R7(x), GO_R7(x), GO_R7(x), GO_R7(x), GO_R7(x)
static const float GO_LOWS[GO_OBS] = {GO_R49(0), GO_R49(0), 0, 0};
/* Captures are bounded by the stones placed: at most two a step for 147 steps. */
static const float GO_HIGHS[GO_OBS] = {GO_R49(1), GO_R49(1), 2 * GO_MAX_STEPS, 2 * GO_MAX_STEPS};
static const int ACTION_SIZES[] = {GO_POINTS + 1};
/* `puffer play`: a point is its column letter then its row digit, counted from the top left of
 * the picture ("c 4" is point 1 + 3 * 7 + 2); p passes. */
#define GO_KEY(col, row, col_name, row_name) {col_name " " row_name, 0, 1 + (row) * GO_N + (col)}
#define GO_KEY_ROW(row, name)                                                                      \
    GO_KEY(0, row, "a", name), GO_KEY(1, row, "b", name), GO_KEY(2, row, "c", name),               \
        GO_KEY(3, row, "d", name), GO_KEY(4, row, "e", name), GO_KEY(5, row, "f", name),           \
        GO_KEY(6, row, "g", name)
static const PufferKey KEYS[] = {{"p", 0, 0},        GO_KEY_ROW(0, "1"), GO_KEY_ROW(1, "2"),
                                 GO_KEY_ROW(2, "3"), GO_KEY_ROW(3, "4"), GO_KEY_ROW(4, "5"),
                                 GO_KEY_ROW(5, "6"), GO_KEY_ROW(6, "7"), {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Go on 7x7 against a greedy opponent (captures and saves groups in atari, else "
           "attacks, else random): pass or place a stone (no suicide, simple ko). Small rewards "
           "per move and capture; the game ends when the opponent cannot move or after 147 "
           "steps, paying +1/-1/0 by the Tromp-Taylor score with komi 7.5. Observation: (100,) "
           "float32 own and enemy stone planes, capture counts. Action: Discrete(50): pass, "
           "points. Keys (puffer play): a point's column letter a-g then row digit 1-7, from "
           "the top left ('c 4'); p passes.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = GO_OBS,
    .obs_low = 0,
    .obs_high = 2 * GO_MAX_STEPS,
    .obs_lows = GO_LOWS,
    .obs_highs = GO_HIGHS,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Go),
};

PUFFER_ENV_END(go, Go)

#endif
