/* Enduro: race through an Atari-style day, passing 200 cars on day 1 and 300 on every later day
 * before the day ends (PufferLib 3.0's enduro task; rules restated in our own code).
 *
 * Rules (screen pixels, one step = one frame at 60 frames a second):
 * | screen       | 152 x 210; the road runs from the horizon y = 52 down to y = 154; 3 lanes  |
 * | player       | a 16 x 11 car, x from 69; y = 143 - 9 (speed + 2.5) / 10 (143 .. 134)      |
 * | speed        | in [-2.5, 7.5], starts at -2.5 (a standing car lets traffic pull away);   |
 * |              | fire: + 0.0148 x 4 in gear 0, x 2 in gears 1-3; gears end at 1.06, 3.28,  |
 * |              | 6.17, 7.5 (4 / 2.5 / 3.25 / 1.5 s of the range); gears never go down until |
 * |              | the next episode; down: - 0.01 while above -2.5                            |
 * | steering     | left / right move (speed + 2.5) / 10 + 0.3 px, kept between the road edges |
 * |              | (right edge minus the car's width); curves push |speed| curve 0.025 px out |
 * | actions      | Discrete(9): no-op, fire, right, left, down, down-right, down-left,        |
 * |              | right-fire, left-fire                                                      |
 * | road         | curve in [-1, 1] eases 0.05 a frame to a target that changes when a stage  |
 * |              | counter (2 ticks a frame) reaches a threshold drawn from [1500, 5300] each |
 * |              | frame; 3 stages cycle, each target a direction from their chain; the       |
 * |              | vanishing point sits at 102 - 48 t + 55 dir (t: player x from 57.5 to      |
 * |              | 83.5), sliding 1.5 + 10 |speed| / 7.5 px a frame; a wiggle (10 px, 26 rows)|
 * |              | runs down both edges every 5.8 s at rest .. 0.3 s at top speed             |
 * | traffic      | at most 10 cars, moving speed x 0.75 x scale px a frame down the screen   |
 * |              | (scale = max(0.1, 0.9 depth)); a spawn every 0.5 s on day 1 (day 2: 0.5 -  |
 * |              | 0.375 f, day 3: 0.5 - 0.15 f, day d > 3: 0.5 - 0.15 (min(d, 6) - 2) f s,   |
 * |              | f = (speed + 2.5) / 10: from day 6 at top speed every frame): one car, or |
 * |              | with probability f 1-2 in distinct random lanes 33 px apart, at y = 62     |
 * |              | (behind at 165 while speed <= 0), refused if a car of the lane it first   |
 * |              | picked is nearer than 0.5-6.5 car lengths or two other lanes are busy     |
 * |              | within 66 px; removed 55 px below the road or, reversing, above y = 64     |
 * | pass         | a car crossing the player's rear (y + 11) at speed > 0, no crash lock: +1  |
 * |              | (once per car), quota - 1, and every later step pays +0.001 per car passed |
 * |              | until the next car crash                                                   |
 * | passed       | a car crossing the player's top while reversing: quota + 1 and -0.1,      |
 * |              | unless the quota is full (200 on day 1, 300 later)                         |
 * | lane reward  | +0.05 every step no car is ahead in the player's lane                      |
 * | car crash    | boxes overlap: -0.5, speed -1.5, 90 frames without control, drifting       |
 * |              | 0.25 px a frame towards the far edge; cars behind in the middle lane and  |
 * |              | the drift's lane vanish                                                    |
 * | edge crash   | touching an edge: -0.5, speed - 1.25 (>= -2.5), 20 frames without control, |
 * |              | drifting 0.12 px a frame, pushed 1 px inside                               |
 * | lock penalty | -0.01 every step from the first crash of the episode to its end (their     |
 * |              | reset of it is unreachable code)                                           |
 * | day          | 232 s (13,920 frames) in 16 stages starting at 0, 20, 40, 60 (snow), 100,  |
 * |              | 108, 114, 116, 120, 124, 130, 134, 138 (night), 170 (fog), 198 (night),    |
 * |              | 214 (dawn) s; the quota met when the day wraps: +1, day + 1, quota 300     |
 * | episode end  | the day wraps with the quota unmet: terminal, reward 0 for that step, and  |
 * |              | a new episode at dawn of day 1; max_steps [0: none] truncates              |
 * Observation: (68,) float32: player x between the step's starting road edges, (143 - y) / 9,
 * (speed + 2.5) / 10; road left and right (minus the car's width) edges / 152 at the player's
 * row now and at the step's start; lane / 2; 10 car slots of x - 8 between the edges (the x
 * where the car spawned, clamped to [0, 1]), (154 - y + 5.5) / 102 (clamped), 0, (previous y -
 * y) / 102 and a same-lane flag, for cars with 52 < y < 154 (else 0.5, 0.5, 0, 0, 0); curve
 * direction (dir + 1) / 2, +1 / -1 (curve > 0 or not), |curve speed| 0.025 / (0.025 x 7.5), curve;
 * time of day in [0, 1); quota / 200; per lane the distance to the nearest car ahead / 102 (1
 * if none); a last element that is always 0 (their layout reserves it). Like theirs, slots past
 * the live cars keep the last car that left them (their removal shifts the array), and the car
 * x and previous-y fields keep their spawn-time quirks (x is never updated; previous y lags
 * only for cars skipped behind a stopped player), so the rows read the same.
 * Log per episode: episode_return, episode_length, score (the odometer: +1 a frame below speed
 * 2, +2 above), perf = min(days completed / 10, 1), days_completed, passed_cars,
 * passed_by_enemy, cars_to_pass (left at the end), collisions_player_vs_car / _vs_road.
 *
 * Deliberate differences from PufferLib 3.0: the failed day sets terminals (theirs sets the flag
 * and clears it again in the same step, so their trainer never sees an episode end); max_steps
 * is ours (default off); each instance draws from its own seeded RNG (theirs
 * uses the C library's shared rand(), so runs do not repeat); the curve schedule draws only the
 * numbers it uses (same distribution); time of day counts whole frames (their float clock drifts
 * a few frames a day); reset() starts every instance at a random frame of the day (theirs: only
 * the first reset, unless the seed is 0) and writes a first observation, and the step that ends
 * an episode already holds the next one's first observation; the log is per episode (theirs adds
 * a row at every day end, some of them counted over the env's lifetime). Weather stages (snow,
 * fog, night) change only the picture, as in theirs, whose snow handling is overwritten.
 */
