/* Drone: fly a quadrotor through random targets in a 20 m cube (PufferLib 3.0's drone task,
 * rules and physics restated in our own code).
 *
 * Rules and constants:
 * | arena        | cube [-10, 10]^3 m; leaving it: -1, terminal                          |
 * | start        | position and target uniform in [-9, 9]^3, level, at rest              |
 * | target       | within 1.5 m: +1 and a new target; the n_targets-th [5] ends the      |
 * |              | episode (terminal); max_steps [1000] truncates                        |
 * | physics      | explicit Euler, dt 0.02 s; mass 1 kg, inertia (0.01, 0.01, 0.02)      |
 * |              | kg m^2, arm 0.1 m, gravity 9.81 m/s^2                                 |
 * | rotors       | thrust_i = 3e-5 (750 (a_i + 1) / 2)^2 N (a_i clipped to [-1, 1]); roll |
 * |              | torque arm (T1 - T3), pitch arm (T2 - T0), yaw 1e-6 (T0 - T1 + T2 - T3) |
 * | damping      | linear drag 0.1 v, angular 0.2 omega; |v| <= 50 m/s, |omega| <= 50     |
 * |              | rad/s per axis                                                         |
 * Observation: (16,) float32: offset from the target / 10 (3), position / 10 (3), attitude
 * quaternion w, x, y, z (4), velocity / 50 (3), angular velocity / 50 (3). Action: Box(-1, 1,
 * (4,)) float32, one command per rotor. Log: score = targets reached, perf = score / n_targets.
 *
 * Deliberate difference from PufferLib 3.0: the move limit sets truncations (they set
 * terminals) and both n_targets and max_steps take effect (their reset overwrites them with
 * the same defaults).
 */
#ifndef PUFFER_DRONE_H
#define PUFFER_DRONE_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(drone)

enum { DRONE_OBS = 16 };
enum { DRONE_VIEW = 240 }; /* pixels per rendered view */
static const float DRONE_ARENA = 10.0f, DRONE_SPAWN = 9.0f, DRONE_REACH = 1.5f;
static const float DRONE_DT = 0.02f, DRONE_MASS = 1.0f, DRONE_ARM = 0.1f, DRONE_GRAVITY = 9.81f;
static const float DRONE_IXX = 0.01f, DRONE_IYY = 0.01f, DRONE_IZZ = 0.02f;
static const float DRONE_K_THRUST = 3e-5f, DRONE_K_YAW = 1e-6f, DRONE_MAX_RPM = 750.0f;
static const float DRONE_LIN_DRAG = 0.1f, DRONE_ANG_DAMP = 0.2f;
static const float DRONE_MAX_VEL = 50.0f, DRONE_MAX_OMEGA = 50.0f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* targets reached */
    float perf;  /* score / n_targets */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf", "n"};

typedef struct {
    float x, y, z;
} DroneVec;

typedef struct {
    float *observations; /* (1, 16) */
    float *actions;      /* (1, 4) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int n_targets, max_steps; /* config */
    int tick, score;
    float episode_return;
    DroneVec pos, vel, omega, target;
    float qw, qx, qy, qz; /* attitude, unit quaternion */
} Drone;

