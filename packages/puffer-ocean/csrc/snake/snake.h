/* Snake, many at once: PufferLib 3.0's snake task. `num_snakes` snakes share one grid, walled
 * `vision` cells deep on every side and strewn with `num_food` food. Snakes move one at a time,
 * in index order, each seeing the grid as the ones before it left it. A snake grows on food or
 * a corpse; one that runs into a wall or any snake body, its own tail included, dies: about half
 * its cells become corpses and it respawns at once with length 1. SPEC.doc holds the rules table.
 *
 * Observation: 121 int8, the 11x11 cells centred on the head, row-major: 0 empty, 1 food,
 * 2 corpse, 3 wall, 4-7 snakes (snake 0 is 7, snake i > 0 is 4 + i % 4). Actions:
 * Discrete(4): up, down, left, right; turning back onto the neck goes straight on instead.
 */
#ifndef PUFFER_SNAKE_H
#define PUFFER_SNAKE_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(snake)

enum { SNAKE_VISION = 5, SNAKE_VIEW = 2 * SNAKE_VISION + 1, SNAKE_OBS = SNAKE_VIEW * SNAKE_VIEW };
enum { SNAKE_UP, SNAKE_DOWN, SNAKE_LEFT, SNAKE_RIGHT };
enum { SNAKE_EMPTY = 0, SNAKE_FOOD = 1, SNAKE_CORPSE = 2, SNAKE_WALL = 3, SNAKE_COLORS = 4 };
enum { SNAKE_CELL_PIXELS = 2 };

typedef struct {
    float perf;  /* length at death / steps lived */
    float score; /* length at death */
    float episode_return;
    float episode_length;
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"perf", "score", "episode_return", "episode_length", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    int *body; /* ring buffer of cell indices, max_length long; head at body[head] */
    int head, length, tick;
    float episode_return;
} SnakeBody;

typedef struct {
    int8_t *observations; /* (num_snakes, 121) */
    int32_t *actions;     /* (num_snakes,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int width, height;   /* config: grid cells, the walls included */
    int num_snakes;      /* config: agents per env */
    int num_food;        /* config: food placed at reset; each eaten one is replaced */
    int max_length;      /* config: ring size; a snake grows to max_length - 1 */
    int leave_corpse;    /* config: 1: a dead snake leaves corpses */
    int max_steps;       /* config: steps per snake episode before truncation, 0: none */
    float reward_food;   /* config */
    float reward_corpse; /* config */
    float reward_death;  /* config */
    int8_t *grid;        /* height x width */
    SnakeBody *snakes;
    int *bodies; /* backing store of every snake's ring buffer */
} Snake;

