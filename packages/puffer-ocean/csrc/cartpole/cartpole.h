/* Cartpole: the classic control task of Barto, Sutton & Anderson (1983), as PufferLib 3.0's
 * cartpole states it: CartPole-v1's constants and Euler integration, a 200-step limit, a start
 * state uniform in [-0.04, 0.04] and no reward on the step that ends the episode.
 *
 * Observation: 4 float32 (x, x_dot, theta, theta_dot). Reward 1 per step, 0 on the last one.
 * Terminal when |x| > 2.4 or |theta| > 12 degrees; truncated at max_steps.
 * Actions: Discrete(2) (push left, push right); cartpole_continuous.h includes this header with
 * CARTPOLE_CONTINUOUS defined for the Box(1) variant, whose action in [-1, 1] scales the force. The
 * header is guarded per variant so one translation unit can hold both (the binding does).
 */
#if (defined(CARTPOLE_CONTINUOUS) && !defined(PUFFER_CARTPOLE_CONTINUOUS_H)) ||                    \
    (!defined(CARTPOLE_CONTINUOUS) && !defined(PUFFER_CARTPOLE_H))
#include "../puffer.h"
#include "../raster.h"

#ifdef CARTPOLE_CONTINUOUS
#define PUFFER_CARTPOLE_CONTINUOUS_H
PUFFER_ENV_BEGIN(cartpole_continuous)
typedef float CartpoleAction;
#else
#define PUFFER_CARTPOLE_H
PUFFER_ENV_BEGIN(cartpole)
typedef int32_t CartpoleAction;
#endif

#define CARTPOLE_GRAVITY 9.8f                                      /* m/s^2 */
#define CARTPOLE_CART_MASS 1.0f                                    /* kg */
#define CARTPOLE_POLE_MASS 0.1f                                    /* kg */
#define CARTPOLE_POLE_HALF_LENGTH 0.5f                             /* m */
#define CARTPOLE_FORCE 10.0f                                       /* N, full push */
#define CARTPOLE_TAU 0.02f                                         /* s per step */
#define CARTPOLE_X_LIMIT 2.4f                                      /* m */
#define CARTPOLE_THETA_LIMIT (12.0f * 2.0f * 3.14159265f / 360.0f) /* rad */
#define CARTPOLE_INIT_RANGE 0.04f /* initial state ~ U(-0.04, 0.04) */
enum { CARTPOLE_FRAME_WIDTH = 600, CARTPOLE_FRAME_HEIGHT = 400 };

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* steps the episode lasted */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};
_Static_assert(sizeof(LOG_NAMES) / sizeof(LOG_NAMES[0]) == sizeof(Log) / sizeof(float),
               "one name per Log field");

typedef struct {
    float *observations;     /* (1, 4) */
    CartpoleAction *actions; /* (1,) int32 action or (1, 1) float32 force */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps; /* config: steps before truncation */
    int tick;
    float x, x_dot, theta, theta_dot;
} Cartpole;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Cartpole, max_steps), PUFFER_INT, 200, 1, 1e9,
     "steps before an episode is truncated (theirs 200; CartPole-v1 500)"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Cartpole *env) {
    env->num_agents = 1;
}

static void cartpole_observe(Cartpole *env) {
    env->observations[0] = env->x;
    env->observations[1] = env->x_dot;
    env->observations[2] = env->theta;
    env->observations[3] = env->theta_dot;
}

static void cartpole_new_episode(Cartpole *env) {
    env->tick = 0;
    env->x = rng_uniform(&env->rng, -CARTPOLE_INIT_RANGE, CARTPOLE_INIT_RANGE);
    env->x_dot = rng_uniform(&env->rng, -CARTPOLE_INIT_RANGE, CARTPOLE_INIT_RANGE);
    env->theta = rng_uniform(&env->rng, -CARTPOLE_INIT_RANGE, CARTPOLE_INIT_RANGE);
    env->theta_dot = rng_uniform(&env->rng, -CARTPOLE_INIT_RANGE, CARTPOLE_INIT_RANGE);
    cartpole_observe(env);
}