static const PufferField CONFIG[] = {
    {"n_targets", offsetof(Drone, n_targets), PUFFER_INT, 5, 1, 1e9,
     "targets to reach before the episode ends"},
    {"max_steps", offsetof(Drone, max_steps), PUFFER_INT, 1000, 1, 1e9,
     "steps before the episode is truncated"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Drone *env) {
    env->num_agents = 1;
}

static DroneVec drone_random_point(Drone *env) {
    return (DroneVec){rng_uniform(&env->rng, -DRONE_SPAWN, DRONE_SPAWN),
                      rng_uniform(&env->rng, -DRONE_SPAWN, DRONE_SPAWN),
                      rng_uniform(&env->rng, -DRONE_SPAWN, DRONE_SPAWN)};
}

static void drone_observe(Drone *env) {
    float *o = env->observations;
    o[0] = (env->pos.x - env->target.x) / DRONE_ARENA;
    o[1] = (env->pos.y - env->target.y) / DRONE_ARENA;
    o[2] = (env->pos.z - env->target.z) / DRONE_ARENA;
    o[3] = env->pos.x / DRONE_ARENA;
    o[4] = env->pos.y / DRONE_ARENA;
    o[5] = env->pos.z / DRONE_ARENA;
    o[6] = env->qw, o[7] = env->qx, o[8] = env->qy, o[9] = env->qz;
    o[10] = env->vel.x / DRONE_MAX_VEL;
    o[11] = env->vel.y / DRONE_MAX_VEL;
    o[12] = env->vel.z / DRONE_MAX_VEL;
    o[13] = env->omega.x / DRONE_MAX_OMEGA;
    o[14] = env->omega.y / DRONE_MAX_OMEGA;
    o[15] = env->omega.z / DRONE_MAX_OMEGA;
}

static void c_reset(Drone *env) {
    env->tick = env->score = 0;
    env->episode_return = 0;
    env->target = drone_random_point(env);
    env->pos = drone_random_point(env);
    env->vel = env->omega = (DroneVec){0, 0, 0};
    env->qw = 1, env->qx = env->qy = env->qz = 0;
    drone_observe(env);
}

/* One Euler step of the rigid body under the four rotor thrusts. */
static void drone_physics(Drone *env, const float *action) {
    float t[4];
    for (int i = 0; i < 4; i++) {
        const float rpm = (puffer_clip(action[i], -1.0f, 1.0f) + 1.0f) * 0.5f * DRONE_MAX_RPM;
        t[i] = DRONE_K_THRUST * rpm * rpm;
    }
    const float thrust = t[0] + t[1] + t[2] + t[3];
    const float mx = DRONE_ARM * (t[1] - t[3]) - DRONE_ANG_DAMP * env->omega.x;
    const float my = DRONE_ARM * (t[2] - t[0]) - DRONE_ANG_DAMP * env->omega.y;
    const float mz = DRONE_K_YAW * (t[0] - t[1] + t[2] - t[3]) - DRONE_ANG_DAMP * env->omega.z;
    /* Body z axis in world coordinates: the third column of the attitude's rotation matrix. */
    const float w = env->qw, x = env->qx, y = env->qy, z = env->qz;
    const float fx = thrust * 2.0f * (x * z + w * y) - DRONE_LIN_DRAG * env->vel.x;
    const float fy = thrust * 2.0f * (y * z - w * x) - DRONE_LIN_DRAG * env->vel.y;
    const float fz = thrust * (1.0f - 2.0f * (x * x + y * y)) - DRONE_LIN_DRAG * env->vel.z;
    /* Quaternion rate 0.5 q (0, omega), from the angular velocity before this step. */
    const float p = env->omega.x, q = env->omega.y, r = env->omega.z;
    const float dw = -0.5f * (x * p + y * q + z * r), dx = 0.5f * (w * p + y * r - z * q);
    const float dy = 0.5f * (w * q - x * r + z * p), dz = 0.5f * (w * r + x * q - y * p);
    env->pos.x += env->vel.x * DRONE_DT;
    env->pos.y += env->vel.y * DRONE_DT;
    env->pos.z += env->vel.z * DRONE_DT;
    env->vel.x =
        puffer_clip(env->vel.x + fx / DRONE_MASS * DRONE_DT, -DRONE_MAX_VEL, DRONE_MAX_VEL);
    env->vel.y =
        puffer_clip(env->vel.y + fy / DRONE_MASS * DRONE_DT, -DRONE_MAX_VEL, DRONE_MAX_VEL);
    env->vel.z = puffer_clip(env->vel.z + (fz / DRONE_MASS - DRONE_GRAVITY) * DRONE_DT,
                             -DRONE_MAX_VEL, DRONE_MAX_VEL);
    env->omega.x = puffer_clip(p + mx / DRONE_IXX * DRONE_DT, -DRONE_MAX_OMEGA, DRONE_MAX_OMEGA);
    env->omega.y = puffer_clip(q + my / DRONE_IYY * DRONE_DT, -DRONE_MAX_OMEGA, DRONE_MAX_OMEGA);
    env->omega.z = puffer_clip(r + mz / DRONE_IZZ * DRONE_DT, -DRONE_MAX_OMEGA, DRONE_MAX_OMEGA);
    const float nw = w + dw * DRONE_DT, nx = x + dx * DRONE_DT, ny = y + dy * DRONE_DT,
                nz = z + dz * DRONE_DT;
    const float norm = sqrtf(nw * nw + nx * nx + ny * ny + nz * nz);
    env->qw = nw / norm, env->qx = nx / norm, env->qy = ny / norm, env->qz = nz / norm;
}

static void drone_end(Drone *env) {
    env->log.episode_return += env->episode_return;
    env->log.episode_length += (float)env->tick;
    env->log.score += (float)env->score;
    env->log.perf += (float)env->score / (float)env->n_targets;
    env->log.n += 1.0f;
    c_reset(env);
}

static void c_step(Drone *env) {
    drone_physics(env, env->actions);
    env->tick++;
    float reward = 0.0f;
    int terminal = 0;
    const DroneVec p = env->pos;
    if (fabsf(p.x) > DRONE_ARENA || fabsf(p.y) > DRONE_ARENA || fabsf(p.z) > DRONE_ARENA) {
        reward = -1.0f;
        terminal = 1;
    } else {
        const float dx = p.x - env->target.x, dy = p.y - env->target.y, dz = p.z - env->target.z;
        if (sqrtf(dx * dx + dy * dy + dz * dz) < DRONE_REACH) {
            reward = 1.0f;
            env->score++;
            env->target = drone_random_point(env);
        }
        terminal = env->score >= env->n_targets;
    }
    const int truncated = !terminal && env->tick >= env->max_steps;
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)terminal;
    env->truncations[0] = (uint8_t)truncated;
    env->episode_return += reward;
    if (terminal || truncated) {
        drone_end(env);
        return;
    }
    drone_observe(env);
}

