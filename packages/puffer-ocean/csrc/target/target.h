/* Target: PufferLib 3.0's target task. Eight agents per instance steer through a 1080x720
 * arena to eat four goals; a goal within 32 px of an agent pays it 1 and reappears elsewhere.
 * Nothing ends an episode: an agent that has gone 512 steps without a goal is moved to a random
 * spot, and the log counts each goal as one "episode" (length: the steps it took), as theirs.
 *
 * Observation (28 float32 per agent): (dx / width, dy / height) to each of the 4 goals, then to
 * each of the 8 agents, itself included (0, 0); heading / 2 pi; its reward of this step; x /
 * width, y / height. Actions: MultiDiscrete([9, 5]): heading += (a0 - 4) / 12 rad, clamped to
 * [0, 2 pi]; speed += a1 - 2, clamped to [-20, 20] px per step.
 */
#ifndef PUFFER_TARGET_H
#define PUFFER_TARGET_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(target)

enum { TARGET_AGENTS = 8, TARGET_GOALS = 4, TARGET_OBS = 2 * (TARGET_GOALS + TARGET_AGENTS) + 4 };
enum { TARGET_TURNS = 9, TARGET_SPEEDS = 5 }; /* action choices */
enum { TARGET_PATIENCE = 512 };               /* steps without a goal before a random move */
#define TARGET_REACH 32.0f                    /* px: a goal this close is eaten */
#define TARGET_MAX_SPEED 20.0f                /* px per step */
#define TARGET_TWO_PI 6.28318531f

typedef struct {
    float perf;
    float score;          /* goals */
    float episode_return; /* goals */
    float episode_length; /* steps per goal */
    float n;              /* goals */
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float x, y, heading, speed;
    int since_goal; /* steps */
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
    int width, height; /* config: arena, px */
    TargetAgent agents[TARGET_AGENTS];
    float goals[TARGET_GOALS][2];
} Target;

