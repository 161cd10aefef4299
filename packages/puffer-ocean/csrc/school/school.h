/* School: armies of air and ground units fly and drive over a height-map, shooting at the units
 * of the other armies (PufferLib 3.0's school task, rules restated in our own code). World
 * coordinates: x and z across the map, y up; the box is [-size_x, size_x] x [-size_y, size_y] x
 * [-size_z, size_z].
 *
 * Rules (defaults in brackets; PufferLib's config/ocean/school.ini):
 * | armies      | num_armies [2] armies of num_agents / num_armies units each, contiguous   |
 * |             | by index; each army has one base                                         |
 * | units       | by index i within an army, i % 64: 0 mothership, 1-4 tank, 5-6 artillery, |
 * |             | 7-10 bomber, 11-14 fighter, 15-32 infantry, 33-63 drone                  |
 * | unit stats  | (health, damage, range, max_turn, max_speed): drone (0.4, 0.1, 0.15, 2,   |
 * |             | 1), mothership (10, 2, 0.4, 0.5, 0.5), fighter (1, 0.5, 0.25, 1, 0.75),   |
 * |             | bomber (1, 1, 0.1, 0.5, 0.5), infantry (0.2, 0.2, 0.2, 2, 0.25), tank (2, |
 * |             | 0.5, 0.25, 0.25, 0.75), artillery (2, 2, 0.7, 0.5, 0.25)                  |
 * | terrain     | 256 size_x x 256 size_z texels, 128 per unit length: PufferLib's map,     |
 * |             | 8 octaves of simplex noise from the origin at 1/2048 cycles per texel,   |
 * |             | doubling, weights halving; rescaled to [0, 256], then values under 16    |
 * |             | read 0 and the rest lose 16; ground y = (h - 128 size_y) / 128           |
 * | bases       | x, z uniform in [0.5 - size, size - 0.5], redrawn until 2.0 or more (in   |
 * |             | x, z) from every earlier base; y on the ground                            |
 * | spawn       | drones at the position of unit 64 * (index / 64) (their mothership);      |
 * |             | others at their base, ground units on the ground, air units 0.2 above it |
 * |             | (clamped to the box); velocity 0, orientation identity, full stats       |
 * | action      | Box(-1, 1, (3,)). Ground units turn by -a1 / 10 rad about y and drive    |
 * |             | max_speed * 0.01 along their heading, staying on the ground. Air units   |
 * |             | pitch by max_turn * a0 / 10 about their right axis and roll by max_turn  |
 * |             | * a1 / 10 about their forward axis; they move speed * (forward' + up -   |
 * |             | (0, 1, 0)), speed = max_speed * 0.01, forward' the turned forward and up |
 * |             | the old up. a2 is unused. Positions clamp to the box                     |
 * | episode end | per unit, checked before it moves: health <= 0 (reward 0); an air unit   |
 * |             | below the ground (-1, collision); x or z beyond 0.95 size, or y above    |
 * |             | 0.95 size_y (-1, out of bounds). Terminal; the unit respawns at once    |
 * | attacks     | after every unit moved, each unit in index order shoots the first unit   |
 * |             | of another army, by index, it can hit: +0.25 reward, target health -=    |
 * |             | damage. Drone, mothership, fighter: any unit within range in 3D and      |
 * |             | under 30 deg off its velocity. Infantry, tank: a ground unit within      |
 * |             | range in x, z and under 30 deg off its x, z velocity. Bomber: a ground   |
 * |             | unit within range in x, z. Artillery: an air unit within range in x, z   |
 * |             | with cos(30 deg) d_xz < dy <= d_xz (see below)                           |
 * | restart     | each step, with probability 1/9000, bases, units and stats restart       |
 * Artillery's test is PufferLib's acos(dy / d_xz) < 30 deg, d_xz the horizontal distance: the
 * acos of a ratio above 1 is NaN and never passes, so it hits air units whose elevation angle
 * atan(dy / d_xz) is between 40.9 and 45 deg.
 *
 * Observation per unit, float32, the first 6 num_armies + 27 values as PufferLib's row, the
 * rest (up to 75) 0: per base f, base - position (3 each); position - army centroid (3 each),
 * its own army first, the others in order; velocity / 0.01 (3); orientation quaternion w, x, y,
 * z; x, y, z; height above the ground; speed; health; max_turn; max_speed; damage; range; this
 * step's reward; this step's terminal; unit type one-hot (8: drone, mothership, fighter,
 * bomber, infantry, tank, artillery, base). Centroid: num_armies * sum(x) / num_agents.
 * Log per ended unit episode: episode_return, episode_length, collision_rate, oob_rate, and
 * score = the return unless it ended in the ground (then 0).
 *
 * Deliberate differences from PufferLib 3.0: the observation row has a fixed width of 75
 * (num_armies 8); a base that cannot be placed in 10,000 draws restarts the placement of all
 * bases, and configs where a spacing-2 lattice does not fit every base are refused (theirs draws
 * forever: their Python defaults, size 1 with 4 armies, never finish a reset); the 1/9000 restart
 * sets truncations and clears episode returns (theirs sets no flag); the log's score is per
 * episode (theirs assigns a running sum) and there is no perf entry (theirs is never written);
 * the render is a 2D top-down raster view (terrain shaded by height, units as dots, bases as
 * squares) instead of raylib 3D models.
 */
