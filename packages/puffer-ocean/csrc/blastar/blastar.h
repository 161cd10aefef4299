/* Blastar: shoot down an enemy ship that sweeps across the screen and bombs you from above
 * (PufferLib 3.0's blastar task, after the 1981 game; rules restated in our own code).
 *
 * Rules (pixels per step; screen 640 x 480):
 * | you        | 17 x 17, start at a random point, move 8 (left, right, up, down), 10 lives  |
 * | your shot  | fire (action 5) while no enemy bomb falls: a 17 x 6 shot from your top-left |
 * |            | corner rises 12; firing again restarts it                                    |
 * | enemy      | 16 x 17, enters at (-30, 50), flies right 4 and wraps to x = -16; never     |
 * |            | below y = 420.5                                                              |
 * | attack     | when the enemy is above you with centres less than 4 apart: half the time   |
 * |            | it stops and drops a 10 x 12 bomb (falls 12) that freezes you until it      |
 * |            | leaves the screen; otherwise it moves on 4 more                              |
 * | hits       | ramming the enemy or being bombed: -1 life, 30 frozen steps, the enemy      |
 * |            | re-enters at x = -16 at a random height; your shot hitting the enemy from   |
 * |            | below: score +1, 30 steps before it re-enters (90%: at a random height)     |
 * | reward     | while you are below the enemy: 0.0005 per new shot + 1.5 per kill + (4.5 if |
 * |            | the enemy had not wrapped this step, else 3.5) x (1 - enemy x / 640) per    |
 * |            | kill + 0.01 (2 - height gap / 480) + score / (step + 1); times (1 + 0.1     |
 * |            | kill streak); capped at 0 unless the centres are more than 4.8 apart; 0     |
 * |            | when you are in the right half of the screen or frozen                      |
 * | game end   | no lives left, or more than 50 kills (terminal); max_steps [0: none]       |
 * |            | truncates (our addition, for tests and short runs)                           |
 * Observation: (10,) float32: your x / 640, y / 480; the enemy's; your shot x, y and an active
 * flag; the bomb's (zeros when inactive). Action: Discrete(6): no-op, left, right, up, down,
 * fire.
 *
 * Deliberate difference from PufferLib 3.0: the step that loses the last life pays 0 (theirs
 * goes on shaping a reward from the next game's first state when a bomb ends the game).
 */
#ifndef PUFFER_BLASTAR_H
#define PUFFER_BLASTAR_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(blastar)

enum { BL_W = 640, BL_H = 480, BL_OBS = 10, BL_LIVES = 10, BL_MAX_SCORE = 50 };
enum { BL_PLAYER = 17, BL_ENEMY_W = 16, BL_ENEMY_H = 17, BL_SHOT_W = 17, BL_SHOT_H = 6 };
enum { BL_BOMB_W = 10, BL_BOMB_H = 12, BL_FROZEN = 30 };
enum { BL_NOOP, BL_LEFT, BL_RIGHT, BL_UP, BL_DOWN, BL_FIRE };
static const float BL_PLAYER_SPEED = 8.0f, BL_ENEMY_SPEED = 4.0f, BL_SHOT_SPEED = 12.0f;
static const float BL_ENEMY_FLOOR = BL_H - BL_ENEMY_H * 3.5f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* kills */
    float perf;  /* score / 50 */
    float lives; /* left at the end */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score",
                                  "perf",           "lives",          "n"};

typedef struct {
    float x, y;
    int active;
} BlShot;

typedef struct {
    float *observations; /* (1, 10) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config */
    int tick, score, lives, kill_streak, player_timer, enemy_timer;
    int frozen, enemy_active, attacking;
    float x, y, ex, ey, episode_return;
    BlShot shot, bomb;
} Blastar;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Blastar, max_steps), PUFFER_INT, 0, 0, 1e9,
     "steps before a game is truncated; 0: no limit (PufferLib 3.0 has none)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Blastar *env) {
    env->num_agents = 1;
}

static void bl_observe(Blastar *env) {
    float *o = env->observations;
    memset(o, 0, BL_OBS * sizeof(float));
    o[0] = env->x / BL_W, o[1] = env->y / BL_H, o[2] = env->ex / BL_W, o[3] = env->ey / BL_H;
    if (env->shot.active) o[4] = env->shot.x / BL_W, o[5] = env->shot.y / BL_H, o[6] = 1;
    if (env->bomb.active) o[7] = env->bomb.x / BL_W, o[8] = env->bomb.y / BL_H, o[9] = 1;
}

