/* Terraform: bulldozers level a noisy heightmap into a field of flat 11x11 target pads by
 * scooping and dumping dirt (PufferLib 3.0's terraform task, rules restated in our own code).
 *
 * Rules (defaults in brackets; PufferLib's Python defaults, its .ini is configs/terraform.toml):
 * | map         | map_size x map_size [64] cells of dirt height in [0, 32]                    |
 * | target      | height 1 on 11x11 pads at 3 + 14 k per axis (k < (map_size - 3) / 14: 4x4   |
 * |             | pads at 64), 0 elsewhere                                                    |
 * | terrain     | 8 octaves of simplex noise read from a random whole-cell offset in [0,    |
 * |             | 10000) per axis, octave o at 4 * 2^o / map_size cycles per cell, weight    |
 * |             | 2^-o; rescaled to [0, 52], minus 34, floored at 0; then scaled so its      |
 * |             | volume equals the target's, capped at 32 per cell. Made at reset(seed) and |
 * |             | kept for every later episode of the env                                    |
 * | dozer       | spawns at a random whole cell of height 0, heading 0, speed 0, load 0       |
 * | action      | MultiDiscrete([5, 5, 3]): speed += (a0 - 2) / 2, clipped to [-2, 2];        |
 * |             | heading += (a1 - 2) / 10 rad, wrapped into [0, 2 pi]; a2: 0 none, 1 load,    |
 * |             | 2 unload                                                                    |
 * | bucket      | acts first, on the 2x2 to 3x3 cells (i, j) with trunc(c - 1) <= i < c + 1,  |
 * |             | c = position + 2 (cos, sin)(heading) (old heading and speed), x outer       |
 * | load        | per cell: up to 1 unit (all of it if the cell holds <= 1), bucket capped at |
 * |             | 100; refused (-0.05) while reversing (speed < 0) or with a full bucket      |
 * | unload      | per cell: up to 1 unit (what is left), cell capped at 32; refused (-0.05)   |
 * |             | while moving forward (speed > 0) or with an empty bucket                    |
 * | reward      | per bucket cell: (d0 + s l0 - d1 - s l1) / 10, d = |height - target| of the |
 * |             | cell before/after, l = load before/after, s = reward_scale [0.01]           |
 * | blocking    | speed -> 0 if a cell at distance 0 .. ceil(speed) - 1 ahead (forward only), |
 * |             | or in the 3x3 box around the destination, differs from the dozer's cell by  |
 * |             | > 5 in height (cells in the last row/column or off the map never block)     |
 * | move        | position += speed (cos, sin)(heading), clamped to [0, map_size - 1]         |
 * | teleport    | every 512th step of an episode each dozer jumps to a random cell of height 0 |
 * | solved      | total |height - target| < 0.01: the next step gives +1 to every dozer,      |
 * |             | terminal, and a new episode                                                 |
 * | episode end | else at step reset_frequency [8192] (0: never): truncation, reward 0        |
 * Dozers act one after another in index order; the episode's step that ends it takes no action.
 * Observation per dozer: (319,) float32: the 11x11 cells around it (row-major from the top-left,
 * origin trunc(x - 5), trunc(y - 5)), first height / 32, then (target - height) / 64 (cells off
 * the map 0); x / map_size, y / map_size, speed / 2, heading / 2 pi, load / 100; per quadrant (the
 * map cut into 11x11 blocks, row-major, 36 slots) sum(height - target) / 121; then a one-hot of
 * the dozer's quadrant (36 slots). Log per dozer and episode: episode_return, episode_length
 * (steps, the ending one included), score = perf = the fraction of the initial total
 * |height - target| removed (clipped to [0, 1]).
 *
 * Deliberate differences from PufferLib 3.0: the terrain's offset comes from the env's seed
 * (theirs from the clock, so no two runs match); the ends of episodes set terminals/truncations
 * and the timed end pays 0 (theirs sets no flag and leaves the previous step's rewards in the
 * buffer); a spawn or teleport that finds no flat cell in 1,024 draws scans for one from a random
 * cell and stays put if there is none (theirs loops forever); map_size is bounded to [17, 66] so
 * the quadrant block fits the fixed 36 slots (theirs packs fewer quadrants together at smaller
 * sizes and overflows the row at larger ones); their quadrant_progress log, always 0, is left
 * out.
 */
