/* Breakout: PufferLib 3.0's breakout task. A 32x32 ball bounces between the walls, the ceiling,
 * an 18x6 brick wall and the paddle; every contact is found by sweeping the ball's edges along
 * its velocity for one frame and taking the earliest (ties: the larger overlap), so a fast ball
 * never passes through a brick. SPEC.doc holds the rules table.
 *
 * Observation: 118 float32: paddle x / 576, paddle y / 330, ball x / 576, ball y / 330, ball vx
 * / 512, ball vy / 512 (pixels per frame), ball served (0 or 0.2), score / 864, balls left / 5,
 * paddle width / 62, then 108 bricks (1 broken, 0 standing), row-major from the top.
 * Actions: Discrete(3): stay, left, right, each held for `frameskip` frames (default 4).
 */
#ifndef PUFFER_BREAKOUT_H
#define PUFFER_BREAKOUT_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(breakout)

enum { BREAKOUT_COLS = 18, BREAKOUT_ROWS = 6, BREAKOUT_BRICKS = BREAKOUT_COLS * BREAKOUT_ROWS };
enum { BREAKOUT_SCALARS = 10, BREAKOUT_OBS = BREAKOUT_SCALARS + BREAKOUT_BRICKS };
enum { BREAKOUT_STAY, BREAKOUT_LEFT, BREAKOUT_RIGHT };
#define BREAKOUT_WIDTH 576.0f /* pixels */
#define BREAKOUT_HEIGHT 330.0f
#define BREAKOUT_BRICK_WIDTH 32.0f
#define BREAKOUT_BRICK_HEIGHT 12.0f
#define BREAKOUT_WALL_TOP 50.0f /* the top row's upper edge */
#define BREAKOUT_PADDLE_WIDTH 62.0f
#define BREAKOUT_PADDLE_HEIGHT 8.0f
#define BREAKOUT_PADDLE_Y (BREAKOUT_HEIGHT - BREAKOUT_PADDLE_HEIGHT - 10.0f) /* top edge, 312 */
#define BREAKOUT_BALL 32.0f                                                  /* side */
#define BREAKOUT_FPS 60.0f /* speeds below are pixels per second */
#define BREAKOUT_PADDLE_SPEED 620.0f
#define BREAKOUT_SERVE_SPEED 256.0f
#define BREAKOUT_SPEED_STEP 64.0f /* added every 4th paddle hit */
#define BREAKOUT_MAX_SPEED 448.0f /* also set by breaking a brick in the top 3 rows */
#define BREAKOUT_SERVE_ANGLE (3.14159265f / 3.25f) /* from straight down, left or right */
#define BREAKOUT_BOUNCE_ANGLE (3.14159265f / 4.0f) /* paddle edge; the centre sends it straight */
#define BREAKOUT_SERVE_Y (BREAKOUT_HEIGHT / 2.0f - 30.0f)
#define BREAKOUT_VELOCITY_SCALE 512.0f /* observation divisor of pixels per frame */
#define BREAKOUT_BALLS 5               /* spare balls: 6 in play per episode */
enum { BREAKOUT_WALL_POINTS = BREAKOUT_COLS * 2 * (7 + 4 + 1) }; /* 432 per wall, two walls */
enum { BREAKOUT_MAX_SCORE = 2 * BREAKOUT_WALL_POINTS };

typedef struct {
    float perf; /* score / 864 */
    float score;
    float episode_return;
    float episode_length;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations; /* (1, 118), bricks updated in place */
    int32_t *actions;
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int frameskip; /* config: frames per action */
    int max_steps; /* config: steps before truncation, 0 for none */
    int tick;      /* agent steps this episode */
    int score, balls_left, served, hits;
    float paddle_x, paddle_width; /* left edge; halves once the ball reaches the ceiling */
    float ball_x, ball_y;         /* top-left corner */
    float ball_vx, ball_vy;       /* pixels per frame */
    float ball_speed;             /* pixels per second, applied at the next paddle hit */
    uint8_t broken[BREAKOUT_BRICKS];
} Breakout;

