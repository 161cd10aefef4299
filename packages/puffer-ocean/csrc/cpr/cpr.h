/* CPR (common-pool resources): `num_agents` agents forage on one walled grid whose food regrows
 * next to food still standing, so grazing a patch bare ends its supply (PufferLib 3.0's cpr
 * task, rules restated in our own code).
 *
 * Rules (defaults in brackets; PufferLib's Python defaults, its .ini is configs/cpr.toml):
 * | grid       | width x height [32 x 32] cells, walled 3 cells deep on every side          |
 * | cells      | 0 empty, 1 food, 2 shared food, 3 wall, 4 + i agent i                      |
 * | reset      | agents on random empty cells with 80 hp; interior / (20 k) food and        |
 * |            | interior / (50 k) shared food, k = max(1, width * height / 576 rounded down) |
 * | move       | up / down / left / right: into empty, +reward_move [-0.01]; into food,     |
 * |            | eat it: +reward_food [1], +20 hp; into a wall, shared food or an agent:    |
 * |            | stay, +reward_move. Stay (action 4): nothing, and no shared-food check     |
 * | shared food| after a move (or a blocked move) each of the 4 neighbours holding shared   |
 * |            | food is marked; the second agent to find it marked in the same step eats it: |
 * |            | every living agent next to it gets +interactive_food_reward [5] and +50 hp |
 * | hp         | -1 per step after the move, capped at 100; at 0 the agent dies: -1 reward, |
 * |            | terminal (set every step until the episode ends), gone from the grid next  |
 * |            | step, its observation frozen                                               |
 * | regrowth   | after all moves, each empty cell around each food (3x3) turns to the same  |
 * |            | food with probability food_base_spawn_rate [0.002] (shared: a tenth of it) |
 * | episode    | ends when every agent is dead (terminal for all) or after 1,001 steps      |
 * |            | (truncation for all); then the whole grid is reset                         |
 * Agents act one after another in index order. Observation per agent: (49,) uint8, the 7x7
 * cells centred on it, raw cell codes as above. Action: Discrete(5): up, down, left, right, stay.
 * Log (per agent episode): score = 0.1 per food, 0.2 per shared food, -1 at death; moves =
 * fraction of steps spent moving; perf = fraction of the 1,001 steps survived.
 *
 * Deliberate differences from PufferLib 3.0: the vision is fixed at their default 3 (the
 * observation size must not depend on config) and the walls are built for any grid size (theirs
 * copies a fixed 32 x 32 map); the 1,001-step limit sets truncations, and agents alive then are
 * logged (theirs clears every flag and logs only deaths); shared food rewards the agent that
 * completes it at the cell it moved to (theirs looks at the cell it came from) and never an
 * agent that died earlier in the step (theirs revives it); perf is the fraction survived.
 */
#ifndef PUFFER_CPR_H
#define PUFFER_CPR_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(cpr)

enum { CPR_VISION = 3, CPR_VIEW = 2 * CPR_VISION + 1, CPR_OBS = CPR_VIEW * CPR_VIEW };
enum { CPR_EMPTY, CPR_FOOD, CPR_SHARED, CPR_WALL, CPR_AGENT };
enum { CPR_UP, CPR_DOWN, CPR_LEFT, CPR_RIGHT, CPR_STAY };
enum { CPR_MAX_AGENTS = 64, CPR_MAX_SIDE = 256, CPR_MAX_TICKS = 1000 };
enum { CPR_START_HP = 80, CPR_MAX_HP = 100, CPR_FOOD_HP = 20, CPR_SHARED_HP = 50 };
enum { CPR_CELL_PIXELS = 16 };

typedef struct {
    float episode_return;
    float episode_length; /* steps taken, the last included */
    float score;
    float perf;
    float moves;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score",
                                  "perf",           "moves",          "n"};

typedef struct {
    int16_t r, c; /* -1 once removed from the grid */
    int16_t hp;
    int16_t direction; /* last move, for the frame */
    int alive_steps, moves;
    float episode_return, score;
} CprAgent;

typedef struct {
    uint8_t *observations; /* (num_agents, 49) */
    int32_t *actions;      /* (num_agents,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int width, height, agents;                                           /* config */
    float reward_food, interactive_food_reward, reward_move, spawn_rate; /* config */
    int tick, food_count;
    int skip[2]; /* empty cells left to pass over before the next regrowth, per food type */
    CprAgent agent[CPR_MAX_AGENTS];
    uint8_t *grid;   /* height x width cell codes */
    int32_t *food;   /* cells holding food, food_count of them */
    int32_t *slot;   /* per cell: its index in `food`, when it holds food */
    int16_t *marked; /* per cell: the tick shared food there was last found */
} Cpr;

