/* Tower climb: a climber pushes, pulls and climbs blocks of a 10x10x10 voxel tower to stand on
 * the goal (PufferLib 3.0's tower_climb task, rules restated in our own code; the moves and the
 * generator are in tower_puzzle.h).
 *
 * Rules (defaults in brackets; PufferLib's Python defaults, its .ini is configs/tower_climb.toml):
 * | tower       | 10 x 10 cells per floor, 10 floors; cell c = x + 10 z + 100 y               |
 * | climbers    | num_agents [64] per env, each on its own copy of a level drawn uniformly    |
 * |             | per episode from the env's pool of num_maps [50] levels                     |
 * | level       | goal floor g uniform in 5..8; each cell with 1 <= x <= 7, 1 <= z <=         |
 * |             | min(7, 8 - y), 1 <= y < g a block with probability 1/2; spawn: the first    |
 * |             | such cell of floor 2 (z from 9 down, then x up) over a block, emptied;      |
 * |             | goal: with probability 1/3 each, the first cell of floor g over a block     |
 * |             | below, below-left/right or below-behind; kept only if its shortest solution |
 * |             | takes 10 to 15 moves (breadth-first search over the same moves)             |
 * | start       | standing on the spawn, facing UP (-z), holding nothing                      |
 * | actions     | Discrete(6): 0 right (+x), 1 down (+z), 2 left (-x), 3 up (-z), 4 grab or   |
 * |             | let go of the block ahead, 5 drop (from a ledge, or standing while holding) |
 * | standing    | a direction other than the facing one turns; else walk onto a block-topped  |
 * |             | cell, climb the block ahead (cell above self and above it empty, not the    |
 * |             | goal), or walk off: one floor down onto a block, else hang from the ledge   |
 * |             | facing back                                                                 |
 * | hanging     | up: climb onto the ledge; down: illegal; left/right (own): slide along the  |
 * |             | ledge, turn into an inside corner, or wrap around an outside one; drop:     |
 * |             | fall to the first block below (none: death)                                 |
 * | holding     | same direction: push the line of blocks ahead (up to 10; a block at the     |
 * |             | floor's edge stays, the first then vanishes) and let go; opposite: pull the |
 * |             | block into own cell and step back (no floor behind: hang and let go); other |
 * |             | directions: turn and let go. Unsupported blocks (nothing below or           |
 * |             | below-side) fall, ones passing floor 1 vanish; a move that would drop the   |
 * |             | goal is illegal; a block landing on the climber is death                    |
 * | rewards     | climbing to a new highest floor f (f - 2 above the spawn's floor):          |
 * |             | reward_climb_row [0.25]; walking off a ledge: reward_fall_row [0];          |
 * |             | push, pull or turn while holding: reward_move_block [0.2]; an illegal       |
 * |             | action (the state may still change): reward_illegal_move [-0.01]            |
 * | episode end | standing on the goal: +1, terminal; death: -1, terminal; else the 61st step |
 * |             | is the last: its action's reward, then truncation                           |
 * Observation per climber: (228,) uint8: a 5 x 5 x 9 (floors, z rows, x columns) window, index
 * x + 9 z + 45 y, of 0 empty, 1 block, 2 goal, 3 the climber; the window is centred on the
 * climber's (floor + 1, z, x) and shifted to stay inside the tower; then its orientation (0..3),
 * 1 if hanging, 1 if holding a block. Log per climber and episode: perf (1 at the goal, else
 * 0), score (the highest floor climbed to, minus 2), episode_return, episode_length (steps, the
 * ending one included).
 *
 * Deliberate differences from PufferLib 3.0: levels come from the env's seed (theirs from the
 * clock); one pool per env here, one per process there (configs/tower_climb.toml runs 1,024
 * climbers in one env, sharing 50 levels as theirs do; the default of 64 keeps envs small); the
 * ends of episodes set terminals/truncations (theirs sets none); an episode's 61st action is
 * played in it and then truncates (theirs resets on the 61st step and plays its action, chosen on
 * the old state, in the next episode: 61 actions an episode either way); the goal step pays +1
 * and logs +1 (theirs also logs the climb reward it overwrote); observations are written after
 * every step (theirs keeps the old ones after an illegal action that changed the state); cells
 * outside the tower read empty (theirs reads past its mask); a tower draw without spawn or goal
 * is redrawn (theirs keeps the previous draw's spawn and goal); the solver gives up beyond 2^21
 * states (theirs 10^7; neither is reached); block falls are queued up to 4,096 deep (theirs
 * 1,000, unchecked).
 */
