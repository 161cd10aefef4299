/* Pong: the agent's paddle (right) against a scripted paddle (left) that chases the ball at a
 * capped speed, so it can be beaten by angled shots. First to max_score points ends the episode.
 *
 * Observation: 8 float32 in [-1, 1]: agent paddle y, opponent paddle y, ball x, ball y (court
 * fractions), ball vx, vy (fractions of their maxima), agent and opponent points / max_score.
 * Actions: Discrete(3): stay, up, down. Reward +1 per agent point, -1 per opponent point.
 * Each action is repeated for `frameskip` frames.
 */
#ifndef PUFFER_PONG_H
#define PUFFER_PONG_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(pong)

#define PONG_WIDTH 400.0f /* court, pixels */
#define PONG_HEIGHT 300.0f
#define PONG_PADDLE_WIDTH 8.0f
#define PONG_PADDLE_HEIGHT 50.0f
#define PONG_PADDLE_SPEED 6.0f   /* agent, pixels per frame */
#define PONG_OPPONENT_SPEED 4.0f /* scripted paddle, pixels per frame */
#define PONG_BALL_SIZE 8.0f
#define PONG_BALL_SPEED_X 6.0f /* pixels per frame at serve */
#define PONG_BALL_MAX_SPEED_X 12.0f
#define PONG_BALL_SPEEDUP 1.05f    /* vx factor per paddle hit */
#define PONG_BALL_MAX_SPEED_Y 7.0f /* at the paddle's edge; 0 at its centre */
enum { PONG_STAY, PONG_UP, PONG_DOWN };

typedef struct {
    float episode_return;
    float episode_length;
    float score;          /* agent points */
    float opponent_score; /* scripted paddle points */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "opponent_score",
                                  "n"};
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
    int max_score; /* config: points that end the episode */
    int max_steps; /* config: steps before truncation */
    int frameskip; /* config: frames per action */
    int tick;
    float agent_y, opponent_y; /* paddle top edges */
    float ball_x, ball_y;      /* ball top-left corner */
    float ball_vx, ball_vy;
    int agent_points, opponent_points;
    float inv_max_score;
    float episode_return;
} Pong;

