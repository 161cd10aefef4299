"""PufferLib 3.0's rules for breakout, squared and cartpole, checked in C on scripted play.

Each test drives one header through `c_step` (the `run_c` fixture of conftest.py compiles it
with ASan/UBSan) with a fixed action sequence, or from a hand-set state, and CHECKs the numbers
of the env's rules table (its SPEC.doc): when the episode ends, what each event pays.
"""

from __future__ import annotations

from collections.abc import Callable

RunC = Callable[..., None]

# A breakout game one frame in, at one frame per step: the ball just served.
SERVED = """
    Breakout env = {0};
    float obs[BREAKOUT_OBS];
    BIND(&env, obs);
    env.frameskip = 1;
    actions[0] = BREAKOUT_STAY;
    c_step(&env);
"""


def test_ocean_breakout_serve_loses_six_balls_with_a_still_paddle(run_c: RunC) -> None:
    """256 px/s at 180/3.25 degrees from (272, 135): the ball's top passes y = 320 on frame 77,
    missing the paddle; the 6th loss ends the episode on step ceil(6 * 77 / 4) = 116."""
    run_c(
        "breakout/breakout.h",
        """
    Breakout env = {0};
    float obs[BREAKOUT_OBS];
    BIND(&env, obs);
    CHECK(obs[6] == 0.0f && obs[8] == 1.0f && obs[9] == 1.0f && obs[7] == 0.0f);
    CHECK(env.ball_x == 272.0f && env.ball_y == 135.0f && env.paddle_x == 257.0f);
    env.frameskip = 1;
    actions[0] = BREAKOUT_STAY;
    c_step(&env); /* the serve frame */
    CHECK(obs[6] == 0.2f);
    CHECK(fabsf(fabsf(env.ball_vx) - 3.5115f) < 1e-3f && fabsf(env.ball_vy - 2.4236f) < 1e-3f);
    CHECK(fabsf(fabsf(obs[4]) - 3.5115f / 512) < 1e-5f);
    for (int frame = 2; frame <= 76; frame++) c_step(&env);
    CHECK(env.balls_left == 5 && env.ball_y > 318.0f);
    c_step(&env);
    CHECK(env.balls_left == 4 && obs[8] == 0.8f && obs[6] == 0.0f && rewards[0] == 0.0f);
    /* From a fresh episode at frameskip 4: 116 steps, terminal on the last only. */
    env.frameskip = 4;
    c_reset(&env);
    for (int step = 1; step <= 116; step++) {
        c_step(&env);
        CHECK(rewards[0] == 0.0f && terminals[0] == (step == 116) && !truncations[0]);
    }
    CHECK(env.log.n == 1.0f && env.log.score == 0.0f && env.log.episode_length == 116.0f);
    return 0;""",
    )


def test_ocean_breakout_bricks_ceiling_and_paddle(run_c: RunC) -> None:
    run_c(
        "breakout/breakout.h",
        SERVED
        + """
    /* Straight up under columns 3 and 4 (28 px over column 3): the bottom row's brick in
     * column 3 breaks on frame 16 (its face at y = 122), pays 1, and the ball comes back. */
    env.ball_x = 100.0f, env.ball_y = 200.0f, env.ball_vx = 0.0f, env.ball_vy = -5.0f;
    for (int frame = 1; frame <= 15; frame++) {
        c_step(&env);
        CHECK(rewards[0] == 0.0f);
    }
    c_step(&env);
    CHECK(rewards[0] == 1.0f && env.ball_y == 122.0f && env.ball_vy == 5.0f);
    CHECK(obs[BREAKOUT_SCALARS + 5 * 18 + 3] == 1.0f && obs[BREAKOUT_SCALARS + 5 * 18 + 4] == 0);
    CHECK(obs[7] == 1.0f / 864 && env.ball_speed == 256.0f);
    /* Rows 1-5 of columns 3-4 gone: the top row's brick pays 7 and sets the speed to 448. */
    for (int row = 1; row < 6; row++) env.broken[row * 18 + 3] = env.broken[row * 18 + 4] = 1;
    env.ball_y = 200.0f, env.ball_vy = -5.0f;
    int points = 0;
    for (int frame = 0; frame < 28; frame++) c_step(&env), points += (int)rewards[0];
    CHECK(points == 7 && env.broken[3] && !env.broken[4] && env.ball_speed == 448.0f);
    CHECK(env.score == 8);
    /* Through the emptied column to the ceiling: the paddle halves to 31 px. */
    env.broken[4] = 1;
    env.ball_x = 120.0f, env.ball_y = 200.0f, env.ball_vy = -5.0f;
    for (int frame = 0; frame < 40 && env.ball_vy < 0; frame++) c_step(&env);
    CHECK(env.ball_y == 0.0f && env.paddle_width == 31.0f && obs[9] == 0.5f);
    /* Falling on the paddle's centre: straight back up at the current speed (448 px/s), the
     * ball held where it was for the contact frame; every 4th hit adds 64 px/s up to 448. */
    env.paddle_width = 62.0f, env.ball_speed = 256.0f, env.hits = 2;
    env.ball_x = env.paddle_x + 31.0f - 16.0f, env.ball_y = 251.0f;
    env.ball_vx = 0.0f, env.ball_vy = 5.0f;
    for (int frame = 0; frame < 6; frame++) c_step(&env);
    CHECK(env.ball_vx == 0.0f && fabsf(env.ball_vy + 256.0f / 60.0f) < 1e-5f);
    CHECK(env.ball_y == 276.0f && env.hits == 3 && env.ball_speed == 256.0f);
    /* The paddle's left end sends it 45 degrees left; the 4th hit speeds the next bounce. */
    env.ball_x = env.paddle_x - 16.0f, env.ball_y = 251.0f, env.ball_vy = 5.0f;
    for (int frame = 0; frame < 6; frame++) c_step(&env);
    CHECK(fabsf(env.ball_vx - env.ball_vy) < 1e-5f && env.ball_vx < 0.0f);
    CHECK(env.hits == 4 && env.ball_speed == 320.0f);
    return 0;""",
    )