static void c_reset(Cartpole *env) {
    cartpole_new_episode(env);
    env->rewards[0] = 0.0f;
    env->terminals[0] = 0;
    env->truncations[0] = 0;
}

static float cartpole_force(const Cartpole *env) {
#ifdef CARTPOLE_CONTINUOUS
    /* fmaxf first: it maps NaN to -1, so no action can leave [-1, 1]. */
    return CARTPOLE_FORCE * fminf(fmaxf(env->actions[0], -1.0f), 1.0f);
#else
    return env->actions[0] == 1 ? CARTPOLE_FORCE : -CARTPOLE_FORCE;
#endif
}

/* sin and cos of the pole angle. A live pole stays within 12 degrees, where Taylor polynomials
 * to degree 7 and 8 are exact to float precision and several times cheaper than libm. */
static inline void cartpole_sincos(float theta, float *sin_theta, float *cos_theta) {
    if (theta > -0.5f && theta < 0.5f) {
        float t2 = theta * theta;
        *sin_theta = theta * (1.0f - t2 / 6.0f * (1.0f - t2 / 20.0f * (1.0f - t2 / 42.0f)));
        *cos_theta =
            1.0f - t2 / 2.0f * (1.0f - t2 / 12.0f * (1.0f - t2 / 30.0f * (1.0f - t2 / 56.0f)));
    } else {
        *sin_theta = sinf(theta);
        *cos_theta = cosf(theta);
    }
}

static void c_step(Cartpole *env) {
    const float total_mass = CARTPOLE_CART_MASS + CARTPOLE_POLE_MASS;
    const float pole_moment = CARTPOLE_POLE_MASS * CARTPOLE_POLE_HALF_LENGTH;
    float force = cartpole_force(env);
    float cos_theta, sin_theta;
    cartpole_sincos(env->theta, &sin_theta, &cos_theta);
    float temp = (force + pole_moment * env->theta_dot * env->theta_dot * sin_theta) / total_mass;
    float theta_acc = (CARTPOLE_GRAVITY * sin_theta - cos_theta * temp) /
                      (CARTPOLE_POLE_HALF_LENGTH *
                       (4.0f / 3.0f - CARTPOLE_POLE_MASS * cos_theta * cos_theta / total_mass));
    float x_acc = temp - pole_moment * theta_acc * cos_theta / total_mass;
    env->x += CARTPOLE_TAU * env->x_dot;
    env->x_dot += CARTPOLE_TAU * x_acc;
    env->theta += CARTPOLE_TAU * env->theta_dot;
    env->theta_dot += CARTPOLE_TAU * theta_acc;
    env->tick++;

    int terminal = env->x < -CARTPOLE_X_LIMIT || env->x > CARTPOLE_X_LIMIT ||
                   env->theta < -CARTPOLE_THETA_LIMIT || env->theta > CARTPOLE_THETA_LIMIT;
    int truncation = !terminal && env->tick >= env->max_steps;
    env->rewards[0] = (float)!(terminal | truncation);
    env->terminals[0] = (uint8_t)terminal;
    env->truncations[0] = (uint8_t)truncation;
    if (terminal || truncation) {
        env->log.episode_return += (float)(env->tick - 1);
        env->log.episode_length += (float)env->tick;
        env->log.score += (float)env->tick;
        env->log.n += 1.0f;
        cartpole_new_episode(env);
    } else {
        cartpole_observe(env);
    }
}

static void c_frame_size(const Cartpole *env, int *width, int *height) {
    (void)env;
    *width = CARTPOLE_FRAME_WIDTH;
    *height = CARTPOLE_FRAME_HEIGHT;
}