#ifndef PUFFER_TOWER_CLIMB_H
#define PUFFER_TOWER_CLIMB_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(tower_climb)

#include "tower_puzzle.h" /* inside the env's namespace in the C++ binding */

enum { TC_VIEW_FLOORS = 5, TC_VIEW_ROWS = 5, TC_VIEW_COLS = 9 };
enum { TC_VIEW = TC_VIEW_FLOORS * TC_VIEW_ROWS * TC_VIEW_COLS, TC_OBS = TC_VIEW + 3 };
enum { TC_EMPTY, TC_BLOCK, TC_GOAL, TC_SELF };
enum { TC_HORIZON = 61, TC_MAX_AGENTS = 4096 };       /* steps (each one acting) per episode */
enum { TC_PX = 20, TC_DEPTH_PX = 8, TC_MARGIN = 10 }; /* render: cube side, z shift per row */

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
    TcPuzzle puzzle;
    int level;        /* index in the pool */
    int tick;         /* steps of this episode */
    int rows_cleared; /* highest floor climbed to, minus 2 (0 before any climb) */
    float episode_return;
} TcClimber;

typedef struct {
    uint8_t *observations; /* (num_agents, 228) */
    int32_t *actions;      /* (num_agents,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int agents, num_maps;                                                            /* config */
    float reward_climb_row, reward_fall_row, reward_illegal_move, reward_move_block; /* config */
    TcLevel *levels;
    TcClimber *climbers;
} TowerClimb;

