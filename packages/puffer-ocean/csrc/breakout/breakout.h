/* Breakout: Atari 2600 Breakout's rules on an 18x6 wall. The ball bounces off the walls, the
 * ceiling and the paddle (the hit offset sets its angle); each brick it touches breaks and
 * reflects it. Rows score 7, 7, 4, 4, 1, 1 from the top. Missing the ball costs a life and
 * re-serves it; the episode ends when lives run out or the wall is cleared.
 *
 * Observation: 118 float32 in [-1, 1]: paddle x, paddle y, ball x, ball y (court fractions),
 * ball vx, vy (fractions of the top speed), ball in play, score / max score, lives / max lives,
 * paddle width / court width, then 108 bricks (1 standing, 0 broken), row-major from the top.
 * Actions: Discrete(3): stay, left, right, each repeated for `frameskip` frames (default 4).
 */
#ifndef PUFFER_BREAKOUT_H
#define PUFFER_BREAKOUT_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(breakout)

enum { BREAKOUT_COLS = 18, BREAKOUT_ROWS = 6, BREAKOUT_BRICKS = BREAKOUT_COLS * BREAKOUT_ROWS };
enum { BREAKOUT_SCALARS = 10, BREAKOUT_OBS = BREAKOUT_SCALARS + BREAKOUT_BRICKS };
enum { BREAKOUT_STAY, BREAKOUT_LEFT, BREAKOUT_RIGHT };
#define BREAKOUT_BRICK_WIDTH 32.0f /* pixels */
#define BREAKOUT_BRICK_HEIGHT 12.0f
#define BREAKOUT_WIDTH (BREAKOUT_COLS * BREAKOUT_BRICK_WIDTH) /* 576 */
#define BREAKOUT_HEIGHT 330.0f
#define BREAKOUT_WALL_TOP 60.0f /* gap between the ceiling and the top row */
#define BREAKOUT_PADDLE_WIDTH 62.0f
#define BREAKOUT_PADDLE_HEIGHT 8.0f
#define BREAKOUT_PADDLE_Y (BREAKOUT_HEIGHT - 20.0f) /* paddle top edge */
#define BREAKOUT_PADDLE_SPEED 8.0f                  /* pixels per frame */
#define BREAKOUT_BALL_SIZE 6.0f
#define BREAKOUT_BALL_SPEED 5.0f /* pixels per frame; below the brick height, so no tunnelling */
#define BREAKOUT_BALL_MAX_SPEED 7.0f /* after hitting the top rows */
#define BREAKOUT_MAX_LIVES 5
static const int BREAKOUT_ROW_POINTS[BREAKOUT_ROWS] = {7, 7, 4, 4, 1, 1};
#define BREAKOUT_MAX_SCORE (BREAKOUT_COLS * 2 * (7 + 4 + 1))

typedef struct {
    float episode_return;
    float episode_length;
    float score;          /* points, 432 for a cleared wall */
    float bricks_cleared; /* 1 when the wall was cleared */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "bricks_cleared",
                                  "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations; /* (1, 118) */
    int32_t *actions;
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int frameskip; /* config: frames per action */
    int max_steps; /* config: steps before truncation */
    int tick;
    float paddle_x; /* left edge */
    float ball_x, ball_y, ball_vx, ball_vy, ball_speed;
    int lives, score, bricks_left;
    uint8_t bricks[BREAKOUT_BRICKS];
} Breakout;

