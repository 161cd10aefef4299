/* Boids: `num_boids` agents steer their velocity in a 1080x720 px arena and are paid for
 * keeping inside the margins and out of each other's way (PufferLib 3.0's boids task, rules
 * restated in our own code).
 *
 * Rules (defaults in brackets):
 * | arena            | 1080 x 720 px; margins 50 px on every side                           |
 * | spawn (reset)    | x uniform in [50, 1030], y in [50, 670], velocity 0                  |
 * | action           | MultiDiscrete([5, 5]): a per axis adds (a - 2) / 2 px/step to the    |
 * |                  | velocity (-1, -0.5, 0, 0.5, 1), clipped to [-5, 5]                   |
 * | move             | position += velocity, clipped to x in [0, 1048], y in [0, 688]       |
 * | order            | boids move one after another in index order; each reward sees the    |
 * |                  | boids moved before it at their new place                             |
 * | crowding         | -min(n / 5, 1) * avoid_factor [0], n = other boids within 100 px     |
 * | margins          | per axis: -margin_turn_factor [1] if outside the margins, else +     |
 * | reward           | (crowding + both margin terms) / 2 each step                         |
 * | episode end      | none: the swarm flies forever (as in PufferLib)                      |
 * Observation per boid: (256,) float32, for every boid j (itself included) in index order:
 * (x_j - x) / 1080, (y_j - y) / 720, (vx_j - vx) / 5, (vy_j - vy) / 5; rows past num_boids
 * read 0. Log (each step): score = mean reward per boid.
 *
 * centering_factor and matching_factor [0] are accepted for PufferLib's configs but act on
 * boids 20 px or nearer that are not within the 100 px crowding range: no boid is both, so
 * they never change a reward (in PufferLib too). Deliberate differences: the observation has a
 * fixed capacity of 64 boids (ours are fixed-size rows; theirs is num_boids * 4 long), the
 * log averages every boid's reward (theirs records boid 0), and there is no mouse control.
 */
#ifndef PUFFER_BOIDS_H
#define PUFFER_BOIDS_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(boids)

enum { BOIDS_MAX = 64, BOIDS_OBS = 4 * BOIDS_MAX };
enum { BOIDS_WIDTH = 1080, BOIDS_HEIGHT = 720, BOIDS_MARGIN = 50, BOIDS_SIZE = 32 };
static const float BOIDS_SPEED_CAP = 5.0f;
static const float BOIDS_CROWD_RANGE = 100.0f;

typedef struct {
    float score; /* mean reward per boid, one entry per step */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"score", "n"};

typedef struct {
    float x, y, vx, vy;
} Boid;

typedef struct {
    float *observations; /* (num_boids, 256) */
    int32_t *actions;    /* (num_boids, 2) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int boids;                                     /* config: num_boids */
    float margin_turn, centering, avoid, matching; /* config: reward factors */
    Boid *flock;                                   /* heap: num_boids */
} Boids;