def test_ocean_breakout_second_wall_and_max_score(run_c: RunC) -> None:
    run_c(
        "breakout/breakout.h",
        SERVED
        + """
    /* First wall cleared (432): returning the ball to the paddle rebuilds all 108 bricks. */
    memset(env.broken, 1, sizeof(env.broken));
    for (int i = 0; i < 108; i++) obs[BREAKOUT_SCALARS + i] = 1.0f;
    env.score = 432;
    env.ball_x = env.paddle_x + 15.0f, env.ball_y = 251.0f, env.ball_vx = 0.0f, env.ball_vy = 5.0f;
    for (int frame = 0; frame < 6; frame++) c_step(&env);
    CHECK(env.ball_vy < 0.0f);
    for (int i = 0; i < 108; i++) CHECK(!env.broken[i] && obs[BREAKOUT_SCALARS + i] == 0.0f);
    /* One 7-point brick short of 864: breaking it ends the episode (terminal, perf 1). */
    memset(env.broken, 1, sizeof(env.broken));
    env.broken[0] = 0;
    env.score = 864 - 7;
    env.ball_x = 0.0f, env.ball_y = 100.0f, env.ball_vy = -5.0f;
    int frames = 0;
    while (!terminals[0] && frames < 100) c_step(&env), frames++;
    CHECK(terminals[0] && rewards[0] == 7.0f && env.log.score == 864.0f && env.log.perf == 1.0f);
    CHECK(env.score == 0 && env.balls_left == 5 && obs[BREAKOUT_SCALARS] == 0.0f);
    return 0;""",
    )


def test_ocean_squared_target_walls_and_time_limit(run_c: RunC) -> None:
    run_c(
        "squared/squared.h",
        """
    Squared env = {0};
    uint8_t obs[SQUARED_GRID * SQUARED_GRID];
    BIND(&env, obs);
    CHECK(env.row == 5 && env.col == 5 && obs[60] == SQUARED_AGENT && env.max_steps == 33);
#define PLACE_TARGET(r, c)                                      \\
    obs[env.target_row * 11 + env.target_col] = SQUARED_EMPTY;  \\
    env.target_row = (r), env.target_col = (c);                 \\
    obs[(r) * 11 + (c)] = SQUARED_TARGET
    /* Left 5, up 5 to the corner target: +1 and a terminal on step 10. */
    PLACE_TARGET(0, 0);
    for (int step = 1; step <= 10; step++) {
        actions[0] = step <= 5 ? SQUARED_LEFT : SQUARED_UP;
        c_step(&env);
        CHECK(rewards[0] == (step == 10 ? 1.0f : 0.0f) && terminals[0] == (step == 10));
    }
    CHECK(env.log.score == 1.0f && env.log.perf == 1.0f && env.log.episode_length == 10.0f);
    /* Six steps up from the centre leave the grid: -1, terminal. */
    PLACE_TARGET(10, 10);
    actions[0] = SQUARED_UP;
    for (int step = 1; step <= 6; step++) {
        c_step(&env);
        CHECK(rewards[0] == (step == 6 ? -1.0f : 0.0f) && terminals[0] == (step == 6));
    }
    /* 33 no-ops survive; the 34th step loses even when it reaches the target. */
    PLACE_TARGET(5, 6);
    actions[0] = SQUARED_NOOP;
    for (int step = 1; step <= 33; step++) {
        c_step(&env);
        CHECK(rewards[0] == 0.0f && !terminals[0]);
    }
    actions[0] = SQUARED_RIGHT;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && !truncations[0]);
    CHECK(env.log.n == 3.0f && env.log.score == -1.0f && env.log.perf == 1.0f);
    CHECK(env.tick == 0 && obs[60] == SQUARED_AGENT);
    return 0;""",
    )