#ifndef PUFFER_TERRAFORM_H
#define PUFFER_TERRAFORM_H

#include "../puffer.h"
#include "../raster.h"
#include "../simplex.h"

PUFFER_ENV_BEGIN(terraform)

enum { TF_VISION = 5, TF_VIEW = 2 * TF_VISION + 1, TF_CELLS = TF_VIEW * TF_VIEW };
enum { TF_QUAD = 11, TF_MAX_QUADS = 36, TF_PAD = 11, TF_PAD_GAP = 3 };
enum { TF_SCALARS = 5, TF_OBS = 2 * TF_CELLS + TF_SCALARS + 2 * TF_MAX_QUADS };
enum { TF_MIN_SIZE = TF_PAD_GAP + TF_PAD + TF_PAD_GAP, TF_MAX_SIZE = 66, TF_MAX_AGENTS = 256 };
enum { TF_OCTAVES = 8, TF_TELEPORT_EVERY = 512, TF_SPAWN_DRAWS = 1024, TF_CELL_PIXELS = 8 };
enum { TF_NOISE_OFFSETS = 10000 }; /* whole cells the noise is read from, per axis */
enum { TF_NONE, TF_LOAD, TF_UNLOAD };
static const float TF_MAX_HEIGHT = 32.0f;
static const float TF_MAX_SPEED = 2.0f;
static const float TF_CAPACITY = 100.0f;
static const float TF_BUCKET_REACH = 2.0f;
static const float TF_STEP_HEIGHT = 5.0f;
static const float TF_ILLEGAL = -0.05f;
static const float TF_REWARD_NORM = 10.0f; /* 3x3 bucket cells + 1, as PufferLib divides */
static const float TF_TWO_PI = 2.0f * 3.14159265358979323846f;
static const float TF_SOLVED_DELTA = 0.01f;
/* Terrain shaping: noise rescaled to [0, 52]; heights below 34 become flat ground. */
static const float TF_NOISE_RANGE = 52.0f;
static const float TF_NOISE_FLOOR = 34.0f;

typedef struct {
    float perf;
    float score;
    float episode_return;
    float episode_length;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};

typedef struct {
    float x, y, speed, heading, load;
    float episode_return;
} TfDozer;

typedef struct {
    float *observations; /* (num_agents, 319) */
    int32_t *actions;    /* (num_agents, 3) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int map_size, agents, reset_frequency; /* config */
    float reward_scale;                    /* config */
    int tick, quads_x, quadrants;
    float initial_delta, total_delta, progress;
    float start_volume[TF_MAX_QUADS]; /* per quadrant sum(terrain - target) */
    float volume[TF_MAX_QUADS];       /* per quadrant sum(height - target), kept current */
    uint8_t pad[TF_MAX_SIZE];         /* 1 where a row/column index crosses a pad */
    float *cells;                     /* 2 maps of map_size^2: height, terrain */
    TfDozer *dozers;
} Terraform;

