/* Pac-Man: eat the 244 pellets of the arcade maze while four ghosts hunt you (PufferLib 3.0's
 * pacman task, rules restated in our own code).
 *
 * Rules (one step moves everyone one tile; defaults in brackets):
 * | maze       | the 28 x 31 arcade maze, 240 dots and 4 power pellets; the row-14 tunnel  |
 * |            | wraps left to right                                                       |
 * | you        | start at (13, 23) facing right (randomize_starting_position [0]: on a    |
 * |            | random dot); an action into a wall keeps the current direction           |
 * | pellets    | +1 reward and +1 score each; a power pellet frightens every ghost not     |
 * |            | returning home for frightened_time [35] steps and makes ghosts reverse   |
 * | ghosts     | pinky, blinky, inky, clyde start in the house after a random delay in    |
 * |            | [min_start_timeout, max_start_timeout) [0, 49) steps. They never reverse |
 * |            | except on a mode change or fright; at a junction they take the open      |
 * |            | direction (order down, up, right, left) closest to their target          |
 * | targets    | scatter: a corner each; chase: blinky you, pinky 4 tiles ahead of you,   |
 * |            | inky blinky mirrored through 2 tiles ahead of you, clyde you beyond 8    |
 * |            | tiles, else his corner. Modes alternate scatter [70] / chase [140] steps,|
 * |            | max_mode_changes [6] + 1 switches, then stay                              |
 * | fright     | frightened ghosts move every other step at random; touching one: +1, it  |
 * |            | returns to the house (its eyes ignore you)                               |
 * | caught     | a ghost within one tile of you in a row or column: the episode ends      |
 * |            | (terminal, no penalty)                                                   |
 * | end        | caught or every pellet eaten: terminal; 10,000 steps: truncation         |
 * Observation: (291,) float32 in [0, 1]: your x / 28, y / 31, direction one-hot (up, down,
 * left, right), open neighbours (up, down, left, right), fright time left / frightened_time;
 * per ghost x / 28, y / 31, direction one-hot, chasing, frightened, returning; then 1 for each
 * pellet still there (maze order). Action: Discrete(4): down, up, right, left.
 * Log: score = pellets eaten in the episode.
 *
 * Deliberate differences from PufferLib 3.0: the 10,000-step limit sets truncations (they set
 * terminals), the logged episode_return is the reward sum (theirs logs the score) and a ghost
 * in a dead end turns back (theirs reads an unset direction; the maze has none).
 */
#ifndef PUFFER_PACMAN_H
#define PUFFER_PACMAN_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(pacman)

enum { PM_W = 28, PM_H = 31, PM_DOTS = 240, PM_PICKUPS = 244, PM_GHOSTS = 4 };
enum { PM_PLAYER_OBS = 11, PM_GHOST_OBS = 9 };
enum { PM_OBS = PM_PLAYER_OBS + PM_GHOSTS * PM_GHOST_OBS + PM_PICKUPS };
enum { PM_DOWN, PM_UP, PM_RIGHT, PM_LEFT };
enum { PM_PINKY, PM_BLINKY, PM_INKY, PM_CLYDE };
enum { PM_MAX_STEPS = 10000, PM_TILE = 16, PM_TOP = 32 };

/* '#' wall, '.' dot, 'x' power pellet, 'p' your start, '1'-'4' ghost starts (inky, blinky,
 * pinky, clyde), space open. */
static const char PM_MAZE[PM_H][PM_W + 1] = {
    "############################", "#............##............#", "#.####.#####.##.#####.####.#",
    "#x####.#####.##.#####.####x#", "#.####.#####.##.#####.####.#", "#..........................#",
    "#.####.##.########.##.####.#", "#.####.##.########.##.####.#", "#......##....##....##......#",
    "######.##### ## #####.######", "######.##### ## #####.######", "######.##   1234   ##.######",
    "######.## ######## ##.######", "######.## ######## ##.######", "      .   ########   .      ",
    "######.## ######## ##.######", "######.## ######## ##.######", "######.##          ##.######",
    "######.## ######## ##.######", "######.## ######## ##.######", "#............##............#",
    "#.####.#####.##.#####.####.#", "#.####.#####.##.#####.####.#", "#x..##.......p .......##..x#",
    "###.##.##.########.##.##.###", "###.##.##.########.##.##.###", "#......##....##....##......#",
    "#.##########.##.##########.#", "#.##########.##.##########.#", "#..........................#",
    "############################",
};
static const char PM_GHOST_CHAR[PM_GHOSTS] = {'3', '2', '1', '4'};
static const int8_t PM_CORNER[PM_GHOSTS][2] = {
    {3, -3}, {PM_W - 4, -3}, {PM_W - 1, PM_H}, {0, PM_H}};

typedef struct {
    float episode_return;
    float episode_length;
    float score;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};