static const PufferField CONFIG[] = {
    {"num_boids", offsetof(Boids, boids), PUFFER_INT, 1, 1, BOIDS_MAX, "boids (agents) per env"},
    {"margin_turn_factor", offsetof(Boids, margin_turn), PUFFER_FLOAT, 1.0, -1e9, 1e9,
     "reward per axis for staying inside the 50 px margins (its negative outside)"},
    {"centering_factor", offsetof(Boids, centering), PUFFER_FLOAT, 0.0, -1e9, 1e9,
     "PufferLib's cohesion weight; never acts (see the rules)"},
    {"avoid_factor", offsetof(Boids, avoid), PUFFER_FLOAT, 0.0, -1e9, 1e9,
     "penalty weight of crowding: other boids within 100 px, saturating at 5"},
    {"matching_factor", offsetof(Boids, matching), PUFFER_FLOAT, 0.0, -1e9, 1e9,
     "PufferLib's alignment weight; never acts (see the rules)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int boids_blocks(const void *self, PufferBlock *out) {
    const Boids *env = (const Boids *)self;
    out[0].offset = offsetof(Boids, flock);
    out[0].bytes = (size_t)env->boids * sizeof(Boid);
    return 1;
}

static void c_init(Boids *env) {
    env->num_agents = env->boids;
    env->flock = (Boid *)calloc((size_t)env->boids, sizeof(Boid));
}

static void boids_observe(Boids *env) {
    const float sx = 1.0f / BOIDS_WIDTH, sy = 1.0f / BOIDS_HEIGHT, sv = 1.0f / BOIDS_SPEED_CAP;
    for (int i = 0; i < env->boids; i++) {
        float *obs = env->observations + (size_t)i * BOIDS_OBS;
        const Boid me = env->flock[i];
        for (int j = 0; j < env->boids; j++) {
            const Boid *other = &env->flock[j];
            obs[4 * j + 0] = (other->x - me.x) * sx;
            obs[4 * j + 1] = (other->y - me.y) * sy;
            obs[4 * j + 2] = (other->vx - me.vx) * sv;
            obs[4 * j + 3] = (other->vy - me.vy) * sv;
        }
    }
}

static void c_reset(Boids *env) {
    for (int i = 0; i < env->boids; i++) {
        Boid *b = &env->flock[i];
        b->x = rng_uniform(&env->rng, BOIDS_MARGIN, BOIDS_WIDTH - BOIDS_MARGIN);
        b->y = rng_uniform(&env->rng, BOIDS_MARGIN, BOIDS_HEIGHT - BOIDS_MARGIN);
        b->vx = b->vy = 0.0f;
    }
    memset(env->observations, 0, (size_t)env->boids * BOIDS_OBS * sizeof(float));
    boids_observe(env);
}

/* +factor inside [margin, extent - margin] on one axis, -factor outside. */
static float boids_margin(float v, int extent, float factor) {
    return v < BOIDS_MARGIN || v > extent - BOIDS_MARGIN ? -factor : factor;
}

static void c_step(Boids *env) {
    const float range2 = BOIDS_CROWD_RANGE * BOIDS_CROWD_RANGE;
    float total = 0.0f;
    for (int i = 0; i < env->boids; i++) {
        Boid *b = &env->flock[i];
        const int32_t *act = env->actions + 2 * i;
        b->vx = puffer_clip(b->vx + 0.5f * (float)(act[0] - 2), -BOIDS_SPEED_CAP, BOIDS_SPEED_CAP);
        b->vy = puffer_clip(b->vy + 0.5f * (float)(act[1] - 2), -BOIDS_SPEED_CAP, BOIDS_SPEED_CAP);
        b->x = puffer_clip(b->x + b->vx, 0.0f, BOIDS_WIDTH - BOIDS_SIZE);
        b->y = puffer_clip(b->y + b->vy, 0.0f, BOIDS_HEIGHT - BOIDS_SIZE);
        int crowd = 0;
        for (int j = 0; j < env->boids; j++) {
            const float dx = b->x - env->flock[j].x, dy = b->y - env->flock[j].y;
            crowd += j != i && dx * dx + dy * dy < range2;
        }
        float reward = -(crowd >= 5 ? 1.0f : (float)crowd / 5.0f) * env->avoid;
        reward += boids_margin(b->y, BOIDS_HEIGHT, env->margin_turn);
        reward += boids_margin(b->x, BOIDS_WIDTH, env->margin_turn);
        env->rewards[i] = 0.5f * reward;
        env->terminals[i] = env->truncations[i] = 0;
        total += env->rewards[i];
    }
    env->log.score += total / (float)env->boids;
    env->log.n += 1.0f;
    boids_observe(env);
}

static void c_frame_size(const Boids *env, int *width, int *height) {
    (void)env;
    *width = BOIDS_WIDTH;
    *height = BOIDS_HEIGHT;
}

static void c_render(const Boids *env, Canvas *canvas) {
    raster_clear(canvas, COLOR_BACKGROUND);
    raster_rect(canvas, BOIDS_MARGIN, BOIDS_MARGIN, BOIDS_WIDTH - 2 * BOIDS_MARGIN, 1, COLOR_GRID);
    raster_rect(canvas, BOIDS_MARGIN, BOIDS_HEIGHT - BOIDS_MARGIN, BOIDS_WIDTH - 2 * BOIDS_MARGIN,
                1, COLOR_GRID);
    raster_rect(canvas, BOIDS_MARGIN, BOIDS_MARGIN, 1, BOIDS_HEIGHT - 2 * BOIDS_MARGIN, COLOR_GRID);
    raster_rect(canvas, BOIDS_WIDTH - BOIDS_MARGIN, BOIDS_MARGIN, 1,
                BOIDS_HEIGHT - 2 * BOIDS_MARGIN, COLOR_GRID);
    const int half = BOIDS_SIZE / 2;
    for (int i = 0; i < env->boids; i++) {
        const Boid *b = &env->flock[i];
        const int cx = (int)b->x + half, cy = (int)b->y + half;
        raster_circle(canvas, cx, cy, half - 2, COLOR_YELLOW);
        /* The eye looks the way the boid flies (PufferLib flips its sprite the same way). */
        raster_circle(canvas, cx + (b->vx > 0 ? half / 2 : -half / 2), cy - 3, 3, COLOR_BLACK);
    }
}

static void c_close(Boids *env) {
    free(env->flock);
    env->flock = NULL;
}

static const int ACTION_SIZES[] = {5, 5};
static const PufferKey KEYS[] = {{"idle", 0, 2}, {"idle", 1, 2}, {"left", 0, 0}, {"right", 0, 4},
                                 {"up", 1, 0},   {"down", 1, 4}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Boids steer in a 1080x720 arena: each step adds (a - 2) / 2 px/step to each velocity "
           "component (capped at 5). Reward per boid: (+/-margin_turn_factor per axis for "
           "being inside/outside the 50 px margins, - avoid_factor * min(neighbours within "
           "100 px / 5, 1)) / 2. No episode end. Observation: (256,) float32, every boid's "
           "offset and relative velocity (x/1080, y/720, v/5), 64 boid slots. Action: "
           "MultiDiscrete([5, 5]).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = BOIDS_OBS,
    .obs_low = -2,
    .obs_high = 2,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Boids),
    .blocks = boids_blocks,
};

PUFFER_ENV_END(boids, Boids)

#endif
