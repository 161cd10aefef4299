/* Convert: `num_agents` puffers fly around an arena and convert the item they carry at
 * wandering factories of that item's type (PufferLib 3.0's convert task, rules restated in our
 * own code).
 *
 * Rules (defaults in brackets):
 * | arena        | width [1920] x height [1080] px                                         |
 * | entities     | num_agents [1024] agents, num_factories [32] factories, num_resources   |
 * |              | [8] item types; factory f makes type f % num_resources                  |
 * | reset        | agents and factories at 16 + uniform integer in [0, extent - 16); agent |
 * |              | items uniform, heading and speed 0; factory headings whole degrees      |
 * | action       | MultiDiscrete([9, 5]): heading += (a0 - 4) / 12 rad, clipped to [0, 2pi]; |
 * |              | speed += a1 - 2, clipped to [-20, 20]                                   |
 * | move         | position += speed * (cos, sin)(heading), clipped to [16, extent - 16];  |
 * |              | then with probability 1 / num_agents the agent jumps to a uniform       |
 * |              | integer point in [0, width) x [0, height)                               |
 * | convert      | each factory within 32 px, in index order, whose type is the agent's    |
 * |              | item: the item becomes (item + 1) % num_resources, reward 1 (not summed) |
 * | factories    | after every agent: 2 px/step along their heading; one that leaves       |
 * |              | [16, extent - 16] is clamped and turns to a uniform whole-degree heading |
 * | episode end  | none (as in PufferLib); each conversion logs an entry                   |
 * Agents act one after another in index order. Observation per agent: (28,) float32: per item
 * type the offset to its nearest factory (dx / width, dy / height), then heading / 2pi, this
 * step's reward, x / width, y / height, then the carried item one-hot. Log per conversion:
 * score = perf = 1, episode_length = the agent's steps since its previous conversion.
 *
 * Deliberate differences from PufferLib 3.0: with fewer than 8 item types the row keeps their
 * layout (3 * num_resources + 4 values) and the rest reads 0; an item type no factory makes
 * reads offset 0, and the nearest factory is reported however far it is (theirs keeps the
 * previous step's value for a type whose factories are all 1,000 px or more away).
 */
#ifndef PUFFER_CONVERT_H
#define PUFFER_CONVERT_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(convert)

enum { CV_MAX_ITEMS = 8, CV_OBS = 3 * CV_MAX_ITEMS + 4 };
enum { CV_MAX_AGENTS = 4096, CV_MAX_FACTORIES = 256 };
static const float CV_EDGE = 16.0f, CV_REACH = 32.0f, CV_MAX_SPEED = 20.0f;
static const float CV_FACTORY_SPEED = 2.0f;
static const float CV_TWO_PI = 6.28318530717958647692f;

