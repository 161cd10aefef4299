/* Trash pickup: `num_agents` agents on a square grid carry trash to bins (PufferLib 3.0's
 * trash_pickup task, rules restated in our own code).
 *
 * Rules (defaults in brackets):
 * | grid                     | grid_size x grid_size cells [10]                          |
 * | entities                 | num_agents [3], num_bins [2], num_trash [15], one a cell   |
 * | step into trash, empty-handed | pick it up (it leaves the grid): +0.5               |
 * | step into a bin, carrying | drop the trash in (agent stays): +0.5                     |
 * | step into a bin, empty-handed | push it one cell if that cell is free and inside    |
 * | step into an agent, a wall, or trash while carrying | nothing                       |
 * | episode end              | every trash binned: terminal for all agents;              |
 * |                          | max_steps [300]: truncation for all agents                |
 * Agents move one after another in index order. Observation per agent: (605,) int8, five
 * 11x11 planes centred on the agent (sight range 5, cells off the grid read 0): plane k marks
 * cells holding an entity of type k (1 trash, 2 bin, 3 agent; plane 0 stays empty as in
 * PufferLib), plane 4 marks agents that carry trash. Action: Discrete(4) up, down, left, right.
 * Log: score = trash picked up in the episode, episode_return = all agents' rewards summed.
 *
 * Deliberate differences from PufferLib 3.0: reaching max_steps sets truncations (they set
 * terminals), and the logged count of trash is exact (theirs skips part of the list).
 */
#ifndef PUFFER_TRASH_PICKUP_H
#define PUFFER_TRASH_PICKUP_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(trash_pickup)

enum { TP_SIGHT = 5, TP_VIEW = 2 * TP_SIGHT + 1, TP_PLANE = TP_VIEW * TP_VIEW };
enum { TP_OBS = 5 * TP_PLANE };
enum { TP_MAX_GRID = 32, TP_MAX_ENTITIES = 512 };
enum { TP_EMPTY = 0, TP_TRASH = 1, TP_BIN = 2, TP_AGENT = 3 };
enum { TP_UP, TP_DOWN, TP_LEFT, TP_RIGHT };
enum { TP_CELL_PIXELS = 32 };
static const float TP_REWARD = 0.5f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* trash picked up */
    float perf;  /* score / num_trash */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf", "n"};

typedef struct {
    int16_t x, y; /* cell; -1 once trash is picked up */
    uint8_t type, carrying;
} TpEntity;

typedef struct {
    int8_t *observations; /* (num_agents, 605) */
    int32_t *actions;     /* (num_agents,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int grid_size, agents, num_bins, num_trash, max_steps; /* config */
    int tick, collected, remaining;
    float episode_return;
    int16_t cell[TP_MAX_GRID * TP_MAX_GRID]; /* entity index or -1 */
    TpEntity entities[TP_MAX_ENTITIES];      /* agents, then bins, then trash */
} TrashPickup;

