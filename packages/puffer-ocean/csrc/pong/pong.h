/* Pong: PufferLib 3.0's pong task. The agent's paddle (right) plays a scripted paddle (left)
 * that steers its centre toward the ball's top edge at most `paddle_speed` per frame. The court
 * is 500 wide (x) by 640 high (y, up positive); every size and speed is a parameter with their
 * default. SPEC.doc holds the rules table.
 *
 * Observation: 8 float32: opponent paddle y, agent paddle y (as fractions of the paddle's
 * travel), ball x / width, ball y / height, ball vx and vy mapped from [-max, max] to [0, 1],
 * opponent and agent points / max_score. Actions: Discrete(3): stay, up, down.
 */
#ifndef PUFFER_PONG_H
#define PUFFER_PONG_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(pong)

enum { PONG_STAY, PONG_UP, PONG_DOWN };
enum { PONG_OBS = 8 };

typedef struct {
    float perf;  /* agent points / all points */
    float score; /* agent points - opponent points */
    float episode_return;
    float episode_length;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations; /* (1, 8) */
    int32_t *actions;
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    /* config */
    float width, height, paddle_width, paddle_height, ball_width, ball_height;
    float paddle_speed, ball_speed_x, ball_speed_y, ball_speed_y_increment, ball_max_speed_y;
    int max_score, frameskip, max_steps;
    /* state */
    int tick;
    float opponent_y, agent_y; /* paddle bottom edges */
    float ball_x, ball_y;      /* ball corner nearest the origin */
    float ball_vx, ball_vy;    /* per frame */
    int opponent_points, agent_points;
} Pong;