static const PufferField CONFIG[] = {
    {"width", offsetof(Snake, width), PUFFER_INT, 640, 2 * SNAKE_VISION + 2, 4096,
     "grid columns, the 5-cell walls included"},
    {"height", offsetof(Snake, height), PUFFER_INT, 360, 2 * SNAKE_VISION + 2, 4096,
     "grid rows, the 5-cell walls included"},
    {"num_snakes", offsetof(Snake, num_snakes), PUFFER_INT, 256, 1, 1e6,
     "snakes (agents) per env instance"},
    {"num_food", offsetof(Snake, num_food), PUFFER_INT, 4096, 0, 1e8,
     "food placed at reset; each one eaten is replaced elsewhere"},
    {"max_snake_length", offsetof(Snake, max_length), PUFFER_INT, 1024, 2, 1e6,
     "a snake grows to one cell less than this"},
    {"leave_corpse_on_death", offsetof(Snake, leave_corpse), PUFFER_INT, 1, 0, 1,
     "1: every other cell of a dead snake becomes a corpse"},
    {"max_steps", offsetof(Snake, max_steps), PUFFER_INT, 0, 0, 1e9,
     "steps of one snake's episode before it is truncated; 0: never (theirs has no limit)"},
    {"reward_food", offsetof(Snake, reward_food), PUFFER_FLOAT, 0.1, -1e9, 1e9,
     "reward for eating food"},
    {"reward_corpse", offsetof(Snake, reward_corpse), PUFFER_FLOAT, 0.1, -1e9, 1e9,
     "reward for eating a corpse cell"},
    {"reward_death", offsetof(Snake, reward_death), PUFFER_FLOAT, -1.0, -1e9, 1e9,
     "reward on hitting a wall or a snake"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* The heap arrays save_state copies (SnakeBody.body pointers are re-derived by snake_relink). */
static int snake_blocks(const void *self, PufferBlock *out) {
    const Snake *env = (const Snake *)self;
    out[0].offset = offsetof(Snake, grid);
    out[0].bytes = (size_t)env->height * (size_t)env->width;
    out[1].offset = offsetof(Snake, snakes);
    out[1].bytes = (size_t)env->num_snakes * sizeof(SnakeBody);
    out[2].offset = offsetof(Snake, bodies);
    out[2].bytes = (size_t)env->num_snakes * (size_t)env->max_length * sizeof(int);
    return 3;
}

static void snake_relink(void *self) {
    Snake *env = (Snake *)self;
    for (int i = 0; i < env->num_snakes; i++)
        env->snakes[i].body = env->bodies + i * env->max_length;
}

/* Every snake and every food item needs a free cell at reset. Later a dying snake always frees
 * the cell it respawns into, and food that finds no free cell is not replaced. */
static const char *snake_check(const void *self) {
    const Snake *env = (const Snake *)self;
    const long cells = (long)(env->width - 2 * SNAKE_VISION) * (env->height - 2 * SNAKE_VISION);
    return (long)env->num_snakes + env->num_food < cells
               ? NULL
               : "num_snakes + num_food must be below the grid's open cells "
                 "((width - 10) * (height - 10)); enlarge the grid or place less food";
}

static void c_init(Snake *env) {
    env->num_agents = env->num_snakes;
    env->grid = (int8_t *)calloc((size_t)env->width * env->height, 1);
    env->snakes = (SnakeBody *)calloc((size_t)env->num_snakes, sizeof(SnakeBody));
    env->bodies = (int *)calloc((size_t)env->num_snakes * env->max_length, sizeof(int));
    snake_relink(env);
}

static inline int snake_open(int8_t cell) {
    return cell == SNAKE_EMPTY || cell == SNAKE_CORPSE;
}

/* A uniformly random open cell (empty or corpse) inside the walls, or -1 if none: rejection
 * sampling while the grid is mostly open, then a scan from a random cell. */
static int snake_free_cell(Snake *env) {
    const int rows = env->height - 2 * SNAKE_VISION, cols = env->width - 2 * SNAKE_VISION;
    for (int attempt = 0; attempt < 64; attempt++) {
        int cell = (SNAKE_VISION + rng_int(&env->rng, rows)) * env->width + SNAKE_VISION +
                   rng_int(&env->rng, cols);
        if (snake_open(env->grid[cell])) return cell;
    }
    const int start = rng_int(&env->rng, rows * cols);
    for (int k = 0; k < rows * cols; k++) {
        int at = start + k < rows * cols ? start + k : start + k - rows * cols;
        int cell = (SNAKE_VISION + at / cols) * env->width + SNAKE_VISION + at % cols;
        if (snake_open(env->grid[cell])) return cell;
    }
    return -1;
}

/* Cell index of body part k (0 = head) of snake s; no modulo: this runs every step. */
static inline int snake_part(const Snake *env, const SnakeBody *s, int k) {
    int index = s->head - k;
    return s->body[index < 0 ? index + env->max_length : index];
}

static inline int8_t snake_color(int i) {
    return (int8_t)(i == 0 ? 7 : SNAKE_COLORS + i % 4);
}

static void snake_observe(Snake *env, int i) {
    const SnakeBody *s = &env->snakes[i];
    const int8_t *corner = env->grid + s->body[s->head] - SNAKE_VISION * env->width - SNAKE_VISION;
    int8_t *obs = env->observations + i * SNAKE_OBS;
    for (int row = 0; row < SNAKE_VIEW; row++)
        memcpy(obs + row * SNAKE_VIEW, corner + row * env->width, SNAKE_VIEW);
}

static void snake_spawn(Snake *env, int i) {
    SnakeBody *s = &env->snakes[i];
    s->head = 0;
    s->length = 1;
    s->tick = 0;
    s->episode_return = 0.0f;
    s->body[0] = snake_free_cell(env); /* never -1: the caller just freed a cell, or reset */
    env->grid[s->body[0]] = snake_color(i);
}

static void snake_place_food(Snake *env) {
    int cell = snake_free_cell(env);
    if (cell >= 0) env->grid[cell] = SNAKE_FOOD;
}

static void c_reset(Snake *env) {
    memset(env->grid, SNAKE_WALL, (size_t)env->height * env->width);
    for (int row = SNAKE_VISION; row < env->height - SNAKE_VISION; row++)
        memset(env->grid + row * env->width + SNAKE_VISION, SNAKE_EMPTY,
               env->width - 2 * SNAKE_VISION);
    for (int i = 0; i < env->num_snakes; i++)
        snake_spawn(env, i);
    for (int f = 0; f < env->num_food; f++)
        snake_place_food(env);
    for (int i = 0; i < env->num_snakes; i++) {
        snake_observe(env, i);
        env->rewards[i] = 0.0f;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
    }
}

/* Logs snake i's episode, clears its cells (death: every cell whose count from the tail is
 * even becomes a corpse) and respawns it. */
static void snake_end_episode(Snake *env, int i, int died) {
    SnakeBody *s = &env->snakes[i];
    env->log.perf += (float)s->length / (float)s->tick;
    env->log.score += (float)s->length;
    env->log.episode_return += s->episode_return;
    env->log.episode_length += (float)s->tick;
    env->log.n += 1.0f;
    const int corpses = died && env->leave_corpse;
    for (int k = 0; k < s->length; k++) {
        int from_tail = s->length - k;
        env->grid[snake_part(env, s, k)] =
            (corpses && from_tail % 2 == 0) ? SNAKE_CORPSE : SNAKE_EMPTY;
    }
    snake_spawn(env, i);
}

/* Moves snake i one cell; the caller writes its observation afterwards. */
static void snake_move(Snake *env, int i) {
    static const int DROW[4] = {-1, 1, 0, 0}, DCOL[4] = {0, 0, -1, 1};
    SnakeBody *s = &env->snakes[i];
    int action = env->actions[i];
    if (action < 0 || action > 3) action = SNAKE_UP; /* never index with an unchecked action */
    const int step = DROW[action] * env->width + DCOL[action], head = s->body[s->head];
    int next = head + step;
    if (s->length > 1 && next == snake_part(env, s, 1)) next = head - step; /* no reversing */
    const int8_t cell = env->grid[next];
    s->tick++;
    env->terminals[i] = 0;
    env->truncations[i] = 0;
    if (cell >= SNAKE_WALL) { /* a wall or any snake, this one's tail included */
        env->rewards[i] = env->reward_death;
        env->terminals[i] = 1;
        s->episode_return += env->reward_death;
        snake_end_episode(env, i, 1);
        return;
    }
    float reward =
        cell == SNAKE_FOOD ? env->reward_food : (cell == SNAKE_CORPSE ? env->reward_corpse : 0.0f);
    env->rewards[i] = reward;
    s->episode_return += reward;
    s->head = s->head + 1 == env->max_length ? 0 : s->head + 1;
    s->body[s->head] = next;
    if (cell != SNAKE_EMPTY && s->length < env->max_length - 1) {
        s->length++;
    } else {
        env->grid[snake_part(env, s, s->length)] = SNAKE_EMPTY; /* the tail moves on */
    }
    env->grid[next] = snake_color(i);
    if (cell == SNAKE_FOOD) snake_place_food(env);
    if (env->max_steps > 0 && s->tick >= env->max_steps) {
        env->truncations[i] = 1;
        snake_end_episode(env, i, 0);
    }
}

static void c_step(Snake *env) {
    for (int i = 0; i < env->num_snakes; i++)
        snake_move(env, i);
    /* After every snake moved, as theirs. */
    for (int i = 0; i < env->num_snakes; i++)
        snake_observe(env, i);
}

static void c_frame_size(const Snake *env, int *width, int *height) {
    *width = env->width * SNAKE_CELL_PIXELS;
    *height = env->height * SNAKE_CELL_PIXELS;
}

/* Every cell, walls included, by its grid value; the heads drawn white. */
static void c_render(const Snake *env, Canvas *canvas) {
    const Color colors[8] = {COLOR_BACKGROUND, COLOR_GREEN, COLOR_ORANGE, COLOR_GRAY,
                             COLOR_RED,        COLOR_BLUE,  COLOR_YELLOW, COLOR_CYAN};
    const int px = SNAKE_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int row = 0; row < env->height; row++) {
        for (int col = 0; col < env->width; col++) {
            int8_t cell = env->grid[row * env->width + col];
            if (cell > SNAKE_EMPTY && cell < 8)
                raster_rect(canvas, col * px, row * px, px, px, colors[cell]);
        }
    }
    for (int i = 0; i < env->num_snakes; i++) {
        int head = env->snakes[i].body[env->snakes[i].head];
        raster_rect(canvas, head % env->width * px, head / env->width * px, px, px, COLOR_WHITE);
    }
}

static void c_close(Snake *env) {
    free(env->grid);
    free(env->snakes);
    free(env->bodies);
    env->grid = NULL;
    env->snakes = NULL;
    env->bodies = NULL;
}

static const int ACTION_SIZES[] = {4};
static const PufferKey KEYS[] = {{"up", 0, SNAKE_UP},
                                 {"down", 0, SNAKE_DOWN},
                                 {"left", 0, SNAKE_LEFT},
                                 {"right", 0, SNAKE_RIGHT},
                                 {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's snake: `num_snakes` snakes (agents) share a 640x360 grid with food. "
           "Observation: (121,) int8, the 11x11 cells around the head: 0 empty, 1 food, 2 "
           "corpse, 3 wall, 4-7 snakes (snake 0 is 7, snake i > 0 is 4 + i % 4). Action: "
           "Discrete(4): up, down, left, right.\n\n"
           "| rule | value |\n|---|---|\n"
           "| grid | 640x360 cells, a wall 5 deep on every side (630x350 open) |\n"
           "| snakes | 256 per instance, moved one by one in index order; each spawns with "
           "length 1 on a random empty or corpse cell |\n"
           "| food | 4,096 placed at reset; each one eaten is replaced on a random empty or "
           "corpse cell |\n"
           "| move | one cell; an action back onto the neck goes straight on |\n"
           "| eat food / corpse | +0.1 / +0.1, grow by one (to 1,023 at most) |\n"
           "| hit a wall or any snake (own tail too) | -1, terminal; cells whose count from the "
           "tail is even become corpses, the rest empty; respawn at once |\n"
           "| time limit | none (`max_steps`, default 0) |\n\n"
           "Every number above is a parameter with their name and default (`vision` is fixed "
           "at 5). Differences: a death sets `terminals` (theirs sets no flag); food that finds "
           "no free cell is skipped (theirs would search forever).",
    .obs_dtype = PUFFER_INT8,
    .obs_size = SNAKE_OBS,
    .obs_low = 0,
    .obs_high = 7,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Snake),
    .blocks = snake_blocks,
    .relink = snake_relink,
    .check = snake_check,
};

PUFFER_ENV_END(snake, Snake)

#endif