static const PufferField CONFIG[] = {
    {"grid_size", offsetof(TrashPickup, grid_size), PUFFER_INT, 10, 2, TP_MAX_GRID,
     "cells per side of the square grid"},
    {"num_agents", offsetof(TrashPickup, agents), PUFFER_INT, 3, 1, 128, "agents per env"},
    {"num_bins", offsetof(TrashPickup, num_bins), PUFFER_INT, 2, 1, 128, "trash bins"},
    {"num_trash", offsetof(TrashPickup, num_trash), PUFFER_INT, 15, 1, 256, "pieces of trash"},
    {"max_steps", offsetof(TrashPickup, max_steps), PUFFER_INT, 300, 10, 1e9,
     "steps before the episode is truncated"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static const char *tp_check(const void *self) {
    const TrashPickup *env = (const TrashPickup *)self;
    return env->agents + env->num_bins + env->num_trash < env->grid_size * env->grid_size
               ? NULL
               : "num_agents + num_bins + num_trash must be below grid_size**2; enlarge the grid";
}

static void c_init(TrashPickup *env) {
    env->num_agents = env->agents;
}

static int tp_inside(const TrashPickup *env, int x, int y) {
    return x >= 0 && y >= 0 && x < env->grid_size && y < env->grid_size;
}

/* Each agent's view, written entity by entity (fewer than the view's 121 cells). */
static void tp_observe(TrashPickup *env) {
    const int entities = env->agents + env->num_bins + env->num_trash;
    memset(env->observations, 0, (size_t)env->agents * TP_OBS);
    for (int a = 0; a < env->agents; a++) {
        int8_t *obs = env->observations + (size_t)a * TP_OBS;
        const TpEntity *me = &env->entities[a];
        for (int i = 0; i < entities; i++) {
            const TpEntity *e = &env->entities[i];
            const int dx = e->x - me->x, dy = e->y - me->y;
            if (e->x < 0 || dx < -TP_SIGHT || dx > TP_SIGHT || dy < -TP_SIGHT || dy > TP_SIGHT)
                continue;
            const int at = (dy + TP_SIGHT) * TP_VIEW + dx + TP_SIGHT;
            obs[e->type * TP_PLANE + at] = 1;
            obs[4 * TP_PLANE + at] = (int8_t)e->carrying;
        }
    }
}

static void tp_place(TrashPickup *env, int first, int count, int type) {
    for (int i = first; i < first + count; i++) {
        int x, y;
        do {
            x = rng_int(&env->rng, env->grid_size);
            y = rng_int(&env->rng, env->grid_size);
        } while (env->cell[y * env->grid_size + x] >= 0);
        env->entities[i] = (TpEntity){(int16_t)x, (int16_t)y, (uint8_t)type, 0};
        env->cell[y * env->grid_size + x] = (int16_t)i;
    }
}

static void c_reset(TrashPickup *env) {
    env->tick = env->collected = 0;
    env->remaining = env->num_trash;
    env->episode_return = 0;
    for (int i = 0; i < env->grid_size * env->grid_size; i++)
        env->cell[i] = -1;
    tp_place(env, 0, env->agents, TP_AGENT);
    tp_place(env, env->agents, env->num_bins, TP_BIN);
    tp_place(env, env->agents + env->num_bins, env->num_trash, TP_TRASH);
    tp_observe(env);
}

/* Moves entity `id` to (x, y), which must be free. */
static void tp_shift(TrashPickup *env, int id, int x, int y) {
    TpEntity *e = &env->entities[id];
    env->cell[e->y * env->grid_size + e->x] = -1;
    env->cell[y * env->grid_size + x] = (int16_t)id;
    e->x = (int16_t)x, e->y = (int16_t)y;
}

/* One agent's move; returns its reward. */
static float tp_move(TrashPickup *env, int a, int action) {
    static const int DX[4] = {0, 0, -1, 1}, DY[4] = {-1, 1, 0, 0};
    if (action < 0 || action > 3) return 0.0f;
    TpEntity *agent = &env->entities[a];
    const int x = agent->x + DX[action], y = agent->y + DY[action];
    if (!tp_inside(env, x, y)) return 0.0f;
    const int id = env->cell[y * env->grid_size + x];
    if (id < 0) {
        tp_shift(env, a, x, y);
        return 0.0f;
    }
    TpEntity *other = &env->entities[id];
    if (other->type == TP_TRASH && !agent->carrying) {
        env->cell[y * env->grid_size + x] = -1;
        other->x = other->y = -1;
        tp_shift(env, a, x, y);
        agent->carrying = 1;
        env->collected++;
        return TP_REWARD;
    }
    if (other->type == TP_BIN && agent->carrying) {
        agent->carrying = 0;
        env->remaining--;
        return TP_REWARD;
    }
    if (other->type == TP_BIN) {
        const int bx = x + DX[action], by = y + DY[action];
        if (tp_inside(env, bx, by) && env->cell[by * env->grid_size + bx] < 0) {
            tp_shift(env, id, bx, by);
            tp_shift(env, a, x, y);
        }
    }
    return 0.0f;
}

static void c_step(TrashPickup *env) {
    for (int a = 0; a < env->agents; a++) {
        const float reward = tp_move(env, a, env->actions[a]);
        env->rewards[a] = reward;
        env->episode_return += reward;
    }
    env->tick++;
    const int done = env->remaining == 0;
    const int truncated = !done && env->tick >= env->max_steps;
    memset(env->terminals, done, (size_t)env->agents);
    memset(env->truncations, truncated, (size_t)env->agents);
    if (done || truncated) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->collected;
        env->log.perf += (float)env->collected / (float)env->num_trash;
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    tp_observe(env);
}

static void c_frame_size(const TrashPickup *env, int *width, int *height) {
    *width = *height = env->grid_size * TP_CELL_PIXELS;
}

static void c_render(const TrashPickup *env, Canvas *canvas) {
    const int px = TP_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i <= env->grid_size; i++) {
        raster_rect(canvas, i * px, 0, 1, env->grid_size * px, COLOR_GRID);
        raster_rect(canvas, 0, i * px, env->grid_size * px, 1, COLOR_GRID);
    }
    for (int i = 0; i < env->agents + env->num_bins + env->num_trash; i++) {
        const TpEntity *e = &env->entities[i];
        if (e->x < 0) continue;
        const int x = e->x * px, y = e->y * px;
        if (e->type == TP_TRASH)
            raster_circle(canvas, x + px / 2, y + px / 2, px / 4, COLOR_ORANGE);
        if (e->type == TP_BIN) raster_rect(canvas, x + 4, y + 4, px - 8, px - 8, COLOR_BLUE);
        if (e->type == TP_AGENT) {
            raster_circle(canvas, x + px / 2, y + px / 2, px / 2 - 3, COLOR_CYAN);
            if (e->carrying)
                raster_rect(canvas, x + px / 2 - 4, y + px / 2 - 4, 8, 8, COLOR_ORANGE);
        }
    }
}

static void c_close(TrashPickup *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {4};
static const PufferSpec SPEC = {
    .doc = "Agents on a grid carry trash to bins: +0.5 for picking up a piece, +0.5 for "
           "dropping it in a bin; an empty-handed agent pushes bins. The episode ends "
           "(terminal) when all trash is binned, or is truncated at max_steps. Observation: "
           "(605,) int8, five 11x11 planes around the agent (entity type 1-3 one-hot, and "
           "carrying). Action: Discrete(4): up, down, left, right.",
    .obs_dtype = PUFFER_INT8,
    .obs_size = TP_OBS,
    .obs_low = 0,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(TrashPickup),
    .check = tp_check,
};

PUFFER_ENV_END(trash_pickup, TrashPickup)

#endif
