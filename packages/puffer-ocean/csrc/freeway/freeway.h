/* Freeway: guide a chicken up across ten lanes of traffic, as often as possible in 2:16 of game
 * time (PufferLib 3.0's freeway task, after Atari Freeway; rules restated in our own code).
 *
 * Rules (pixels, 60 frames a second; each step repeats the action for `frameskip` [4] frames):
 * | screen        | 1216 x 720; the chicken (64 x 64) walks at x = 304, from y = 688 up    |
 * | road          | lanes 64 px high between y = 680 and y = 40; lanes 0-4 (bottom) drive  |
 * |               | right, 5-9 left; cars 64 x 40, trucks 128 x 40, wrapping around        |
 * | speeds        | (1/13) 1.35^k screen widths a second, k in 0..5 per lane and level     |
 * | chicken       | up / down move 720 / 3.5 / 60 = 3.43 px a frame; no-op stands          |
 * | hit           | 40 frames stunned (no control; difficulty 0 [default]: pushed down 2.4  |
 * |               | px a frame, difficulty 1: back to the bottom); dense rewards: -0.01     |
 * | progress      | each new lane reached: +0.1 (dense rewards [on]); the top: +1, score +1 |
 * |               | and back to the bottom                                                  |
 * | game          | 8,160 frames (136 s, 2,040 steps at frameskip 4), then truncated        |
 * | levels        | 0-3 fixed traffic, 4-7 the same with lane speeds drifting by one step    |
 * |               | every 360 frames; level -1 draws one per instance at creation           |
 * | randomization | env_randomization [on] shifts each lane's traffic by a random offset    |
 * Observation: (34,) float32: chicken y / 720, lanes reached / 10, score / the level's human
 * high score (25, 20, 18, 20, 25, 18, 15, 18), stunned flag, then x / 1216 of the 3 vehicle
 * slots of each lane (0 for an unused slot). Action: Discrete(3): no-op, up, down.
 *
 * Deliberate differences from PufferLib 3.0: the end of the game sets truncations (they set
 * terminals; nothing in the observation tells the time), lane speeds drift only on levels 4-7
 * (their drift test reads a pointer before it is set), and a vehicle spawned past the right
 * edge is wrapped at once instead of on its first move (same traffic, bounded observation).
 * Their two-player mode (a human chicken) is left out.
 */
#ifndef PUFFER_FREEWAY_H
#define PUFFER_FREEWAY_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(freeway)

enum { FW_WIDTH = 1216, FW_HEIGHT = 720, FW_LANES = 10, FW_SLOTS = 3, FW_LEVELS = 8 };
enum { FW_OBS = 4 + FW_LANES * FW_SLOTS };
enum { FW_CHICKEN = 64, FW_LANE = 64, FW_CAR_W = 64, FW_TRUCK_W = 128, FW_CAR_H = 40 };
enum { FW_ROAD_BOTTOM = FW_HEIGHT / 2 + FW_LANES * FW_LANE / 2 }; /* 680 */
enum { FW_GAME_FRAMES = 136 * 60, FW_STUN_FRAMES = 40, FW_DRIFT_FRAMES = 360 };
enum { FW_NOOP, FW_UP, FW_DOWN };
enum { FW_RENDER_SCALE = 2 };                                /* frames are drawn at half size */
static const float FW_CHICKEN_SPEED = 720.0f / 3.5f / 60.0f; /* px a frame */
static const float FW_STUN_PUSH = 1.5f * FW_LANE / FW_STUN_FRAMES;
static const float FW_HIT_PENALTY = -0.01f;