#ifndef PUFFER_SCHOOL_H
#define PUFFER_SCHOOL_H

#include "../puffer.h"
#include "../raster.h"
#include "../simplex.h"

PUFFER_ENV_BEGIN(school)

enum { SCHOOL_MAX_ARMIES = 8, SCHOOL_UNIT_TYPES = 8, SCHOOL_STATS = 19 };
enum { SCHOOL_OBS = 6 * SCHOOL_MAX_ARMIES + SCHOOL_STATS + SCHOOL_UNIT_TYPES };
enum { SCHOOL_MAX_AGENTS = 4096, SCHOOL_SQUAD = 64, SCHOOL_BASE_TRIES = 10000 };
enum { SCHOOL_TEXELS = 128 }; /* terrain texels per unit length */
enum {
    SCHOOL_DRONE,
    SCHOOL_MOTHERSHIP,
    SCHOOL_FIGHTER,
    SCHOOL_BOMBER,
    SCHOOL_INFANTRY,
    SCHOOL_TANK,
    SCHOOL_ARTILLERY,
    SCHOOL_BASE
};
static const float SCHOOL_MAX_SPEED = 0.01f;
static const float SCHOOL_HIT = 0.25f;            /* reward per hit */
static const float SCHOOL_COS30 = 0.86602540378f; /* cone half-angle of aimed shots */
static const float SCHOOL_BASE_SPACING = 2.0f;
static const int SCHOOL_RESTART_ODDS = 9000;

typedef struct {
    float episode_return;
    float episode_length;
    float collision_rate;
    float oob_rate;
    float score;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "collision_rate",
                                  "oob_rate",       "score",          "n"};

/* Quaternions as (w, x, y, z); products and rotations as in raymath. */
typedef struct {
    float w, x, y, z;
} SchoolQuat;

typedef struct {
    float x, y, z, vx, vy, vz, speed;
    float health, max_turn, max_speed, damage, range;
    SchoolQuat q; /* orientation: a product of unit turns, not renormalized */
    int army, type, target, episode_length;
    float episode_return;
} SchoolUnit;

typedef struct {
    float x, y, z;
} SchoolVec;

