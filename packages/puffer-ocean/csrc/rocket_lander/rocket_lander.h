/* Rocket lander: PufferLib 3.0's rocket_lander task, a 20 x 227 booster that must stay in the
 * sky box with as little main-engine thrust as it can (their draft pays 1 for every step the
 * main engine is off), restated in our own code. SPEC.doc holds the rules table.
 *
 * Theirs is a Box2D v3 draft with no binding in PufferLib 3.0 (nothing builds or benchmarks
 * it). With no other body in reach (the barge lies below the height that ends the episode), its
 * physics is one free rigid body, integrated here as Box2D does for a body without contacts:
 * per substep, semi-implicit Euler on velocity (force / mass + gravity, then the 400 m/s and
 * 0.25 pi rad-per-substep clamps), then position, and the rotation advanced by its first-order
 * update and renormalized.
 */
#ifndef PUFFER_ROCKET_LANDER_H
#define PUFFER_ROCKET_LANDER_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(rocket_lander)

enum { RL_OBS = 6, RL_SUBSTEPS = 4 };
enum { RL_NONE, RL_MAIN, RL_LEFT, RL_RIGHT };
#define RL_PI 3.14159265358979f
#define RL_DT (1.0f / 60.0f) /* seconds a step */
#define RL_GRAVITY 9.8f      /* m/s^2, down */
#define RL_WIDTH 20.0f       /* the booster's box, m */
#define RL_HEIGHT 227.0f
#define RL_MASS (RL_WIDTH * RL_HEIGHT) /* density 1 */
#define RL_INERTIA (RL_MASS * (RL_WIDTH * RL_WIDTH + RL_HEIGHT * RL_HEIGHT) / 12.0f)
#define RL_THRUST 1.0e6f    /* N, every thruster */
#define RL_NOISE 0.02f      /* each firing's direction is off by uniform [0, 0.02) rad */
#define RL_START_Y 500.0f   /* centre height at reset, at rest and upright */
#define RL_HALF_SPAN 500.0f /* |x| beyond this ends the episode */
#define RL_TOP 1200.0f      /* y above this ends it */
#define RL_BOTTOM 120.0f    /* y below this ends it (the bottom is then ~6 m up: touchdown) */
#define RL_MAX_SPEED 400.0f /* m/s */
#define RL_MAX_TURN (0.25f * RL_PI) /* rad per substep */
#define RL_BARGE_WIDTH 100.0f
#define RL_BARGE_HEIGHT 10.0f
enum { RL_FRAME_W = 500, RL_FRAME_H = 620 }; /* 2 m a pixel; the barge's centre at y = 10 */

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* steps with the main engine off (theirs declares score and never sets it) */
    float out_of_bounds; /* 1 for an episode ended by leaving the box, 0 at the time limit */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "out_of_bounds",
                                  "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations; /* (1, 6) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config */
    int tick, last_action;
    float x, y, vx, vy; /* centre of mass, m and m/s */
    float cos_a, sin_a; /* rotation, counter-clockwise from upright */
    float spin;         /* rad/s, counter-clockwise */
    float episode_return;
} RocketLander;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(RocketLander, max_steps), PUFFER_INT, 1001, 1, 1e9,
     "steps per episode before truncation (theirs: ticks 0-1000)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void rl_observe(RocketLander *env) {
    float *o = env->observations;
    o[0] = env->x / RL_HALF_SPAN;
    o[1] = env->y / RL_TOP;
    o[2] = env->vx / 200.0f;
    o[3] = env->vy / 200.0f;
    o[4] = atan2f(env->sin_a, env->cos_a) / RL_PI / 10.0f;
    o[5] = env->spin / RL_PI;
}

static void rl_new_episode(RocketLander *env) {
    env->x = env->vx = env->vy = env->spin = 0.0f;
    env->y = RL_START_Y;
    env->cos_a = 1.0f, env->sin_a = 0.0f;
    env->tick = 0;
    env->last_action = RL_NONE;
    env->episode_return = 0.0f;
    rl_observe(env);
}

static void c_init(RocketLander *env) {
    env->num_agents = 1;
}

static void c_reset(RocketLander *env) {
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    rl_new_episode(env);
}

/* The firing thruster's force (fx, fy) and its torque about the centre. Theirs aims the main
 * engine along (sin a, cos a), the mirror image of the booster's axis (-sin a, cos a), and the
 * side thrusters along a - a_rotation +- pi/2 likewise; kept, as it is their dynamics. */