static const PufferField CONFIG[] = {
    {"width", offsetof(Cpr, width), PUFFER_INT, 32, 2 * CPR_VISION + 3, CPR_MAX_SIDE,
     "grid columns, the 3-cell walls included"},
    {"height", offsetof(Cpr, height), PUFFER_INT, 32, 2 * CPR_VISION + 3, CPR_MAX_SIDE,
     "grid rows, the 3-cell walls included"},
    {"num_agents", offsetof(Cpr, agents), PUFFER_INT, 8, 1, CPR_MAX_AGENTS, "agents per env"},
    {"reward_food", offsetof(Cpr, reward_food), PUFFER_FLOAT, 1.0, -1e9, 1e9,
     "reward for eating a food cell"},
    {"interactive_food_reward", offsetof(Cpr, interactive_food_reward), PUFFER_FLOAT, 5.0, -1e9,
     1e9, "reward to each agent next to shared food when two agents find it"},
    {"reward_move", offsetof(Cpr, reward_move), PUFFER_FLOAT, -0.01, -1e9, 1e9,
     "reward for a move that eats nothing (blocked moves included)"},
    {"food_base_spawn_rate", offsetof(Cpr, spawn_rate), PUFFER_FLOAT, 2e-3, 0, 1,
     "chance an empty cell next to food grows food each step (shared food: a tenth)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int cpr_cells(const Cpr *env) {
    return env->width * env->height;
}

static int cpr_blocks(const void *self, PufferBlock *out) {
    const Cpr *env = (const Cpr *)self;
    const size_t cells = (size_t)cpr_cells(env);
    out[0] = (PufferBlock){offsetof(Cpr, grid), cells};
    out[1] = (PufferBlock){offsetof(Cpr, food), cells * sizeof(int32_t)};
    out[2] = (PufferBlock){offsetof(Cpr, slot), cells * sizeof(int32_t)};
    out[3] = (PufferBlock){offsetof(Cpr, marked), cells * sizeof(int16_t)};
    return 4;
}

static int cpr_interior(const Cpr *env) {
    return (env->width - 2 * CPR_VISION) * (env->height - 2 * CPR_VISION);
}

/* Food placed at reset: (plain, shared). */
static void cpr_initial_food(const Cpr *env, int *plain, int *shared) {
    int k = cpr_cells(env) / 576;
    k = k < 1 ? 1 : k;
    *plain = cpr_interior(env) / (20 * k);
    *shared = cpr_interior(env) / (50 * k);
}

static const char *cpr_check(const void *self) {
    const Cpr *env = (const Cpr *)self;
    int plain, shared;
    cpr_initial_food(env, &plain, &shared);
    return env->agents + plain + shared < cpr_interior(env)
               ? NULL
               : "num_agents and the initial food must fit inside the walls; enlarge the grid";
}

static void c_init(Cpr *env) {
    const size_t cells = (size_t)cpr_cells(env);
    env->num_agents = env->agents;
    env->grid = (uint8_t *)calloc(cells, 1);
    env->food = (int32_t *)calloc(cells, sizeof(int32_t));
    env->slot = (int32_t *)calloc(cells, sizeof(int32_t));
    env->marked = (int16_t *)calloc(cells, sizeof(int16_t));
}

/* Trials until the next success of a Bernoulli(p) sequence, minus one: regrowth draws one
 * number per new food instead of one per candidate cell, with the same distribution. */
static int cpr_geometric(Cpr *env, float p) {
    if (p <= 0.0f) return 0x7fffffff;
    if (p >= 1.0f) return 0;
    const float u = 1.0f - rng_float(&env->rng); /* (0, 1] */
    const float k = logf(u) / log1pf(-p);
    return k > 1e9f ? 0x7fffffff : (int)k;
}

static void cpr_add_food(Cpr *env, int cell, int type) {
    env->grid[cell] = (uint8_t)type;
    env->slot[cell] = env->food_count;
    env->food[env->food_count++] = cell;
}

static void cpr_remove_food(Cpr *env, int cell) {
    const int last = env->food[--env->food_count], at = env->slot[cell];
    env->food[at] = last;
    env->slot[last] = at;
    env->grid[cell] = CPR_EMPTY;
}

/* A uniformly random empty cell (rows and columns below height - 1, width - 1). */
static int cpr_random_empty(Cpr *env, int rows, int cols) {
    int cell;
    do {
        cell = rng_int(&env->rng, rows) * env->width + rng_int(&env->rng, cols);
    } while (env->grid[cell] != CPR_EMPTY);
    return cell;
}

static void cpr_observe(Cpr *env) {
    for (int i = 0; i < env->agents; i++) {
        const CprAgent *a = &env->agent[i];
        if (a->hp <= 0) continue;
        uint8_t *obs = env->observations + (size_t)i * CPR_OBS;
        const uint8_t *row = env->grid + (a->r - CPR_VISION) * env->width + a->c - CPR_VISION;
        for (int r = 0; r < CPR_VIEW; r++, row += env->width)
            memcpy(obs + r * CPR_VIEW, row, CPR_VIEW);
    }
}

static void c_reset(Cpr *env) {
    const int w = env->width, h = env->height;
    env->tick = 0;
    env->food_count = 0;
    memset(env->marked, 0xff, (size_t)cpr_cells(env) * sizeof(int16_t));
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++) {
            const int wall =
                r < CPR_VISION || c < CPR_VISION || r >= h - CPR_VISION || c >= w - CPR_VISION;
            env->grid[r * w + c] = wall ? CPR_WALL : CPR_EMPTY;
        }
    for (int i = 0; i < env->agents; i++) {
        const int cell = cpr_random_empty(env, h, w);
        env->agent[i] =
            (CprAgent){(int16_t)(cell / w), (int16_t)(cell % w), CPR_START_HP, 0, 0, 0, 0.0f, 0.0f};
        env->grid[cell] = (uint8_t)(CPR_AGENT + i);
    }
    int plain, shared;
    cpr_initial_food(env, &plain, &shared);
    for (int i = 0; i < plain + shared; i++)
        cpr_add_food(env, cpr_random_empty(env, h - 1, w - 1), i < plain ? CPR_FOOD : CPR_SHARED);
    env->skip[0] = cpr_geometric(env, env->spawn_rate);
    env->skip[1] = cpr_geometric(env, env->spawn_rate / 10.0f);
    memset(env->observations, 0, (size_t)env->agents * CPR_OBS);
    memset(env->terminals, 0, (size_t)env->agents);
    memset(env->truncations, 0, (size_t)env->agents);
    cpr_observe(env);
}