static const PufferField CONFIG[] = {
    {"width", offsetof(Target, width), PUFFER_INT, 1080, 64, 1e5, "arena width, px"},
    {"height", offsetof(Target, height), PUFFER_INT, 720, 64, 1e5, "arena height, px"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static float target_clamp(float v, float lo, float hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* A random whole-pixel spot, as theirs. */
static void target_spot(Target *env, float *x, float *y) {
    *x = (float)rng_int(&env->rng, env->width);
    *y = (float)rng_int(&env->rng, env->height);
}

static void target_observe(Target *env) {
    const float sx = 1.0f / (float)env->width, sy = 1.0f / (float)env->height;
    for (int i = 0; i < TARGET_AGENTS; i++) {
        const TargetAgent *a = &env->agents[i];
        float *obs = env->observations + i * TARGET_OBS;
        for (int g = 0; g < TARGET_GOALS; g++) {
            *obs++ = (env->goals[g][0] - a->x) * sx;
            *obs++ = (env->goals[g][1] - a->y) * sy;
        }
        for (int j = 0; j < TARGET_AGENTS; j++) {
            *obs++ = (env->agents[j].x - a->x) * sx;
            *obs++ = (env->agents[j].y - a->y) * sy;
        }
        *obs++ = a->heading * (1.0f / TARGET_TWO_PI);
        *obs++ = env->rewards[i];
        *obs++ = a->x * sx;
        *obs = a->y * sy;
    }
}

static void c_init(Target *env) {
    env->num_agents = TARGET_AGENTS;
}

static void c_reset(Target *env) {
    for (int i = 0; i < TARGET_AGENTS; i++) {
        TargetAgent *a = &env->agents[i];
        target_spot(env, &a->x, &a->y);
        a->heading = a->speed = 0.0f;
        a->since_goal = 0;
        env->rewards[i] = 0.0f;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
    }
    for (int g = 0; g < TARGET_GOALS; g++)
        target_spot(env, &env->goals[g][0], &env->goals[g][1]);
    target_observe(env);
}

/* Every agent moves, then (in agent order) eats the goals within reach. */
static void c_step(Target *env) {
    for (int i = 0; i < TARGET_AGENTS; i++) {
        TargetAgent *a = &env->agents[i];
        const int32_t *act = env->actions + 2 * i;
        env->rewards[i] = 0.0f;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
        a->since_goal++;
        a->heading = target_clamp(a->heading + (float)(act[0] - TARGET_TURNS / 2) / 12.0f, 0.0f,
                                  TARGET_TWO_PI);
        a->speed = target_clamp(a->speed + (float)(act[1] - TARGET_SPEEDS / 2), -TARGET_MAX_SPEED,
                                TARGET_MAX_SPEED);
        a->x = target_clamp(a->x + a->speed * cosf(a->heading), 0.0f, (float)env->width);
        a->y = target_clamp(a->y + a->speed * sinf(a->heading), 0.0f, (float)env->height);
        if (a->since_goal % TARGET_PATIENCE == 0) target_spot(env, &a->x, &a->y);
    }
    for (int i = 0; i < TARGET_AGENTS; i++) {
        TargetAgent *a = &env->agents[i];
        for (int g = 0; g < TARGET_GOALS; g++) {
            float dx = env->goals[g][0] - a->x, dy = env->goals[g][1] - a->y;
            if (dx * dx + dy * dy > TARGET_REACH * TARGET_REACH) continue;
            target_spot(env, &env->goals[g][0], &env->goals[g][1]);
            env->rewards[i] = 1.0f;
            env->log.perf += 1.0f;
            env->log.score += 1.0f;
            env->log.episode_return += 1.0f;
            env->log.episode_length += (float)a->since_goal;
            env->log.n += 1.0f;
            a->since_goal = 0;
        }
    }
    target_observe(env);
}

static void c_frame_size(const Target *env, int *width, int *height) {
    *width = env->width;
    *height = env->height;
}

static void c_render(const Target *env, Canvas *canvas) {
    static const Color AGENT_COLORS[TARGET_AGENTS] = {
        {187, 0, 0},   {0, 120, 220}, {230, 200, 0},   {187, 0, 187},
        {230, 120, 0}, {0, 187, 187}, {255, 255, 255}, {128, 128, 128}};
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int g = 0; g < TARGET_GOALS; g++)
        raster_circle(canvas, (int)env->goals[g][0], (int)env->goals[g][1], (int)TARGET_REACH / 2,
                      COLOR_GREEN);
    for (int i = 0; i < TARGET_AGENTS; i++) {
        const TargetAgent *a = &env->agents[i];
        int x = (int)a->x, y = (int)a->y;
        raster_circle(canvas, x, y, 12, AGENT_COLORS[i]);
        /* A dark dot one radius ahead shows the heading. */
        raster_circle(canvas, x + (int)(cosf(a->heading) * 12.0f),
                      y + (int)(sinf(a->heading) * 12.0f), 4, COLOR_BLACK);
    }
}

static void c_close(Target *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {9, 5};
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's target: eight agents per instance steer through a 1080x720 arena "
           "to eat four goals. Observation: (28,) float32: (dx / 1080, dy / 720) to the 4 goals "
           "and to the 8 agents (itself included), heading / 2 pi, its last reward, x / 1080, "
           "y / 720. Action: MultiDiscrete([9, 5]): turn, accelerate.\n\n"
           "| rule | value |\n|---|---|\n"
           "| start | agents and goals on random whole pixels; heading 0, speed 0 |\n"
           "| turn | heading += (a0 - 4) / 12 rad, clamped to [0, 2 pi] |\n"
           "| speed | speed += a1 - 2, clamped to [-20, 20] px per step; x, y clamped to the "
           "arena |\n"
           "| goal | within 32 px after all agents moved: +1 (once per step), the goal moves to "
           "a random pixel |\n"
           "| patience | every 512 steps without a goal the agent moves to a random pixel |\n"
           "| episode | none ends; the log counts each goal as one (`episode_length`: steps it "
           "took) |\n\n"
           "`width` and `height` are parameters with their defaults. Differences: their "
           "`num_agents` and `num_goals` are fixed at 8 and 4 (the observation width is "
           "static here).",
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