/* The traffic tables: levels 4-7 repeat 0-3 with drifting speeds. */
static const uint8_t FW_COUNT[4][FW_LANES] = {{1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                              {1, 2, 2, 3, 2, 1, 2, 3, 2, 2},
                                              {3, 3, 1, 3, 1, 1, 3, 1, 3, 1},
                                              {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
static const uint8_t FW_TRUCK_LANE[4] = {FW_LANES, 5, 4, FW_LANES}; /* level 3: all trucks */
static const uint8_t FW_SPEED_STEP[4][FW_LANES] = {{0, 1, 2, 3, 4, 4, 3, 2, 1, 0},
                                                   {0, 1, 3, 4, 5, 5, 4, 3, 1, 0},
                                                   {0, 1, 3, 4, 5, 5, 4, 3, 1, 0},
                                                   {5, 4, 2, 4, 5, 5, 4, 2, 4, 5}};
/* Start of each vehicle slot, in screen widths, for levels 1 and 2 (levels 0 and 3: all 0). */
static const float FW_START_X[2][FW_LANES][FW_SLOTS] = {{{0, 0, 0},
                                                         {0, 0.1f, 0},
                                                         {0, 0.2f, 0},
                                                         {0, 0.1f, 0.2f},
                                                         {0, 0.4f, 0},
                                                         {0, 0, 0},
                                                         {0, 0.4f, 0},
                                                         {0, 0.1f, 0.2f},
                                                         {0, 0.2f, 0},
                                                         {0, 0.1f, 0}},
                                                        {{0, 0.2f, 0.4f},
                                                         {0, 0.2f, 0.4f},
                                                         {0, 0, 0},
                                                         {0, 0.2f, 0.4f},
                                                         {0, 0, 0},
                                                         {0, 0, 0},
                                                         {0, 0.2f, 0.4f},
                                                         {0, 0, 0},
                                                         {0, 0.2f, 0.4f},
                                                         {0, 0.2f, 0.4f}}};
static const int FW_HUMAN_HIGH_SCORE[FW_LEVELS] = {25, 20, 18, 20, 25, 18, 15, 18};

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* crossings */
    float perf;  /* score / the level's human high score */
    float hits;
    float up_action_frac;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "perf",
                                  "hits",           "up_action_frac", "n"};

typedef struct {
    float *observations; /* (1, 34) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int frameskip, difficulty, level, use_dense_rewards, env_randomization; /* config */
    int played_level; /* level, or the one drawn for this instance when level is -1 */
    int frame, up_frames, score, hits, lanes, stun;
    float y, episode_return;
    float x[FW_LANES][FW_SLOTS]; /* vehicle centres */
    int speed[FW_LANES];         /* speed step of each lane */
} Freeway;

static const PufferField CONFIG[] = {
    {"frameskip", offsetof(Freeway, frameskip), PUFFER_INT, 4, 1, 60, "frames per step"},
    {"difficulty", offsetof(Freeway, difficulty), PUFFER_INT, 0, 0, 1,
     "0: a hit pushes the chicken back; 1: a hit sends it to the bottom"},
    {"level", offsetof(Freeway, level), PUFFER_INT, 0, -1, 7,
     "traffic layout 0-7; -1 draws one per instance"},
    {"use_dense_rewards", offsetof(Freeway, use_dense_rewards), PUFFER_INT, 1, 0, 1,
     "1: +0.1 per new lane and -0.01 per hit besides +1 per crossing"},
    {"env_randomization", offsetof(Freeway, env_randomization), PUFFER_INT, 1, 0, 1,
     "1: shift each lane's traffic by a random offset at reset"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Freeway *env) {
    env->num_agents = 1;
    env->played_level = env->level;
}

static int fw_base(const Freeway *env) {
    return env->played_level % 4;
}

static int fw_width(const Freeway *env, int lane) {
    const int trucks = FW_TRUCK_LANE[fw_base(env)];
    return (fw_base(env) == 3 || lane == trucks) ? FW_TRUCK_W : FW_CAR_W;
}

static float fw_lane_y(int lane) {
    return (float)(FW_ROAD_BOTTOM - FW_LANE * lane - FW_LANE / 2);
}

/* Pixels a frame, positive to the right. */
static float fw_velocity(const Freeway *env, int lane) {
    float speed = 1.0f / 13.0f;
    for (int k = 0; k < env->speed[lane]; k++)
        speed *= 1.35f;
    const float px = speed * (float)FW_WIDTH / 60.0f;
    return lane < FW_LANES / 2 ? px : -px;
}

static void fw_wrap(Freeway *env, int lane, int slot) {
    const float half = (float)(fw_width(env, lane) / 2);
    if (env->x[lane][slot] > FW_WIDTH + half)
        env->x[lane][slot] -= FW_WIDTH;
    else if (env->x[lane][slot] < -half)
        env->x[lane][slot] += FW_WIDTH;
}

static void fw_observe(Freeway *env) {
    float *o = env->observations;
    o[0] = env->y / FW_HEIGHT;
    o[1] = (float)env->lanes / FW_LANES;
    o[2] = (float)env->score / (float)FW_HUMAN_HIGH_SCORE[env->played_level];
    o[3] = (float)(env->stun > 0);
    for (int lane = 0; lane < FW_LANES; lane++)
        for (int s = 0; s < FW_SLOTS; s++)
            o[4 + lane * FW_SLOTS + s] =
                s < FW_COUNT[fw_base(env)][lane] ? env->x[lane][s] / FW_WIDTH : 0.0f;
}

static void c_reset(Freeway *env) {
    if (env->played_level < 0) env->played_level = rng_int(&env->rng, FW_LEVELS);
    const int base = fw_base(env);
    env->frame = env->up_frames = env->score = env->hits = env->lanes = env->stun = 0;
    env->episode_return = 0;
    env->y = FW_HEIGHT - FW_CHICKEN / 2;
    for (int lane = 0; lane < FW_LANES; lane++) {
        const float offset = env->env_randomization ? FW_WIDTH * rng_float(&env->rng) : 0.0f;
        env->speed[lane] = FW_SPEED_STEP[base][lane];
        for (int s = 0; s < FW_SLOTS; s++) {
            const float start = (base == 1 || base == 2) ? FW_START_X[base - 1][lane][s] : 0.0f;
            const float x = start * FW_WIDTH;
            env->x[lane][s] = (lane < FW_LANES / 2 ? x : FW_WIDTH - x) + offset;
            fw_wrap(env, lane, s);
        }
    }
    fw_observe(env);
}

static int fw_hit(const Freeway *env) {
    const float top = env->y - FW_CHICKEN / 2, bottom = env->y + FW_CHICKEN / 2;
    const float left = FW_WIDTH / 4 - FW_CHICKEN / 2, right = FW_WIDTH / 4 + FW_CHICKEN / 2;
    for (int lane = 0; lane < FW_LANES; lane++) {
        const float y = fw_lane_y(lane), half = (float)(fw_width(env, lane) / 2);
        if (!(top < y + FW_CAR_H / 2 && bottom > y - FW_CAR_H / 2)) continue;
        for (int s = 0; s < FW_COUNT[fw_base(env)][lane]; s++)
            if (left < env->x[lane][s] + half && right > env->x[lane][s] - half) return 1;
    }
    return 0;
}

/* One frame of the chicken; returns its reward. */
static float fw_chicken(Freeway *env, int action) {
    float reward = 0.0f;
    const float dense = (float)env->use_dense_rewards;
    if (env->stun == 0) {
        if (action == FW_UP) env->y -= FW_CHICKEN_SPEED;
        if (action == FW_DOWN) env->y += FW_CHICKEN_SPEED;
    } else {
        env->stun--;
        if (env->difficulty == 0) env->y += FW_STUN_PUSH;
    }
    const float low = FW_CHICKEN / 2, high = FW_HEIGHT - FW_CHICKEN / 2;
    env->y = env->y < low ? low : (env->y > high ? high : env->y);
    if (env->stun == 0 && fw_hit(env)) {
        env->hits++;
        env->stun = FW_STUN_FRAMES;
        reward += dense * FW_HIT_PENALTY;
        if (env->difficulty == 1) env->y = high;
    }
    if (env->y <= FW_ROAD_BOTTOM - (env->lanes + 1) * FW_LANE) {
        env->lanes++;
        reward += dense / FW_LANES;
    }
    if (env->lanes == FW_LANES) {
        env->y = high;
        env->stun = 0;
        env->lanes = 0;
        env->score++;
        reward += 1.0f;
    }
    return reward;
}

static void c_step(Freeway *env) {
    const int action = env->actions[0];
    float reward = 0.0f, v[FW_LANES];
    for (int lane = 0; lane < FW_LANES; lane++)
        v[lane] = fw_velocity(env, lane);
    for (int f = 0; f < env->frameskip && env->frame < FW_GAME_FRAMES; f++) {
        env->frame++;
        env->up_frames += action == FW_UP;
        reward += fw_chicken(env, action);
        for (int lane = 0; lane < FW_LANES; lane++) {
            for (int s = 0; s < FW_COUNT[fw_base(env)][lane]; s++) {
                env->x[lane][s] += v[lane];
                fw_wrap(env, lane, s);
            }
        }
        if (env->played_level >= 4 && env->frame % FW_DRIFT_FRAMES == 0) {
            for (int lane = 0; lane < FW_LANES; lane++) {
                const int delta = rng_int(&env->rng, 3) - 1,
                          start = FW_SPEED_STEP[fw_base(env)][lane];
                int k = env->speed[lane];
                k = k < start - 2 ? start - 2 : (k > start + 2 ? start + 2 : k);
                k += delta;
                env->speed[lane] = k < 0 ? 0 : (k > 5 ? 5 : k);
                v[lane] = fw_velocity(env, lane);
            }
        }
    }
    const int over = env->frame >= FW_GAME_FRAMES;
    env->rewards[0] = reward;
    env->terminals[0] = 0;
    env->truncations[0] = (uint8_t)over;
    env->episode_return += reward;
    if (over) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->frame;
        env->log.score += (float)env->score;
        env->log.perf += (float)env->score / (float)FW_HUMAN_HIGH_SCORE[env->played_level];
        env->log.hits += (float)env->hits;
        env->log.up_action_frac += (float)env->up_frames / (float)env->frame;
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    fw_observe(env);
}

static void c_frame_size(const Freeway *env, int *width, int *height) {
    (void)env;
    *width = FW_WIDTH / FW_RENDER_SCALE;
    *height = FW_HEIGHT / FW_RENDER_SCALE;
}

static void c_render(const Freeway *env, Canvas *canvas) {
    const int k = FW_RENDER_SCALE;
    const Color lane_colors[2] = {COLOR_RED, COLOR_ORANGE};
    raster_clear(canvas, COLOR_BACKGROUND);
    raster_rect(canvas, 0, (FW_ROAD_BOTTOM - FW_LANES * FW_LANE) / k, FW_WIDTH / k,
                FW_LANES * FW_LANE / k, COLOR_GRID);
    for (int lane = 0; lane < FW_LANES; lane++) {
        const int w = fw_width(env, lane);
        const int y = (int)fw_lane_y(lane) - FW_CAR_H / 2;
        for (int s = 0; s < FW_COUNT[fw_base(env)][lane]; s++)
            raster_rect(canvas, ((int)env->x[lane][s] - w / 2) / k, y / k, w / k, FW_CAR_H / k,
                        lane_colors[lane % 2]);
    }
    const int cy = (int)env->y;
    raster_rect(canvas, (FW_WIDTH / 4 - FW_CHICKEN / 2) / k, (cy - FW_CHICKEN / 2) / k,
                FW_CHICKEN / k, FW_CHICKEN / k, env->stun ? COLOR_GRAY : COLOR_YELLOW);
    raster_number(canvas, 8, 4, env->score, 3, COLOR_WHITE);
}

static void c_close(Freeway *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {3};
static const PufferSpec SPEC = {
    .doc = "Atari-style Freeway: cross ten lanes of traffic as often as possible in 2,040 steps "
           "(frameskip 4). +1 per crossing; dense rewards add +0.1 per new lane and -0.01 per "
           "hit (a hit stuns for 40 frames). Observation: (34,) float32 chicken height, lanes "
           "reached, score, stunned flag, the x of 30 vehicle slots. Action: Discrete(3): "
           "no-op, up, down.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = FW_OBS,
    .obs_low = -0.06, /* a vehicle's centre may sit half a truck past either edge */
    .obs_high = 3,    /* score / human high score: at most 43 crossings / 15 */
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Freeway),
};

PUFFER_ENV_END(freeway, Freeway)

#endif
