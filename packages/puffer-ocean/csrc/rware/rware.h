/* Robotic warehouse: `num_agents` robots fetch requested shelves, carry them to a goal cell and
 * return them to a free shelf slot (PufferLib 3.0's rware task, rules restated in our own code).
 *
 * Rules (defaults in brackets):
 * | maps          | map_choice [1]: 1 tiny 10x11 (32 shelves), 2 small 20x10 (80), 3 medium |
 * |               | 20x16 (144); 2 goal cells each (cols x rows)                            |
 * | reset         | num_requested_shelves [4] random shelves are requested; robots on random |
 * |               | free floor cells, random heading, empty-handed                          |
 * | actions       | Discrete(5): 0 wait, 1 forward, 2 turn left, 3 turn right, 4 load/unload |
 * | forward       | one cell ahead; blocked by the edge, by another robot, for a loaded     |
 * |               | robot by shelf cells, for a robot with an empty shelf by goal cells      |
 * | traffic       | a robot moves into a cell vacated the same step: chains move front      |
 * |               | first (longer queues first, then lower index); a loop of 3 or more      |
 * |               | robots rotates if every one can move; two facing robots never swap       |
 * | load          | empty-handed on a requested shelf: lift it, +0.5                        |
 * | deliver       | holding a requested shelf on a goal: it becomes an empty shelf, +0.5,   |
 * |               | and a random other shelf is requested                                    |
 * | return        | holding an empty shelf on a free shelf slot: set it down, +1            |
 * | episode end   | none (as in PufferLib); each return logs the robot's trip               |
 * Observation per robot: (27,) float32: cell index / cells, (heading + 1) / 4, load (0 empty-
 * handed, 1 requested shelf, 2 empty shelf), then for the 8 cells around it (N, NE, E, SE, S,
 * SW, W, NW): robot there (0/1), its (heading + 1) / 4, and (cell kind + 1) / 4 with kinds 0
 * floor, 1 shelf, 2 requested shelf, 3 goal (0 off the map). Headings: 0 east, 1 south, 2 west,
 * 3 north. Log per return: score = 1, perf = max(0, 1 - 0.01 * trip steps), episode_return and
 * episode_length of the trip.
 *
 * Deliberate differences from PufferLib 3.0: the neighbour cells report any robot there (theirs
 * compares each cell with one other robot only and wraps at the map's side), a robot that does
 * not move forward this step leaves no stale target in the traffic graph, and a rotating loop
 * moves at once. Their width, height and grid_square_size only size their window.
 */
#ifndef PUFFER_RWARE_H
#define PUFFER_RWARE_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(rware)

enum { RW_WAIT, RW_FORWARD, RW_LEFT, RW_RIGHT, RW_TOGGLE };
enum { RW_FLOOR, RW_SHELF, RW_REQUESTED, RW_GOAL };
enum { RW_EMPTY_HANDED, RW_CARRY_REQUESTED, RW_CARRY_EMPTY };
enum { RW_OBS = 27, RW_MAX_CELLS = 320, RW_MAX_AGENTS = 128, RW_CELL_PIXELS = 32 };
static const int RW_DX[4] = {1, 0, -1, 0}, RW_DY[4] = {0, 1, 0, -1};
static const int RW_AROUND[8][2] = {{0, -1}, {1, -1}, {1, 0},  {1, 1},
                                    {0, 1},  {-1, 1}, {-1, 0}, {-1, -1}};

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
    int16_t cell;
    uint8_t heading, load;
    float trip_return;
    int trip_steps;
    /* Per-step traffic scratch, rewritten every step: beside the robot so that a step touches
     * one cache line per few robots (a step is memory-bound across many envs). */
    int16_t target, weight, loop;
} RwRobot;

typedef struct {
    float *observations; /* (num_agents, 27) */
    int32_t *actions;    /* (num_agents,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int map_choice, agents, num_requested; /* config */
    int cols, rows, num_shelves;
    unsigned row_magic;            /* see rw_row */
    uint8_t layout[RW_MAX_CELLS];  /* the map as built: floor, shelf slots and goals */
    uint8_t cells[RW_MAX_CELLS];   /* the map now */
    int8_t robot_at[RW_MAX_CELLS]; /* robot index there or -1 (RW_MAX_AGENTS fits int8) */
    int16_t shelf_slots[RW_MAX_CELLS];
    RwRobot robot[RW_MAX_AGENTS];
} Rware;