static const PufferField CONFIG[] = {
    {"map_size", offsetof(Terraform, map_size), PUFFER_INT, 64, TF_MIN_SIZE, TF_MAX_SIZE,
     "side of the square map in cells"},
    {"num_agents", offsetof(Terraform, agents), PUFFER_INT, 8, 1, TF_MAX_AGENTS,
     "dozers per env, sharing one map"},
    {"reset_frequency", offsetof(Terraform, reset_frequency), PUFFER_INT, 8192, 0, 1e9,
     "steps per episode, the ending one included (0: until solved)"},
    {"reward_scale", offsetof(Terraform, reward_scale), PUFFER_FLOAT, 0.01, 0, 1e3,
     "reward per unit of dirt dumped from the bucket (and cost per unit loaded)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static int tf_area(const Terraform *env) {
    return env->map_size * env->map_size;
}
static float *tf_height(const Terraform *env) {
    return env->cells;
}
static float *tf_terrain(const Terraform *env) {
    return env->cells + tf_area(env);
}
/* The target height of (x, y): 1 on a pad, else 0 (kept as a row/column mask, not a map, so
 * the observation reads one map from memory). */
static float tf_target_at(const Terraform *env, int x, int y) {
    return (float)(env->pad[x] & env->pad[y]);
}

static int tf_quadrant(const Terraform *env, int x, int y) {
    return (y / TF_QUAD) * env->quads_x + x / TF_QUAD;
}

static int tf_blocks(const void *self, PufferBlock *out) {
    const Terraform *env = (const Terraform *)self;
    out[0] = (PufferBlock){offsetof(Terraform, cells), 2 * (size_t)tf_area(env) * sizeof(float)};
    out[1] = (PufferBlock){offsetof(Terraform, dozers), (size_t)env->agents * sizeof(TfDozer)};
    return 2;
}

static void c_init(Terraform *env) {
    env->num_agents = env->agents;
    env->quads_x = (env->map_size + TF_QUAD - 1) / TF_QUAD;
    env->quadrants = env->quads_x * env->quads_x;
    const int pads = (env->map_size - TF_PAD_GAP) / (TF_PAD + TF_PAD_GAP);
    for (int v = 0; v < TF_MAX_SIZE; v++) {
        const int from = v - TF_PAD_GAP, k = from / (TF_PAD + TF_PAD_GAP);
        env->pad[v] = (uint8_t)(from >= 0 && k < pads && from % (TF_PAD + TF_PAD_GAP) < TF_PAD);
    }
    env->cells = (float *)calloc(2 * (size_t)tf_area(env), sizeof(float));
    env->dozers = (TfDozer *)calloc((size_t)env->agents, sizeof(TfDozer));
}

/* A new terrain from env->rng, its volume equal to the pads'. PufferLib's map: simplex noise
 * read from a random whole-cell offset in [0, 10000) per axis (theirs drawn from the clock). */
static void tf_build_terrain(Terraform *env) {
    const int size = env->map_size, area = tf_area(env);
    float *terrain = tf_terrain(env);
    const float offset_x = (float)rng_int(&env->rng, TF_NOISE_OFFSETS);
    const float offset_y = (float)rng_int(&env->rng, TF_NOISE_OFFSETS);
    simplex_heightmap(terrain, size, size, 4.0f / (float)size, TF_OCTAVES, offset_x, offset_y,
                      TF_NOISE_RANGE, TF_NOISE_FLOOR);
    float volume = 0.0f, target_volume = 0.0f;
    for (int i = 0; i < area; i++) {
        volume += terrain[i];
        target_volume += tf_target_at(env, i % size, i / size);
    }
    const float scale = volume > 0.0f ? target_volume / volume : 1.0f;
    for (int i = 0; i < area; i++) {
        const float h = terrain[i] * scale;
        terrain[i] = h > TF_MAX_HEIGHT ? TF_MAX_HEIGHT : h;
    }
}

/* The episode-start totals of the terrain: sum |terrain - target| and per-quadrant volumes. */
static void tf_measure(Terraform *env) {
    const int size = env->map_size;
    const float *terrain = tf_terrain(env);
    env->initial_delta = 0.0f;
    memset(env->start_volume, 0, sizeof(env->start_volume));
    for (int i = 0; i < tf_area(env); i++) {
        const int x = i % size, y = i / size;
        const float surplus = terrain[i] - tf_target_at(env, x, y);
        env->initial_delta += fabsf(surplus);
        env->start_volume[tf_quadrant(env, x, y)] += surplus;
    }
}

/* A random whole cell of height 0 (x drawn before y); after TF_SPAWN_DRAWS misses, the first
 * flat cell scanning from the last draw; with none, the last draw itself. */
static void tf_place(Terraform *env, TfDozer *dozer) {
    const int size = env->map_size, area = tf_area(env);
    const float *height = tf_height(env);
    int cell = 0;
    for (int draw = 0; draw < TF_SPAWN_DRAWS; draw++) {
        const int x = rng_int(&env->rng, size), y = rng_int(&env->rng, size);
        cell = y * size + x;
        if (height[cell] == 0.0f) break;
    }
    for (int k = 0; k < area && height[cell] != 0.0f; k++)
        if (height[(cell + k) % area] == 0.0f) cell = (cell + k) % area;
    dozer->x = (float)(cell % size);
    dozer->y = (float)(cell / size);
}

static void tf_observe(Terraform *env) {
    const int size = env->map_size;
    const float *height = tf_height(env);
    float quads[TF_MAX_QUADS] = {0}; /* the same for every dozer of the env */
    for (int q = 0; q < env->quadrants; q++)
        quads[q] = env->volume[q] / 121.0f;
    for (int i = 0; i < env->agents; i++) {
        const TfDozer *d = &env->dozers[i];
        float *obs = env->observations + (size_t)i * TF_OBS;
        const int x0 = (int)(d->x - TF_VISION), y0 = (int)(d->y - TF_VISION);
        const int c_lo = x0 < 0 ? -x0 : 0, c_hi = x0 + TF_VIEW > size ? size - x0 : TF_VIEW;
        for (int r = 0; r < TF_VIEW; r++) {
            float *h_row = obs + r * TF_VIEW, *d_row = h_row + TF_CELLS;
            const int y = y0 + r;
            if (y < 0 || y >= size) {
                memset(h_row, 0, TF_VIEW * sizeof(float));
                memset(d_row, 0, TF_VIEW * sizeof(float));
                continue;
            }
            const int row = y * size + x0; /* map index of view column 0 (may be off-map) */
            const uint8_t on_row = env->pad[y];
            for (int c = 0; c < c_lo; c++)
                h_row[c] = d_row[c] = 0.0f;
            for (int c = c_lo; c < c_hi; c++) {
                h_row[c] = height[row + c] * (1.0f / 32.0f);
                const float target = (float)(on_row & env->pad[x0 + c]);
                d_row[c] = (target - height[row + c]) * (1.0f / 64.0f);
            }
            for (int c = c_hi; c < TF_VIEW; c++)
                h_row[c] = d_row[c] = 0.0f;
        }
        float *s = obs + 2 * TF_CELLS;
        s[0] = d->x / (float)size;
        s[1] = d->y / (float)size;
        s[2] = d->speed / TF_MAX_SPEED;
        s[3] = d->heading / TF_TWO_PI;
        s[4] = d->load / TF_CAPACITY;
        memcpy(s + TF_SCALARS, quads, sizeof(quads));
        float *here = s + TF_SCALARS + TF_MAX_QUADS;
        memset(here, 0, TF_MAX_QUADS * sizeof(float));
        here[tf_quadrant(env, (int)d->x, (int)d->y)] = 1.0f;
    }
}

/* A new episode on the env's terrain: heights restored, dozers respawned. */
static void tf_new_episode(Terraform *env) {
    memcpy(tf_height(env), tf_terrain(env), (size_t)tf_area(env) * sizeof(float));
    memcpy(env->volume, env->start_volume, sizeof(env->volume));
    env->tick = 0;
    env->total_delta = env->initial_delta;
    env->progress = 0.0f;
    for (int i = 0; i < env->agents; i++) {
        memset(&env->dozers[i], 0, sizeof(TfDozer));
        tf_place(env, &env->dozers[i]);
    }
    tf_observe(env);
}

static void c_reset(Terraform *env) {
    tf_build_terrain(env);
    tf_measure(env);
    tf_new_episode(env);
}

/* The bucket on one cell; returns the reward (a refusal's penalty included). */
static float tf_scoop(Terraform *env, TfDozer *d, int x, int y, int bucket) {
    const int cell = y * env->map_size + x;
    float *height = tf_height(env) + cell;
    const float target = tf_target_at(env, x, y);
    const float before = *height, load_before = d->load;
    float amount;
    if (bucket == TF_LOAD) {
        if (d->speed < 0.0f || d->load >= TF_CAPACITY) return TF_ILLEGAL;
        amount = before <= 1.0f ? before : 1.0f;
        if (d->load + amount > TF_CAPACITY) amount = TF_CAPACITY - d->load;
        amount = -amount; /* dirt leaves the cell */
    } else {
        if (d->speed > 0.0f || d->load == 0.0f) return TF_ILLEGAL;
        amount = d->load < 1.0f ? d->load : 1.0f;
        if (before + amount > TF_MAX_HEIGHT) amount = TF_MAX_HEIGHT - before;
    }
    d->load -= amount;
    *height += amount;
    env->volume[tf_quadrant(env, x, y)] += amount;
    const float delta_before = fabsf(before - target), delta_after = fabsf(*height - target);
    env->total_delta += delta_after - delta_before;
    return ((delta_before + env->reward_scale * load_before) -
            (delta_after + env->reward_scale * d->load)) /
           TF_REWARD_NORM;
}

/* True if the cell (x, y) blocks a dozer standing at `level` (cells in the last row or column,
 * or off the map, never do). */
static int tf_blocks_at(const Terraform *env, float x, float y, float level) {
    const int last = env->map_size - 1;
    if (x < 0.0f || x >= (float)last || y < 0.0f || y >= (float)last) return 0;
    return fabsf(level - tf_height(env)[(int)y * env->map_size + (int)x]) > TF_STEP_HEIGHT;
}

/* One dozer's action: bucket, steering, speed, blocking and the move; returns its reward. */
static float tf_drive(Terraform *env, TfDozer *d, const int32_t *action) {
    const int size = env->map_size;
    float reward = 0.0f;
    if (action[2] != TF_NONE) {
        const float cx = d->x + TF_BUCKET_REACH * cosf(d->heading);
        const float cy = d->y + TF_BUCKET_REACH * sinf(d->heading);
        for (int x = (int)(cx - 1.0f); (float)x < cx + 1.0f; x++) {
            for (int y = (int)(cy - 1.0f); (float)y < cy + 1.0f; y++) {
                if (x < 0 || x >= size || y < 0 || y >= size) continue;
                reward += tf_scoop(env, d, x, y, action[2]);
            }
        }
    }
    d->heading += (float)(action[1] - 2) / 10.0f;
    if (d->heading > TF_TWO_PI) d->heading -= TF_TWO_PI;
    if (d->heading < 0.0f) d->heading += TF_TWO_PI;
    d->speed += (float)(action[0] - 2) / 2.0f;
    if (d->speed > TF_MAX_SPEED) d->speed = TF_MAX_SPEED;
    if (d->speed < -TF_MAX_SPEED) d->speed = -TF_MAX_SPEED;
    const float cos_h = cosf(d->heading), sin_h = sinf(d->heading);
    const float level = tf_height(env)[(int)d->y * size + (int)d->x];
    for (int k = 0; (float)k < d->speed; k++) {
        if (tf_blocks_at(env, d->x + (float)k * cos_h, d->y + (float)k * sin_h, level)) {
            d->speed = 0.0f;
            break;
        }
    }
    const float dst_x = d->x + d->speed * cos_h, dst_y = d->y + d->speed * sin_h;
    const int x_hi = (int)(dst_x + 1.0f), y_hi = (int)(dst_y + 1.0f);
    for (int x = (int)(dst_x - 1.0f); x <= x_hi && d->speed != 0.0f; x++)
        for (int y = (int)(dst_y - 1.0f); y <= y_hi; y++)
            if (tf_blocks_at(env, (float)x, (float)y, level)) {
                d->speed = 0.0f;
                break;
            }
    d->x += d->speed * cos_h;
    d->y += d->speed * sin_h;
    if (d->x < 0.0f) d->x = 0.0f;
    if (d->x >= (float)size) d->x = (float)(size - 1);
    if (d->y < 0.0f) d->y = 0.0f;
    if (d->y >= (float)size) d->y = (float)(size - 1);
    if (env->tick % TF_TELEPORT_EVERY == 0) tf_place(env, d);
    return reward;
}

static void c_step(Terraform *env) {
    env->tick++;
    const int solved = env->total_delta < TF_SOLVED_DELTA;
    if (solved || (env->reset_frequency && env->tick % env->reset_frequency == 0)) {
        const float reward = solved ? 1.0f : 0.0f;
        for (int i = 0; i < env->agents; i++) {
            TfDozer *d = &env->dozers[i];
            env->rewards[i] = reward;
            env->terminals[i] = (uint8_t)solved;
            env->truncations[i] = (uint8_t)!solved;
            env->log.episode_return += d->episode_return + reward;
            env->log.episode_length += (float)env->tick;
            env->log.score += env->progress;
            env->log.perf += env->progress;
            env->log.n += 1.0f;
        }
        tf_new_episode(env);
        return;
    }
    for (int i = 0; i < env->agents; i++) {
        TfDozer *d = &env->dozers[i];
        const float reward = tf_drive(env, d, env->actions + 3 * i);
        d->episode_return += reward;
        env->rewards[i] = reward;
        env->terminals[i] = env->truncations[i] = 0;
    }
    if (env->initial_delta > 0.0f) {
        const float progress = 1.0f - env->total_delta / env->initial_delta;
        env->progress = progress < 0.0f ? 0.0f : progress > 1.0f ? 1.0f : progress;
    }
    tf_observe(env);
}

static void c_frame_size(const Terraform *env, int *width, int *height) {
    *width = *height = env->map_size * TF_CELL_PIXELS;
}

/* Top-down: dirt from dark (flat) to sand (8 units and up), pads outlined in blue until level,
 * dozers as yellow discs with a dark dot toward the bucket (orange when loaded). */
static void c_render(const Terraform *env, Canvas *canvas) {
    const int px = TF_CELL_PIXELS, size = env->map_size;
    const float *height = tf_height(env);
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int y = 0; y < size; y++) {
        for (int x = 0; x < size; x++) {
            const int cell = y * size + x;
            float t = height[cell] / 8.0f;
            t = t > 1.0f ? 1.0f : t;
            const Color dirt = {(uint8_t)(40 + 180 * t), (uint8_t)(30 + 140 * t),
                                (uint8_t)(20 + 80 * t)};
            raster_rect(canvas, x * px, y * px, px, px, dirt);
            const float target = tf_target_at(env, x, y);
            if (target > 0.0f) {
                const int level = fabsf(height[cell] - target) < 0.5f;
                raster_rect(canvas, x * px + px / 2 - 1, y * px + px / 2 - 1, 2, 2,
                            level ? COLOR_GREEN : COLOR_BLUE);
            }
        }
    }
    for (int i = 0; i < env->agents; i++) {
        const TfDozer *d = &env->dozers[i];
        const int cx = (int)(d->x * (float)px) + px / 2, cy = (int)(d->y * (float)px) + px / 2;
        raster_circle(canvas, cx, cy, px - 2, COLOR_YELLOW);
        const float reach = (float)px * 0.6f;
        raster_circle(canvas, cx + (int)(reach * cosf(d->heading)),
                      cy + (int)(reach * sinf(d->heading)), px / 4,
                      d->load > 0.0f ? COLOR_ORANGE : COLOR_BLACK);
    }
}