static void cpr_log(Cpr *env, const CprAgent *a) {
    env->log.episode_return += a->episode_return;
    env->log.episode_length += (float)a->alive_steps;
    env->log.score += a->score;
    env->log.perf += (float)a->alive_steps / (float)(CPR_MAX_TICKS + 1);
    env->log.moves += a->alive_steps ? (float)a->moves / (float)a->alive_steps : 0.0f;
    env->log.n += 1.0f;
}

static void cpr_reward(Cpr *env, int i, float reward) {
    env->rewards[i] += reward;
    env->agent[i].episode_return += reward;
}

/* Changes agent i's hp; at 0 it dies (its terminal is set and stays set). */
static void cpr_hp(Cpr *env, int i, int delta) {
    CprAgent *a = &env->agent[i];
    const int hp = a->hp + delta;
    a->hp = (int16_t)(hp > CPR_MAX_HP ? CPR_MAX_HP : (hp < 0 ? 0 : hp));
    if (a->hp == 0) {
        a->score -= 1.0f;
        cpr_reward(env, i, -1.0f);
        env->terminals[i] = 1;
        cpr_log(env, a);
    }
}

/* Shared food at `cell` is eaten: every living agent beside it shares the reward. */
static void cpr_eat_shared(Cpr *env, int cell) {
    const int r = cell / env->width, c = cell % env->width;
    for (int i = 0; i < env->agents; i++) {
        CprAgent *a = &env->agent[i];
        const int dr = a->r - r, dc = a->c - c;
        if (a->hp <= 0 || dr * dr + dc * dc != 1) continue;
        cpr_reward(env, i, env->interactive_food_reward);
        a->score += 0.2f;
        cpr_hp(env, i, CPR_SHARED_HP);
    }
    cpr_remove_food(env, cell);
}

static void cpr_move(Cpr *env, int i) {
    static const int DR[4] = {-1, 1, 0, 0}, DC[4] = {0, 0, -1, 1}, FACING[4] = {3, 1, 2, 0};
    CprAgent *a = &env->agent[i];
    const int action = env->actions[i];
    if (action == CPR_STAY) return;
    a->moves++;
    a->direction = (int16_t)FACING[action];
    const int from = a->r * env->width + a->c;
    int r = a->r + DR[action], c = a->c + DC[action];
    const int tile = env->grid[r * env->width + c];
    if (tile == CPR_FOOD) {
        cpr_reward(env, i, env->reward_food);
        a->score += 0.1f;
        cpr_hp(env, i, CPR_FOOD_HP);
        cpr_remove_food(env, r * env->width + c);
    } else {
        cpr_reward(env, i, env->reward_move);
        if (tile != CPR_EMPTY) r = a->r, c = a->c;
    }
    env->grid[from] = CPR_EMPTY;
    a->r = (int16_t)r, a->c = (int16_t)c;
    env->grid[r * env->width + c] = (uint8_t)(CPR_AGENT + i);
    const int around[4] = {(r - 1) * env->width + c, (r + 1) * env->width + c,
                           r * env->width + c + 1, r * env->width + c - 1};
    for (int k = 0; k < 4; k++) {
        const int cell = around[k];
        if (env->grid[cell] != CPR_SHARED) continue;
        if (env->marked[cell] == env->tick)
            cpr_eat_shared(env, cell);
        else
            env->marked[cell] = (int16_t)env->tick;
    }
}

