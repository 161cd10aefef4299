/* Target: eight agents steer through a square arena to collect goals. A small multi-agent
 * navigation task in the spirit of PufferLib's "target" env; not a reproduction of it.
 *
 * Each agent turns (9 choices) and picks a speed (5 choices) every tick. Touching a goal pays
 * TARGET_GOAL_REWARD and the goal respawns at a random spot. Episodes last `max_steps` (config)
 * and end in truncation for all agents at once; nothing terminates them early.
 *
 * Observation (28 float32 per agent, all in [-1, 1]):
 *   [0:2]   own position, scaled to [-1, 1]
 *   [2:4]   cos and sin of own heading
 *   [4]     own speed / TARGET_MAX_SPEED
 *   [5:13]  (dx, dy) to each goal / TARGET_ARENA_SIZE
 *   [13:27] (dx, dy) to each other agent / TARGET_ARENA_SIZE, in agent order skipping self
 *   [27]    tick / max_steps
 * Actions: MultiDiscrete([9, 5]): turn by (a0 - 4) * TARGET_TURN_STEP, move a1 * speed step.
 */
#ifndef PUFFER_TARGET_H
#define PUFFER_TARGET_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(target)

enum { TARGET_AGENTS = 8, TARGET_GOALS = 4, TARGET_OBS = 28 };
enum { TARGET_TURNS = 9, TARGET_SPEEDS = 5 }; /* action choices */
enum { TARGET_DEFAULT_MAX_STEPS = 256 };      /* steps per episode, then truncation */
enum { TARGET_PIXELS_PER_UNIT = 8 };          /* render scale */

static const float TARGET_ARENA_SIZE = 64.0f;   /* arena side, arena units */
static const float TARGET_TURN_STEP = 0.19635f; /* radians per tick per turn level (pi / 16) */
static const float TARGET_SPEED_STEP = 0.5f;    /* arena units per tick per speed level */
static const float TARGET_MAX_SPEED = 2.0f;     /* (TARGET_SPEEDS - 1) * TARGET_SPEED_STEP */
static const float TARGET_GOAL_RADIUS = 2.5f;   /* arena units; touching distance */
static const float TARGET_GOAL_REWARD = 1.0f;   /* reward per goal collected */
static const float TARGET_TWO_PI = 6.28318531f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* goals collected per agent per episode */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float x, y, heading, speed;
    float episode_return;
    float goals;
} TargetAgent;