static const PufferField CONFIG[] = {
    {"num_agents", offsetof(TowerClimb, agents), PUFFER_INT, 64, 1, TC_MAX_AGENTS,
     "climbers per env, sharing its pool of levels"},
    {"num_maps", offsetof(TowerClimb, num_maps), PUFFER_INT, 50, 1, 10000,
     "levels in the env's pool, generated (and solved) at reset"},
    {"reward_climb_row", offsetof(TowerClimb, reward_climb_row), PUFFER_FLOAT, 0.25, -10, 10,
     "reward for climbing to a floor higher than any before in the episode"},
    {"reward_fall_row", offsetof(TowerClimb, reward_fall_row), PUFFER_FLOAT, 0.0, -10, 10,
     "reward for walking off a ledge"},
    {"reward_illegal_move", offsetof(TowerClimb, reward_illegal_move), PUFFER_FLOAT, -0.01, -10, 10,
     "reward for an action the rules refuse"},
    {"reward_move_block", offsetof(TowerClimb, reward_move_block), PUFFER_FLOAT, 0.2, -10, 10,
     "reward for a push, a pull or a turn while holding a block"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int tc_blocks(const void *self, PufferBlock *out) {
    const TowerClimb *env = (const TowerClimb *)self;
    out[0] = (PufferBlock){offsetof(TowerClimb, levels), (size_t)env->num_maps * sizeof(TcLevel)};
    out[1] = (PufferBlock){offsetof(TowerClimb, climbers), (size_t)env->agents * sizeof(TcClimber)};
    return 2;
}

static void c_init(TowerClimb *env) {
    env->num_agents = env->agents;
    env->levels = (TcLevel *)calloc((size_t)env->num_maps, sizeof(TcLevel));
    env->climbers = (TcClimber *)calloc((size_t)env->agents, sizeof(TcClimber));
}

/* Start of a window of `size` cells around `centre`, kept inside [0, 10). */
static int tc_window(int centre, int size) {
    const int start = centre - size / 2;
    return start < 0 ? 0 : start + size > TC_SIDE ? TC_SIDE - size : start;
}

static void tc_observe(const TowerClimb *env, int i) {
    const TcClimber *c = &env->climbers[i];
    const TcPuzzle *s = &c->puzzle;
    const int goal = env->levels[c->level].goal, p = s->position;
    const int y0 = tc_window(p / TC_FLOOR + 1, TC_VIEW_FLOORS);
    const int z0 = tc_window((p % TC_FLOOR) / TC_SIDE, TC_VIEW_ROWS);
    const int x0 = tc_window(p % TC_SIDE, TC_VIEW_COLS);
    uint8_t *obs = env->observations + (size_t)i * TC_OBS;
    for (int y = 0; y < TC_VIEW_FLOORS; y++) {
        for (int z = 0; z < TC_VIEW_ROWS; z++) {
            const int row = (y0 + y) * TC_FLOOR + (z0 + z) * TC_SIDE + x0;
            uint8_t *out = obs + y * TC_VIEW_ROWS * TC_VIEW_COLS + z * TC_VIEW_COLS;
            for (int x = 0; x < TC_VIEW_COLS; x++)
                out[x] = (uint8_t)((s->blocks[(row + x) >> 3] >> ((row + x) & 7)) & 1);
            if (goal >= row && goal < row + TC_VIEW_COLS) out[goal - row] = TC_GOAL;
            if (p >= row && p < row + TC_VIEW_COLS) out[p - row] = TC_SELF;
        }
    }
    obs[TC_VIEW] = s->orientation;
    obs[TC_VIEW + 1] = s->hanging;
    obs[TC_VIEW + 2] = (uint8_t)(s->grabbed != -1);
}

static void tc_new_episode(TowerClimb *env, int i) {
    TcClimber *c = &env->climbers[i];
    c->level = rng_int(&env->rng, env->num_maps);
    c->puzzle = env->levels[c->level].start;
    c->tick = c->rows_cleared = 0;
    c->episode_return = 0.0f;
}

/* A new pool of levels from env->rng, then a new episode for every climber. */
static void c_reset(TowerClimb *env) {
    TcSolver solver = {0};
    for (int k = 0; k < env->num_maps; k++)
        tc_generate(&env->levels[k], &solver, &env->rng);
    tc_solver_close(&solver);
    for (int i = 0; i < env->agents; i++) {
        tc_new_episode(env, i);
        tc_observe(env, i);
    }
}

/* Pays the episode's last reward, logs it and starts the next episode. */
static void tc_finish(TowerClimb *env, int i, float reward, float perf, int terminal) {
    TcClimber *c = &env->climbers[i];
    env->rewards[i] = reward;
    env->terminals[i] = (uint8_t)terminal;
    env->truncations[i] = (uint8_t)!terminal;
    env->log.perf += perf;
    env->log.score += (float)c->rows_cleared;
    env->log.episode_return += c->episode_return + reward;
    env->log.episode_length += (float)c->tick;
    env->log.n += 1.0f;
    tc_new_episode(env, i);
}

static void tc_step_climber(TowerClimb *env, int i) {
    TcClimber *c = &env->climbers[i];
    env->terminals[i] = env->truncations[i] = 0;
    c->tick++;
    const int goal = env->levels[c->level].goal;
    TcEvents ev;
    const int result = tc_apply(&c->puzzle, env->actions[i], goal, &ev);
    if (result == TC_DEATH) {
        tc_finish(env, i, -1.0f, 0.0f, 1);
        return;
    }
    float reward = 0.0f;
    if (result == TC_ILLEGAL) {
        reward = env->reward_illegal_move;
    } else if (ev.climbed_to - 2 > c->rows_cleared) {
        c->rows_cleared = ev.climbed_to - 2;
        reward = env->reward_climb_row;
    } else if (ev.fell) {
        reward = env->reward_fall_row;
    } else if (ev.moved) {
        reward = env->reward_move_block;
    }
    if (result == TC_OK && tc_at_goal(&c->puzzle, goal)) { /* +1 replaces a climb's reward */
        tc_finish(env, i, 1.0f, 1.0f, 1);
        return;
    }
    if (c->tick >= TC_HORIZON) {
        tc_finish(env, i, reward, 0.0f, 0);
        return;
    }
    env->rewards[i] = reward;
    c->episode_return += reward;
}

static void c_step(TowerClimb *env) {
    for (int i = 0; i < env->agents; i++) {
        tc_step_climber(env, i);
        tc_observe(env, i);
    }
}

static void c_frame_size(const TowerClimb *env, int *width, int *height) {
    (void)env;
    *width = 2 * TC_MARGIN + TC_SIDE * TC_PX + TC_SIDE * TC_DEPTH_PX;
    *height = 2 * TC_MARGIN + TC_SIDE * TC_PX + TC_SIDE * TC_DEPTH_PX;
}

/* Screen corner of cell (x, y, z)'s front face: floors go up, rows further back (small z) go up
 * and right, in an oblique projection. */
static void tc_screen(int x, int y, int z, int *sx, int *sy) {
    const int back = TC_SIDE - 1 - z;
    *sx = TC_MARGIN + x * TC_PX + back * TC_DEPTH_PX;
    *sy = TC_MARGIN + (TC_SIDE - 1 - y) * TC_PX + (TC_SIDE - back) * TC_DEPTH_PX - TC_DEPTH_PX;
}

/* A cube: its top face as a sheared strip, then its front face, shaded by floor. */
static void tc_cube(Canvas *canvas, int x, int y, int z, Color front) {
    int sx, sy;
    tc_screen(x, y, z, &sx, &sy);
    const Color top = {(uint8_t)(front.r / 2 + 120), (uint8_t)(front.g / 2 + 120),
                       (uint8_t)(front.b / 2 + 120)};
    for (int k = 0; k < TC_DEPTH_PX; k++)
        raster_rect(canvas, sx + TC_DEPTH_PX - k, sy - TC_DEPTH_PX + k, TC_PX, 1, top);
    raster_rect(canvas, sx, sy, TC_PX, TC_PX, front);
    raster_rect(canvas, sx, sy, TC_PX, 1, COLOR_BLACK);
    raster_rect(canvas, sx, sy, 1, TC_PX, COLOR_BLACK);
}

/* Climber 0's tower, back rows first and floors bottom up: blocks gray (darker lower down), the
 * held one cyan, the goal green, the climber a yellow disc (orange while hanging) with a dark dot
 * toward the way it faces. */
static void c_render(const TowerClimb *env, Canvas *canvas) {
    const TcClimber *c = &env->climbers[0];
    const TcPuzzle *s = &c->puzzle;
    const int goal = env->levels[c->level].goal;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int z = 0; z < TC_SIDE; z++) {
        for (int y = 0; y < TC_SIDE; y++) {
            for (int x = 0; x < TC_SIDE; x++) {
                const int cell = x + TC_SIDE * z + TC_FLOOR * y;
                if (tc_block(s, cell)) {
                    const uint8_t shade = (uint8_t)(70 + 14 * y);
                    const Color gray = {shade, shade, shade};
                    tc_cube(canvas, x, y, z, cell == s->grabbed ? COLOR_CYAN : gray);
                } else if (cell == goal) {
                    tc_cube(canvas, x, y, z, COLOR_GREEN);
                } else if (cell == s->position) {
                    int sx, sy;
                    tc_screen(x, y, z, &sx, &sy);
                    const int cx = sx + TC_PX / 2, cy = sy + TC_PX / 2;
                    raster_circle(canvas, cx, cy, TC_PX / 2 - 2,
                                  s->hanging ? COLOR_ORANGE : COLOR_YELLOW);
                    const int o = s->orientation;
                    const int dx = (o == TC_RIGHT) - (o == TC_LEFT);
                    const int dz = (o == TC_DOWN) - (o == TC_UP);
                    raster_circle(canvas, cx + dx * TC_PX / 3 - dz * TC_DEPTH_PX / 2,
                                  cy + dz * TC_DEPTH_PX / 2, 3, COLOR_BLACK);
                }
            }
        }
    }
}

static void c_close(TowerClimb *env) {
    free(env->levels);
    free(env->climbers);
    env->levels = NULL;
    env->climbers = NULL;
}

static const int ACTION_SIZES[] = {TC_ACTIONS};
static const PufferKey KEYS[] = {
    {"right", 0, TC_RIGHT}, {"down", 0, TC_DOWN}, {"left", 0, TC_LEFT}, {"up", 0, TC_UP},
    {"space", 0, TC_GRAB},  {"x", 0, TC_DROP},    {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Tower climb: climbers push, pull and climb blocks of a random 10x10x10 voxel tower "
           "(levels solvable in 10 to 15 moves, a pool of num_maps per env) to stand on the goal "
           "block: +1 and terminal; falling off or under a falling block: -1 and terminal; 61 "
           "actions, then truncation. Shaping: reward_climb_row for a new highest floor, "
           "reward_fall_row for walking off a ledge, reward_move_block for moving a block, "
           "reward_illegal_move for a refused action. Observation: (228,) uint8: a 5x5x9 window "
           "(floors, rows, columns) of 0 empty, 1 block, 2 goal, 3 self, then orientation, "
           "hanging, holding. Action: Discrete(6): right, down, left, up (turn, walk, climb, "
           "shimmy, push, pull), grab/let go, drop.",
    .obs_dtype = PUFFER_UINT8,
    .obs_size = TC_OBS,
    .obs_low = 0,
    .obs_high = 3,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(TowerClimb),
    .blocks = tc_blocks,
};

PUFFER_ENV_END(tower_climb, TowerClimb)

#endif