static const PufferField CONFIG[] = {
    {"max_score", offsetof(Pong, max_score), PUFFER_INT, 21, 1, 1e9,
     "points (either side) that end the episode"},
    {"max_steps", offsetof(Pong, max_steps), PUFFER_INT, 10000, 1, 1e9,
     "steps before an episode is truncated"},
    {"frameskip", offsetof(Pong, frameskip), PUFFER_INT, 1, 1, 1e9,
     "frames each action is repeated for"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Pong *env) {
    env->num_agents = 1;
}

static void pong_observe(Pong *env) {
    float *obs = env->observations;
    /* Constant reciprocals: multiplications, where divisions would cost several times more. */
    obs[0] = env->agent_y * (1.0f / (PONG_HEIGHT - PONG_PADDLE_HEIGHT));
    obs[1] = env->opponent_y * (1.0f / (PONG_HEIGHT - PONG_PADDLE_HEIGHT));
    obs[2] = env->ball_x * (1.0f / (PONG_WIDTH - PONG_BALL_SIZE));
    obs[3] = env->ball_y * (1.0f / (PONG_HEIGHT - PONG_BALL_SIZE));
    obs[4] = env->ball_vx * (1.0f / PONG_BALL_MAX_SPEED_X);
    obs[5] = env->ball_vy * (1.0f / PONG_BALL_MAX_SPEED_Y);
    obs[6] = (float)env->agent_points * env->inv_max_score;
    obs[7] = (float)env->opponent_points * env->inv_max_score;
}

/* Ball from the centre toward `direction` (+1 right, -1 left) at a random slope. */
static void pong_serve(Pong *env, float direction) {
    env->ball_x = (PONG_WIDTH - PONG_BALL_SIZE) / 2;
    env->ball_y = rng_uniform(&env->rng, 0.25f, 0.75f) * (PONG_HEIGHT - PONG_BALL_SIZE);
    env->ball_vx = direction * PONG_BALL_SPEED_X;
    env->ball_vy = rng_uniform(&env->rng, -0.5f, 0.5f) * PONG_BALL_MAX_SPEED_Y;
}

static void pong_new_episode(Pong *env) {
    env->tick = 0;
    env->episode_return = 0.0f;
    env->agent_points = env->opponent_points = 0;
    env->agent_y = env->opponent_y = (PONG_HEIGHT - PONG_PADDLE_HEIGHT) / 2;
    pong_serve(env, rng_int(&env->rng, 2) ? 1.0f : -1.0f);
    pong_observe(env);
}

static void c_reset(Pong *env) {
    pong_new_episode(env);
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
}

static float pong_clamp(float value, float low, float high) {
    return value < low ? low : (value > high ? high : value);
}

/* Bounce off a paddle whose top edge is paddle_y; the hit offset sets the new slope. */
static void pong_return(Pong *env, float paddle_y) {
    float offset = (env->ball_y + PONG_BALL_SIZE / 2 - paddle_y - PONG_PADDLE_HEIGHT / 2) /
                   (PONG_PADDLE_HEIGHT / 2 + PONG_BALL_SIZE / 2);
    env->ball_vx = -pong_clamp(env->ball_vx * PONG_BALL_SPEEDUP, -PONG_BALL_MAX_SPEED_X,
                               PONG_BALL_MAX_SPEED_X);
    env->ball_vy = pong_clamp(offset, -1.0f, 1.0f) * PONG_BALL_MAX_SPEED_Y;
}

/* One frame; returns +1 / -1 when the agent / opponent scores, else 0. */
static float pong_frame(Pong *env, int action) {
    const float paddle_max = PONG_HEIGHT - PONG_PADDLE_HEIGHT;
    /* Branch-free: random actions would mispredict. */
    env->agent_y += PONG_PADDLE_SPEED * (float)((action == PONG_DOWN) - (action == PONG_UP));
    env->agent_y = pong_clamp(env->agent_y, 0.0f, paddle_max);
    float chase = env->ball_y + PONG_BALL_SIZE / 2 - (env->opponent_y + PONG_PADDLE_HEIGHT / 2);
    env->opponent_y += pong_clamp(chase, -PONG_OPPONENT_SPEED, PONG_OPPONENT_SPEED);
    env->opponent_y = pong_clamp(env->opponent_y, 0.0f, paddle_max);

    env->ball_x += env->ball_vx;
    env->ball_y += env->ball_vy;
    if (env->ball_y < 0.0f || env->ball_y > PONG_HEIGHT - PONG_BALL_SIZE) {
        env->ball_vy = -env->ball_vy;
        env->ball_y = pong_clamp(env->ball_y, 0.0f, PONG_HEIGHT - PONG_BALL_SIZE);
    }
    const float agent_face = PONG_WIDTH - PONG_PADDLE_WIDTH - PONG_BALL_SIZE;
    if (env->ball_vx > 0 && env->ball_x >= agent_face) {
        if (env->ball_y + PONG_BALL_SIZE >= env->agent_y &&
            env->ball_y <= env->agent_y + PONG_PADDLE_HEIGHT) {
            env->ball_x = agent_face;
            pong_return(env, env->agent_y);
        } else if (env->ball_x >= PONG_WIDTH - PONG_BALL_SIZE) {
            pong_serve(env, -1.0f);
            return -1.0f;
        }
    } else if (env->ball_vx < 0 && env->ball_x <= PONG_PADDLE_WIDTH) {
        if (env->ball_y + PONG_BALL_SIZE >= env->opponent_y &&
            env->ball_y <= env->opponent_y + PONG_PADDLE_HEIGHT) {
            env->ball_x = PONG_PADDLE_WIDTH;
            pong_return(env, env->opponent_y);
        } else if (env->ball_x <= 0.0f) {
            pong_serve(env, 1.0f);
            return 1.0f;
        }
    }
    return 0.0f;
}

static void c_step(Pong *env) {
    float reward = 0.0f;
    for (int frame = 0; frame < env->frameskip; frame++) {
        float point = pong_frame(env, env->actions[0]);
        reward += point;
        env->agent_points += point > 0;
        env->opponent_points += point < 0;
        if (env->agent_points >= env->max_score || env->opponent_points >= env->max_score) break;
    }
    env->tick++;
    env->episode_return += reward;
    int terminal = env->agent_points >= env->max_score || env->opponent_points >= env->max_score;
    int truncation = !terminal && env->tick >= env->max_steps;
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)terminal;
    env->truncations[0] = (uint8_t)truncation;
    if (terminal || truncation) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->agent_points;
        env->log.opponent_score += (float)env->opponent_points;
        env->log.n += 1.0f;
        pong_new_episode(env);
    } else {
        pong_observe(env);
    }
}

static void c_frame_size(const Pong *env, int *width, int *height) {
    (void)env;
    *width = (int)PONG_WIDTH;
    *height = (int)PONG_HEIGHT;
}

static void c_render(const Pong *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int y = 0; y < (int)PONG_HEIGHT; y += 20) {
        raster_rect(canvas, (int)PONG_WIDTH / 2 - 1, y, 2, 10, COLOR_GRID);
    }
    raster_number(canvas, (int)PONG_WIDTH / 2 - 60, 10, env->opponent_points, 4, COLOR_GRAY);
    raster_number(canvas, (int)PONG_WIDTH / 2 + 40, 10, env->agent_points, 4, COLOR_GRAY);
    raster_rect(canvas, 0, (int)env->opponent_y, (int)PONG_PADDLE_WIDTH, (int)PONG_PADDLE_HEIGHT,
                COLOR_RED);
    raster_rect(canvas, (int)(PONG_WIDTH - PONG_PADDLE_WIDTH), (int)env->agent_y,
                (int)PONG_PADDLE_WIDTH, (int)PONG_PADDLE_HEIGHT, COLOR_CYAN);
    raster_rect(canvas, (int)env->ball_x, (int)env->ball_y, (int)PONG_BALL_SIZE,
                (int)PONG_BALL_SIZE, COLOR_WHITE);
}

static void c_close(Pong *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {3};
static const PufferKey KEYS[] = {{"idle", 0, 0}, {"up", 0, 1}, {"down", 0, 2}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Right paddle against a scripted left paddle that chases the ball at a capped speed. "
           "Observation: (8,) float32 in [-1, 1]: own paddle y, opponent paddle y, ball x, ball "
           "y, ball vx, ball vy, own points and opponent points (fractions of max_score). "
           "Action: Discrete(3): stay, up, down. Reward +1 per point won, -1 per point lost.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = 8,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Pong),
};

PUFFER_ENV_END(pong, Pong)

#endif