#ifndef PUFFER_ENDURO_H
#define PUFFER_ENDURO_H

#include <math.h>
#include <string.h>

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(enduro)

enum { ED_MAX_CARS = 10, ED_LANES = 3, ED_OBS = 68, ED_STAGES = 16, ED_FPS = 60 };
enum { ED_DAY_FRAMES = 232 * ED_FPS, ED_CAR_LOCK = 90, ED_EDGE_LOCK = 20 };
enum { ED_CURVE_TICKS_MIN = 1500, ED_CURVE_TICKS_SPAN = 3801 };
enum { ED_QUOTA_FIRST = 200, ED_QUOTA = 300 };
enum { ED_NOOP, ED_FIRE, ED_RIGHT, ED_LEFT, ED_DOWN, ED_DOWNRIGHT, ED_DOWNLEFT, ED_RIGHTFIRE };
enum { ED_LEFTFIRE = 8, ED_SCALE = 2 };
static const float ED_WIDTH = 152.0f, ED_VP_Y = 52.0f, ED_BOTTOM = 154.0f, ED_ROAD_DEPTH = 102.0f;
static const float ED_CAR_W = 16.0f, ED_CAR_H = 11.0f, ED_START_X = 69.0f;
static const float ED_MAX_Y = 143.0f, ED_MIN_Y = 134.0f, ED_MIN_X = 57.5f, ED_MAX_X = 83.5f;
static const float ED_VP_START = 86.0f, ED_VP_LEFT = 102.0f, ED_VP_RIGHT = 54.0f;
static const float ED_ROAD_LEFT = 46.0f, ED_ROAD_RIGHT = 47.0f;
static const float ED_MIN_SPEED = -2.5f, ED_MAX_SPEED = 7.5f, ED_BRAKE = 0.01f;
static const float ED_CURVE_EASE = 0.05f, ED_CURVE_VP_SHIFT = 55.0f, ED_CURVE_PUSH = 0.025f;
static const float ED_WIGGLE_AMPLITUDE = 10.0f, ED_WIGGLE_LENGTH = 26.0f;
static const float ED_SPAWN_AHEAD_Y = 62.0f, ED_SPAWN_BEHIND_Y = 165.0f;
static const float ED_SPAWN_MIN_INTERVAL = 0.5f, ED_SPAWN_MAX_INTERVAL[3] = {0.5f, 0.25f, 0.4f};
static const float ED_LANE_REWARD = 0.05f, ED_CRASH_REWARD = -0.5f, ED_PASS_REWARD = 1.0f;
static const float ED_PASS_BONUS = 0.001f, ED_PASSED_REWARD = -0.1f, ED_DAY_REWARD = 1.0f;
static const float ED_LOCK_PENALTY = -0.01f;
/* Gear g spans its share of the speed range, (4, 2.5, 3.25, 1.5) of 11.25 s, so every gear's
 * rate is 10 / 11.25 / 60 per frame; fire adds it 4 times in gear 0 and twice above. */