typedef struct {
    int x, y;
} PmPos;

typedef struct {
    PmPos pos, spawn, target;
    int direction, start_timeout;
    uint8_t frightened, returning, half_move;
} PmGhost;

typedef struct {
    float *observations; /* (1, 291) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int randomize_start, min_timeout, max_timeout, frightened_time; /* config */
    int max_mode_changes, scatter_length, chase_length;             /* config */
    int steps, score, remaining, direction, frightened_left, mode_left, mode_changes;
    uint8_t scatter, reverse, caught;
    float episode_return;
    PmPos player;
    PmGhost ghosts[PM_GHOSTS];
    char maze[PM_H][PM_W];      /* the live maze: eaten pellets become spaces */
    int16_t pickup[PM_H][PM_W]; /* per cell: its pellet's observation slot, or -1 */
    PmPos dots[PM_DOTS];        /* random start cells */
} Pacman;

static const PufferField CONFIG[] = {
    {"randomize_starting_position", offsetof(Pacman, randomize_start), PUFFER_INT, 0, 0, 1,
     "1: start on a random dot instead of the arcade start"},
    {"min_start_timeout", offsetof(Pacman, min_timeout), PUFFER_INT, 0, 0, 10000,
     "fewest steps a ghost waits in the house"},
    {"max_start_timeout", offsetof(Pacman, max_timeout), PUFFER_INT, 49, 0, 10000,
     "ghost delays are drawn below this (or equal min_start_timeout)"},
    {"frightened_time", offsetof(Pacman, frightened_time), PUFFER_INT, 35, 1, 10000,
     "steps ghosts stay frightened after a power pellet"},
    {"max_mode_changes", offsetof(Pacman, max_mode_changes), PUFFER_INT, 6, 0, 1000,
     "scatter / chase switches after the first, then the mode stays"},
    {"scatter_mode_length", offsetof(Pacman, scatter_length), PUFFER_INT, 70, 1, 100000,
     "steps of each scatter phase"},
    {"chase_mode_length", offsetof(Pacman, chase_length), PUFFER_INT, 140, 1, 100000,
     "steps of each chase phase"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static const char *pm_check(const void *self) {
    const Pacman *env = (const Pacman *)self;
    return env->min_timeout <= env->max_timeout
               ? NULL
               : "min_start_timeout must not exceed max_start_timeout";
}

static void c_init(Pacman *env) {
    env->num_agents = 1;
    int dots = 0, slot = 0;
    for (int y = 0; y < PM_H; y++)
        for (int x = 0; x < PM_W; x++) {
            const char tile = PM_MAZE[y][x];
            env->pickup[y][x] = -1;
            if (tile == '.') env->dots[dots++] = (PmPos){x, y};
            if (tile == '.' || tile == 'x') env->pickup[y][x] = (int16_t)slot++;
            for (int g = 0; g < PM_GHOSTS; g++)
                if (tile == PM_GHOST_CHAR[g]) env->ghosts[g].spawn = (PmPos){x, y};
        }
}

static PmPos pm_step_pos(PmPos p, int direction, int distance) {
    static const int DX[4] = {0, 0, 1, -1}, DY[4] = {1, -1, 0, 0};
    return (PmPos){p.x + DX[direction] * distance, p.y + DY[direction] * distance};
}

/* One tile on, through the tunnel at the side edges. */
static PmPos pm_next(PmPos p, int direction) {
    PmPos n = pm_step_pos(p, direction, 1);
    n.x = n.x < 0 ? PM_W - 1 : (n.x >= PM_W ? 0 : n.x);
    return n;
}

static int pm_open(const Pacman *env, PmPos p, int direction) {
    const PmPos n = pm_next(p, direction);
    return env->maze[n.y][n.x] != '#';
}

static int pm_dist2(PmPos a, PmPos b) {
    return (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
}

static int pm_timeout(Pacman *env) {
    const int lo = env->min_timeout, hi = env->max_timeout;
    return lo == hi ? lo : lo + rng_int(&env->rng, hi - lo);
}

/* The first 47 observations (the pellet flags are cleared in place as pellets are eaten). */
static void pm_observe(Pacman *env) {
    float *o = env->observations;
    const PmPos p = env->player;
    o[0] = (float)p.x / PM_W, o[1] = (float)p.y / PM_H;
    o[2] = env->direction == PM_UP, o[3] = env->direction == PM_DOWN;
    o[4] = env->direction == PM_LEFT, o[5] = env->direction == PM_RIGHT;
    o[6] = (float)pm_open(env, p, PM_UP), o[7] = (float)pm_open(env, p, PM_DOWN);
    o[8] = (float)pm_open(env, p, PM_LEFT), o[9] = (float)pm_open(env, p, PM_RIGHT);
    o[10] = (float)env->frightened_left / (float)env->frightened_time;
    for (int g = 0; g < PM_GHOSTS; g++) {
        const PmGhost *gh = &env->ghosts[g];
        float *q = o + PM_PLAYER_OBS + g * PM_GHOST_OBS;
        q[0] = (float)gh->pos.x / PM_W, q[1] = (float)gh->pos.y / PM_H;
        q[2] = gh->direction == PM_UP, q[3] = gh->direction == PM_DOWN;
        q[4] = gh->direction == PM_LEFT, q[5] = gh->direction == PM_RIGHT;
        q[6] = !gh->frightened && !gh->returning, q[7] = gh->frightened, q[8] = gh->returning;
    }
}

static void c_reset(Pacman *env) {
    env->steps = env->score = env->frightened_left = env->mode_left = env->mode_changes = 0;
    env->scatter = env->reverse = env->caught = 0;
    env->episode_return = 0.0f;
    env->remaining = PM_PICKUPS;
    for (int y = 0; y < PM_H; y++)
        memcpy(env->maze[y], PM_MAZE[y], PM_W);
    for (int g = 0; g < PM_GHOSTS; g++) {
        PmGhost *gh = &env->ghosts[g];
        gh->pos = gh->spawn;
        gh->direction = PM_UP;
        gh->start_timeout = pm_timeout(env);
        gh->frightened = gh->returning = gh->half_move = 0;
    }
    env->player = env->randomize_start ? env->dots[rng_int(&env->rng, PM_DOTS)] : (PmPos){13, 23};
    env->direction = PM_RIGHT;
    for (int i = 0; i < PM_PICKUPS; i++)
        env->observations[PM_OBS - PM_PICKUPS + i] = 1.0f;
    pm_observe(env);
}

static float pm_player(Pacman *env, int action) {
    PmPos n = pm_next(env->player, action);
    if (env->maze[n.y][n.x] == '#')
        n = pm_next(env->player, env->direction);
    else
        env->direction = action;
    const char tile = env->maze[n.y][n.x];
    if (tile == '#') return 0.0f;
    env->player = n;
    if (tile != '.' && tile != 'x') return 0.0f;
    if (tile == 'x') {
        env->frightened_left = env->frightened_time;
        env->reverse = 1;
        for (int g = 0; g < PM_GHOSTS; g++)
            env->ghosts[g].frightened = !env->ghosts[g].returning;
    }
    env->score++;
    env->remaining--;
    env->maze[n.y][n.x] = ' ';
    env->observations[PM_OBS - PM_PICKUPS + env->pickup[n.y][n.x]] = 0.0f;
    return 1.0f;
}

static int pm_ghost_direction(Pacman *env, const PmGhost *gh) {
    const int back = gh->direction ^ 1;
    if (env->reverse && !gh->returning) return back;
    int options[4], n = 0;
    for (int d = 0; d < 4; d++)
        if (d != back && pm_open(env, gh->pos, d)) options[n++] = d;
    if (n == 0) return back;
    if (n == 1) return options[0];
    if (gh->frightened) return options[rng_int(&env->rng, n)];
    int best = options[0], best_dist = pm_dist2(pm_step_pos(gh->pos, best, 1), gh->target);
    for (int i = 1; i < n; i++) {
        const int dist = pm_dist2(pm_step_pos(gh->pos, options[i], 1), gh->target);
        if (dist < best_dist) best = options[i], best_dist = dist;
    }
    return best;
}

static float pm_ghost(Pacman *env, PmGhost *gh) {
    gh->start_timeout--;
    if (gh->frightened && gh->half_move) {
        gh->half_move = 0;
    } else {
        gh->half_move = 1;
        if (gh->returning) gh->target = gh->spawn;
        gh->direction = pm_ghost_direction(env, gh);
        if (gh->start_timeout < 0 && pm_open(env, gh->pos, gh->direction))
            gh->pos = pm_next(gh->pos, gh->direction);
    }
    if (gh->returning) {
        if (gh->pos.x == gh->spawn.x && gh->pos.y == gh->spawn.y) gh->returning = 0;
        return 0.0f;
    }
    const int dx = gh->pos.x - env->player.x, dy = gh->pos.y - env->player.y;
    if (!((dy == 0 && dx >= -1 && dx <= 1) || (dx == 0 && dy >= -1 && dy <= 1))) return 0.0f;
    if (!gh->frightened) {
        env->caught = 1;
        return 0.0f;
    }
    gh->frightened = gh->half_move = 0;
    gh->returning = 1;
    return 1.0f;
}

static void pm_targets(Pacman *env) {
    PmGhost *g = env->ghosts;
    if (env->scatter) {
        for (int i = 0; i < PM_GHOSTS; i++)
            g[i].target = (PmPos){PM_CORNER[i][0], PM_CORNER[i][1]};
        return;
    }
    const PmPos p = env->player;
    g[PM_PINKY].target = pm_step_pos(p, env->direction, 4);
    g[PM_BLINKY].target = p;
    const PmPos lead = pm_step_pos(p, env->direction, 2);
    g[PM_INKY].target = (PmPos){2 * lead.x - g[PM_BLINKY].pos.x, 2 * lead.y - g[PM_BLINKY].pos.y};
    g[PM_CLYDE].target = pm_dist2(p, g[PM_CLYDE].pos) > 8 * 8
                             ? p
                             : (PmPos){PM_CORNER[PM_CLYDE][0], PM_CORNER[PM_CLYDE][1]};
}

static void c_step(Pacman *env) {
    float reward = 0.0f;
    env->steps++;
    env->reverse = env->caught = 0;
    if (env->frightened_left > 0) {
        env->frightened_left--;
    } else {
        for (int g = 0; g < PM_GHOSTS; g++)
            env->ghosts[g].frightened = env->ghosts[g].half_move = 0;
    }
    if (env->mode_changes <= env->max_mode_changes && --env->mode_left <= 0) {
        env->scatter = !env->scatter;
        env->reverse = 1;
        env->mode_changes++;
        env->mode_left = env->scatter ? env->scatter_length : env->chase_length;
    }
    pm_targets(env);
    reward += pm_player(env, env->actions[0]);
    for (int g = 0; g < PM_GHOSTS; g++)
        reward += pm_ghost(env, &env->ghosts[g]);
    env->rewards[0] = reward;
    env->episode_return += reward;
    const int terminal = env->caught || env->remaining <= 0;
    const int truncated = !terminal && env->steps >= PM_MAX_STEPS;
    env->terminals[0] = (uint8_t)terminal;
    env->truncations[0] = (uint8_t)truncated;
    if (terminal || truncated) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->steps;
        env->log.score += (float)env->score;
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    pm_observe(env);
}

static void c_frame_size(const Pacman *env, int *width, int *height) {
    (void)env;
    *width = PM_W * PM_TILE;
    *height = PM_H * PM_TILE + PM_TOP;
}

static void c_render(const Pacman *env, Canvas *canvas) {
    static const Color GHOST_COLORS[PM_GHOSTS] = {
        {255, 184, 255}, {255, 0, 0}, {0, 255, 255}, {255, 184, 82}};
    const int t = PM_TILE;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int y = 0; y < PM_H; y++)
        for (int x = 0; x < PM_W; x++) {
            const char tile = env->maze[y][x];
            const int px = x * t, py = y * t + PM_TOP;
            if (tile == '#') raster_rect(canvas, px + 1, py + 1, t - 2, t - 2, COLOR_BLUE);
            if (tile == '.') raster_rect(canvas, px + t / 2 - 2, py + t / 2 - 2, 4, 4, COLOR_WHITE);
            if (tile == 'x') raster_circle(canvas, px + t / 2, py + t / 2, t / 3, COLOR_RED);
        }
    raster_circle(canvas, env->player.x * t + t / 2, env->player.y * t + t / 2 + PM_TOP, t / 2 - 1,
                  COLOR_YELLOW);
    for (int g = 0; g < PM_GHOSTS; g++) {
        const PmGhost *gh = &env->ghosts[g];
        const int cx = gh->pos.x * t + t / 2, cy = gh->pos.y * t + t / 2 + PM_TOP;
        if (gh->returning) {
            raster_rect(canvas, cx - 5, cy - 3, 4, 4, COLOR_WHITE);
            raster_rect(canvas, cx + 1, cy - 3, 4, 4, COLOR_WHITE);
            continue;
        }
        raster_circle(canvas, cx, cy, t / 2 - 1,
                      gh->frightened ? (Color){33, 33, 255} : GHOST_COLORS[g]);
    }
    raster_number(canvas, 8, 8, env->score, 3, COLOR_WHITE);
    raster_text(canvas, PM_W * t - 100, 8, env->scatter ? "SCATTER" : "CHASE", 2, COLOR_WHITE);
}

static void c_close(Pacman *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {4};
static const PufferKey KEYS[] = {{"down", 0, PM_DOWN},
                                 {"up", 0, PM_UP},
                                 {"right", 0, PM_RIGHT},
                                 {"left", 0, PM_LEFT},
                                 {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Pac-Man in the arcade maze: +1 per pellet (244), +1 per frightened ghost eaten; four "
           "ghosts with the arcade's scatter / chase targeting. Caught or maze cleared: "
           "terminal; 10,000 steps: truncation. Observation: (291,) float32 in [0, 1]: you, the "
           "four ghosts and a flag per pellet. Action: Discrete(4): down, up, right, left.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = PM_OBS,
    .obs_low = 0,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Pacman),
    .check = pm_check,
};

PUFFER_ENV_END(pacman, Pacman)

#endif