static void c_reset(Blastar *env) {
    env->tick = env->score = env->kill_streak = env->player_timer = env->enemy_timer = 0;
    env->frozen = env->attacking = 0;
    env->enemy_active = 1;
    env->lives = BL_LIVES;
    env->episode_return = 0;
    env->x = (float)rng_int(&env->rng, BL_W - BL_PLAYER);
    env->y = (float)rng_int(&env->rng, BL_H - BL_PLAYER);
    env->ex = -30, env->ey = 50;
    env->shot = (BlShot){env->x, env->y, 0};
    env->bomb = (BlShot){env->ex, env->ey, 0};
    bl_observe(env);
}

static int bl_overlap(float x1, float y1, float w1, float h1, float x2, float y2, float w2,
                      float h2) {
    return x1 < x2 + w2 && x1 + w1 > x2 && y1 < y2 + h2 && y1 + h1 > y2;
}

/* The enemy re-enters from the left edge at a random height. */
static void bl_reenter(Blastar *env) {
    env->ex = -BL_ENEMY_W;
    env->ey = (float)rng_int(&env->rng, BL_H - BL_ENEMY_H);
}

/* One step of play; returns the reward, and sets *over when the game ends. */
static float bl_play(Blastar *env, int action, int *over) {
    if (env->player_timer > 0) {
        env->kill_streak = 0;
        if (--env->player_timer == 0) env->frozen = 0, env->shot.active = 0;
        return 0.0f;
    }
    if (env->enemy_timer > 0) {
        if (--env->enemy_timer == 0) {
            if (rng_float(&env->rng) > 0.1f) bl_reenter(env);
            env->enemy_active = 1;
            env->attacking = 0;
        }
        return 0.0f;
    }
    if (env->ey > BL_ENEMY_FLOOR) env->ey = BL_ENEMY_FLOOR;
    if (!env->frozen) {
        if (action == BL_LEFT && env->x > 0) env->x -= BL_PLAYER_SPEED;
        if (action == BL_RIGHT && env->x < BL_W - BL_PLAYER) env->x += BL_PLAYER_SPEED;
        if (action == BL_UP && env->y > 0) env->y -= BL_PLAYER_SPEED;
        if (action == BL_DOWN && env->y < BL_H - BL_PLAYER) env->y += BL_PLAYER_SPEED;
    }
    float shot_reward = 0.0f, kill_reward = 0.0f;
    if (action == BL_FIRE && !env->bomb.active) {
        if (!env->shot.active) shot_reward += 0.0005f;
        env->shot = (BlShot){env->x, env->y, 1};
    }
    if (env->shot.active) {
        env->shot.y -= BL_SHOT_SPEED;
        if (env->shot.y < 0) env->shot.active = 0;
    }
    const float player_cx = env->x + BL_PLAYER / 2.0f, enemy_cx = env->ex + BL_ENEMY_W / 2.0f;
    int wrapped = 0;
    if (!env->attacking) {
        env->ex += BL_ENEMY_SPEED;
        if (env->ex > BL_W) env->ex = -BL_ENEMY_W, wrapped = 1;
    }
    if (fabsf(player_cx - enemy_cx) < BL_ENEMY_SPEED && !env->attacking && env->enemy_active &&
        env->ey < env->y - BL_ENEMY_H / 2) {
        if (rng_int(&env->rng, 2) == 0) {
            env->attacking = 1;
            if (!env->bomb.active) {
                env->bomb = (BlShot){env->ex + BL_ENEMY_W / 2.0f - 5.0f, env->ey + BL_ENEMY_H, 1};
                env->shot.active = 0;
                env->frozen = 1;
            }
        } else {
            env->ex += BL_ENEMY_SPEED;
        }
    }
    if (env->bomb.active) {
        env->bomb.y += BL_SHOT_SPEED;
        if (env->bomb.y > BL_H) env->bomb.active = env->frozen = env->attacking = 0;
    }
    if (bl_overlap(env->x, env->y, BL_PLAYER, BL_PLAYER, env->ex, env->ey, BL_ENEMY_W,
                   BL_ENEMY_H)) {
        env->lives--;
        env->enemy_active = 0;
        env->enemy_timer = env->player_timer = BL_FROZEN;
        env->frozen = 0;
        bl_reenter(env);
        *over = env->lives <= 0;
        return 0.0f;
    }
    if (env->shot.active && env->enemy_active && env->y > env->ey + BL_ENEMY_H &&
        bl_overlap(env->shot.x, env->shot.y, BL_SHOT_W, BL_SHOT_H, env->ex, env->ey, BL_ENEMY_W,
                   BL_ENEMY_H)) {
        env->shot.active = env->enemy_active = 0;
        env->kill_streak++;
        env->score++;
        env->enemy_timer = BL_FROZEN;
        shot_reward += 1.5f;
        kill_reward += (wrapped ? 3.5f : 4.5f) * (1.0f - env->ex / BL_W);
    }
    if (env->bomb.active && bl_overlap(env->bomb.x, env->bomb.y, BL_BOMB_W, BL_BOMB_H, env->x,
                                       env->y, BL_PLAYER, BL_PLAYER)) {
        env->bomb.active = env->frozen = env->attacking = 0;
        env->lives--;
        env->player_timer = BL_FROZEN;
        bl_reenter(env);
        if (env->lives <= 0) {
            *over = 1;
            return 0.0f;
        }
    }
    const int below = env->y > env->ey + BL_ENEMY_H;
    const float closeness = below ? 0.01f * (2.0f - (env->y - env->ey) / BL_H) : 0.0f;
    if (!below) shot_reward = kill_reward = 0.0f;
    const float pace = env->score > 0 ? (float)env->score / (float)(env->tick + 1) : 0.0f;
    float reward =
        (shot_reward + kill_reward + closeness + pace) * (1.0f + 0.1f * env->kill_streak);
    if (!(below && fabsf(player_cx - enemy_cx) > BL_ENEMY_W * 0.3f) && reward > 0) reward = 0.0f;
    if (env->x > BL_W / 2.0f) reward = 0.0f;
    *over = env->score > BL_MAX_SCORE;
    return reward;
}