static void c_frame_size(const Drone *env, int *width, int *height) {
    (void)env;
    *width = 2 * DRONE_VIEW;
    *height = DRONE_VIEW;
}

/* Two orthographic views of the cube: top (x, y) on the left, side (x, z) on the right. */
static void c_render(const Drone *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    const float scale = (float)DRONE_VIEW / (2.0f * DRONE_ARENA);
    raster_rect(canvas, DRONE_VIEW, 0, 1, DRONE_VIEW, COLOR_GRID);
    const DroneVec pts[2] = {env->target, env->pos};
    const Color colors[2] = {COLOR_GREEN, COLOR_CYAN};
    for (int i = 0; i < 2; i++) {
        const int x = (int)((pts[i].x + DRONE_ARENA) * scale);
        const int y = (int)((DRONE_ARENA - pts[i].y) * scale);
        const int z = (int)((DRONE_ARENA - pts[i].z) * scale);
        const int radius = i == 0 ? (int)(DRONE_REACH * scale) : 4;
        raster_circle(canvas, x, y, radius, colors[i]);
        raster_circle(canvas, DRONE_VIEW + x, z, radius, colors[i]);
    }
    raster_number(canvas, 4, 4, env->score, 2, COLOR_WHITE);
}

static void c_close(Drone *env) {
    (void)env;
}

static const float DRONE_LOWS[DRONE_OBS] = {-2, -2, -2, -1, -1, -1, -1, -1,
                                            -1, -1, -1, -1, -1, -1, -1, -1};
static const float DRONE_HIGHS[DRONE_OBS] = {2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
/* Each rotor's command: q/a rotor 0 full up/down, w/s rotor 1, e/d rotor 2, r/f rotor 3. */
static const PufferKey KEYS[] = {{"idle", 0, 0}, {"idle", 1, 0}, {"idle", 2, 0}, {"idle", 3, 0},
                                 {"q", 0, 1},    {"a", 0, -1},   {"w", 1, 1},    {"s", 1, -1},
                                 {"e", 2, 1},    {"d", 2, -1},   {"r", 3, 1},    {"f", 3, -1},
                                 {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Fly a quadrotor (4 rotor commands in [-1, 1]) through random targets in a 20 m cube: "
           "+1 per target reached within 1.5 m, -1 and a terminal on leaving the cube; the "
           "episode ends after n_targets targets or max_steps steps. Observation: (16,) float32 "
           "target offset, position, attitude quaternion, velocity, angular velocity. Action: "
           "Box(-1, 1, (4,)).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = DRONE_OBS,
    .obs_low = -2,
    .obs_high = 2,
    .obs_lows = DRONE_LOWS,
    .obs_highs = DRONE_HIGHS,
    .action_dim = 4,
    .action_low = -1,
    .action_high = 1,
    PUFFER_SPEC_TABLES(Drone),
};

PUFFER_ENV_END(drone, Drone)

#endif
