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
/* Headings move in whole 1/12 rad steps from 0 up, or from 2 pi down once clamped there, so
 * each is a count of steps from one end: cos and sin come from this table, not libm (40% of a
 * step). 75 steps is the most below 2 pi = 75.4 steps. */
enum { TARGET_TURN_STEPS = 75 };
static const float TARGET_COS_SIN[TARGET_TURN_STEPS + 1][2] = {{1.0f, 0.0f},
                                                               {0.996529787f, 0.0832369162f},
                                                               {0.986143232f, 0.165896133f},
                                                               {0.968912422f, 0.247403959f},
                                                               {0.944956946f, 0.327194697f},
                                                               {0.914443067f, 0.404714564f},
                                                               {0.877582562f, 0.479425539f},
                                                               {0.83463126f, 0.550809096f},
                                                               {0.785887261f, 0.618369803f},
                                                               {0.731688869f, 0.68163876f},
                                                               {0.672412244f, 0.740176853f},
                                                               {0.608468791f, 0.793577803f},
                                                               {0.540302306f, 0.841470985f},
                                                               {0.468385892f, 0.883523999f},
                                                               {0.39321868f, 0.919444979f},
                                                               {0.315322362f, 0.948984619f},
                                                               {0.235237573f, 0.971937901f},
                                                               {0.153520135f, 0.98814552f},
                                                               {0.0707372017f, 0.997494987f},
                                                               {-0.0125366781f, 0.999921413f},
                                                               {-0.095723548f, 0.995407958f},
                                                               {-0.178246056f, 0.983985947f},
                                                               {-0.25953146f, 0.965734654f},
                                                               {-0.339015605f, 0.94078075f},
                                                               {-0.416146837f, 0.909297427f},
                                                               {-0.490389832f, 0.871503191f},
                                                               {-0.561229313f, 0.827660352f},
                                                               {-0.628173623f, 0.778073197f},
                                                               {-0.69075814f, 0.723085882f},
                                                               {-0.748548501f, 0.663080042f},
                                                               {-0.801143616f, 0.598472144f},
                                                               {-0.848178452f, 0.529710594f},
                                                               {-0.889326568f, 0.457272627f},
                                                               {-0.924302379f, 0.381660992f},
                                                               {-0.952863136f, 0.303400467f},
                                                               {-0.974810617f, 0.223034214f},
                                                               {-0.989992497f, 0.141120008f},
                                                               {-0.998303406f, 0.0582263691f},
                                                               {-0.999685663f, -0.0250713858f},
                                                               {-0.994129676f, -0.108195135f},
                                                               {-0.981674005f, -0.190567963f},
                                                               {-0.962405097f, -0.271618168f},
                                                               {-0.936456687f, -0.350783228f},
                                                               {-0.904008869f, -0.427513702f},
                                                               {-0.865286843f, -0.501277049f},
                                                               {-0.820559357f, -0.571561319f},
                                                               {-0.77013684f, -0.63787871f},
                                                               {-0.714369244f, -0.69976895f},
                                                               {-0.653643621f, -0.756802495f},
                                                               {-0.588381432f, -0.808583509f},
                                                               {-0.519035625f, -0.854752607f},
                                                               {-0.44608749f, -0.894989358f},
                                                               {-0.370043317f, -0.929014501f},
                                                               {-0.291430886f, -0.956591887f},
                                                               {-0.210795799f, -0.977530118f},
                                                               {-0.128697701f, -0.991683872f},
                                                               {-0.0457063847f, -0.998954917f},
                                                               {0.0376021529f, -0.999292789f},
                                                               {0.120649716f, -0.992695143f},
                                                               {0.202859918f, -0.979207768f},
                                                               {0.283662185f, -0.958924275f},
                                                               {0.362495717f, -0.931985437f},
                                                               {0.438813373f, -0.898578223f},
                                                               {0.512085477f, -0.858934493f},
                                                               {0.58180349f, -0.813329392f},
                                                               {0.647483538f, -0.762079437f},
                                                               {0.708669774f, -0.705540326f},
                                                               {0.76493754f, -0.644104464f},
                                                               {0.815896313f, -0.578198242f},
                                                               {0.861192417f, -0.508279077f},
                                                               {0.900511479f, -0.43483224f},
                                                               {0.933580607f, -0.358367481f},
                                                               {0.960170287f, -0.279415498f},
                                                               {0.980095975f, -0.198524253f},
                                                               {0.99321938f, -0.116255165f},
                                                               {0.999449418f, -0.0331792165f}};

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
    float x, y, speed;
    int turn;       /* heading: turn / 12 rad if >= 0, else 2 pi - (-turn - 1) / 12 rad */
    int since_goal; /* steps */
} TargetAgent;

static float target_heading(const TargetAgent *a) {
    return a->turn >= 0 ? (float)a->turn / 12.0f : TARGET_TWO_PI - (float)(-a->turn - 1) / 12.0f;
}

/* Turns by `steps` twelfths of a radian, clamped to [0, 2 pi]. */
static int target_turn(int turn, int steps) {
    if (turn >= 0) {
        int up = turn + steps;
        return up < 0 ? 0 : (up > TARGET_TURN_STEPS ? -1 : up);
    }
    int down = -turn - 1 - steps; /* steps below 2 pi */
    return down < 0 ? -1 : (down > TARGET_TURN_STEPS ? 0 : -down - 1);
}

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
        *obs++ = target_heading(a) * (1.0f / TARGET_TWO_PI);
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
        a->turn = 0;
        a->speed = 0.0f;
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
        a->turn = target_turn(a->turn, act[0] - TARGET_TURNS / 2);
        a->speed = puffer_clip(a->speed + (float)(act[1] - TARGET_SPEEDS / 2), -TARGET_MAX_SPEED,
                               TARGET_MAX_SPEED);
        const float *cs = TARGET_COS_SIN[a->turn >= 0 ? a->turn : -a->turn - 1];
        const float sin_sign = a->turn >= 0 ? 1.0f : -1.0f; /* sin(2 pi - x) = -sin x */
        a->x = puffer_clip(a->x + a->speed * cs[0], 0.0f, (float)env->width);
        a->y = puffer_clip(a->y + a->speed * sin_sign * cs[1], 0.0f, (float)env->height);
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
        const float heading = target_heading(a);
        raster_circle(canvas, x + (int)(cosf(heading) * 12.0f), y + (int)(sinf(heading) * 12.0f), 4,
                      COLOR_BLACK);
    }
}

static void c_close(Target *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {9, 5};
static const PufferKey KEYS[] = {
    {"idle", 0, 4}, {"left", 0, 0}, {"right", 0, 8}, {"up", 1, 4}, {NULL, 0, 0}};
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
           "static here); headings are exact multiples of 1/12 rad from 0 or from 2 pi (theirs "
           "add floats, drifting by rounding), cos and sin from a table.",
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