typedef struct {
    float perf;
    float score;
    float episode_length;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_length", "n"};

typedef struct {
    float x, y, heading, speed;
    int item, steps;
} CvAgent;

typedef struct {
    float x, y, heading;
    int item;
} CvFactory;

typedef struct {
    float *observations; /* (num_agents, 28) */
    int32_t *actions;    /* (num_agents, 2) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int width, height, agents, num_factories, num_resources; /* config */
    CvAgent *agent;                                          /* heap: agents */
    CvFactory *factory;                                      /* heap: num_factories */
} Convert;

static const PufferField CONFIG[] = {
    {"width", offsetof(Convert, width), PUFFER_INT, 1920, 64, 1e5, "arena width in px"},
    {"height", offsetof(Convert, height), PUFFER_INT, 1080, 64, 1e5, "arena height in px"},
    {"num_agents", offsetof(Convert, agents), PUFFER_INT, 1024, 1, CV_MAX_AGENTS, "agents per env"},
    {"num_factories", offsetof(Convert, num_factories), PUFFER_INT, 32, 1, CV_MAX_FACTORIES,
     "factories; factory f converts item type f % num_resources"},
    {"num_resources", offsetof(Convert, num_resources), PUFFER_INT, 8, 1, CV_MAX_ITEMS,
     "item types"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int cv_blocks(const void *self, PufferBlock *out) {
    const Convert *env = (const Convert *)self;
    out[0].offset = offsetof(Convert, agent);
    out[0].bytes = (size_t)env->agents * sizeof(CvAgent);
    out[1].offset = offsetof(Convert, factory);
    out[1].bytes = (size_t)env->num_factories * sizeof(CvFactory);
    return 2;
}

static void c_init(Convert *env) {
    env->num_agents = env->agents;
    env->agent = (CvAgent *)calloc((size_t)env->agents, sizeof(CvAgent));
    env->factory = (CvFactory *)calloc((size_t)env->num_factories, sizeof(CvFactory));
}

/* Factory positions as two flat arrays, so distance loops vectorize. */
typedef struct {
    float x[CV_MAX_FACTORIES], y[CV_MAX_FACTORIES];
} CvSpots;

static void cv_spots(const Convert *env, CvSpots *spots) {
    for (int f = 0; f < env->num_factories; f++)
        spots->x[f] = env->factory[f].x, spots->y[f] = env->factory[f].y;
}

/* Squared distances from (x, y) to every factory. */
static void cv_distances(const Convert *env, const CvSpots *spots, float x, float y, float *d2) {
    for (int f = 0; f < env->num_factories; f++) {
        const float dx = spots->x[f] - x, dy = spots->y[f] - y;
        d2[f] = dx * dx + dy * dy;
    }
}

static void cv_observe(Convert *env) {
    const int items = env->num_resources;
    const float sx = 1.0f / (float)env->width, sy = 1.0f / (float)env->height;
    CvSpots spots;
    float d2[CV_MAX_FACTORIES];
    cv_spots(env, &spots);
    for (int a = 0; a < env->agents; a++) {
        float *obs = env->observations + (size_t)a * CV_OBS;
        const CvAgent *me = &env->agent[a];
        memset(obs, 0, CV_OBS * sizeof(float));
        cv_distances(env, &spots, me->x, me->y, d2);
        /* Factory f makes type f % items: scan each type's factories in index order. */
        for (int t = 0; t < items && t < env->num_factories; t++) {
            int best = t;
            for (int f = t + items; f < env->num_factories; f += items)
                if (d2[f] < d2[best]) best = f;
            obs[2 * t] = (spots.x[best] - me->x) * sx;
            obs[2 * t + 1] = (spots.y[best] - me->y) * sy;
        }
        float *tail = obs + 2 * items;
        tail[0] = me->heading / CV_TWO_PI;
        tail[1] = env->rewards[a];
        tail[2] = me->x * sx;
        tail[3] = me->y * sy;
        tail[4 + me->item] = 1.0f;
    }
}

/* 16 + a uniform integer in [0, extent - 16), as PufferLib places things. */
static float cv_spawn(Convert *env, int extent) {
    return CV_EDGE + (float)rng_int(&env->rng, extent - (int)CV_EDGE);
}

static float cv_random_heading(Convert *env) {
    return (float)rng_int(&env->rng, 360) * (CV_TWO_PI / 360.0f);
}

static void c_reset(Convert *env) {
    for (int a = 0; a < env->agents; a++) {
        CvAgent *ag = &env->agent[a];
        ag->x = cv_spawn(env, env->width);
        ag->y = cv_spawn(env, env->height);
        ag->item = rng_int(&env->rng, env->num_resources);
        ag->heading = ag->speed = 0.0f;
        ag->steps = 0;
        env->rewards[a] = 0.0f;
    }
    for (int f = 0; f < env->num_factories; f++) {
        CvFactory *fac = &env->factory[f];
        fac->x = cv_spawn(env, env->width);
        fac->y = cv_spawn(env, env->height);
        fac->item = f % env->num_resources;
        fac->heading = cv_random_heading(env);
    }
    cv_observe(env);
}

/* Converts at every factory in reach that takes the agent's item; returns 1 if any did. */
static int cv_convert(Convert *env, const CvSpots *spots, CvAgent *ag) {
    float d2[CV_MAX_FACTORIES];
    int converted = 0;
    cv_distances(env, spots, ag->x, ag->y, d2);
    for (int f = 0; f < env->num_factories; f++) {
        if (d2[f] > CV_REACH * CV_REACH || env->factory[f].item != ag->item) continue;
        ag->item = (ag->item + 1) % env->num_resources;
        env->log.perf += 1.0f;
        env->log.score += 1.0f;
        env->log.episode_length += (float)ag->steps;
        env->log.n += 1.0f;
        ag->steps = 0;
        converted = 1;
    }
    return converted;
}

static void c_step(Convert *env) {
    const float w = (float)env->width, h = (float)env->height;
    CvSpots spots; /* factories hold still while agents act */
    cv_spots(env, &spots);
    for (int a = 0; a < env->agents; a++) {
        CvAgent *ag = &env->agent[a];
        const int32_t *act = env->actions + 2 * a;
        ag->steps++;
        ag->heading = puffer_clip(ag->heading + (float)(act[0] - 4) / 12.0f, 0.0f, CV_TWO_PI);
        ag->speed = puffer_clip(ag->speed + (float)(act[1] - 2), -CV_MAX_SPEED, CV_MAX_SPEED);
        ag->x = puffer_clip(ag->x + ag->speed * cosf(ag->heading), CV_EDGE, w - CV_EDGE);
        ag->y = puffer_clip(ag->y + ag->speed * sinf(ag->heading), CV_EDGE, h - CV_EDGE);
        if (rng_int(&env->rng, env->agents) == 0) {
            ag->x = (float)rng_int(&env->rng, env->width);
            ag->y = (float)rng_int(&env->rng, env->height);
        }
        env->rewards[a] = (float)cv_convert(env, &spots, ag);
    }
    for (int f = 0; f < env->num_factories; f++) {
        CvFactory *fac = &env->factory[f];
        const float x = fac->x + CV_FACTORY_SPEED * cosf(fac->heading);
        const float y = fac->y + CV_FACTORY_SPEED * sinf(fac->heading);
        fac->x = puffer_clip(x, CV_EDGE, w - CV_EDGE);
        fac->y = puffer_clip(y, CV_EDGE, h - CV_EDGE);
        if (fac->x != x || fac->y != y) fac->heading = cv_random_heading(env);
    }
    memset(env->terminals, 0, (size_t)env->agents);
    memset(env->truncations, 0, (size_t)env->agents);
    cv_observe(env);
}

/* Frames are drawn at half scale: the default arena is 1920x1080 px. */
enum { CV_SCALE = 2 };
static const Color CV_ITEM_COLORS[CV_MAX_ITEMS] = {{187, 0, 0},   {0, 187, 0},    {0, 120, 220},
                                                   {230, 200, 0}, {0, 187, 187},  {187, 0, 187},
                                                   {230, 120, 0}, {200, 200, 200}};

static void c_frame_size(const Convert *env, int *width, int *height) {
    *width = env->width / CV_SCALE;
    *height = env->height / CV_SCALE;
}

static void c_render(const Convert *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int f = 0; f < env->num_factories; f++) {
        const CvFactory *fac = &env->factory[f];
        const int x = (int)fac->x / CV_SCALE, y = (int)fac->y / CV_SCALE;
        raster_rect(canvas, x - 12, y - 12, 24, 24, COLOR_GRID);
        raster_circle(canvas, x, y, 9, CV_ITEM_COLORS[fac->item]);
    }
    for (int a = 0; a < env->agents; a++) {
        const CvAgent *ag = &env->agent[a];
        raster_circle(canvas, (int)ag->x / CV_SCALE, (int)ag->y / CV_SCALE, 4,
                      CV_ITEM_COLORS[ag->item]);
    }
}

static void c_close(Convert *env) {
    free(env->agent);
    free(env->factory);
    env->agent = NULL;
    env->factory = NULL;
}

static const int ACTION_SIZES[] = {9, 5};
static const PufferKey KEYS[] = {{"idle", 0, 4}, {"idle", 1, 2}, {"left", 0, 0}, {"right", 0, 8},
                                 {"up", 1, 4},   {"down", 1, 0}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Agents fly around a 1920x1080 arena carrying one of 8 item types; touching (32 px) "
           "a factory of the carried type converts it to the next type for +1. Factories "
           "wander at 2 px/step; an agent randomly jumps with probability 1/num_agents per "
           "step. No episode end. Observation: (28,) float32: nearest factory offset per type, "
           "heading, last reward, position, item one-hot. Action: MultiDiscrete([9, 5]): turn "
           "(a - 4) / 12 rad, accelerate a - 2 px/step.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = CV_OBS,
    .obs_low = -1,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Convert),
    .blocks = cv_blocks,
};

PUFFER_ENV_END(convert, Convert)

#endif