static void c_step(Blastar *env) {
    env->tick++;
    int over = 0;
    const float reward = bl_play(env, env->actions[0], &over);
    const int truncated = !over && env->max_steps > 0 && env->tick >= env->max_steps;
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)over;
    env->truncations[0] = (uint8_t)truncated;
    env->episode_return += reward;
    if (over || truncated) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->score;
        env->log.perf += (float)env->score / BL_MAX_SCORE;
        env->log.lives += (float)env->lives;
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    bl_observe(env);
}

static void c_frame_size(const Blastar *env, int *width, int *height) {
    (void)env;
    *width = BL_W;
    *height = BL_H;
}

static void c_render(const Blastar *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    if (env->enemy_active)
        raster_rect(canvas, (int)env->ex, (int)env->ey, BL_ENEMY_W, BL_ENEMY_H, COLOR_RED);
    raster_rect(canvas, (int)env->x, (int)env->y, BL_PLAYER, BL_PLAYER,
                env->player_timer ? COLOR_ORANGE : COLOR_CYAN);
    if (env->shot.active)
        raster_rect(canvas, (int)env->shot.x, (int)env->shot.y, BL_SHOT_W, BL_SHOT_H, COLOR_YELLOW);
    if (env->bomb.active)
        raster_rect(canvas, (int)env->bomb.x, (int)env->bomb.y, BL_BOMB_W, BL_BOMB_H,
                    COLOR_MAGENTA);
    raster_number(canvas, 8, 8, env->score, 3, COLOR_WHITE);
    raster_number(canvas, BL_W - 40, 8, env->lives, 3, COLOR_WHITE);
}

static void c_close(Blastar *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {6};
static const PufferSpec SPEC = {
    .doc = "Blastar: shoot the enemy ship from below while dodging its bombs and avoiding "
           "ramming it; 10 lives, the game ends with none left or after 50 kills. Shaped "
           "rewards for kills, shots and staying below the enemy. Observation: (10,) float32 "
           "positions of you, the enemy, your shot and its bomb. Action: Discrete(6): no-op, "
           "left, right, up, down, fire.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = BL_OBS,
    .obs_low = -0.1, /* the enemy enters 30 px left of the screen; you may overshoot by 7 */
    .obs_high = 1.1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Blastar),
};

PUFFER_ENV_END(blastar, Blastar)

#endif
