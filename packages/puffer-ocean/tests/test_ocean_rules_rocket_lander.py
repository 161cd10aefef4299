"""Rules of rocket_lander (PufferLib 3.0's draft), checked in C against its rules table.

Scripted steps from the reset state and from hand-set states (the `run_c` fixture of
conftest.py, ASan/UBSan): free fall to the touchdown height, each thruster's push and turn,
the rewards, the box that ends the episode and the time limit.
"""

from __future__ import annotations

from collections.abc import Callable

RunC = Callable[..., None]


def test_ocean_rocket_lander_fall_thrusters_bounds_and_time(run_c: RunC) -> None:
    run_c(
        "rocket_lander/rocket_lander.h",
        """
    RocketLander env = {0};
    float obs[RL_OBS];
    BIND(&env, obs);
    CHECK(obs[0] == 0.0f && NEAR(obs[1], 500.0 / 1200) && obs[2] == 0.0f && obs[5] == 0.0f);
    /* Free fall, 4 substeps of 1/240 s: y = 500 - 9.8 h^2 (1 + ... + 4n) after n steps,
     * below 120 on step 529; every step pays 1 (the main engine is off), the last too. */
    actions[0] = RL_NONE;
    c_step(&env);
    CHECK(NEAR(env.vy, -9.8 / 60) && NEAR(obs[3], -9.8 / 60 / 200) && rewards[0] == 1.0f);
    CHECK(fabs(env.y - (500.0 - 9.8 * 10 / 57600.0)) < 1e-4);
    int steps = 1;
    while (!terminals[0]) {
        c_step(&env), steps++;
        CHECK(rewards[0] == 1.0f && !truncations[0]);
    }
    CHECK(steps == 529 && env.log.n == 1.0f && env.log.episode_return == 529.0f);
    CHECK(env.log.episode_length == 529.0f && env.log.out_of_bounds == 1.0f);
    CHECK(env.y == 500.0f && env.vy == 0.0f && NEAR(obs[1], 500.0 / 1200) && obs[3] == 0.0f);
    /* Main engine from rest: 1e6 N on 4,540 kg, up to 0.02 rad right of vertical: vy =
     * (220.26 cos b - 9.8) / 60, a push right and a counter-clockwise turn; reward 0. */
    actions[0] = RL_MAIN, c_step(&env);
    CHECK(rewards[0] == 0.0f && env.vy > (220.264 * cos(0.02) - 9.8) / 60 - 1e-3);
    CHECK(env.vy < (220.264 - 9.8) / 60 + 1e-3 && env.vx >= 0.0f && env.vx < 220.264 * 0.02 / 60);
    CHECK(env.spin >= 0.0f && env.spin < 113.5e6 * 0.02 / RL_INERTIA / 60);
    /* Left thruster at the top-left corner pushes right (vx = 220.26 / 60) and turns the
     * booster clockwise by 113.5e6 N m / I (I = 4540 (20^2 + 227^2) / 12); right mirrors it. */
    c_reset(&env);
    actions[0] = RL_LEFT, c_step(&env);
    const double spin = 113.5e6 / (4540.0 * (400 + 227 * 227) / 12) / 60;
    CHECK(rewards[0] == 1.0f && fabs(env.vx - 220.264 / 60) < 2e-3);
    CHECK(fabs(env.spin + spin) < 2e-3 && NEAR(obs[5], env.spin / RL_PI));
    c_reset(&env);
    actions[0] = RL_RIGHT, c_step(&env);
    CHECK(fabs(env.vx + 220.264 / 60) < 2e-3 && fabs(env.spin - spin) < 2e-3);
    /* The box: leaving |x| <= 500 or y <= 1200 is terminal. */
    c_reset(&env);
    actions[0] = RL_NONE;
    env.x = 499.99f, env.vx = 60.0f, c_step(&env);
    CHECK(terminals[0] && env.log.n == 2.0f && env.x == 0.0f);
    env.y = 1199.99f, env.vy = 60.0f, c_step(&env);
    CHECK(terminals[0] && env.log.n == 3.0f);
    /* Observation scaling: 100 m/s and pi rad/s show as 0.5 and 1. */
    env.vx = 100.0f, env.spin = RL_PI, c_step(&env);
    CHECK(NEAR(obs[2], 0.5) && NEAR(obs[5], 1.0) && obs[4] > 0.0f);
    /* Time: truncated (not terminal) after 1,001 steps. */
    c_reset(&env);
    env.tick = 999, c_step(&env);
    CHECK(!truncations[0] && !terminals[0]);
    c_step(&env);
    CHECK(truncations[0] && !terminals[0] && env.log.n == 4.0f && env.log.out_of_bounds == 3.0f);
    CHECK(rewards[0] == 1.0f && env.tick == 0);
    return 0;""",
    )