static const float ED_GEAR_TOP[4] = {-2.5f + 10.0f * 4.0f / 11.25f, -2.5f + 10.0f * 6.5f / 11.25f,
                                     -2.5f + 10.0f * 9.75f / 11.25f, 7.5f};
static const float ED_GEAR_RATE = 10.0f / (11.25f * 60.0f);
/* First frame of time-of-day stages 1..15 (stage 0 starts the day; the day wraps at 13,920). */
static const int ED_STAGE_START[ED_STAGES - 1] = {1200, 2400, 3600, 6000, 6480,  6840,  6960, 7200,
                                                  7440, 7800, 8040, 8280, 10200, 11880, 12840};

typedef struct {
    float episode_return;
    float episode_length;
    float score;
    float perf;
    float days_completed;
    float passed_cars;
    float passed_by_enemy;
    float cars_to_pass;
    float collisions_player_vs_car;
    float collisions_player_vs_road;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return",
                                  "episode_length",
                                  "score",
                                  "perf",
                                  "days_completed",
                                  "passed_cars",
                                  "passed_by_enemy",
                                  "cars_to_pass",
                                  "collisions_player_vs_car",
                                  "collisions_player_vs_road",
                                  "n"};

typedef struct {
    float y, last_y; /* screen row of the car, and at the end of its last full update */
    float x;         /* x where it spawned (their x is never updated) */
    int lane, passed, color;
} EdCar;

typedef struct {
    float *observations; /* (1, 68) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config */
    /* the player */
    float x, y, speed, t_p; /* t_p: x from ED_MIN_X (0) to ED_MAX_X (1), sets the road's base */
    int gear, lane, car_lock, edge_lock, drift;
    /* the road */
    float curve, curve_target, vp_x, base_vp_x, wiggle_y, scroll, last_left, last_right;
    int curve_dir, curve_stage, curve_steps;
    /* traffic: live cars first; slots past num_cars keep stale cars, as theirs */
    EdCar cars[ED_MAX_CARS];
    int num_cars, last_lane;
    float spawn_timer;
    /* the day */
    int frame, stage, prev_stage, day, quota, day_done;
    /* rewards and this episode's counts */
    int bonus_on, score, steps, days, passed, passed_by, car_hits, edge_hits;
    float bonus, lock_penalty, episode_return;
} Enduro;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Enduro, max_steps), PUFFER_INT, 0, 0, 1e9,
     "steps before an episode is truncated; 0: never (theirs)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* Plain comparisons: fminf / fmaxf are library calls here (NaN rules), and nothing is NaN. */
