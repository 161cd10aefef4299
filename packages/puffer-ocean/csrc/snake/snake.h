/* Snake, many at once: `num_snakes` snakes share one grid strewn with food. A snake that eats
 * grows by one; one that runs into a wall or any snake's body dies, its body becomes food
 * (a corpse), and it respawns at a random free cell with length 1. Each snake is an agent with
 * its own episodes: death is its terminal, max_steps its truncation.
 *
 * Observation: 121 int8, the 11x11 cells centred on the snake's head, row-major (EMPTY, FOOD,
 * CORPSE, WALL, SNAKE). Actions: Discrete(4): up, down, left, right. The tail moves away
 * before the head arrives, so a snake may follow its own tail.
 */
#ifndef PUFFER_SNAKE_H
#define PUFFER_SNAKE_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(snake)

enum { SNAKE_VISION = 5, SNAKE_VIEW = 2 * SNAKE_VISION + 1, SNAKE_OBS = SNAKE_VIEW * SNAKE_VIEW };
enum { SNAKE_UP, SNAKE_DOWN, SNAKE_LEFT, SNAKE_RIGHT };
enum { SNAKE_EMPTY = 0, SNAKE_FOOD = 1, SNAKE_CORPSE = 2, SNAKE_WALL = 3, SNAKE_BODY = 4 };
enum { SNAKE_CELL_PIXELS = 8 };

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* length at death or truncation */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};
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
    int width, height;  /* config: playable cells */
    int num_snakes;     /* config: agents per env */
    int num_food;       /* config: food cells kept on the grid */
    int max_length;     /* config: a snake stops growing here */
    int max_steps;      /* config: steps per snake episode before truncation */
    float reward_food;  /* config: per food or corpse cell eaten */
    float reward_death; /* config: on collision */
    int stride;         /* grid row length: width plus a wall of SNAKE_VISION on each side */
    int8_t *grid;       /* (height + 2 * vision) x stride, walls around the playable cells */
    SnakeBody *snakes;
    int *bodies;    /* backing store of every snake's ring buffer */
    int food_cells; /* FOOD + CORPSE cells on the grid */
} Snake;