static void rl_thrust(RocketLander *env, int action, float *fx, float *fy, float *torque) {
    *fx = *fy = *torque = 0.0f;
    if (action < RL_MAIN || action > RL_RIGHT) return;
    const float c = env->cos_a, s = env->sin_a, angle = atan2f(s, c);
    const float noise = RL_NOISE * rng_float(&env->rng);
    float lx, ly, aim; /* where it pushes, in the booster's frame, and its direction */
    if (action == RL_MAIN) {
        lx = 0.0f, ly = -RL_HEIGHT / 2, aim = angle + noise;
    } else if (action == RL_LEFT) {
        lx = -RL_WIDTH / 2, ly = RL_HEIGHT / 2, aim = -angle + RL_PI / 2 + noise;
    } else {
        lx = RL_WIDTH / 2, ly = RL_HEIGHT / 2, aim = -angle - RL_PI / 2 + noise;
    }
    const float rx = c * lx - s * ly, ry = s * lx + c * ly; /* lever arm, world frame */
    *fx = RL_THRUST * sinf(aim);
    *fy = RL_THRUST * cosf(aim);
    *torque = rx * *fy - ry * *fx;
}

static void rl_integrate(RocketLander *env, float fx, float fy, float torque) {
    const float h = RL_DT / RL_SUBSTEPS, max_spin = RL_MAX_TURN / h;
    for (int i = 0; i < RL_SUBSTEPS; i++) {
        env->vx += h * fx / RL_MASS;
        env->vy += h * (fy / RL_MASS - RL_GRAVITY);
        const float speed2 = env->vx * env->vx + env->vy * env->vy;
        if (speed2 > RL_MAX_SPEED * RL_MAX_SPEED) {
            const float k = RL_MAX_SPEED / sqrtf(speed2);
            env->vx *= k, env->vy *= k;
        }
        env->spin += h * torque / RL_INERTIA;
        env->spin =
            env->spin > max_spin ? max_spin : (env->spin < -max_spin ? -max_spin : env->spin);
        env->x += h * env->vx;
        env->y += h * env->vy;
        const float turn = h * env->spin;
        const float c = env->cos_a - turn * env->sin_a, s = env->sin_a + turn * env->cos_a;
        const float norm = 1.0f / sqrtf(c * c + s * s);
        env->cos_a = c * norm, env->sin_a = s * norm;
    }
}

static void c_step(RocketLander *env) {
    const int action = env->actions[0];
    float fx, fy, torque;
    rl_thrust(env, action, &fx, &fy, &torque);
    rl_integrate(env, fx, fy, torque);
    env->tick++;
    env->last_action = action;
    const float reward = action == RL_MAIN ? 0.0f : 1.0f;
    const int out =
        env->x < -RL_HALF_SPAN || env->x > RL_HALF_SPAN || env->y > RL_TOP || env->y < RL_BOTTOM;
    const int late = !out && env->tick >= env->max_steps;
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)out;
    env->truncations[0] = (uint8_t)late;
    env->episode_return += reward;
    if (out || late) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += env->episode_return;
        env->log.out_of_bounds += (float)out;
        env->log.n += 1.0f;
        rl_new_episode(env);
        return;
    }
    rl_observe(env);
}

static void c_frame_size(const RocketLander *env, int *width, int *height) {
    (void)env;
    *width = RL_FRAME_W;
    *height = RL_FRAME_H;
}

/* Frame pixel of a world point: 2 m a pixel, x = 0 in the middle, y = 0 20 px above the
 * bottom edge. */
static int rl_px(float x) {
    return (int)floorf(x / 2.0f) + RL_FRAME_W / 2;
}
static int rl_py(float y) {
    return RL_FRAME_H - 20 - (int)floorf(y / 2.0f);
}

/* The booster: every pixel whose centre lies inside its rotated box. */
static void rl_draw_booster(const RocketLander *env, Canvas *canvas, Color color) {
    const int reach = (int)((RL_WIDTH + RL_HEIGHT) / 4.0f) + 1;
    const int cx = rl_px(env->x), cy = rl_py(env->y);
    for (int py = cy - reach; py <= cy + reach; py++) {
        for (int px = cx - reach; px <= cx + reach; px++) {
            const float dx = (px - RL_FRAME_W / 2 + 0.5f) * 2.0f - env->x;
            const float dy = (RL_FRAME_H - 20 - py - 0.5f) * 2.0f - env->y;
            const float lx = env->cos_a * dx + env->sin_a * dy;
            const float ly = -env->sin_a * dx + env->cos_a * dy;
            if (fabsf(lx) <= RL_WIDTH / 2 && fabsf(ly) <= RL_HEIGHT / 2) {
                raster_pixel(canvas, px, py, color);
            }
        }
    }
}