static inline float ed_min(float a, float b) {
    return a < b ? a : b;
}
static inline float ed_max(float a, float b) {
    return a > b ? a : b;
}

#include "enduro_road.h"

static void c_init(Enduro *env) {
    env->num_agents = 1;
}

static int ed_stage(int frame) {
    int s = 0;
    while (s < ED_STAGES - 1 && frame >= ED_STAGE_START[s])
        s++;
    return s;
}

/* A new episode at dawn of day 1 (their reset_round): everything but the RNG, the road's last
 * measured edges and t_p, which they keep. */
static void ed_new_round(Enduro *e) {
    e->x = ED_START_X, e->y = ED_MAX_Y, e->speed = ED_MIN_SPEED;
    e->gear = e->car_lock = e->edge_lock = e->drift = 0;
    e->curve = e->curve_target = 0.0f;
    e->curve_dir = e->curve_stage = e->curve_steps = 0;
    e->vp_x = e->base_vp_x = ED_VP_START;
    e->wiggle_y = ED_VP_Y;
    for (int i = 0; i < ED_MAX_CARS; i++)
        e->cars[i].lane = -1, e->cars[i].y = 0.0f, e->cars[i].passed = 0;
    e->num_cars = 0, e->last_lane = -1, e->spawn_timer = 0.0f;
    e->frame = 0, e->stage = 0, e->prev_stage = ED_STAGES - 1;
    e->day = 1, e->quota = ED_QUOTA_FIRST, e->day_done = 0;
    e->bonus_on = 1, e->bonus = 0.0f, e->lock_penalty = 0.0f;
    e->score = e->steps = e->days = e->passed = e->passed_by = e->car_hits = e->edge_hits = 0;
    e->episode_return = 0.0f;
}

static void ed_observe(Enduro *e) {
    float *o = e->observations;
    const float span = e->last_right - e->last_left;
    o[0] = (e->x - e->last_left) / span;
    o[1] = (ED_MAX_Y - e->y) / (ED_MAX_Y - ED_MIN_Y);
    o[2] = (e->speed - ED_MIN_SPEED) / (ED_MAX_SPEED - ED_MIN_SPEED);
    float left, right;
    ed_edges(e, e->y, 0.0f, &left, &right);
    o[3] = left / ED_WIDTH, o[4] = (right - ED_CAR_W) / ED_WIDTH;
    o[5] = e->last_left / ED_WIDTH, o[6] = e->last_right / ED_WIDTH;
    o[7] = (float)ed_player_lane(e) / (ED_LANES - 1);
    for (int i = 0; i < ED_MAX_CARS; i++) {
        const EdCar *c = &e->cars[i];
        float *s = o + 8 + 5 * i;
        if (c->y > ED_VP_Y && c->y < ED_BOTTOM) {
            s[0] = ed_max(0.0f, ed_min(1.0f, (c->x - ED_CAR_W / 2 - e->last_left) / span));
            s[1] = ed_max(0.0f, ed_min(1.0f, (ED_BOTTOM - (c->y - ED_CAR_H / 2)) / ED_ROAD_DEPTH));
            s[2] = 0.0f;
            s[3] = (c->last_y - c->y) / ED_ROAD_DEPTH;
            s[4] = (float)(c->lane == e->lane);
        } else {
            s[0] = s[1] = 0.5f, s[2] = s[3] = s[4] = 0.0f;
        }
    }
    o += 8 + 5 * ED_MAX_CARS;
    o[0] = (float)(e->curve_dir + 1) / 2.0f;
    o[1] = e->curve > 0 ? 1.0f : -1.0f;
    o[2] = fabsf(e->curve * ED_CURVE_PUSH * fabsf(e->speed)) / (ED_CURVE_PUSH * ED_MAX_SPEED);
    o[3] = e->curve;
    o[4] = (float)e->frame / ED_DAY_FRAMES;
    o[5] = (float)e->quota / ED_QUOTA_FIRST;
    float ahead[ED_LANES] = {1.0f, 1.0f, 1.0f};
    for (int i = 0; i < e->num_cars; i++) {
        const EdCar *c = &e->cars[i];
        if (c->y < e->y) ahead[c->lane] = ed_min(ahead[c->lane], (e->y - c->y) / ED_ROAD_DEPTH);
    }
    o[6] = ahead[0], o[7] = ahead[1], o[8] = ahead[2], o[9] = 0.0f;
}