static const PufferField CONFIG[] = {
    {"map_choice", offsetof(Rware, map_choice), PUFFER_INT, 1, 1, 3,
     "1 tiny (10x11), 2 small (20x10), 3 medium (20x16)"},
    {"num_agents", offsetof(Rware, agents), PUFFER_INT, 4, 1, RW_MAX_AGENTS, "robots per env"},
    {"num_requested_shelves", offsetof(Rware, num_requested), PUFFER_INT, 4, 1, 143,
     "shelves requested at any time"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* The three warehouses: shelf blocks two rows high, rows [top, top+1] x cols [left, right]. */
typedef struct {
    int cols, rows, goal_row, goal_col, goal_down; /* two goals, stacked or side by side */
    int blocks;
    int8_t block[10][3];
} RwMap;
static const RwMap RW_MAPS[3] = {
    {10,
     11,
     10,
     4,
     0,
     8,
     {{1, 1, 2}, {1, 7, 8}, {3, 1, 2}, {3, 7, 8}, {5, 1, 2}, {5, 7, 8}, {7, 1, 2}, {7, 7, 8}}},
    {20, 10, 4, 0, 1, 5, {{1, 2, 9}, {1, 11, 18}, {4, 11, 18}, {7, 2, 9}, {7, 11, 18}}},
    {20,
     16,
     7,
     0,
     1,
     9,
     {{1, 2, 9},
      {1, 11, 18},
      {4, 2, 9},
      {4, 11, 18},
      {7, 11, 18},
      {10, 2, 9},
      {10, 11, 18},
      {13, 2, 9},
      {13, 11, 18}}},
};

static void rw_build_layout(Rware *env) {
    const RwMap *m = &RW_MAPS[env->map_choice - 1];
    env->cols = m->cols, env->rows = m->rows;
    env->row_magic = (65536u + (unsigned)m->cols - 1) / (unsigned)m->cols;
    memset(env->layout, RW_FLOOR, sizeof(env->layout));
    for (int b = 0; b < m->blocks; b++)
        for (int r = m->block[b][0]; r <= m->block[b][0] + 1; r++)
            for (int c = m->block[b][1]; c <= m->block[b][2]; c++)
                env->layout[r * m->cols + c] = RW_SHELF;
    const int goal = m->goal_row * m->cols + m->goal_col;
    env->layout[goal] = env->layout[goal + (m->goal_down ? m->cols : 1)] = RW_GOAL;
    env->num_shelves = 0;
    for (int i = 0; i < m->cols * m->rows; i++)
        if (env->layout[i] == RW_SHELF) env->shelf_slots[env->num_shelves++] = (int16_t)i;
}

static int rw_floor_cells(const Rware *env) {
    int n = 0;
    for (int i = 0; i < env->cols * env->rows; i++)
        n += env->layout[i] == RW_FLOOR;
    return n;
}

static const char *rw_check(const void *self) {
    Rware probe = *(const Rware *)self;
    rw_build_layout(&probe);
    if (probe.num_requested + probe.agents >= probe.num_shelves)
        return "num_requested_shelves + num_agents must be below the map's shelves (32, 80 "
               "or 144): request fewer shelves or use fewer robots";
    if (probe.agents > rw_floor_cells(&probe))
        return "num_agents exceeds the map's free floor cells: use fewer robots or a larger map";
    return NULL;
}

static void c_init(Rware *env) {
    env->num_agents = env->agents;
    rw_build_layout(env);
}

/* Marks one random shelf that sits in its slot as requested; 0 if the draw hit no such shelf. */
static int rw_request(Rware *env) {
    const int slot = env->shelf_slots[rng_int(&env->rng, env->num_shelves)];
    if (env->cells[slot] != RW_SHELF) return 0;
    env->cells[slot] = RW_REQUESTED;
    return 1;
}

/* cell / cols without a division (a hot one: every robot, every step). With
 * row_magic = ceil(2^16 / cols), cell * row_magic >> 16 is exact while cell * (row_magic * cols
 * - 2^16) < 2^16, which holds for cell < 320 and cols <= 20 (6,400 at most). */
static inline int rw_row(const Rware *env, int cell) {
    return (int)(((unsigned)cell * env->row_magic) >> 16);
}

/* What a robot sees of one neighbour cell (on the map): robot there, its heading, cell kind. */
static inline void rw_see(const Rware *env, int cell, float *o) {
    static const float QUARTERS[5] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f}; /* k / 4 */
    const int other = env->robot_at[cell];
    o[0] = other >= 0 ? 1.0f : 0.0f;
    o[1] = other >= 0 ? QUARTERS[env->robot[other].heading + 1] : 0.0f;
    o[2] = QUARTERS[env->cells[cell] + 1];
}

static void rw_observe(Rware *env) {
    const int cols = env->cols, rows = env->rows;
    const float cells = (float)(cols * rows);
    /* Cell offsets of the 8 neighbours, in RW_AROUND's order. */
    const int step[8] = {-cols, 1 - cols, 1, cols + 1, cols, cols - 1, -1, -cols - 1};
    for (int i = 0; i < env->agents; i++) {
        const RwRobot *me = &env->robot[i];
        float *obs = env->observations + (size_t)i * RW_OBS;
        const int y = rw_row(env, me->cell), x = me->cell - y * cols;
        obs[0] = (float)me->cell / cells;
        obs[1] = (float)(me->heading + 1) * 0.25f;
        obs[2] = (float)me->load;
        if (x > 0 && y > 0 && x < cols - 1 && y < rows - 1) { /* all 8 on the map */
            for (int j = 0; j < 8; j++)
                rw_see(env, me->cell + step[j], obs + 3 + 3 * j);
            continue;
        }
        for (int j = 0; j < 8; j++) {
            float *o = obs + 3 + 3 * j;
            const int nx = x + RW_AROUND[j][0], ny = y + RW_AROUND[j][1];
            if (nx < 0 || ny < 0 || nx >= cols || ny >= rows)
                o[0] = o[1] = o[2] = 0.0f;
            else
                rw_see(env, ny * cols + nx, o);
        }
    }
}

static void c_reset(Rware *env) {
    const int n = env->cols * env->rows;
    memcpy(env->cells, env->layout, sizeof(env->cells));
    for (int i = 0; i < RW_MAX_CELLS; i++)
        env->robot_at[i] = -1;
    for (int requested = 0; requested < env->num_requested;)
        requested += rw_request(env);
    for (int i = 0; i < env->agents; i++) {
        int cell;
        do {
            cell = rng_int(&env->rng, n);
        } while (env->cells[cell] != RW_FLOOR || env->robot_at[cell] >= 0);
        env->robot[i] = (RwRobot){.cell = (int16_t)cell, .heading = (uint8_t)rng_int(&env->rng, 4)};
        env->robot_at[cell] = (int8_t)i;
    }
    rw_observe(env);
}

/* The cell robot i would enter going forward, or -1 if the edge or its load forbids it. */
static int rw_ahead(const Rware *env, int i) {
    const RwRobot *r = &env->robot[i];
    const int row = rw_row(env, r->cell);
    const int x = r->cell - row * env->cols + RW_DX[r->heading];
    const int y = row + RW_DY[r->heading];
    if (x < 0 || y < 0 || x >= env->cols || y >= env->rows) return -1;
    const int cell = y * env->cols + x, kind = env->cells[cell];
    if (r->load != RW_EMPTY_HANDED && (kind == RW_SHELF || kind == RW_REQUESTED)) return -1;
    if (r->load == RW_CARRY_EMPTY && kind == RW_GOAL) return -1;
    return cell;
}

/* Robot i leaves its cell: a carried shelf leaves with it (goal cells stay goals). */
static void rw_lift(Rware *env, int i) {
    const RwRobot *r = &env->robot[i];
    if (r->load != RW_EMPTY_HANDED && env->cells[r->cell] != RW_GOAL)
        env->cells[r->cell] = RW_FLOOR;
    if (env->robot_at[r->cell] == i) env->robot_at[r->cell] = -1;
}

/* Robot i arrives at `cell`: a carried shelf marks it, except on a goal. */
static void rw_land(Rware *env, int i, int cell) {
    RwRobot *r = &env->robot[i];
    if (r->load != RW_EMPTY_HANDED && env->cells[cell] != RW_GOAL)
        env->cells[cell] = r->load == RW_CARRY_REQUESTED ? RW_REQUESTED : RW_SHELF;
    r->cell = (int16_t)cell;
    env->robot_at[cell] = (int8_t)i;
}

static void rw_log_trip(Rware *env, RwRobot *r) {
    env->log.perf += fmaxf(0.0f, 1.0f - 0.01f * (float)r->trip_steps);
    env->log.score += 1.0f;
    env->log.episode_return += r->trip_return;
    env->log.episode_length += (float)r->trip_steps;
    env->log.n += 1.0f;
    r->trip_return = 0.0f;
    r->trip_steps = 0;
}

static float rw_toggle(Rware *env, int i) {
    RwRobot *r = &env->robot[i];
    const int kind = env->cells[r->cell];
    if (r->load == RW_EMPTY_HANDED && kind == RW_REQUESTED) {
        r->load = RW_CARRY_REQUESTED;
        r->trip_return += 0.5f;
        return 0.5f;
    }
    if (r->load == RW_CARRY_EMPTY && kind == env->layout[r->cell] && kind != RW_GOAL) {
        r->load = RW_EMPTY_HANDED;
        r->trip_return += 1.0f;
        rw_log_trip(env, r);
        return 1.0f;
    }
    if (r->load == RW_CARRY_REQUESTED && kind == RW_GOAL) {
        r->load = RW_CARRY_EMPTY;
        r->trip_return += 0.5f;
        while (!rw_request(env)) {
        }
        return 0.5f;
    }
    return 0.0f;
}

/* Loops in "robot i wants the cell of robot j": loop[i] = its length, 0 outside any loop. */
static void rw_find_loops(Rware *env) {
    const int n = env->agents;
    for (int i = 0; i < n; i++)
        env->robot[i].loop = 0;
    for (int i = 0; i < n; i++) {
        /* Walk at most n hops; if the walk comes back to i, i is on a loop. */
        int at = i, hops = 0;
        do {
            at = env->robot[at].target >= 0 ? env->robot_at[env->robot[at].target] : -1;
            hops++;
        } while (at >= 0 && at != i && hops <= n);
        if (at == i) env->robot[i].loop = (int16_t)hops;
    }
}

/* Queue length behind each robot outside loops: 1 + the longest queue among robots that want
 * its cell (a robot nobody wants has 1). */
static void rw_weigh(Rware *env) {
    const int n = env->agents;
    for (int i = 0; i < n; i++)
        env->robot[i].weight = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int j = 0; j < n; j++) {
            if (env->robot[j].loop || env->robot[j].target < 0) continue;
            const int ahead = env->robot_at[env->robot[j].target];
            if (ahead < 0 || env->robot[ahead].loop ||
                env->robot[ahead].weight > env->robot[j].weight)
                continue;
            env->robot[ahead].weight = (int16_t)(env->robot[j].weight + 1);
            changed = 1;
        }
    }
}

