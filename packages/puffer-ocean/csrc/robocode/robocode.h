/* Robocode: two tank robots duel in an arena, each steering its body, gun and radar and firing
 * bullets whose power it chooses (PufferLib 3.0's robocode header, a game engine without an RL
 * interface; its physics restated in our own code, the interface ours).
 *
 * Rules (pixels and degrees per step; defaults in brackets):
 * | arena    | width x height [768 x 576] (their window); robots are circles of radius 16,  |
 * |          | kept 16 px inside the walls; reset: random integer cells 32 px apart, speed 0, |
 * |          | heading 0, energy 100, gun heat 3                                              |
 * | move     | acceleration -2, -1, 0, +1 px/step (clamped to [-2, 1]), speed within +-8; a |
 * |          | move ending within 32 px of the other robot does not happen and costs both 0.6 |
 * |          | energy                                                                         |
 * | turn     | body -10, -5, 0, 5, 10 deg, clamped to +-(10 - 0.75 |speed|); the gun turns    |
 * |          | with the body, plus -20, -10, 0, 10, 20; the radar with the gun, plus -45, -15, |
 * |          | 0, 15, 45                                                                      |
 * | fire     | power 0 (none), 1, 2 or 3 when gun heat is 0 and energy suffices: costs the    |
 * |          | power in energy, adds 1 + power / 5 heat (cooling 0.1 a step); the bullet      |
 * |          | leaves 64 px out along the gun at 20 - 3 power px a step, 16 live per robot   |
 * | hit      | a bullet within 32 px of a robot: 4 power damage (+2 (power - 1) above 1),     |
 * |          | the shooter regains 3 power energy; bullets die at the walls                   |
 * | reward   | (bullet damage dealt - bullet damage taken) / 100 each step; when a robot has  |
 * |          | no energy left: +1 to a survivor, -1 to the dead, terminal for both            |
 * | end      | a robot out of energy (terminal) or max_steps [1000] steps (truncation)        |
 * Bullets move first, then each robot in index order cools its gun, moves, turns and fires.
 * Observation per robot: (100,) float32: own x / width, y / height, speed / 8, cos and sin of
 * body, gun and radar headings, gun heat / 3, energy / 100; the other robot's offset (dx /
 * width, dy / height), speed / 8, cos and sin of body and gun headings, energy / 100, and 1 if
 * its centre lay in the arc the radar swept this step; then the other robot's 16 bullet slots:
 * offset (dx / width, dy / height), cos and sin of heading, power / 3 (zeros when not live).
 * Action: MultiDiscrete([4, 5, 5, 5, 4]): acceleration, body turn, gun turn, radar turn, power.
 *
 * Deliberate differences from PufferLib 3.0's header (which has no observation, reward, action
 * table or episode end: all ours, above): energy is a float (theirs an int, so a 0.6 ram costs
 * 1), bullets are cleared at reset, the episode ends when a robot runs out of energy (theirs
 * resets at the next step) and the robot count is fixed at the two its renderer draws.
 */
#ifndef PUFFER_ROBOCODE_H
#define PUFFER_ROBOCODE_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(robocode)

enum { RC_ROBOTS = 2, RC_BULLETS = 16, RC_SELF_OBS = 11, RC_OTHER_OBS = 9, RC_BULLET_OBS = 5 };
enum { RC_OBS = RC_SELF_OBS + RC_OTHER_OBS + RC_BULLETS * RC_BULLET_OBS };
enum { RC_RADIUS = 16, RC_CONTACT = 32, RC_MUZZLE = 64, RC_RENDER_SCALE = 1 };
static const float RC_ACCEL[4] = {-2, -1, 0, 1};
static const float RC_TURN[5] = {-10, -5, 0, 5, 10};
static const float RC_GUN[5] = {-20, -10, 0, 10, 20};
static const float RC_RADAR[5] = {-45, -15, 0, 15, 45};
static const float RC_POWER[4] = {0, 1, 2, 3};
static const float RC_DEG = 3.14159265358979323846f / 180.0f;

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* 1 for a win, 0 otherwise */
    float hits;  /* bullets that hit the other robot */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "hits", "n"};