static void c_reset(Enduro *env) {
    ed_new_round(env);
    env->frame = rng_int(&env->rng, ED_DAY_FRAMES);
    env->stage = env->prev_stage = ed_stage(env->frame);
    /* Their first step aims the vanishing point from t_p = 86 (their initial value), which
     * swings it left by one frame's slide; kept. */
    env->t_p = 86.0f;
    env->scroll = 1.0f;
    ed_edges(env, env->y, 0.0f, &env->last_left, &env->last_right);
    env->last_right -= ED_CAR_W;
    ed_observe(env);
}

static void ed_accelerate(Enduro *e) {
    e->speed = ed_max(ED_MIN_SPEED, ed_min(e->speed, ED_MAX_SPEED));
    if (e->speed >= ED_MAX_SPEED) return;
    if (e->speed >= ED_GEAR_TOP[e->gear] && e->gear < 3) e->gear++;
    e->speed += ED_GEAR_RATE * (e->gear == 0 ? 4.0f : 2.0f);
    e->speed = ed_min(ed_min(e->speed, ED_MAX_SPEED), ED_GEAR_TOP[e->gear]);
}

/* The player's action, or while locked after a crash the drift towards the far edge. */
static void ed_control(Enduro *e, float left, float right) {
    if (e->car_lock <= 0 && e->edge_lock <= 0) {
        const int a = e->actions[0];
        const float step = (e->speed - ED_MIN_SPEED) / (ED_MAX_SPEED - ED_MIN_SPEED) + 0.3f;
        if (a == ED_FIRE || a == ED_RIGHTFIRE || a == ED_LEFTFIRE) ed_accelerate(e);
        if ((a == ED_DOWN || a == ED_DOWNRIGHT || a == ED_DOWNLEFT) && e->speed > ED_MIN_SPEED)
            e->speed -= ED_BRAKE;
        if (a == ED_RIGHT || a == ED_DOWNRIGHT || a == ED_RIGHTFIRE)
            e->x = ed_min(e->x + step, right);
        if (a == ED_LEFT || a == ED_DOWNLEFT || a == ED_LEFTFIRE) e->x = ed_max(e->x - step, left);
        return;
    }
    if (e->car_lock > 0) e->car_lock--;
    if (e->edge_lock > 0) e->edge_lock--;
    e->lock_penalty = ED_LOCK_PENALTY;
    if (e->drift == 0) {
        e->drift = e->x > (left + right) / 2 ? -1 : 1;
        /* Clear the cars behind in the middle lane and in the lane the drift heads for. */
        for (int i = 0; i < e->num_cars; i++) {
            const EdCar *c = &e->cars[i];
            if ((c->lane == 1 || c->lane == e->lane + e->drift) && c->y > e->y) {
                memmove(&e->cars[i], &e->cars[i + 1], (e->num_cars - 1 - i) * sizeof(EdCar));
                e->num_cars--, i--;
            }
        }
    }
    e->x += (float)e->drift * (e->edge_lock > 0 ? 0.12f : 0.25f);
}

static int ed_hits(const Enduro *e, const EdCar *c) {
    const float s = ed_car_scale(c->y), w = ED_CAR_W * s, h = ED_CAR_H * s;
    if (e->y > c->y + h || e->y + ED_CAR_H < c->y) return 0; /* rows apart: skip the road */
    const float cx = ed_lane_x(e, c->lane, c->y) - w / 2;
    return !(e->x > cx + w || e->x + ED_CAR_W < cx);
}