static void c_render(const Cartpole *env, Canvas *canvas) {
    const float scale = CARTPOLE_FRAME_WIDTH / (2.0f * CARTPOLE_X_LIMIT); /* pixels per metre */
    const int track_y = CARTPOLE_FRAME_HEIGHT * 3 / 4;
    const float pole_pixels = 2.0f * CARTPOLE_POLE_HALF_LENGTH * scale;
    raster_clear(canvas, COLOR_BACKGROUND);
    raster_rect(canvas, 0, track_y, CARTPOLE_FRAME_WIDTH, 2, COLOR_GRAY);
    int cart_x = (int)(CARTPOLE_FRAME_WIDTH / 2 + env->x * scale);
    raster_rect(canvas, cart_x - 25, track_y - 15, 50, 30, COLOR_CYAN);
    /* The pole as a chain of small circles from the axle along theta. */
    for (int i = 0; i <= 40; i++) {
        float along = pole_pixels * (float)i / 40.0f;
        int px = cart_x + (int)(along * sinf(env->theta));
        int py = track_y - 15 - (int)(along * cosf(env->theta));
        raster_circle(canvas, px, py, 4, COLOR_ORANGE);
    }
    raster_circle(canvas, cart_x, track_y - 15, 5, COLOR_GRAY);
    raster_number(canvas, 10, 10, env->tick, 4, COLOR_WHITE);
}

static void c_close(Cartpole *env) {
    (void)env;
}

/* CartPole-v1's observation bounds: twice the termination thresholds for x and theta. */
static const float OBS_HIGHS[] = {2 * CARTPOLE_X_LIMIT, INFINITY, 2 * CARTPOLE_THETA_LIMIT,
                                  INFINITY};
static const float OBS_LOWS[] = {-2 * CARTPOLE_X_LIMIT, -INFINITY, -2 * CARTPOLE_THETA_LIMIT,
                                 -INFINITY};
#ifdef CARTPOLE_CONTINUOUS
#define CARTPOLE_DOC_ACTION                                                                        \
    "Action: Box(-1, 1, (1,)) float32, scaling the 10 N push; the policy clips, NaN and inf "      \
    "are refused."
static const int ACTION_SIZES[] = {0};
static const PufferKey KEYS[] = {{"idle", 0, 0}, {"left", 0, -1}, {"right", 0, 1}, {NULL, 0, 0}};
enum { CARTPOLE_ACTION_HEADS = 0, CARTPOLE_ACTION_DIM = 1 };
#else
#define CARTPOLE_DOC_ACTION "Action: Discrete(2): push left, push right (10 N)."
static const int ACTION_SIZES[] = {2};
static const PufferKey KEYS[] = {{"left", 0, 0}, {"right", 0, 1}, {NULL, 0, 0}};
enum { CARTPOLE_ACTION_HEADS = 1, CARTPOLE_ACTION_DIM = 0 };
#endif
static const PufferSpec SPEC = {
    .doc = "PufferLib 3.0's cartpole: balance a pole on a cart (CartPole-v1 physics). "
           "Observation: (4,) float32: cart position, cart velocity, pole angle, pole angular "
           "velocity. " CARTPOLE_DOC_ACTION "\n\n"
           "| rule | value |\n|---|---|\n"
           "| start state | each of the 4 uniform in [-0.04, 0.04] |\n"
           "| reward | 1 per step, 0 on the step that ends the episode |\n"
           "| terminal | abs(x) > 2.4 m or abs(theta) > 12 degrees |\n"
           "| truncation | step max_steps (default 200) |\n"
           "| physics | g 9.8, cart 1 kg, pole 0.1 kg, half length 0.5 m, force 10 N, tau 0.02 s "
           "|\n\n"
           "Differences: the time limit sets `truncations` (theirs sets neither flag); "
           "`max_steps` is a parameter (theirs a constant 200); `score` in the log is the "
           "episode length, as theirs.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = 4,
    .obs_low = -INFINITY,
    .obs_high = INFINITY,
    .obs_lows = OBS_LOWS,
    .obs_highs = OBS_HIGHS,
    .action_heads = CARTPOLE_ACTION_HEADS,
    .action_sizes = ACTION_SIZES,
    .action_dim = CARTPOLE_ACTION_DIM,
    .action_low = -1,
    .action_high = 1,
    PUFFER_SPEC_TABLES(Cartpole),
};
#undef CARTPOLE_DOC_ACTION

#ifdef CARTPOLE_CONTINUOUS
PUFFER_ENV_END(cartpole_continuous, Cartpole)
#else
PUFFER_ENV_END(cartpole, Cartpole)
#endif

#endif