static void c_close(Terraform *env) {
    free(env->cells);
    free(env->dozers);
    env->cells = NULL;
    env->dozers = NULL;
}

static const int ACTION_SIZES[] = {5, 5, 3};
static const PufferKey KEYS[] = {
    {"idle", 0, 2}, {"idle", 1, 2},  {"idle", 2, TF_NONE}, {"up", 0, 4},        {"down", 0, 0},
    {"left", 1, 0}, {"right", 1, 4}, {"z", 2, TF_LOAD},    {"x", 2, TF_UNLOAD}, {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "Terraform: bulldozers level a noisy heightmap (64x64, heights 0 to 32) into flat "
           "11x11 pads of height 1. Each dozer accelerates, steers and loads or unloads up to 1 "
           "unit per bucket cell; reward per cell is the drop in |height - target| plus "
           "reward_scale times the drop in load, over 10; refused bucket actions cost 0.05. A "
           "solved map pays +1 (terminal); episodes are truncated at reset_frequency steps. "
           "Observation: (319,) float32: 11x11 heights / 32 and (target - height) / 64 around "
           "the dozer, its position, speed, heading and load, per-quadrant volume surplus / 121 "
           "and a one-hot of its quadrant. Action: MultiDiscrete([5, 5, 3]): acceleration, "
           "steering, bucket (none, load, unload).",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = TF_OBS,
    .obs_low = -1.0,
    .obs_high = 32.0,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Terraform),
    .blocks = tf_blocks,
};

PUFFER_ENV_END(terraform, Terraform)

#endif