static void rw_rotate_loops(Rware *env) {
    for (int i = 0; i < env->agents; i++) {
        if (env->robot[i].loop < 3) continue;
        int ok = 1;
        for (int at = env->robot_at[env->robot[i].target]; at != i;
             at = env->robot_at[env->robot[at].target])
            ok = ok && rw_ahead(env, at) == env->robot[at].target;
        int members[RW_MAX_AGENTS], count = 0;
        for (int at = i; count < env->robot[i].loop; at = env->robot_at[env->robot[at].target])
            members[count++] = at;
        if (!ok || rw_ahead(env, i) != env->robot[i].target) {
            for (int k = 0; k < count; k++)
                env->robot[members[k]].loop = -1; /* stuck this step */
            continue;
        }
        /* Everyone lifts first, then lands: the loop turns as one. */
        for (int k = 0; k < count; k++)
            rw_lift(env, members[k]);
        for (int k = 0; k < count; k++) {
            rw_land(env, members[k], env->robot[members[k]].target);
            env->robot[members[k]].loop = -1;
        }
    }
}

static void rw_move_queues(Rware *env) {
    int top = 0;
    for (int i = 0; i < env->agents; i++)
        if (!env->robot[i].loop && env->robot[i].weight > top) top = env->robot[i].weight;
    for (int w = top; w > 0; w--) {
        for (int i = 0; i < env->agents; i++) {
            if (env->robot[i].loop || env->robot[i].weight != w || env->actions[i] != RW_FORWARD)
                continue;
            const int cell = rw_ahead(env, i);
            if (cell < 0 || env->robot_at[cell] >= 0) continue;
            rw_lift(env, i);
            rw_land(env, i, cell);
        }
    }
}