/* Moves every car's bookkeeping for this frame: removals, passes, crashes. Returns the reward. */
static float ed_traffic(Enduro *e) {
    float reward = 0.0f;
    const float rear = e->y + ED_CAR_H;
    for (int i = 0; i < e->num_cars; i++) {
        EdCar *c = &e->cars[i];
        if (c->y > ED_BOTTOM + 5 * ED_CAR_H || (e->speed < 0 && c->y <= ED_VP_Y + 12)) {
            memmove(c, c + 1, (e->num_cars - 1 - i) * sizeof(EdCar));
            e->num_cars--, i--;
            continue;
        }
        if (e->speed <= 0 && c->y >= rear) { /* behind a stopped car: out of its way */
            c->lane = ed_far_lane(e);
            continue;
        }
        if (e->speed > 0 && c->last_y < rear && c->y >= rear && e->car_lock <= 0 &&
            e->edge_lock <= 0) {
            if (e->quota > 0) e->quota--;
            if (!c->passed) {
                e->passed++;
                reward += ED_PASS_REWARD;
                e->bonus_on = 1, e->bonus += ED_PASS_BONUS;
            }
            c->passed = 1;
        } else if (e->speed < 0 && c->last_y > e->y && c->y <= e->y) {
            e->passed_by++;
            if (e->quota != (e->day == 1 ? ED_QUOTA_FIRST : ED_QUOTA))
                e->quota++, reward += ED_PASSED_REWARD;
        }
        c->last_y = c->y;
        if (e->car_lock <= 0 && ed_hits(e, c)) {
            e->car_hits++;
            reward += ED_CRASH_REWARD;
            e->speed = 1.0f + ED_MIN_SPEED;
            e->car_lock = ED_CAR_LOCK, e->drift = 0;
            e->bonus_on = 0, e->bonus = 0.0f;
        }
    }
    return reward;
}

static void ed_end_episode(Enduro *e) {
    e->log.episode_return += e->episode_return;
    e->log.episode_length += (float)e->steps;
    e->log.score += (float)e->score;
    e->log.perf += ed_min((float)e->days / 10.0f, 1.0f);
    e->log.days_completed += (float)e->days;
    e->log.passed_cars += (float)e->passed;
    e->log.passed_by_enemy += (float)e->passed_by;
    e->log.cars_to_pass += (float)e->quota;
    e->log.collisions_player_vs_car += (float)e->car_hits;
    e->log.collisions_player_vs_road += (float)e->edge_hits;
    e->log.n += 1.0f;
}