typedef struct {
    float *observations; /* (num_agents, 75) */
    float *actions;      /* (num_agents, 3) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int agents, armies;           /* config: num_agents, num_armies */
    float size_x, size_y, size_z; /* config: half extents of the box */
    int terrain_w, terrain_h;
    SchoolVec base[SCHOOL_MAX_ARMIES];
    /* heap: agents units (saved), then scratch the step rebuilds and the terrain, which is a
     * fixed function of the config (neither saved) */
    SchoolUnit *unit;
} School;

static const PufferField CONFIG[] = {
    {"num_agents", offsetof(School, agents), PUFFER_INT, 512, 1, SCHOOL_MAX_AGENTS,
     "units per env, split evenly among the armies"},
    {"num_armies", offsetof(School, armies), PUFFER_INT, 2, 1, SCHOOL_MAX_ARMIES, "armies"},
    {"size_x", offsetof(School, size_x), PUFFER_FLOAT, 2.0, 1.0, 4.0, "half width of the box"},
    {"size_y", offsetof(School, size_y), PUFFER_FLOAT, 2.0, 1.0, 4.0, "half height of the box"},
    {"size_z", offsetof(School, size_z), PUFFER_FLOAT, 2.0, 1.0, 4.0, "half depth of the box"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

#include "school_dynamics.h"

static const char *school_check(const void *self) {
    const School *env = (const School *)self;
    if (env->agents % env->armies != 0) return "num_agents must be a multiple of num_armies";
    /* Bases are drawn in [0.5 - size, size - 0.5] per axis and kept 2.0 apart: require that a
     * lattice of spacing 2 fits every base, so the draws can succeed. */
    const int fit_x = (int)((2.0f * env->size_x - 1.0f) / SCHOOL_BASE_SPACING) + 1;
    const int fit_z = (int)((2.0f * env->size_z - 1.0f) / SCHOOL_BASE_SPACING) + 1;
    if (fit_x * fit_z < env->armies)
        return "num_armies bases do not fit 2.0 apart: raise size_x/size_z or lower num_armies";
    return NULL;
}

static int school_blocks(const void *self, PufferBlock *out) {
    const School *env = (const School *)self;
    out[0].offset = offsetof(School, unit);
    out[0].bytes = (size_t)env->agents * sizeof(SchoolUnit);
    return 1;
}

static void c_init(School *env) {
    env->num_agents = env->agents;
    env->terrain_w = (int)(256.0f * env->size_x);
    env->terrain_h = (int)(256.0f * env->size_z);
    const size_t bytes = (size_t)env->agents * (sizeof(SchoolUnit) + 4 * sizeof(float)) +
                         (size_t)env->terrain_w * env->terrain_h * sizeof(float);
    env->unit = (SchoolUnit *)calloc(1, bytes);
    school_build_terrain(env);
}

/* Full stats of the unit's type: (health, damage, range, max_turn, max_speed). */
static void school_stats(SchoolUnit *u) {
    static const float STATS[7][5] = {
        {0.4f, 0.1f, 0.15f, 2.0f, 1.0f},   /* drone */
        {10.0f, 2.0f, 0.4f, 0.5f, 0.5f},   /* mothership */
        {1.0f, 0.5f, 0.25f, 1.0f, 0.75f},  /* fighter */
        {1.0f, 1.0f, 0.1f, 0.5f, 0.5f},    /* bomber */
        {0.2f, 0.2f, 0.2f, 2.0f, 0.25f},   /* infantry */
        {2.0f, 0.5f, 0.25f, 0.25f, 0.75f}, /* tank */
        {2.0f, 2.0f, 0.7f, 0.5f, 0.25f},   /* artillery */
    };
    const float *s = STATS[u->type];
    u->health = s[0], u->damage = s[1], u->range = s[2], u->max_turn = s[3], u->max_speed = s[4];
}

static void school_respawn(School *env, int i) {
    SchoolUnit *u = &env->unit[i];
    u->q.w = 1.0f, u->q.x = u->q.y = u->q.z = 0.0f;
    u->vx = u->vy = u->vz = 0.0f;
    if (u->type == SCHOOL_DRONE) {
        const SchoolUnit *mother = &env->unit[SCHOOL_SQUAD * (i / SCHOOL_SQUAD)];
        u->x = mother->x, u->y = mother->y, u->z = mother->z;
        return;
    }
    const SchoolVec *base = &env->base[u->army];
    u->x = base->x, u->z = base->z;
    const float ground = school_ground(env, u->x, u->z);
    u->y =
        school_is_ground(u->type) ? ground : puffer_clip(ground + 0.2f, -env->size_y, env->size_y);
}

static int school_place_bases(School *env) {
    for (int i = 0; i < env->armies; i++) {
        SchoolVec *b = &env->base[i];
        int placed = 0;
        for (int tries = 0; tries < SCHOOL_BASE_TRIES && !placed; tries++) {
            b->x = rng_uniform(&env->rng, 0.5f - env->size_x, env->size_x - 0.5f);
            b->z = rng_uniform(&env->rng, 0.5f - env->size_z, env->size_z - 0.5f);
            placed = 1;
            for (int j = 0; j < i && placed; j++) {
                const float dx = env->base[j].x - b->x, dz = env->base[j].z - b->z;
                placed = sqrtf(dx * dx + dz * dz) >= SCHOOL_BASE_SPACING;
            }
        }
        if (!placed) return 0;
        b->y = school_ground(env, b->x, b->z);
    }
    return 1;
}

static void school_observe(School *env);

/* New bases and every unit back at full stats; rewards and flags of the step are kept. */
static void school_restart(School *env) {
    while (!school_place_bases(env)) {
    }
    const int per_army = env->agents / env->armies;
    for (int i = 0; i < env->agents; i++) {
        SchoolUnit *u = &env->unit[i];
        const int k = (i % per_army) % SCHOOL_SQUAD;
        u->type = k == 0    ? SCHOOL_MOTHERSHIP
                  : k <= 4  ? SCHOOL_TANK
                  : k <= 6  ? SCHOOL_ARTILLERY
                  : k <= 10 ? SCHOOL_BOMBER
                  : k <= 14 ? SCHOOL_FIGHTER
                  : k <= 32 ? SCHOOL_INFANTRY
                            : SCHOOL_DRONE;
        u->army = i / per_army;
        u->episode_length = 0;
        u->episode_return = 0.0f;
        u->target = -1;
        school_stats(u);
        school_respawn(env, i);
    }
}

static void c_reset(School *env) {
    const size_t n = (size_t)env->agents;
    memset(env->rewards, 0, n * sizeof(float));
    memset(env->terminals, 0, n);
    memset(env->truncations, 0, n);
    school_restart(env);
    school_observe(env);
}

static void school_observe(School *env) {
    const int armies = env->armies;
    float cx[SCHOOL_MAX_ARMIES] = {0}, cy[SCHOOL_MAX_ARMIES] = {0}, cz[SCHOOL_MAX_ARMIES] = {0};
    const float share = (float)armies;
    for (int i = 0; i < env->agents; i++) {
        const SchoolUnit *u = &env->unit[i];
        cx[u->army] += share * u->x / (float)env->agents;
        cy[u->army] += share * u->y / (float)env->agents;
        cz[u->army] += share * u->z / (float)env->agents;
    }
    const float inv_speed = 1.0f / SCHOOL_MAX_SPEED;
    for (int i = 0; i < env->agents; i++) {
        const SchoolUnit *u = &env->unit[i];
        float *o = env->observations + (size_t)i * SCHOOL_OBS;
        for (int f = 0; f < armies; f++) {
            *o++ = env->base[f].x - u->x, *o++ = env->base[f].y - u->y;
            *o++ = env->base[f].z - u->z;
        }
        *o++ = u->x - cx[u->army], *o++ = u->y - cy[u->army], *o++ = u->z - cz[u->army];
        for (int a = 0; a < armies; a++) {
            if (a == u->army) continue;
            *o++ = u->x - cx[a], *o++ = u->y - cy[a], *o++ = u->z - cz[a];
        }
        *o++ = u->vx * inv_speed, *o++ = u->vy * inv_speed, *o++ = u->vz * inv_speed;
        *o++ = u->q.w, *o++ = u->q.x, *o++ = u->q.y, *o++ = u->q.z;
        *o++ = u->x, *o++ = u->y, *o++ = u->z;
        *o++ = u->y - school_ground(env, u->x, u->z);
        *o++ = u->speed, *o++ = u->health, *o++ = u->max_turn, *o++ = u->max_speed;
        *o++ = u->damage, *o++ = u->range;
        *o++ = env->rewards[i], *o++ = (float)env->terminals[i];
        const float *end = env->observations + (size_t)(i + 1) * SCHOOL_OBS;
        memset(o, 0, (size_t)(end - o) * sizeof(float));
        o[u->type] = 1.0f;
    }
}

/* The checks each unit faces before it moves; returns 1 and writes the reward if it ends. */
static int school_ended(const School *env, const SchoolUnit *u, float *reward, float *collision,
                        float *oob) {
    int done = u->health <= 0.0f;
    if (!school_is_ground(u->type) && u->y < school_ground(env, u->x, u->z))
        done = 1, *reward = -1.0f, *collision = 1.0f;
    const float ex = 0.95f * env->size_x, ez = 0.95f * env->size_z;
    if (u->x < -ex || u->x > ex || u->z < -ez || u->z > ez || u->y > 0.95f * env->size_y)
        done = 1, *reward = -1.0f, *oob = 1.0f;
    return done;
}

static void c_step(School *env) {
    const size_t n = (size_t)env->agents;
    memset(env->rewards, 0, n * sizeof(float));
    memset(env->terminals, 0, n);
    memset(env->truncations, 0, n);
    for (int i = 0; i < env->agents; i++) {
        SchoolUnit *u = &env->unit[i];
        u->episode_length += 1;
        u->target = -1;
        float reward = 0.0f, collision = 0.0f, oob = 0.0f;
        if (school_ended(env, u, &reward, &collision, &oob)) {
            school_stats(u);
            school_respawn(env, i);
            u->episode_return += reward;
            env->rewards[i] = reward;
            env->terminals[i] = 1;
            env->log.episode_return += u->episode_return;
            env->log.episode_length += (float)u->episode_length;
            env->log.collision_rate += collision;
            env->log.oob_rate += oob;
            env->log.score += (1.0f - collision) * u->episode_return;
            env->log.n += 1.0f;
            u->episode_length = 0;
            u->episode_return = 0.0f;
        }
        const float *act = env->actions + 3 * (size_t)i;
        if (school_is_ground(u->type))
            school_drive(env, u, act);
        else
            school_fly(env, u, act);
    }
    school_attack(env);
    if (rng_int(&env->rng, SCHOOL_RESTART_ODDS) == 0) {
        school_restart(env);
        memset(env->truncations, 1, n);
    }
    school_observe(env);
}

static void c_frame_size(const School *env, int *width, int *height) {
    *width = env->terrain_w;
    *height = env->terrain_h;
}

static const Color SCHOOL_COLORS[SCHOOL_MAX_ARMIES] = {{0, 255, 255}, {255, 0, 0},   {0, 255, 0},
                                                       {255, 255, 0}, {255, 0, 255}, {0, 0, 255},
                                                       {128, 255, 0}, {255, 128, 0}};

/* A line as dots one pixel apart (attack tracers). */
static void school_line(Canvas *c, int x0, int y0, int x1, int y1, Color color) {
    const int dx = abs(x1 - x0), dy = abs(y1 - y0), steps = dx > dy ? dx : dy;
    for (int k = 0; k <= steps; k++) {
        const float t = steps ? (float)k / (float)steps : 0.0f;
        raster_pixel(c, x0 + (int)((float)(x1 - x0) * t), y0 + (int)((float)(y1 - y0) * t), color);
    }
}

/* Top-down view, one pixel per terrain texel: the ground shaded by height, bases as squares,
 * ground units as squares and air units as dots in their army's colour, tracers to targets. */
static void c_render(const School *env, Canvas *canvas) {
    const float *map = school_terrain(env);
    for (int r = 0; r < env->terrain_h && r < canvas->height; r++) {
        uint8_t *p = canvas->pixels + 3 * (size_t)r * canvas->width;
        for (int c = 0; c < env->terrain_w && c < canvas->width; c++, p += 3) {
            const float h = map[r * env->terrain_w + c] / 240.0f;
            p[0] = (uint8_t)(10 + 60 * h), p[1] = (uint8_t)(20 + 80 * h),
            p[2] = (uint8_t)(20 + 70 * h);
            p[2] = (uint8_t)(24 - 4 * h);
        }
    }
    const float px = SCHOOL_TEXELS;
#define SCHOOL_PX(v, size) ((int)(((v) + (size)) * px))
    for (int f = 0; f < env->armies; f++) {
        const int x = SCHOOL_PX(env->base[f].x, env->size_x),
                  z = SCHOOL_PX(env->base[f].z, env->size_z);
        raster_rect(canvas, x - 8, z - 8, 16, 16, SCHOOL_COLORS[f]);
        raster_rect(canvas, x - 5, z - 5, 10, 10, COLOR_BLACK);
    }
    for (int i = 0; i < env->agents; i++) {
        const SchoolUnit *u = &env->unit[i];
        const int x = SCHOOL_PX(u->x, env->size_x), z = SCHOOL_PX(u->z, env->size_z);
        const Color color = SCHOOL_COLORS[u->army];
        if (u->target >= 0) {
            const SchoolUnit *t = &env->unit[u->target];
            school_line(canvas, x, z, SCHOOL_PX(t->x, env->size_x), SCHOOL_PX(t->z, env->size_z),
                        COLOR_WHITE);
        }
        if (school_is_ground(u->type))
            raster_rect(canvas, x - 2, z - 2, u->type == SCHOOL_INFANTRY ? 3 : 5,
                        u->type == SCHOOL_INFANTRY ? 3 : 5, color);
        else
            raster_circle(canvas, x, z,
                          u->type == SCHOOL_MOTHERSHIP ? 6
                          : u->type == SCHOOL_DRONE    ? 1
                                                       : 3,
                          color);
    }
#undef SCHOOL_PX
}

static void c_close(School *env) {
    free(env->unit);
    env->unit = NULL;
}

/* The human steers every unit alike: w/s pitch (air units), a/d roll or turn. */
static const PufferKey KEYS[] = {{"idle", 0, 0}, {"idle", 1, 0}, {"idle", 2, 0}, {"w", 0, 1},
                                 {"s", 0, -1},   {"a", 1, -1},   {"d", 1, 1},    {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Armies of air and ground units (drones, motherships, fighters, bombers, infantry, "
           "tanks, artillery) move over a height-map and shoot at other armies: +0.25 per hit; "
           "-1 and a terminal for crashing into the ground or leaving the box; a unit whose "
           "health runs out ends with 0 and respawns. Observation: (75,) float32: offsets to "
           "bases and army centroids, velocity, orientation, position, stats, unit one-hot "
           "(6 num_armies + 27 used, rest 0). Action: Box(-1, 1, (3,)): pitch, roll/turn, "
           "unused.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = SCHOOL_OBS,
    .obs_low = -1e4,
    .obs_high = 1e4,
    .action_dim = 3,
    .action_low = -1,
    .action_high = 1,
    PUFFER_SPEC_TABLES(School),
    .blocks = school_blocks,
    .check = school_check,
};

PUFFER_ENV_END(school, School)

#endif