static const uint8_t RW_TURN[5] = {0, 0, 3, 1, 0}; /* heading change per action, mod 4 */

static void c_step(Rware *env) {
    int forward = 0;
    for (int i = 0; i < env->agents; i++) {
        RwRobot *r = &env->robot[i];
        const int action = env->actions[i];
        float reward = 0.0f;
        r->trip_steps++;
        r->heading = (uint8_t)((r->heading + RW_TURN[action]) & 3); /* no branch to mispredict */
        if (action == RW_TOGGLE) reward = rw_toggle(env, i);
        env->rewards[i] = reward;
        env->terminals[i] = env->truncations[i] = 0;
        r->target = (int16_t)(action == RW_FORWARD ? rw_ahead(env, i) : -1);
        forward += action == RW_FORWARD;
    }
    if (forward) {
        rw_find_loops(env);
        rw_weigh(env);
        rw_rotate_loops(env);
        rw_move_queues(env);
    }
    rw_observe(env);
}

static void c_frame_size(const Rware *env, int *width, int *height) {
    *width = env->cols * RW_CELL_PIXELS;
    *height = env->rows * RW_CELL_PIXELS;
}

static void c_render(const Rware *env, Canvas *canvas) {
    static const Color KIND[4] = {{6, 24, 24}, {80, 80, 80}, {0, 187, 187}, {241, 241, 241}};
    const int px = RW_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i < env->cols * env->rows; i++) {
        const int x = i % env->cols * px, y = i / env->cols * px;
        raster_rect(canvas, x, y, px, px, COLOR_GRID);
        raster_rect(canvas, x + 1, y + 1, px - 2, px - 2, KIND[env->cells[i]]);
    }
    for (int i = 0; i < env->agents; i++) {
        const RwRobot *r = &env->robot[i];
        const int cx = r->cell % env->cols * px + px / 2, cy = r->cell / env->cols * px + px / 2;
        raster_circle(canvas, cx, cy, px / 2 - 5, r->load ? COLOR_ORANGE : COLOR_RED);
        raster_circle(canvas, cx + RW_DX[r->heading] * (px / 4), cy + RW_DY[r->heading] * (px / 4),
                      3, COLOR_WHITE);
    }
}

static void c_close(Rware *env) {
    (void)env;
}

static const float RW_LOWS[RW_OBS] = {0};
static const float RW_HIGHS[RW_OBS] = {1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const int ACTION_SIZES[] = {5};
static const PufferKey KEYS[] = {{"idle", 0, RW_WAIT},    {"up", 0, RW_FORWARD},
                                 {"left", 0, RW_LEFT},    {"right", 0, RW_RIGHT},
                                 {"space", 0, RW_TOGGLE}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Robotic warehouse: robots fetch requested shelves (+0.5 on lifting one), carry them "
           "to a goal (+0.5) and return the emptied shelf to a free slot (+1). Loaded robots "
           "cannot pass under shelves; queues move front first. No episode end. Observation: "
           "(27,) float32: own cell, heading and load, then robot, its heading and cell kind "
           "for the 8 cells around. Action: Discrete(5): wait, forward, left, right, load.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = RW_OBS,
    .obs_lows = RW_LOWS,
    .obs_highs = RW_HIGHS,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Rware),
    .check = rw_check,
};

PUFFER_ENV_END(rware, Rware)

#endif