static void c_render(const RocketLander *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    raster_rect(canvas, 0, rl_py(RL_TOP), RL_FRAME_W, 1, COLOR_GRID);
    raster_rect(canvas, 0, rl_py(RL_BOTTOM), RL_FRAME_W, 1, COLOR_GRID);
    raster_rect(canvas, rl_px(-RL_BARGE_WIDTH / 2), rl_py(RL_BARGE_HEIGHT / 2),
                (int)(RL_BARGE_WIDTH / 2), (int)(RL_BARGE_HEIGHT / 2), COLOR_GRAY);
    rl_draw_booster(env, canvas, COLOR_WHITE);
    if (env->last_action >= RL_MAIN && env->last_action <= RL_RIGHT) {
        const float c = env->cos_a, s = env->sin_a;
        const float lx = env->last_action == RL_MAIN   ? 0.0f
                         : env->last_action == RL_LEFT ? -RL_WIDTH / 2
                                                       : RL_WIDTH / 2;
        const float ly = env->last_action == RL_MAIN ? -RL_HEIGHT / 2 : RL_HEIGHT / 2;
        raster_circle(canvas, rl_px(env->x + c * lx - s * ly), rl_py(env->y + s * lx + c * ly), 5,
                      COLOR_ORANGE);
    }
    raster_number(canvas, 8, 8, env->tick, 3, COLOR_WHITE);
}

static void c_close(RocketLander *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {4};
static const float RL_LOWS[RL_OBS] = {-1.0f, 0.0f, -2.0f, -2.0f, -0.1f, -61.0f};
static const float RL_HIGHS[RL_OBS] = {1.0f, 1.0f, 2.0f, 2.0f, 0.1f, 61.0f};
static const PufferKey KEYS[] = {
    {"idle", 0, RL_NONE}, {"w", 0, RL_MAIN}, {"q", 0, RL_LEFT}, {"e", 0, RL_RIGHT}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's rocket_lander draft: keep a 20x227 m booster inside the sky box "
           "while firing the main engine as little as possible. Observation: (6,) float32: x / "
           "500, y / 1200, vx / 200, vy / 200 (m/s), angle / pi / 10, spin / pi (rad/s). "
           "Action: Discrete(4): nothing, main engine, left thruster, right thruster. Reward: 1 "
           "for every step without the main engine, else 0.\n\n"
           "| rule | value |\n|---|---|\n"
           "| booster | 20 x 227 m box, density 1 (mass 4,540 kg), starts upright at rest with "
           "its centre at (0, 500) |\n"
           "| physics | gravity 9.8 m/s^2 down; 1/60 s a step in 4 substeps; speed clamped to "
           "400 m/s, turning to pi/4 rad a substep |\n"
           "| main engine | 1e6 N at the bottom centre, along (sin b, cos b), b = angle + "
           "uniform [0, 0.02) rad |\n"
           "| side thrusters | 1e6 N at the top left / right corner, along b = -angle +- pi/2 "
           "+ uniform [0, 0.02) rad (left pushes right, right pushes left) |\n"
           "| episode end | terminal when |x| > 500, y > 1200 or y < 120 (centre, m); "
           "truncated after `max_steps` [1,001] steps |\n\n"
           "Differences: theirs steps Box2D by 60 seconds a step (b2World_Step(world, 60, 4)), "
           "so every step leaves the box and resets, and it never sets terminals; here a step "
           "is 1/60 s (the frame rate their viewer runs at) and leaving the box is terminal. "
           "Their first episode after a reset runs one step longer than later ones; here every "
           "episode is truncated after the same 1,001 steps (`max_steps`). PufferLib 3.0 builds no "
           "binding "
           "for it, so there is no speed comparison.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = RL_OBS,
    .obs_lows = RL_LOWS,
    .obs_highs = RL_HIGHS,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(RocketLander),
};

PUFFER_ENV_END(rocket_lander, RocketLander)

#endif