static const PufferField CONFIG[] = {
    {"width", offsetof(Pong, width), PUFFER_FLOAT, 500, 100, 1e5, "court width (x), pixels"},
    {"height", offsetof(Pong, height), PUFFER_FLOAT, 640, 100, 1e5, "court height (y), pixels"},
    {"paddle_width", offsetof(Pong, paddle_width), PUFFER_FLOAT, 20, 1, 1e3,
     "paddle width, drawn only (the paddles sit outside the court)"},
    {"paddle_height", offsetof(Pong, paddle_height), PUFFER_FLOAT, 70, 1, 1e4, "paddle height"},
    {"ball_width", offsetof(Pong, ball_width), PUFFER_FLOAT, 32, 1, 1e3, "ball width"},
    {"ball_height", offsetof(Pong, ball_height), PUFFER_FLOAT, 32, 1, 1e3, "ball height"},
    {"paddle_speed", offsetof(Pong, paddle_speed), PUFFER_FLOAT, 8, 0, 1e3,
     "both paddles' speed, pixels per frame"},
    {"ball_initial_speed_x", offsetof(Pong, ball_speed_x), PUFFER_FLOAT, 10, 0.1, 1e3,
     "ball x speed, pixels per frame (constant)"},
    {"ball_initial_speed_y", offsetof(Pong, ball_speed_y), PUFFER_FLOAT, 1, 0, 1e3,
     "ball y speed at a serve (downward or 0, at random)"},
    {"ball_speed_y_increment", offsetof(Pong, ball_speed_y_increment), PUFFER_FLOAT, 3, 0, 1e3,
     "y speed the agent's moving paddle adds to a returned ball"},
    {"ball_max_speed_y", offsetof(Pong, ball_max_speed_y), PUFFER_FLOAT, 13, 0.1, 1e3,
     "cap on the ball's y speed after a return"},
    {"max_score", offsetof(Pong, max_score), PUFFER_INT, 21, 1, 1e6,
     "points (either side) that end the episode"},
    {"frameskip", offsetof(Pong, frameskip), PUFFER_INT, 1, 1, 1e3,
     "frames each action is held for"},
    {"max_steps", offsetof(Pong, max_steps), PUFFER_INT, 0, 0, 1e9,
     "steps before an episode is truncated; 0: never (theirs has no limit)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* The observation's velocity fields stay in [0, 1] only if no speed starts above its cap. */
static const char *pong_check(const void *env_) {
    const Pong *env = (const Pong *)env_;
    if (env->ball_speed_y > env->ball_max_speed_y)
        return "ball_initial_speed_y must not exceed ball_max_speed_y; lower it or raise the cap";
    if (env->ball_width >= env->width || env->ball_height >= env->height)
        return "the ball must be smaller than the court; lower ball_width/ball_height";
    return NULL;
}

static void c_init(Pong *env) {
    env->num_agents = 1;
}

static void pong_observe(Pong *env) {
    /* A paddle travels from half below the floor to half above the ceiling. */
    const float travel = 1.0f / env->height, low = -env->paddle_height / 2.0f;
    float *obs = env->observations;
    obs[0] = (env->opponent_y - low) * travel;
    obs[1] = (env->agent_y - low) * travel;
    obs[2] = env->ball_x / env->width;
    obs[3] = env->ball_y * travel;
    obs[4] = (env->ball_vx + env->ball_speed_x) / (2.0f * env->ball_speed_x);
    obs[5] = (env->ball_vy + env->ball_max_speed_y) / (2.0f * env->ball_max_speed_y);
    obs[6] = (float)env->opponent_points / (float)env->max_score;
    obs[7] = (float)env->agent_points / (float)env->max_score;
}

/* Paddles centred; the ball a fifth of the way across, heading for the agent, its y speed 0 or
 * downward at random (as theirs). */
static void pong_serve(Pong *env) {
    env->opponent_y = env->agent_y = (env->height - env->paddle_height) / 2.0f;
    env->ball_x = env->width / 5.0f;
    env->ball_y = (env->height - env->ball_height) / 2.0f;
    env->ball_vx = env->ball_speed_x;
    env->ball_vy = (rng_next(&env->rng) & 1) ? 0.0f : -env->ball_speed_y;
}

static void pong_new_episode(Pong *env) {
    env->tick = 0;
    env->opponent_points = env->agent_points = 0;
    pong_serve(env);
}

static void c_reset(Pong *env) {
    pong_new_episode(env);
    pong_observe(env);
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
}

static inline float pong_clamp(float v, float low, float high) {
    return fminf(fmaxf(v, low), high);
}

/* Does the ball's y extent meet the paddle whose bottom is at `paddle_y`? */
static inline int pong_meets(const Pong *env, float paddle_y) {
    return env->ball_y + env->ball_height > paddle_y && env->ball_y < paddle_y + env->paddle_height;
}

static void pong_end_episode(Pong *env) {
    float points = (float)(env->agent_points - env->opponent_points);
    int played = env->agent_points + env->opponent_points; /* 0 only when truncated */
    env->log.perf += played ? (float)env->agent_points / (float)played : 0.0f;
    env->log.score += points;
    env->log.episode_return += points;
    env->log.episode_length += (float)env->tick;
    env->log.n += 1.0f;
    pong_new_episode(env);
}

/* A point ends the step's remaining frames: re-serve, or end the episode at max_score. */
static void pong_point(Pong *env, int *points, float reward) {
    env->rewards[0] = reward;
    (*points)++;
    if (*points == env->max_score) {
        env->terminals[0] = 1;
        pong_end_episode(env);
    } else {
        pong_serve(env);
    }
}

/* One frame; returns 0 when a point was scored (the step ends there). */
static int pong_frame(Pong *env, float direction) {
    const float low = -env->paddle_height / 2.0f, high = env->height - env->paddle_height / 2.0f;
    env->agent_y += env->paddle_speed * direction;
    float chase = env->ball_y - (env->opponent_y + env->paddle_height / 2.0f);
    env->opponent_y += pong_clamp(chase, -env->paddle_speed, env->paddle_speed);
    env->agent_y = pong_clamp(env->agent_y, low, high);
    env->opponent_y = pong_clamp(env->opponent_y, low, high);
    env->ball_x += env->ball_vx;
    env->ball_y += env->ball_vy;
    if (env->ball_y < 0.0f || env->ball_y + env->ball_height > env->height)
        env->ball_vy = -env->ball_vy;
    if (env->ball_x < 0.0f) {
        if (!pong_meets(env, env->opponent_y)) {
            pong_point(env, &env->agent_points, 1.0f);
            return 0;
        }
        env->ball_vx = -env->ball_vx;
    }
    if (env->ball_x + env->ball_width > env->width) {
        if (!pong_meets(env, env->agent_y)) {
            pong_point(env, &env->opponent_points, -1.0f);
            return 0;
        }
        /* A return: the paddle's motion steers the ball, never to flat horizontal. */
        env->ball_vx = -env->ball_vx;
        env->rewards[0] = 0.1f;
        env->ball_vy = pong_clamp(env->ball_vy + env->ball_speed_y_increment * direction,
                                  -env->ball_max_speed_y, env->ball_max_speed_y);
        if (fabsf(env->ball_vy) < 0.01f) env->ball_vy = env->ball_speed_y_increment;
        env->ball_x = pong_clamp(env->ball_x, 0.0f, env->width - env->ball_width);
        env->ball_y = pong_clamp(env->ball_y, 0.0f, env->height - env->ball_height);
    }
    return 1;
}

static void c_step(Pong *env) {
    int action = env->actions[0];
    float direction = (float)((action == PONG_UP) - (action == PONG_DOWN));
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    env->tick++;
    int frame = 0;
    while (frame++ < env->frameskip && pong_frame(env, direction))
        continue;
    if (env->max_steps > 0 && env->tick >= env->max_steps && !env->terminals[0]) {
        env->truncations[0] = 1;
        pong_end_episode(env);
    }
    pong_observe(env);
}

static void c_frame_size(const Pong *env, int *width, int *height) {
    *width = (int)(env->width + 6.0f * env->paddle_width);
    *height = (int)env->height;
}

/* Their view: y up, the paddles drawn in margins three paddle widths wide. */
static void c_render(const Pong *env, Canvas *canvas) {
    const int pad = (int)(3.0f * env->paddle_width), h = (int)env->height;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int y = 0; y < h; y += 20)
        raster_rect(canvas, pad + (int)env->width / 2 - 1, y, 2, 10, COLOR_GRID);
    raster_number(canvas, pad + (int)env->width / 2 - 60, 10, env->opponent_points, 4, COLOR_GRAY);
    raster_number(canvas, pad + (int)env->width / 2 + 40, 10, env->agent_points, 4, COLOR_GRAY);
    raster_rect(canvas, pad - (int)env->paddle_width,
                h - (int)(env->opponent_y + env->paddle_height), (int)env->paddle_width,
                (int)env->paddle_height, COLOR_RED);
    raster_rect(canvas, pad + (int)env->width, h - (int)(env->agent_y + env->paddle_height),
                (int)env->paddle_width, (int)env->paddle_height, COLOR_CYAN);
    raster_rect(canvas, pad + (int)env->ball_x, h - (int)(env->ball_y + env->ball_height),
                (int)env->ball_width, (int)env->ball_height, COLOR_WHITE);
}

static void c_close(Pong *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {3};
static const PufferKey KEYS[] = {{"idle", 0, 0}, {"up", 0, 1}, {"down", 0, 2}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's pong: the right paddle against a scripted left paddle on a 500x640 "
           "court (y up). Observation: (8,) float32: opponent paddle y, agent paddle y "
           "((y + 35) / 640), ball x / 500, ball y / 640, (vx + 10) / 20, (vy + 13) / 26, "
           "opponent points / 21, agent points / 21. Action: Discrete(3): stay, up, down.\n\n"
           "| rule | value |\n|---|---|\n"
           "| sizes | paddles 20x70 (outside the court), ball 32x32 |\n"
           "| paddles | 8 px/frame; bottom edge kept in [-35, 605]; the scripted one moves its "
           "centre toward the ball's y by at most 8 |\n"
           "| serve | ball at (100, 304), vx 10 toward the agent, vy 0 or -1 at random; "
           "paddles centred |\n"
           "| walls | y < 0 or y + 32 > 640 reverses vy |\n"
           "| agent return | +0.1; vy += 3 x paddle direction, capped at 13, 3 if it would be "
           "flat |\n"
           "| point won / lost | +1 / -1, the step's remaining frames skipped, re-serve |\n"
           "| episode end | terminal when either side reaches 21 points; no time limit |\n\n"
           "Every number above is a parameter with their name and default. Differences: the "
           "point fields of the observation are fractions (theirs divide integers, so they read "
           "0); the observation after a point shows the new serve (theirs repeats the last "
           "frame's); `episode_length` counts the episode's steps (theirs the last rally's); "
           "`max_steps` (default 0, off) can truncate; no continuous-action variant.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = PONG_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Pong),
    .check = pong_check,
};

PUFFER_ENV_END(pong, Pong)

#endif