typedef struct {
    float x, y, heading, power;
    int live;
} RcBullet;

typedef struct {
    float x, y, v, heading, gun, radar, radar_before, heat, energy;
    float dealt, taken; /* bullet damage this step */
    int next_bullet, hits;
    float episode_return;
    RcBullet bullets[RC_BULLETS];
} RcRobot;

typedef struct {
    float *observations; /* (2, 100) */
    int32_t *actions;    /* (2, 5) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int width, height, max_steps; /* config */
    int tick;
    RcRobot robots[RC_ROBOTS];
} Robocode;

static const PufferField CONFIG[] = {
    {"width", offsetof(Robocode, width), PUFFER_INT, 768, 128, 4096, "arena width in pixels"},
    {"height", offsetof(Robocode, height), PUFFER_INT, 576, 128, 4096, "arena height in pixels"},
    {"max_steps", offsetof(Robocode, max_steps), PUFFER_INT, 1000, 10, 1e9,
     "steps before the duel is truncated"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Robocode *env) {
    env->num_agents = RC_ROBOTS;
}

static float rc_wrap(float degrees) {
    if (degrees > 360.0f) return degrees - 360.0f;
    if (degrees < 0.0f) return degrees + 360.0f;
    return degrees;
}

/* 1 if the other robot's centre lies in the arc the radar swept from radar_before to radar. */
static int rc_scanned(const RcRobot *me, const RcRobot *other) {
    const float bearing = atan2f(other->y - me->y, other->x - me->x) / RC_DEG;
    float sweep = me->radar - me->radar_before, from = me->radar_before;
    sweep = sweep > 180.0f ? sweep - 360.0f : (sweep < -180.0f ? sweep + 360.0f : sweep);
    if (sweep < 0.0f) from += sweep, sweep = -sweep;
    float offset = fmodf(bearing - from, 360.0f);
    offset = offset < 0.0f ? offset + 360.0f : offset;
    return offset <= sweep;
}

static void rc_observe(Robocode *env) {
    const float w = (float)env->width, h = (float)env->height;
    for (int i = 0; i < RC_ROBOTS; i++) {
        const RcRobot *me = &env->robots[i], *other = &env->robots[1 - i];
        float *o = env->observations + i * RC_OBS;
        o[0] = me->x / w, o[1] = me->y / h, o[2] = me->v / 8.0f;
        o[3] = cosf(me->heading * RC_DEG), o[4] = sinf(me->heading * RC_DEG);
        o[5] = cosf(me->gun * RC_DEG), o[6] = sinf(me->gun * RC_DEG);
        o[7] = cosf(me->radar * RC_DEG), o[8] = sinf(me->radar * RC_DEG);
        o[9] = me->heat / 3.0f, o[10] = puffer_clip(me->energy / 100.0f, 0.0f, 10.0f);
        float *q = o + RC_SELF_OBS;
        q[0] = (other->x - me->x) / w, q[1] = (other->y - me->y) / h, q[2] = other->v / 8.0f;
        q[3] = cosf(other->heading * RC_DEG), q[4] = sinf(other->heading * RC_DEG);
        q[5] = cosf(other->gun * RC_DEG), q[6] = sinf(other->gun * RC_DEG);
        q[7] = puffer_clip(other->energy / 100.0f, 0.0f, 10.0f);
        q[8] = (float)rc_scanned(me, other);
        float *b = q + RC_OTHER_OBS;
        for (int k = 0; k < RC_BULLETS; k++, b += RC_BULLET_OBS) {
            const RcBullet *bullet = &other->bullets[k];
            if (!bullet->live) {
                memset(b, 0, RC_BULLET_OBS * sizeof(float));
                continue;
            }
            b[0] = (bullet->x - me->x) / w, b[1] = (bullet->y - me->y) / h;
            b[2] = cosf(bullet->heading * RC_DEG), b[3] = sinf(bullet->heading * RC_DEG);
            b[4] = bullet->power / 3.0f;
        }
    }
}

static void c_reset(Robocode *env) {
    env->tick = 0;
    for (int i = 0; i < RC_ROBOTS; i++) {
        RcRobot *r = &env->robots[i];
        float x, y;
        int clear;
        do {
            x = (float)(RC_RADIUS + rng_int(&env->rng, env->width - 2 * RC_RADIUS));
            y = (float)(RC_RADIUS + rng_int(&env->rng, env->height - 2 * RC_RADIUS));
            clear = 1;
            for (int j = 0; j < i; j++)
                clear &= hypotf(x - env->robots[j].x, y - env->robots[j].y) >= RC_CONTACT;
        } while (!clear);
        const float gun = r->gun, radar = r->radar; /* the turrets keep their headings */
        memset(r, 0, sizeof(*r));
        r->x = x, r->y = y, r->gun = gun, r->radar = r->radar_before = radar;
        r->energy = 100.0f, r->heat = 3.0f;
    }
    rc_observe(env);
}

static void rc_bullets(Robocode *env, int i) {
    RcRobot *shooter = &env->robots[i];
    for (int k = 0; k < RC_BULLETS; k++) {
        RcBullet *b = &shooter->bullets[k];
        if (!b->live) continue;
        const float speed = 20.0f - 3.0f * b->power;
        b->x += speed * cosf(b->heading * RC_DEG);
        b->y += speed * sinf(b->heading * RC_DEG);
        if (b->x < 0 || b->x > env->width || b->y < 0 || b->y > env->height) {
            b->live = 0;
            continue;
        }
        for (int j = 0; j < RC_ROBOTS; j++) {
            RcRobot *target = &env->robots[j];
            if (hypotf(target->x - b->x, target->y - b->y) > RC_CONTACT) continue;
            float damage = 4.0f * b->power;
            if (b->power > 1.0f) damage += 2.0f * (b->power - 1.0f);
            target->energy -= damage;
            target->taken += damage;
            shooter->energy += 3.0f * b->power;
            if (j != i) shooter->hits++, shooter->dealt += damage;
            b->live = 0;
        }
    }
}

static void rc_act(Robocode *env, int i) {
    RcRobot *r = &env->robots[i];
    const int32_t *a = env->actions + i * 5;
    if (r->heat > 0.0f) r->heat -= 0.1f;
    r->v = puffer_clip(r->v + RC_ACCEL[a[0]], -8.0f, 8.0f);
    const float x = r->x + cosf(r->heading * RC_DEG) * r->v;
    const float y = r->y + sinf(r->heading * RC_DEG) * r->v;
    RcRobot *other = &env->robots[1 - i];
    if (hypotf(other->x - x, other->y - y) <= RC_CONTACT) {
        other->energy -= 0.6f;
        r->energy -= 0.6f;
    } else {
        r->x = x, r->y = y;
    }
    const float limit = 10.0f - 0.75f * fabsf(r->v);
    const float turn = puffer_clip(RC_TURN[a[1]], -limit, limit);
    r->heading = rc_wrap(r->heading + turn);
    const float gun_turn = RC_GUN[a[2]] + turn;
    r->gun = rc_wrap(r->gun + gun_turn);
    r->radar_before = r->radar;
    r->radar = rc_wrap(r->radar + RC_RADAR[a[3]] + gun_turn);
    const float power = RC_POWER[a[4]];
    if (power > 0.0f && r->heat <= 0.0f && r->energy >= power) {
        r->energy -= power;
        RcBullet *b = &r->bullets[r->next_bullet];
        r->next_bullet = (r->next_bullet + 1) % RC_BULLETS;
        r->heat += 1.0f + power / 5.0f;
        *b = (RcBullet){r->x + RC_MUZZLE * cosf(r->gun * RC_DEG),
                        r->y + RC_MUZZLE * sinf(r->gun * RC_DEG), r->gun, power, 1};
    }
    r->x = puffer_clip(r->x, RC_RADIUS, (float)(env->width - RC_RADIUS));
    r->y = puffer_clip(r->y, RC_RADIUS, (float)(env->height - RC_RADIUS));
}

static void c_step(Robocode *env) {
    for (int i = 0; i < RC_ROBOTS; i++)
        env->robots[i].dealt = env->robots[i].taken = 0.0f;
    for (int i = 0; i < RC_ROBOTS; i++)
        rc_bullets(env, i);
    for (int i = 0; i < RC_ROBOTS; i++)
        rc_act(env, i);
    env->tick++;
    int dead = 0;
    for (int i = 0; i < RC_ROBOTS; i++)
        dead += env->robots[i].energy <= 0.0f;
    for (int i = 0; i < RC_ROBOTS; i++) {
        RcRobot *me = &env->robots[i];
        float reward = (me->dealt - me->taken) / 100.0f;
        if (dead) reward += me->energy > 0.0f ? 1.0f : -1.0f;
        env->rewards[i] = reward;
        me->episode_return += reward;
    }
    const int truncated = !dead && env->tick >= env->max_steps;
    memset(env->terminals, dead > 0, RC_ROBOTS);
    memset(env->truncations, truncated, RC_ROBOTS);
    if (dead || truncated) {
        for (int i = 0; i < RC_ROBOTS; i++) {
            const RcRobot *me = &env->robots[i];
            env->log.episode_return += me->episode_return;
            env->log.episode_length += (float)env->tick;
            env->log.score += (float)(dead && me->energy > 0.0f);
            env->log.hits += (float)me->hits;
            env->log.n += 1.0f;
        }
        c_reset(env);
        return;
    }
    rc_observe(env);
}

static void c_frame_size(const Robocode *env, int *width, int *height) {
    *width = env->width / RC_RENDER_SCALE;
    *height = env->height / RC_RENDER_SCALE;
}

static void c_render(const Robocode *env, Canvas *canvas) {
    static const Color BODY[RC_ROBOTS] = {{0, 187, 187}, {187, 0, 0}};
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int i = 0; i < RC_ROBOTS; i++) {
        const RcRobot *r = &env->robots[i];
        const int x = (int)r->x, y = (int)r->y;
        for (int d = 0; d < 120; d += 4) /* the radar beam */
            raster_pixel(canvas, x + (int)(d * cosf(r->radar * RC_DEG)),
                         y + (int)(d * sinf(r->radar * RC_DEG)), COLOR_GREEN);
        raster_circle(canvas, x, y, RC_RADIUS, BODY[i]);
        for (int d = 0; d < 28; d++) /* the gun barrel */
            raster_rect(canvas, x + (int)(d * cosf(r->gun * RC_DEG)) - 1,
                        y + (int)(d * sinf(r->gun * RC_DEG)) - 1, 3, 3, COLOR_WHITE);
        raster_number(canvas, x - 12, y - 32, (int)r->energy, 2, COLOR_WHITE);
        for (int k = 0; k < RC_BULLETS; k++)
            if (r->bullets[k].live)
                raster_circle(canvas, (int)r->bullets[k].x, (int)r->bullets[k].y, 4, COLOR_YELLOW);
    }
}

static void c_close(Robocode *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {4, 5, 5, 5, 4};
static const PufferKey KEYS[] = {{"idle", 0, 2},  {"idle", 1, 2},  {"idle", 2, 2}, {"idle", 3, 2},
                                 {"idle", 4, 0},  {"up", 0, 3},    {"down", 0, 0}, {"left", 1, 0},
                                 {"right", 1, 4}, {"a", 2, 0},     {"d", 2, 4},    {"q", 3, 0},
                                 {"e", 3, 4},     {"space", 4, 3}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Robocode duel: two tank robots steer body, gun and radar and fire bullets of power "
           "1-3 (energy cost, heat, damage 4-16, 3x the power back on a hit). Reward: bullet "
           "damage dealt minus taken / 100, +1 / -1 when a robot runs out of energy (terminal); "
           "truncated at max_steps. Observation: (100,) float32: own state, the other robot, "
           "its 16 bullets. Action: MultiDiscrete([4, 5, 5, 5, 4]): acceleration, body, gun "
           "and radar turns, fire power.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = RC_OBS,
    .obs_low = -10,
    .obs_high = 10,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Robocode),
};

PUFFER_ENV_END(robocode, Robocode)

#endif