typedef struct {
    float *observations;  /* (TARGET_AGENTS, TARGET_OBS), caller-owned */
    int32_t *actions;     /* (TARGET_AGENTS, 2) */
    float *rewards;       /* (TARGET_AGENTS,) */
    uint8_t *terminals;   /* (TARGET_AGENTS,) */
    uint8_t *truncations; /* (TARGET_AGENTS,) */
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config: steps per episode */
    int tick;
    TargetAgent agents[TARGET_AGENTS];
    float goals[TARGET_GOALS][2];
} Target;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Target, max_steps), PUFFER_INT, TARGET_DEFAULT_MAX_STEPS, 1, 1e9,
     "steps per episode; every episode ends in truncation after this many"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static float target_clamp(float v, float lo, float hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

static void target_place_goal(Target *env, int g) {
    env->goals[g][0] = rng_uniform(&env->rng, 0.0f, TARGET_ARENA_SIZE);
    env->goals[g][1] = rng_uniform(&env->rng, 0.0f, TARGET_ARENA_SIZE);
}

static void target_observe(Target *env) {
    const float scale = 1.0f / TARGET_ARENA_SIZE;
    for (int i = 0; i < TARGET_AGENTS; i++) {
        const TargetAgent *a = &env->agents[i];
        float *obs = env->observations + i * TARGET_OBS;
        obs[0] = 2.0f * a->x * scale - 1.0f;
        obs[1] = 2.0f * a->y * scale - 1.0f;
        obs[2] = cosf(a->heading);
        obs[3] = sinf(a->heading);
        obs[4] = a->speed / TARGET_MAX_SPEED;
        int k = 5;
        for (int g = 0; g < TARGET_GOALS; g++) {
            obs[k++] = (env->goals[g][0] - a->x) * scale;
            obs[k++] = (env->goals[g][1] - a->y) * scale;
        }
        for (int j = 0; j < TARGET_AGENTS; j++) {
            if (j == i) continue;
            obs[k++] = (env->agents[j].x - a->x) * scale;
            obs[k++] = (env->agents[j].y - a->y) * scale;
        }
        obs[k] = (float)env->tick / (float)env->max_steps;
    }
}

/* Starts a new episode without touching rewards or flags, so the step that ends an episode
 * keeps its final reward and truncation while the rows already show the next first obs. */
static void target_new_episode(Target *env) {
    env->tick = 0;
    for (int i = 0; i < TARGET_AGENTS; i++) {
        TargetAgent *a = &env->agents[i];
        a->x = rng_uniform(&env->rng, 0.0f, TARGET_ARENA_SIZE);
        a->y = rng_uniform(&env->rng, 0.0f, TARGET_ARENA_SIZE);
        a->heading = rng_uniform(&env->rng, -0.5f * TARGET_TWO_PI, 0.5f * TARGET_TWO_PI);
        a->speed = 0.0f;
        a->episode_return = 0.0f;
        a->goals = 0.0f;
    }
    for (int g = 0; g < TARGET_GOALS; g++)
        target_place_goal(env, g);
    target_observe(env);
}

static void c_init(Target *env) {
    env->num_agents = TARGET_AGENTS;
}

static void c_reset(Target *env) {
    for (int i = 0; i < TARGET_AGENTS; i++) {
        env->rewards[i] = 0.0f;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
    }
    target_new_episode(env);
}

static void c_step(Target *env) {
    env->tick++;
    for (int i = 0; i < TARGET_AGENTS; i++) {
        TargetAgent *a = &env->agents[i];
        const int32_t *act = env->actions + 2 * i;
        a->heading += (float)(act[0] - TARGET_TURNS / 2) * TARGET_TURN_STEP;
        /* Wrap to [-pi, pi) so float precision does not drift over long episodes. */
        a->heading -= TARGET_TWO_PI * floorf(a->heading / TARGET_TWO_PI + 0.5f);
        a->speed = (float)act[1] * TARGET_SPEED_STEP;
        a->x = target_clamp(a->x + a->speed * cosf(a->heading), 0.0f, TARGET_ARENA_SIZE);
        a->y = target_clamp(a->y + a->speed * sinf(a->heading), 0.0f, TARGET_ARENA_SIZE);
        env->rewards[i] = 0.0f;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
        for (int g = 0; g < TARGET_GOALS; g++) {
            float dx = env->goals[g][0] - a->x, dy = env->goals[g][1] - a->y;
            if (dx * dx + dy * dy < TARGET_GOAL_RADIUS * TARGET_GOAL_RADIUS) {
                env->rewards[i] += TARGET_GOAL_REWARD;
                a->goals += 1.0f;
                target_place_goal(env, g);
            }
        }
        a->episode_return += env->rewards[i];
    }
    if (env->tick < env->max_steps) {
        target_observe(env);
        return;
    }
    for (int i = 0; i < TARGET_AGENTS; i++) {
        env->truncations[i] = 1;
        env->log.episode_return += env->agents[i].episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += env->agents[i].goals;
        env->log.n += 1.0f;
    }
    target_new_episode(env);
}

static void c_frame_size(const Target *env, int *width, int *height) {
    (void)env;
    *width = *height = (int)TARGET_ARENA_SIZE * TARGET_PIXELS_PER_UNIT;
}

static void c_render(const Target *env, Canvas *canvas) {
    static const Color AGENT_COLORS[TARGET_AGENTS] = {
        {187, 0, 0},   {0, 120, 220}, {230, 200, 0},   {187, 0, 187},
        {230, 120, 0}, {0, 187, 187}, {255, 255, 255}, {128, 128, 128}};
    const float px = (float)TARGET_PIXELS_PER_UNIT;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int g = 0; g < TARGET_GOALS; g++) {
        raster_circle(canvas, (int)(env->goals[g][0] * px), (int)(env->goals[g][1] * px),
                      (int)(TARGET_GOAL_RADIUS * px), COLOR_GREEN);
    }
    for (int i = 0; i < TARGET_AGENTS; i++) {
        const TargetAgent *a = &env->agents[i];
        int x = (int)(a->x * px), y = (int)(a->y * px);
        raster_circle(canvas, x, y, TARGET_PIXELS_PER_UNIT, AGENT_COLORS[i]);
        /* A dark dot one radius ahead shows the heading. */
        raster_circle(canvas, x + (int)(cosf(a->heading) * px), y + (int)(sinf(a->heading) * px),
                      TARGET_PIXELS_PER_UNIT / 4, COLOR_BLACK);
    }
    raster_number(canvas, 4, 4, env->tick, 2, COLOR_WHITE);
}

static void c_close(Target *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {9, 5};
static const PufferKey KEYS[] = {
    {"idle", 0, 4}, {"left", 0, 0}, {"right", 0, 8}, {"up", 1, 4}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Eight agents per instance turn and move to collect four goals; +1 per goal touched. "
           "Observation: (28,) float32 in [-1, 1]: own position (2), heading cos/sin (2), speed "
           "(1), offsets to the 4 goals (8) and to the 7 other agents (14), episode progress "
           "(1). Action: MultiDiscrete([9, 5]): turn rate, speed.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = TARGET_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Target),
};

PUFFER_ENV_END(target, Target)

#endif