static void c_step(Enduro *e) {
    float reward = 0.0f;
    e->steps++;
    e->frame = e->frame + 1 >= ED_DAY_FRAMES ? 0 : e->frame + 1;
    e->prev_stage = e->stage; /* the frame moves by one: at most one stage starts */
    if (e->frame == 0)
        e->stage = 0;
    else if (e->stage < ED_STAGES - 1 && e->frame >= ED_STAGE_START[e->stage])
        e->stage++;
    ed_update_curve(e);
    e->scroll += e->speed;
    for (int i = 0; i < e->num_cars; i++)
        e->cars[i].y += e->speed * ed_car_scale(e->cars[i].y) * 0.75f;

    float left, right;
    ed_edges(e, e->y, 0.0f, &left, &right);
    right -= ED_CAR_W;
    e->last_left = left, e->last_right = right;
    ed_control(e, left, right);
    ed_player_lane(e);
    int lane_clear = 1;
    for (int i = 0; i < e->num_cars; i++)
        lane_clear &= !(e->cars[i].lane == e->lane && e->cars[i].y < e->y);
    if (lane_clear) reward += ED_LANE_REWARD;

    /* Curves push the car outwards; the road's base and the vanishing point follow the car. */
    e->x -= e->curve * ED_CURVE_PUSH * fabsf(e->speed);
    e->x = ed_max(left, ed_min(e->x, right));
    e->t_p = ed_max(0.0f, ed_min(1.0f, (e->x - ED_MIN_X) / (ED_MAX_X - ED_MIN_X)));
    e->base_vp_x = ED_VP_LEFT - e->t_p * (ED_VP_LEFT - ED_VP_RIGHT);
    const float frac = ed_max(0.0f, ed_min(1.0f, (e->speed - ED_MIN_SPEED) / 10.0f));
    const float period = 5.8f - sqrtf(sqrtf(frac)) * (5.8f - 0.3f);
    e->wiggle_y += ED_ROAD_DEPTH / (period * ED_FPS);
    if (e->wiggle_y > ED_BOTTOM) e->wiggle_y = ED_VP_Y;
    e->y = ED_MAX_Y - (e->speed - ED_MIN_SPEED) / 10.0f * (ED_MAX_Y - ED_MIN_Y);
    e->y = ed_max(ED_MIN_Y, ed_min(ED_MAX_Y, e->y));

    if (e->x <= left || e->x >= right) {
        e->edge_hits++;
        reward += ED_CRASH_REWARD;
        e->speed = ed_max(e->speed - 1.25f, ED_MIN_SPEED);
        e->edge_lock = ED_EDGE_LOCK, e->drift = 0;
        e->x = ed_max(left + 1.0f, ed_min(right - 1.0f, e->x));
    }
    reward += ed_traffic(e);
    ed_spawn(e);

    if (e->quota <= 0) e->day_done = 1;
    if (e->stage == 0 && e->prev_stage == ED_STAGES - 1) {
        if (!e->day_done) { /* the day ran out: the step pays 0 and a new episode starts */
            e->rewards[0] = 0.0f, e->terminals[0] = 1, e->truncations[0] = 0;
            ed_end_episode(e);
            ed_new_round(e);
            ed_observe(e);
            return;
        }
        e->days++, e->day++;
        reward += ED_DAY_REWARD;
        e->quota = ED_QUOTA, e->day_done = 0;
    }
    if (e->bonus_on) reward += e->bonus;
    reward += e->lock_penalty;
    e->score += (int)ed_min(ed_max(e->speed, 1.0f), 2.0f);
    e->episode_return += reward;
    e->rewards[0] = reward, e->terminals[0] = 0, e->truncations[0] = 0;
    if (e->max_steps > 0 && e->steps >= e->max_steps) {
        e->truncations[0] = 1;
        ed_end_episode(e);
        ed_new_round(e);
    }
    ed_observe(e);
}

#include "enduro_render.h"

static void c_close(Enduro *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {9};
static const PufferKey KEYS[] = {{"idle", 0, ED_NOOP},   {"space", 0, ED_FIRE},
                                 {"right", 0, ED_RIGHT}, {"left", 0, ED_LEFT},
                                 {"down", 0, ED_DOWN},   {"c", 0, ED_DOWNRIGHT},
                                 {"z", 0, ED_DOWNLEFT},  {"d", 0, ED_RIGHTFIRE},
                                 {"a", 0, ED_LEFTFIRE},  {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Atari-style Enduro: pass 200 cars on day 1 and 300 on each later day before the "
           "232 s (13,920-step) day wraps, or the episode ends. +1 per car passed, +0.05 per "
           "step with the lane ahead clear, -0.5 per crash, +1 per day completed. Observation: "
           "(68,) float32 player, road edges, 10 car slots, curve, time of day, cars left, "
           "lane distances. Action: Discrete(9): no-op, fire, right, left, down, down-right, "
           "down-left, right-fire, left-fire.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = ED_OBS,
    .obs_low = -2, /* a stale car's previous y can lie a road's depth away */
    .obs_high = 2, /* the quota after day 1 reads 300 / 200 */
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Enduro),
};

PUFFER_ENV_END(enduro, Enduro)

#endif