/* Regrowth around the food present before it (new food does not seed in the same step). */
static void cpr_regrow(Cpr *env) {
    const int before = env->food_count, w = env->width;
    for (int f = 0; f < before; f++) {
        const int cell = env->food[f], type = env->grid[cell], k = type - CPR_FOOD;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                const int next = cell + dr * w + dc;
                if (env->grid[next] != CPR_EMPTY) continue;
                if (env->skip[k]-- > 0) continue;
                cpr_add_food(env, next, type);
                env->skip[k] =
                    cpr_geometric(env, k == 0 ? env->spawn_rate : env->spawn_rate / 10.0f);
            }
    }
}

static void c_step(Cpr *env) {
    env->tick++;
    memset(env->rewards, 0, (size_t)env->agents * sizeof(float));
    memset(env->truncations, 0, (size_t)env->agents);
    for (int i = 0; i < env->agents; i++) {
        CprAgent *a = &env->agent[i];
        env->terminals[i] = a->hp <= 0;
        if (a->hp <= 0) {
            if (a->r >= 0) env->grid[a->r * env->width + a->c] = CPR_EMPTY;
            a->r = a->c = -1;
            continue;
        }
        a->alive_steps++;
        cpr_move(env, i);
        cpr_hp(env, i, -1);
    }
    cpr_regrow(env);
    int alive = 0;
    for (int i = 0; i < env->agents; i++)
        alive += env->agent[i].hp > 0;
    cpr_observe(env);
    if (alive == 0) {
        c_reset(env);
        memset(env->terminals, 1, (size_t)env->agents);
    } else if (env->tick > CPR_MAX_TICKS) {
        for (int i = 0; i < env->agents; i++)
            if (env->agent[i].hp > 0) cpr_log(env, &env->agent[i]);
        c_reset(env);
        memset(env->truncations, 1, (size_t)env->agents);
    }
}

static void c_frame_size(const Cpr *env, int *width, int *height) {
    *width = env->width * CPR_CELL_PIXELS;
    *height = env->height * CPR_CELL_PIXELS;
}

static void c_render(const Cpr *env, Canvas *canvas) {
    static const Color AGENT_COLORS[6] = {{255, 0, 0},   {0, 255, 0},   {0, 255, 255},
                                          {0, 128, 255}, {255, 0, 255}, {255, 255, 255}};
    const int px = CPR_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int cell = 0; cell < cpr_cells(env); cell++) {
        const int tile = env->grid[cell], x = cell % env->width * px, y = cell / env->width * px;
        if (tile == CPR_WALL) raster_rect(canvas, x, y, px, px, (Color){227, 227, 227});
        if (tile == CPR_FOOD) raster_rect(canvas, x + 2, y + 2, px - 4, px - 4, COLOR_GRAY);
        if (tile == CPR_SHARED) raster_rect(canvas, x + 2, y + 2, px - 4, px - 4, COLOR_YELLOW);
        if (tile >= CPR_AGENT)
            raster_circle(canvas, x + px / 2, y + px / 2, px / 2 - 1,
                          AGENT_COLORS[(tile - CPR_AGENT) % 6]);
    }
}

static void c_close(Cpr *env) {
    free(env->grid);
    free(env->food);
    free(env->slot);
    free(env->marked);
    env->grid = NULL;
    env->food = env->slot = NULL;
    env->marked = NULL;
}

static const int ACTION_SIZES[] = {5};
static const PufferKey KEYS[] = {{"up", 0, CPR_UP},      {"down", 0, CPR_DOWN},
                                 {"left", 0, CPR_LEFT},  {"right", 0, CPR_RIGHT},
                                 {"space", 0, CPR_STAY}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Common-pool resources: agents forage on a walled grid where food regrows only next "
           "to food left standing. Food +1 (and 20 hp), shared food +5 to every agent beside it "
           "once two agents reach it in one step, -0.01 per other move; hp falls 1 per step "
           "from 80 and an agent dies at 0 (-1, terminal). The episode ends when all are dead "
           "or after 1,001 steps (truncation). Observation: (49,) uint8, the 7x7 cell codes "
           "around the agent. Action: Discrete(5): up, down, left, right, stay.",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = CPR_OBS,
    .obs_low = 0,
    .obs_high = CPR_AGENT + CPR_MAX_AGENTS - 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Cpr),
    .blocks = cpr_blocks,
    .check = cpr_check,
};

PUFFER_ENV_END(cpr, Cpr)

#endif