static const PufferField CONFIG[] = {
    {"frameskip", offsetof(Breakout, frameskip), PUFFER_INT, 4, 1, 1e9,
     "frames each action is repeated for (4, as Atari agents usually play)"},
    {"max_steps", offsetof(Breakout, max_steps), PUFFER_INT, 10000, 1, 1e9,
     "steps before an episode is truncated"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Breakout *env) {
    env->num_agents = 1;
}

/* The ten scalars; bricks are written when they change (all at reset, one per hit). */
static void breakout_observe(Breakout *env) {
    float *obs = env->observations;
    obs[0] = env->paddle_x * (1.0f / (BREAKOUT_WIDTH - BREAKOUT_PADDLE_WIDTH));
    obs[1] = BREAKOUT_PADDLE_Y / BREAKOUT_HEIGHT;
    obs[2] = env->ball_x * (1.0f / (BREAKOUT_WIDTH - BREAKOUT_BALL_SIZE));
    obs[3] = env->ball_y * (1.0f / BREAKOUT_HEIGHT);
    obs[4] = env->ball_vx * (1.0f / BREAKOUT_BALL_MAX_SPEED);
    obs[5] = env->ball_vy * (1.0f / BREAKOUT_BALL_MAX_SPEED);
    obs[6] = 1.0f; /* the ball is always in play: it is served automatically */
    obs[7] = (float)env->score * (1.0f / BREAKOUT_MAX_SCORE);
    obs[8] = (float)env->lives * (1.0f / BREAKOUT_MAX_LIVES);
    obs[9] = BREAKOUT_PADDLE_WIDTH / BREAKOUT_WIDTH;
}

/* Ball below the wall, heading down at a random angle within 45 degrees of vertical. */
static void breakout_serve(Breakout *env) {
    float angle = rng_uniform(&env->rng, -0.785f, 0.785f);
    env->ball_speed = BREAKOUT_BALL_SPEED;
    env->ball_x = rng_uniform(&env->rng, 0.25f, 0.75f) * (BREAKOUT_WIDTH - BREAKOUT_BALL_SIZE);
    env->ball_y = BREAKOUT_WALL_TOP + BREAKOUT_ROWS * BREAKOUT_BRICK_HEIGHT + 30.0f;
    env->ball_vx = env->ball_speed * sinf(angle);
    env->ball_vy = env->ball_speed * cosf(angle);
}

static void breakout_new_episode(Breakout *env) {
    env->tick = 0;
    env->lives = BREAKOUT_MAX_LIVES;
    env->score = 0;
    env->bricks_left = BREAKOUT_BRICKS;
    env->paddle_x = (BREAKOUT_WIDTH - BREAKOUT_PADDLE_WIDTH) / 2;
    memset(env->bricks, 1, sizeof(env->bricks));
    for (int i = 0; i < BREAKOUT_BRICKS; i++)
        env->observations[BREAKOUT_SCALARS + i] = 1.0f;
    breakout_serve(env);
    breakout_observe(env);
}

static void c_reset(Breakout *env) {
    breakout_new_episode(env);
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
}

/* Breaks the brick under the ball's centre, if any, and reflects the ball; returns points. */
static int breakout_hit_brick(Breakout *env, float prev_cx, float prev_cy) {
    float cx = env->ball_x + BREAKOUT_BALL_SIZE / 2, cy = env->ball_y + BREAKOUT_BALL_SIZE / 2;
    float wall_y = cy - BREAKOUT_WALL_TOP;
    if (wall_y < 0.0f || wall_y >= BREAKOUT_ROWS * BREAKOUT_BRICK_HEIGHT) return 0;
    int row = (int)(wall_y / BREAKOUT_BRICK_HEIGHT);
    int col = (int)(cx / BREAKOUT_BRICK_WIDTH);
    if (col < 0 || col >= BREAKOUT_COLS) return 0;
    int index = row * BREAKOUT_COLS + col;
    if (!env->bricks[index]) return 0;
    env->bricks[index] = 0;
    env->observations[BREAKOUT_SCALARS + index] = 0.0f;
    env->bricks_left--;
    /* Entered through a side if the previous centre was in another column of the same row. */
    int prev_col = (int)(prev_cx / BREAKOUT_BRICK_WIDTH);
    int prev_row = (int)((prev_cy - BREAKOUT_WALL_TOP) / BREAKOUT_BRICK_HEIGHT);
    if (prev_col != col && prev_row == row && prev_cy >= BREAKOUT_WALL_TOP) {
        env->ball_vx = -env->ball_vx;
    } else {
        env->ball_vy = -env->ball_vy;
    }
    /* Reaching the top rows speeds the ball up, as in the Atari game. */
    if (row < 2 && env->ball_speed < BREAKOUT_BALL_MAX_SPEED) {
        float factor = BREAKOUT_BALL_MAX_SPEED / env->ball_speed;
        env->ball_vx *= factor;
        env->ball_vy *= factor;
        env->ball_speed = BREAKOUT_BALL_MAX_SPEED;
    }
    return BREAKOUT_ROW_POINTS[row];
}

/* One frame; returns the points scored. */
static int breakout_frame(Breakout *env, int action) {
    /* Branch-free: random actions would mispredict. */
    env->paddle_x +=
        BREAKOUT_PADDLE_SPEED * (float)((action == BREAKOUT_RIGHT) - (action == BREAKOUT_LEFT));
    if (env->paddle_x < 0.0f) env->paddle_x = 0.0f;
    if (env->paddle_x > BREAKOUT_WIDTH - BREAKOUT_PADDLE_WIDTH) {
        env->paddle_x = BREAKOUT_WIDTH - BREAKOUT_PADDLE_WIDTH;
    }
    float prev_cx = env->ball_x + BREAKOUT_BALL_SIZE / 2;
    float prev_cy = env->ball_y + BREAKOUT_BALL_SIZE / 2;
    env->ball_x += env->ball_vx;
    env->ball_y += env->ball_vy;
    if (env->ball_x < 0.0f) {
        env->ball_x = 0.0f;
        env->ball_vx = -env->ball_vx;
    } else if (env->ball_x > BREAKOUT_WIDTH - BREAKOUT_BALL_SIZE) {
        env->ball_x = BREAKOUT_WIDTH - BREAKOUT_BALL_SIZE;
        env->ball_vx = -env->ball_vx;
    }
    if (env->ball_y < 0.0f) {
        env->ball_y = 0.0f;
        env->ball_vy = -env->ball_vy;
    }
    int points = breakout_hit_brick(env, prev_cx, prev_cy);
    float bottom = env->ball_y + BREAKOUT_BALL_SIZE;
    if (env->ball_vy > 0 && bottom >= BREAKOUT_PADDLE_Y &&
        bottom <= BREAKOUT_PADDLE_Y + BREAKOUT_PADDLE_HEIGHT + env->ball_vy &&
        env->ball_x + BREAKOUT_BALL_SIZE >= env->paddle_x &&
        env->ball_x <= env->paddle_x + BREAKOUT_PADDLE_WIDTH) {
        /* Offset -1 (left edge) .. 1 (right edge) sets the angle, up to 60 degrees. */
        float offset =
            (env->ball_x + BREAKOUT_BALL_SIZE / 2 - env->paddle_x - BREAKOUT_PADDLE_WIDTH / 2) /
            (BREAKOUT_PADDLE_WIDTH / 2 + BREAKOUT_BALL_SIZE / 2);
        float angle = 1.047f * (offset < -1.0f ? -1.0f : (offset > 1.0f ? 1.0f : offset));
        env->ball_vx = env->ball_speed * sinf(angle);
        env->ball_vy = -env->ball_speed * cosf(angle);
        env->ball_y = BREAKOUT_PADDLE_Y - BREAKOUT_BALL_SIZE;
    } else if (env->ball_y > BREAKOUT_HEIGHT - BREAKOUT_BALL_SIZE) {
        env->lives--;
        if (env->lives > 0) breakout_serve(env);
    }
    return points;
}

static void c_step(Breakout *env) {
    int points = 0;
    for (int frame = 0; frame < env->frameskip; frame++) {
        points += breakout_frame(env, env->actions[0]);
        if (env->lives <= 0 || env->bricks_left == 0) break;
    }
    env->score += points;
    env->tick++;
    int terminal = env->lives <= 0 || env->bricks_left == 0;
    int truncation = !terminal && env->tick >= env->max_steps;
    env->rewards[0] = (float)points;
    env->terminals[0] = (uint8_t)terminal;
    env->truncations[0] = (uint8_t)truncation;
    if (terminal || truncation) {
        env->log.episode_return += (float)env->score;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->score;
        env->log.bricks_cleared += (float)(env->bricks_left == 0);
        env->log.n += 1.0f;
        breakout_new_episode(env);
    } else {
        breakout_observe(env);
    }
}

static void c_frame_size(const Breakout *env, int *width, int *height) {
    (void)env;
    *width = (int)BREAKOUT_WIDTH;
    *height = (int)BREAKOUT_HEIGHT;
}

static void c_render(const Breakout *env, Canvas *canvas) {
    const Color row_colors[BREAKOUT_ROWS] = {COLOR_RED,   COLOR_ORANGE, COLOR_YELLOW,
                                             COLOR_GREEN, COLOR_CYAN,   COLOR_BLUE};
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int row = 0; row < BREAKOUT_ROWS; row++) {
        for (int col = 0; col < BREAKOUT_COLS; col++) {
            if (!env->bricks[row * BREAKOUT_COLS + col]) continue;
            raster_rect(canvas, (int)(col * BREAKOUT_BRICK_WIDTH) + 1,
                        (int)(BREAKOUT_WALL_TOP + row * BREAKOUT_BRICK_HEIGHT) + 1,
                        (int)BREAKOUT_BRICK_WIDTH - 2, (int)BREAKOUT_BRICK_HEIGHT - 2,
                        row_colors[row]);
        }
    }
    raster_rect(canvas, (int)env->paddle_x, (int)BREAKOUT_PADDLE_Y, (int)BREAKOUT_PADDLE_WIDTH,
                (int)BREAKOUT_PADDLE_HEIGHT, COLOR_MAGENTA);
    raster_rect(canvas, (int)env->ball_x, (int)env->ball_y, (int)BREAKOUT_BALL_SIZE,
                (int)BREAKOUT_BALL_SIZE, COLOR_WHITE);
    raster_number(canvas, 10, 10, env->score, 4, COLOR_WHITE);
    for (int i = 0; i < env->lives; i++) {
        raster_circle(canvas, (int)BREAKOUT_WIDTH - 20 - 20 * i, 20, 6, COLOR_MAGENTA);
    }
}

static void c_close(Breakout *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {3};
static const PufferKey KEYS[] = {{"idle", 0, BREAKOUT_STAY},
                                 {"left", 0, BREAKOUT_LEFT},
                                 {"right", 0, BREAKOUT_RIGHT},
                                 {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Atari Breakout's rules: break the 18x6 wall with the ball, five lives. Observation: "
           "(118,) float32 in [-1, 1]: paddle x, paddle y, ball x, ball y, ball vx, ball vy, "
           "ball in play, score / 432, lives / 5, paddle width; then 108 bricks (1 standing), "
           "row-major from the top. Action: Discrete(3): stay, left, right. Reward: the points "
           "of the bricks broken in the step (7, 7, 4, 4, 1, 1 by row from the top).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = BREAKOUT_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Breakout),
};

PUFFER_ENV_END(breakout, Breakout)

#endif