def test_ocean_cartpole_rewards_falls_and_time_limit(run_c: RunC) -> None:
    run_c(
        "cartpole/cartpole.h",
        """
    Cartpole env = {0};
    float obs[4];
    BIND(&env, obs);
    CHECK(env.max_steps == 200);
    for (int i = 0; i < 4; i++) CHECK(obs[i] >= -0.04f && obs[i] <= 0.04f);
    /* From rest, always pushing right: the pole falls past 12 degrees on a fixed step, which
     * pays 0 while every step before pays 1. */
    env.x = env.x_dot = env.theta = env.theta_dot = 0.0f;
    actions[0] = 1;
    int steps = 0;
    do {
        c_step(&env), steps++;
        CHECK(rewards[0] == (terminals[0] ? 0.0f : 1.0f) && !truncations[0]);
    } while (!terminals[0]);
    CHECK(steps == 9 && env.log.score == 9.0f && env.log.episode_return == 8.0f);
    /* Balanced by a PD rule, the episode is truncated at step 200 with reward 0. */
    steps = 0;
    do {
        actions[0] = obs[2] + 0.5f * obs[3] > 0.0f;
        c_step(&env), steps++;
        CHECK(!terminals[0]);
    } while (!truncations[0]);
    CHECK(steps == 200 && rewards[0] == 0.0f && env.log.score == 209.0f);
    CHECK(env.log.episode_return == 8.0f + 199.0f);
    return 0;""",
    )


def test_ocean_pong_returns_points_and_episode_end(run_c: RunC) -> None:
    run_c(
        "pong/pong.h",
        """
    Pong env = {0};
    float obs[PONG_OBS];
    BIND(&env, obs);
    CHECK(env.ball_x == 100.0f && env.ball_y == 304.0f && env.agent_y == 285.0f);
    CHECK(env.ball_vx == 10.0f && (env.ball_vy == 0.0f || env.ball_vy == -1.0f));
    CHECK(obs[2] == 0.2f && obs[4] == 1.0f && obs[1] == 320.0f / 640.0f);
    /* A still paddle returns the serve on step 37 (the ball's right edge passes 500): +0.1,
     * a flat ball leaves at vy 3, and the ball is put back inside the court. */
    actions[0] = PONG_STAY;
    for (int step = 1; step <= 37; step++) {
        c_step(&env);
        CHECK(rewards[0] == (step == 37 ? 0.1f : 0.0f));
    }
    CHECK(env.ball_vx == -10.0f && env.ball_x == 468.0f && (env.ball_vy == 3.0f ||
                                                             env.ball_vy == -1.0f));
    /* The scripted paddle returns it too (it tracks a slow ball), without reward. */
    for (int step = 1; step <= 47; step++) {
        c_step(&env);
        CHECK(rewards[0] == 0.0f);
    }
    CHECK(env.ball_vx == 10.0f && env.opponent_points == 0);
    /* Moving the paddle up on a return adds 3 to vy, capped at 13; down to 0 becomes 3. */
    env.ball_x = 465.0f, env.ball_y = 300.0f, env.ball_vx = 10.0f, env.agent_y = 285.0f;
    float vy_before[3] = {0.0f, 12.0f, 3.0f}, vy_after[3] = {3.0f, 13.0f, 3.0f};
    int moves[3] = {PONG_UP, PONG_UP, PONG_DOWN};
    for (int i = 0; i < 3; i++) {
        env.ball_x = 465.0f, env.ball_y = 300.0f, env.ball_vx = 10.0f, env.agent_y = 285.0f;
        env.ball_vy = vy_before[i];
        actions[0] = moves[i];
        c_step(&env);
        CHECK(rewards[0] == 0.1f && env.ball_vy == vy_after[i] && env.ball_vx == -10.0f);
    }
    /* The top wall reverses vy. */
    env.ball_x = 200.0f, env.ball_y = 604.0f, env.ball_vx = 10.0f, env.ball_vy = 5.0f;
    actions[0] = PONG_STAY;
    c_step(&env);
    CHECK(env.ball_vy == -5.0f);
    /* The scripted paddle misses a ball far from it: +1, a new serve in the observation. */
    env.opponent_y = 0.0f, env.ball_x = 5.0f, env.ball_y = 500.0f, env.ball_vx = -10.0f;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && !terminals[0] && env.agent_points == 1);
    CHECK(obs[2] == 0.2f && obs[7] == 1.0f / 21.0f && obs[6] == 0.0f);
    /* A fresh episode, the paddle always moving down: every serve is missed on its 37th
     * step (-1), and the 21st miss ends the episode on step 21 * 37 = 777. */
    c_reset(&env);
    actions[0] = PONG_DOWN;
    for (int step = 1; step <= 777; step++) {
        c_step(&env);
        CHECK(rewards[0] == (step % 37 == 0 ? -1.0f : 0.0f) && terminals[0] == (step == 777));
    }
    CHECK(env.log.n == 1.0f && env.log.score == -21.0f && env.log.perf == 0.0f);
    CHECK(env.log.episode_length == 777.0f && env.opponent_points == 0);
    return 0;""",
    )