static const PufferField CONFIG[] = {
    {"width", offsetof(Snake, width), PUFFER_INT, 48, 1, 1024, "playable cells per row"},
    {"height", offsetof(Snake, height), PUFFER_INT, 48, 1, 1024, "playable rows"},
    {"num_snakes", offsetof(Snake, num_snakes), PUFFER_INT, 16, 1, 1e9,
     "snakes (agents) per env instance"},
    {"num_food", offsetof(Snake, num_food), PUFFER_INT, 32, 1, 1e9,
     "food cells kept on the grid (eaten food reappears elsewhere)"},
    {"max_length", offsetof(Snake, max_length), PUFFER_INT, 64, 1, 1e9,
     "cells at which a snake stops growing"},
    {"max_steps", offsetof(Snake, max_steps), PUFFER_INT, 1000, 1, 1e9,
     "steps of one snake's episode before it is truncated"},
    {"reward_food", offsetof(Snake, reward_food), PUFFER_FLOAT, 0.1, -1e9, 1e9,
     "reward per food or corpse cell eaten"},
    {"reward_death", offsetof(Snake, reward_death), PUFFER_FLOAT, -1.0, -1e9, 1e9,
     "reward on hitting a wall or a snake"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

/* The heap arrays save_state copies (SnakeBody.body pointers are re-derived by snake_relink). */
static int snake_blocks(const void *self, PufferBlock *out) {
    const Snake *env = (const Snake *)self;
    const size_t rows = (size_t)(env->height + 2 * SNAKE_VISION);
    out[0].offset = offsetof(Snake, grid);
    out[0].bytes = rows * (size_t)env->stride;
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

/* Bodies plus food must leave a free cell, or spawning would search forever. */
static const char *snake_check(const void *self) {
    const Snake *env = (const Snake *)self;
    const long cells = (long)env->width * env->height;
    const long needed = (long)env->num_snakes * env->max_length + env->num_food;
    return needed < cells ? NULL
                          : "num_snakes * max_length + num_food must be below width * height "
                            "(the grid's cells); enlarge the grid or shorten the snakes";
}

static void c_init(Snake *env) {
    env->num_agents = env->num_snakes;
    env->stride = env->width + 2 * SNAKE_VISION;
    env->grid = (int8_t *)calloc((size_t)env->stride * (env->height + 2 * SNAKE_VISION), 1);
    env->snakes = (SnakeBody *)calloc((size_t)env->num_snakes, sizeof(SnakeBody));
    env->bodies = (int *)calloc((size_t)env->num_snakes * env->max_length, sizeof(int));
    snake_relink(env);
}

/* A uniformly random empty playable cell: rejection sampling while the grid is mostly free,
 * then a scan; bodies plus food stay below the cell count, so one exists. */
static int snake_free_cell(Snake *env) {
    for (int attempt = 0; attempt < 64; attempt++) {
        int row = SNAKE_VISION + rng_int(&env->rng, env->height);
        int col = SNAKE_VISION + rng_int(&env->rng, env->width);
        int cell = row * env->stride + col;
        if (env->grid[cell] == SNAKE_EMPTY) return cell;
    }
    for (int row = SNAKE_VISION; row < SNAKE_VISION + env->height; row++) {
        for (int col = SNAKE_VISION; col < SNAKE_VISION + env->width; col++) {
            if (env->grid[row * env->stride + col] == SNAKE_EMPTY) return row * env->stride + col;
        }
    }
    return SNAKE_VISION * env->stride + SNAKE_VISION; /* unreachable under a valid config */
}

/* Cell index of body part k (0 = head) of snake s; no modulo: this runs every step. */
static inline int snake_part(const Snake *env, const SnakeBody *s, int k) {
    int index = s->head - k;
    return s->body[index < 0 ? index + env->max_length : index];
}

static void snake_observe(Snake *env, int i) {
    const SnakeBody *s = &env->snakes[i];
    const int8_t *corner = env->grid + s->body[s->head] - SNAKE_VISION * env->stride - SNAKE_VISION;
    int8_t *obs = env->observations + i * SNAKE_OBS;
    for (int row = 0; row < SNAKE_VIEW; row++) {
        memcpy(obs + row * SNAKE_VIEW, corner + row * env->stride, SNAKE_VIEW);
    }
}

static void snake_spawn(Snake *env, int i) {
    SnakeBody *s = &env->snakes[i];
    s->head = 0;
    s->length = 1;
    s->tick = 0;
    s->episode_return = 0.0f;
    s->body[0] = snake_free_cell(env);
    env->grid[s->body[0]] = SNAKE_BODY;
}

static void c_reset(Snake *env) {
    const int rows = env->height + 2 * SNAKE_VISION;
    memset(env->grid, SNAKE_WALL, (size_t)rows * env->stride);
    for (int row = SNAKE_VISION; row < SNAKE_VISION + env->height; row++) {
        memset(env->grid + row * env->stride + SNAKE_VISION, SNAKE_EMPTY, env->width);
    }
    for (int i = 0; i < env->num_snakes; i++)
        snake_spawn(env, i);
    for (int f = 0; f < env->num_food; f++)
        env->grid[snake_free_cell(env)] = SNAKE_FOOD;
    env->food_cells = env->num_food;
    for (int i = 0; i < env->num_snakes; i++) {
        snake_observe(env, i);
        env->rewards[i] = 0.0f;
        env->terminals[i] = 0;
        env->truncations[i] = 0;
    }
}

static void snake_end_episode(Snake *env, int i) {
    SnakeBody *s = &env->snakes[i];
    env->log.episode_return += s->episode_return;
    env->log.episode_length += (float)s->tick;
    env->log.score += (float)s->length;
    env->log.n += 1.0f;
}

/* Moves snake i one cell; the caller writes its observation afterwards. */
static void snake_move(Snake *env, int i) {
    static const int DROW[4] = {-1, 1, 0, 0}, DCOL[4] = {0, 0, -1, 1};
    SnakeBody *s = &env->snakes[i];
    int action = env->actions[i];
    if (action < 0 || action > 3) action = SNAKE_UP; /* never index with an unchecked action */
    int next = s->body[s->head] + DROW[action] * env->stride + DCOL[action];
    int8_t cell = env->grid[next];
    int eats = cell == SNAKE_FOOD || cell == SNAKE_CORPSE;
    s->tick++;
    env->rewards[i] = 0.0f;
    env->terminals[i] = 0;
    env->truncations[i] = 0;
    if (!eats || s->length >= env->max_length) {
        /* The tail leaves first, so a snake may follow its own tail. */
        env->grid[snake_part(env, s, s->length - 1)] = SNAKE_EMPTY;
        s->length--;
        cell = env->grid[next];
    }
    if (cell == SNAKE_WALL || cell == SNAKE_BODY) {
        env->rewards[i] = env->reward_death;
        env->terminals[i] = 1;
        s->episode_return += env->reward_death;
        s->length++; /* the length it reached, for the log */
        snake_end_episode(env, i);
        for (int k = 0; k < s->length - 1; k++) { /* the tail cell is already free */
            env->grid[snake_part(env, s, k)] = SNAKE_CORPSE;
        }
        env->food_cells += s->length - 1;
        snake_spawn(env, i);
        return;
    }
    s->head = s->head + 1 == env->max_length ? 0 : s->head + 1;
    s->body[s->head] = next;
    s->length++;
    env->grid[next] = SNAKE_BODY;
    if (eats) {
        env->rewards[i] = env->reward_food;
        s->episode_return += env->reward_food;
        /* New food only while food and corpses number under num_food: snake bodies plus
         * food then stay below the grid size (the config checks it), so it never fills up. */
        if (--env->food_cells < env->num_food) {
            env->grid[snake_free_cell(env)] = SNAKE_FOOD;
            env->food_cells++;
        }
    }
    if (s->tick >= env->max_steps) {
        env->truncations[i] = 1;
        snake_end_episode(env, i);
        for (int k = 0; k < s->length; k++) {
            env->grid[snake_part(env, s, k)] = SNAKE_EMPTY;
        }
        snake_spawn(env, i);
    }
}

static void c_step(Snake *env) {
    for (int i = 0; i < env->num_snakes; i++)
        snake_move(env, i);
    /* After every snake moved, so each sees the same grid. */
    for (int i = 0; i < env->num_snakes; i++)
        snake_observe(env, i);
}

static void c_frame_size(const Snake *env, int *width, int *height) {
    *width = env->width * SNAKE_CELL_PIXELS;
    *height = env->height * SNAKE_CELL_PIXELS;
}

static void c_render(const Snake *env, Canvas *canvas) {
    const Color colors[] = {COLOR_BACKGROUND, COLOR_GREEN, COLOR_ORANGE, COLOR_GRAY};
    const Color snake_colors[] = {COLOR_RED, COLOR_BLUE, COLOR_YELLOW, COLOR_MAGENTA, COLOR_CYAN};
    const int px = SNAKE_CELL_PIXELS;
    raster_clear(canvas, COLOR_BACKGROUND);
    for (int row = 0; row < env->height; row++) {
        for (int col = 0; col < env->width; col++) {
            int8_t cell = env->grid[(row + SNAKE_VISION) * env->stride + col + SNAKE_VISION];
            if (cell == SNAKE_FOOD || cell == SNAKE_CORPSE) {
                raster_circle(canvas, col * px + px / 2, row * px + px / 2, px / 2 - 1,
                              colors[cell]);
            }
        }
    }
    for (int i = 0; i < env->num_snakes; i++) {
        const SnakeBody *s = &env->snakes[i];
        Color color = snake_colors[i % 5];
        for (int k = 0; k < s->length; k++) {
            int cell = snake_part(env, s, k);
            int row = cell / env->stride - SNAKE_VISION, col = cell % env->stride - SNAKE_VISION;
            raster_rect(canvas, col * px, row * px, px, px, color);
            if (k == 0)
                raster_rect(canvas, col * px + px / 4, row * px + px / 4, px / 2, px / 2,
                            COLOR_WHITE); /* the head's eye */
        }
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
    .doc = "`num_snakes` snakes per instance share a grid with food; each snake is one agent. A "
           "snake grows by eating, dies (terminal, reward_death) on a wall or any snake body, "
           "leaves its body as food and respawns at once. Observation: (121,) int8, the 11x11 "
           "cells around the head: 0 empty, 1 food, 2 corpse, 3 wall, 4 snake. Action: "
           "Discrete(4): up, down, left, right.",
    .obs_dtype = PUFFER_INT8,
    .obs_size = SNAKE_OBS,
    .obs_low = 0,
    .obs_high = 4,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Snake),
    .blocks = snake_blocks,
    .relink = snake_relink,
    .check = snake_check,
};

PUFFER_ENV_END(snake, Snake)

#endif