static const PufferField CONFIG[] = {
    {"frameskip", offsetof(Breakout, frameskip), PUFFER_INT, 4, 1, 1e9,
     "frames each action is held for"},
    {"max_steps", offsetof(Breakout, max_steps), PUFFER_INT, 0, 0, 1e9,
     "steps before an episode is truncated; 0: never (theirs has no limit)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int breakout_points(int brick) {
    return 7 - 3 * (brick / BREAKOUT_COLS / 2); /* rows from the top: 7, 7, 4, 4, 1, 1 */
}

static void c_init(Breakout *env) {
    env->num_agents = 1;
}

static void breakout_observe(Breakout *env) {
    float *obs = env->observations;
    obs[0] = env->paddle_x * (1.0f / BREAKOUT_WIDTH);
    obs[1] = BREAKOUT_PADDLE_Y * (1.0f / BREAKOUT_HEIGHT);
    obs[2] = env->ball_x * (1.0f / BREAKOUT_WIDTH);
    obs[3] = env->ball_y * (1.0f / BREAKOUT_HEIGHT);
    obs[4] = env->ball_vx * (1.0f / BREAKOUT_VELOCITY_SCALE);
    obs[5] = env->ball_vy * (1.0f / BREAKOUT_VELOCITY_SCALE);
    obs[6] = (float)env->served * (1.0f / BREAKOUT_BALLS);
    obs[7] = (float)env->score * (1.0f / BREAKOUT_MAX_SCORE);
    obs[8] = (float)env->balls_left * (1.0f / BREAKOUT_BALLS);
    obs[9] = env->paddle_width * (1.0f / BREAKOUT_PADDLE_WIDTH);
}

/* A new ball: paddle centred at full width, the ball resting above it until the next frame
 * serves it. */
static void breakout_new_ball(Breakout *env) {
    env->served = 0;
    env->hits = 0;
    env->ball_speed = BREAKOUT_SERVE_SPEED;
    env->paddle_width = BREAKOUT_PADDLE_WIDTH;
    env->paddle_x = (BREAKOUT_WIDTH - BREAKOUT_PADDLE_WIDTH) / 2.0f;
    env->ball_x = env->paddle_x + (BREAKOUT_PADDLE_WIDTH - BREAKOUT_BALL) / 2.0f;
    env->ball_y = BREAKOUT_SERVE_Y;
    env->ball_vx = env->ball_vy = 0.0f;
}

static void breakout_build_wall(Breakout *env) {
    memset(env->broken, 0, sizeof(env->broken));
    memset(env->observations + BREAKOUT_SCALARS, 0, BREAKOUT_BRICKS * sizeof(float));
}

static void breakout_new_episode(Breakout *env) {
    env->tick = 0;
    env->score = 0;
    env->balls_left = BREAKOUT_BALLS;
    breakout_build_wall(env);
    breakout_new_ball(env);
}

static void c_reset(Breakout *env) {
    breakout_new_episode(env);
    breakout_observe(env);
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
}

/* The earliest contact found so far in this frame: where the ball stops and how it leaves. */
enum { BREAKOUT_HIT_NONE = -4, BREAKOUT_HIT_SIDE, BREAKOUT_HIT_CEILING, BREAKOUT_HIT_PADDLE };
typedef struct {
    float t, overlap; /* fraction of the frame's motion; shared length of the touching edges */
    float x, y, vx, vy;
    int what; /* a brick index, or BREAKOUT_HIT_* */
} BreakoutContact;

/* Overlap of [a, a + la] and [b, b + lb]. */
static inline float breakout_overlap(float a, float la, float b, float lb) {
    return fminf(a + la, b + lb) - fmaxf(a, b);
}

/* Takes the contact if it is within this frame and earlier than the best (or as early with
 * more overlap). */
static inline int breakout_better(const BreakoutContact *best, float t, float overlap) {
    return overlap > 0.0f && t > 0.0f && t <= 1.0f &&
           (t < best->t || (t == best->t && overlap > best->overlap));
}

/* The ball's vertical edge at x (its left edge, or its right edge when `right`) meeting the
 * vertical segment x = wx, y in [wy, wy + wh], during this frame. */
static inline int breakout_vertical(const Breakout *env, BreakoutContact *best, float wx, float wy,
                                    float wh, int right, int what) {
    float edge = env->ball_x + (right ? BREAKOUT_BALL : 0.0f);
    float t = (wx - edge) / env->ball_vx;
    float y = env->ball_y + env->ball_vy * t;
    float overlap = breakout_overlap(wy, wh, y, BREAKOUT_BALL);
    if (!breakout_better(best, t, overlap)) return 0;
    *best = (BreakoutContact){
        t, overlap, wx - (right ? BREAKOUT_BALL : 0.0f), y, -env->ball_vx, env->ball_vy, what};
    return 1;
}

/* The ball's top edge (or bottom edge when `bottom`) meeting y = wy, x in [wx, wx + ww]. */
static inline int breakout_horizontal(const Breakout *env, BreakoutContact *best, float wx,
                                      float wy, float ww, int bottom, int what) {
    float edge = env->ball_y + (bottom ? BREAKOUT_BALL : 0.0f);
    float t = (wy - edge) / env->ball_vy;
    float x = env->ball_x + env->ball_vx * t;
    float overlap = breakout_overlap(wx, ww, x, BREAKOUT_BALL);
    if (!breakout_better(best, t, overlap)) return 0;
    *best = (BreakoutContact){
        t, overlap, x, wy - (bottom ? BREAKOUT_BALL : 0.0f), env->ball_vx, -env->ball_vy, what};
    return 1;
}

/* Standing bricks in the cells the ball's box sweeps this frame; each faces the ball with the
 * sides its velocity approaches. */
static void breakout_contact_bricks(const Breakout *env, BreakoutContact *best) {
    const float x = env->ball_x, y = env->ball_y, vx = env->ball_vx, vy = env->ball_vy;
    int col0 = (int)floorf(fminf(x, x + vx) / BREAKOUT_BRICK_WIDTH);
    int col1 = (int)floorf(fmaxf(x, x + vx) / BREAKOUT_BRICK_WIDTH + 1.0f);
    int row0 = (int)floorf((fminf(y, y + vy) - BREAKOUT_WALL_TOP) / BREAKOUT_BRICK_HEIGHT);
    int row1 =
        (int)floorf((fmaxf(y, y + vy) + BREAKOUT_BALL - BREAKOUT_WALL_TOP) / BREAKOUT_BRICK_HEIGHT);
    col0 = col0 < 0 ? 0 : col0;
    col1 = col1 > BREAKOUT_COLS - 1 ? BREAKOUT_COLS - 1 : col1;
    row0 = row0 < 0 ? 0 : row0;
    row1 = row1 > BREAKOUT_ROWS - 1 ? BREAKOUT_ROWS - 1 : row1;
    for (int row = row0; row <= row1; row++) {
        float top = BREAKOUT_WALL_TOP + (float)row * BREAKOUT_BRICK_HEIGHT;
        for (int col = col0; col <= col1; col++) {
            int brick = row * BREAKOUT_COLS + col;
            if (env->broken[brick]) continue;
            float left = (float)col * BREAKOUT_BRICK_WIDTH;
            if (vx > 0.0f) breakout_vertical(env, best, left, top, BREAKOUT_BRICK_HEIGHT, 1, brick);
            if (vx < 0.0f)
                breakout_vertical(env, best, left + BREAKOUT_BRICK_WIDTH, top,
                                  BREAKOUT_BRICK_HEIGHT, 0, brick);
            if (vy > 0.0f)
                breakout_horizontal(env, best, left, top, BREAKOUT_BRICK_WIDTH, 1, brick);
            if (vy < 0.0f)
                breakout_horizontal(env, best, left, top + BREAKOUT_BRICK_HEIGHT,
                                    BREAKOUT_BRICK_WIDTH, 0, brick);
        }
    }
}

/* The paddle sends the ball off at an angle set by where it struck: straight up at the centre,
 * 45 degrees at an edge (more when the ball overhangs it). Every 4th hit speeds the next. */
static void breakout_paddle_bounce(Breakout *env) {
    float offset = (env->ball_x + BREAKOUT_BALL / 2.0f - env->paddle_x) / env->paddle_width;
    float angle = BREAKOUT_BOUNCE_ANGLE * (2.0f * offset - 1.0f);
    env->ball_vx = sinf(angle) * env->ball_speed / BREAKOUT_FPS;
    env->ball_vy = -cosf(angle) * env->ball_speed / BREAKOUT_FPS;
    env->hits++;
    if (env->hits % 4 == 0 && env->ball_speed < BREAKOUT_MAX_SPEED)
        env->ball_speed += BREAKOUT_SPEED_STEP;
    /* The first wall cleared: the second one appears when the ball is returned. */
    if (env->score == BREAKOUT_WALL_POINTS) breakout_build_wall(env);
}

/* Moves the ball one frame: to its first contact, reflected, or straight on. Returns points. */
static int breakout_move_ball(Breakout *env) {
    /* Floating-point corner cases can leave the ball just outside; push it back in. */
    const float nudge = 1.1f * BREAKOUT_MAX_SPEED / BREAKOUT_FPS;
    if (env->ball_x < 0.0f) env->ball_x += nudge;
    if (env->ball_x > BREAKOUT_WIDTH) env->ball_x -= nudge;
    if (env->ball_y < 0.0f) env->ball_y += nudge;

    BreakoutContact best = {2.0f, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f, BREAKOUT_HIT_NONE};
    breakout_contact_bricks(env, &best);
    if (env->ball_vx < 0.0f)
        breakout_vertical(env, &best, 0.0f, 0.0f, BREAKOUT_HEIGHT, 0, BREAKOUT_HIT_SIDE);
    if (env->ball_vx > 0.0f)
        breakout_vertical(env, &best, BREAKOUT_WIDTH, 0.0f, BREAKOUT_HEIGHT, 1, BREAKOUT_HIT_SIDE);
    if (env->ball_vy < 0.0f)
        breakout_horizontal(env, &best, 0.0f, 0.0f, BREAKOUT_WIDTH, 0, BREAKOUT_HIT_CEILING);
    /* The paddle's top face, only once the ball's bottom can reach it this frame. A paddle hit
     * changes the velocity but leaves the ball where it is for this frame. */
    if (env->ball_y + BREAKOUT_BALL + env->ball_vy >= BREAKOUT_PADDLE_Y &&
        breakout_horizontal(env, &best, env->paddle_x, BREAKOUT_PADDLE_Y, env->paddle_width, 1,
                            BREAKOUT_HIT_PADDLE)) {
        breakout_paddle_bounce(env);
        return 0;
    }
    if (best.what == BREAKOUT_HIT_NONE) {
        env->ball_x += env->ball_vx;
        env->ball_y += env->ball_vy;
        return 0;
    }
    env->ball_x = best.x, env->ball_y = best.y;
    env->ball_vx = best.vx, env->ball_vy = best.vy;
    if (best.what == BREAKOUT_HIT_CEILING) env->paddle_width = BREAKOUT_PADDLE_WIDTH / 2.0f;
    if (best.what < 0) return 0;
    env->broken[best.what] = 1;
    env->observations[BREAKOUT_SCALARS + best.what] = 1.0f;
    if (best.what < 3 * BREAKOUT_COLS) env->ball_speed = BREAKOUT_MAX_SPEED;
    return breakout_points(best.what);
}

static void breakout_end_episode(Breakout *env) {
    env->log.perf += (float)env->score * (1.0f / BREAKOUT_MAX_SCORE);
    env->log.score += (float)env->score;
    env->log.episode_return += (float)env->score;
    env->log.episode_length += (float)env->tick;
    env->log.n += 1.0f;
    breakout_new_episode(env);
}

/* One frame. The frame after a new ball serves it (the action is ignored then); an episode that
 * ends mid-step is followed by the next one for the step's remaining frames. */
static int breakout_frame(Breakout *env, int action) {
    if (!env->served) {
        env->served = 1;
        float sign = (rng_next(&env->rng) & 1) ? -1.0f : 1.0f;
        env->ball_vx = sign * sinf(BREAKOUT_SERVE_ANGLE) * env->ball_speed / BREAKOUT_FPS;
        env->ball_vy = cosf(BREAKOUT_SERVE_ANGLE) * env->ball_speed / BREAKOUT_FPS;
    } else {
        /* Branch-free: random actions would mispredict. */
        float move = (float)((action == BREAKOUT_RIGHT) - (action == BREAKOUT_LEFT));
        env->paddle_x += move * (BREAKOUT_PADDLE_SPEED / BREAKOUT_FPS);
        env->paddle_x =
            env->paddle_x <= 0.0f ? 0.0f : fminf(env->paddle_x, BREAKOUT_WIDTH - env->paddle_width);
    }
    int points = breakout_move_ball(env);
    env->score += points;
    if (env->ball_y >= BREAKOUT_PADDLE_Y + BREAKOUT_PADDLE_HEIGHT) {
        env->balls_left--;
        breakout_new_ball(env);
    }
    if (env->balls_left < 0 || env->score == BREAKOUT_MAX_SCORE) {
        env->terminals[0] = 1;
        breakout_end_episode(env);
    }
    return points;
}

static void c_step(Breakout *env) {
    env->terminals[0] = 0;
    env->truncations[0] = 0;
    env->tick++;
    int points = 0;
    for (int frame = 0; frame < env->frameskip; frame++)
        points += breakout_frame(env, env->actions[0]);
    env->rewards[0] = (float)points;
    if (env->max_steps > 0 && env->tick >= env->max_steps && !env->terminals[0]) {
        env->truncations[0] = 1;
        breakout_end_episode(env);
    }
    breakout_observe(env);
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
            if (env->broken[row * BREAKOUT_COLS + col]) continue;
            raster_rect(canvas, (int)(col * BREAKOUT_BRICK_WIDTH) + 1,
                        (int)(BREAKOUT_WALL_TOP + row * BREAKOUT_BRICK_HEIGHT) + 1,
                        (int)BREAKOUT_BRICK_WIDTH - 2, (int)BREAKOUT_BRICK_HEIGHT - 2,
                        row_colors[row]);
        }
    }
    raster_rect(canvas, (int)env->paddle_x, (int)BREAKOUT_PADDLE_Y, (int)env->paddle_width,
                (int)BREAKOUT_PADDLE_HEIGHT, COLOR_MAGENTA);
    raster_circle(canvas, (int)(env->ball_x + BREAKOUT_BALL / 2),
                  (int)(env->ball_y + BREAKOUT_BALL / 2), (int)(BREAKOUT_BALL / 2), COLOR_WHITE);
    raster_number(canvas, 10, 10, env->score, 4, COLOR_WHITE);
    for (int i = 0; i < env->balls_left; i++)
        raster_circle(canvas, (int)BREAKOUT_WIDTH - 20 - 20 * i, 20, 6, COLOR_MAGENTA);
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
    .doc = "PufferLib 3.0's breakout: break two 18x6 brick walls with a 32x32 ball on a 576x330 "
           "court. Observation: (118,) float32: paddle x / 576, paddle y / 330, ball x / 576, "
           "ball y / 330, ball vx / 512, ball vy / 512 (pixels per frame), ball served (0 or "
           "0.2), score / 864, balls left / 5, paddle width / 62; then 108 bricks (1 broken, 0 "
           "standing), row-major from the top. Action: Discrete(3): stay, left, right, held "
           "for `frameskip` frames. Reward: the points of the bricks broken in the step.\n\n"
           "| rule | value |\n|---|---|\n"
           "| bricks | 32x12 px, top row at y = 50; points 7, 7, 4, 4, 1, 1 by row from the top "
           "|\n"
           "| walls | two: the second appears when the ball returns to the paddle after the "
           "first is cleared (432 points); 864 ends the episode |\n"
           "| paddle | 62x8 px at y = 312, 620 px/s (10.33 px/frame); 31 px wide once the ball "
           "reaches the ceiling, until the next ball |\n"
           "| serve | from (272, 135) on the frame after a new ball, 256 px/s (4.27 px/frame) "
           "at 180/3.25 degrees from straight down, left or right at random |\n"
           "| paddle bounce | angle -45..45 degrees by hit offset; +64 px/s every 4th hit, up "
           "to 448 (7.47 px/frame) |\n"
           "| top 3 rows | breaking one sets the speed to 448 px/s from the next paddle hit |\n"
           "| balls | 6 per episode; one is lost when its top passes y = 320 |\n"
           "| episode end | terminal after the 6th ball or at 864 points; no time limit |\n\n"
           "Differences: court, brick and ball sizes are fixed at their defaults (theirs are "
           "parameters; the observation width is static here); no continuous-action variant; "
           "`max_steps` (default 0, off) can truncate; `episode_length` counts agent steps "
           "(theirs counts frames).",
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
