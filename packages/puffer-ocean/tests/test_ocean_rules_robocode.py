"""Rules of robocode (the physics of PufferLib 3.0's robocode header, with our reward and episode
end), checked in C on hand-placed robots against the rules table in csrc/robocode/robocode.h.
The `run_c` fixture is in conftest.py."""

from __future__ import annotations

# Robot 0 at (100, 100), robot 1 at (400, 300), both idle: ACT(i, accel, turn, gun, radar, fire)
# takes action indices.
SETUP = """
    Robocode env = {0};
    float obs[2 * RC_OBS];
    BIND(&env, obs);
#define ACT(i, m, t, g, r, f) \\
    actions[(i) * 5] = (m), actions[(i) * 5 + 1] = (t), actions[(i) * 5 + 2] = (g), \\
    actions[(i) * 5 + 3] = (r), actions[(i) * 5 + 4] = (f)
    RcRobot *r0 = &env.robots[0], *r1 = &env.robots[1];
    r0->x = 100, r0->y = 100, r1->x = 400, r1->y = 300;
    r0->gun = r0->radar = r1->gun = r1->radar = 0;
    ACT(0, 2, 2, 2, 2, 0);
    ACT(1, 2, 2, 2, 2, 0);
"""


def test_robocode_reset_move_turn_and_ram(run_c) -> None:
    run_c(
        "robocode/robocode.h",
        """
    Robocode env = {0};
    float obs[2 * RC_OBS];
    BIND(&env, obs);
    for (int i = 0; i < 2; i++) {
        const RcRobot *r = &env.robots[i];
        CHECK(r->energy == 100.0f && r->heat == 3.0f && r->v == 0.0f && r->heading == 0.0f);
        CHECK(r->x >= 16 && r->x < 768 - 16 && r->y >= 16 && r->y < 576 - 16);
        CHECK(r->x == floorf(r->x) && NEAR(obs[i * RC_OBS + 10], 1.0));
    }
    CHECK(hypotf(env.robots[0].x - env.robots[1].x, env.robots[0].y - env.robots[1].y) >= 32);
"""
        + SETUP.split("BIND(&env, obs);", 1)[1]
        + """
    /* Accelerate +1 twice: speed 1 then 2, x 101 then 103. */
    ACT(0, 3, 2, 2, 2, 0);
    c_step(&env);
    c_step(&env);
    CHECK(r0->v == 2.0f && r0->x == 103.0f && r0->y == 100.0f && NEAR(obs[2], 0.25));
    /* Turn +10 at speed 2: clamped to 10 - 1.5 = 8.5; the gun turns with the body (+20). */
    ACT(0, 2, 4, 4, 2, 0);
    c_step(&env);
    CHECK(NEAR(r0->heading, 8.5) && NEAR(r0->gun, 28.5) && NEAR(r0->radar, 28.5));
    /* Speed is capped at 8; -2 brakes. */
    r0->heading = 0, r0->x = 100;
    ACT(0, 3, 2, 2, 2, 0);
    for (int i = 0; i < 10; i++) c_step(&env);
    CHECK(r0->v == 8.0f);
    ACT(0, 0, 2, 2, 2, 0);
    c_step(&env);
    CHECK(r0->v == 6.0f);
    /* A move ending within 32 px of the other robot does not happen: both lose 0.6 energy,
     * which is no bullet damage: reward 0. */
    r0->x = 100, r0->y = 100, r0->v = 0, r1->x = 133, r1->y = 100;
    float e0 = r0->energy, e1 = r1->energy;
    ACT(0, 3, 2, 2, 2, 0);
    c_step(&env);
    CHECK(r0->x == 100.0f && NEAR(r0->energy, e0 - 0.6) && NEAR(r1->energy, e1 - 0.6));
    CHECK(rewards[0] == 0.0f && rewards[1] == 0.0f);
    c_close(&env);""",
    )


def test_robocode_fire_hit_death_and_time_limit(run_c) -> None:
    run_c(
        "robocode/robocode.h",
        SETUP
        + """
    /* The gun is hot at first (3, cooling 0.1 a step): firing does nothing. */
    ACT(0, 2, 2, 2, 2, 3);
    c_step(&env);
    CHECK(r0->energy == 100.0f && !r0->bullets[0].live && NEAR(r0->heat, 2.9));
    /* Cold gun, power 3: costs 3 energy, 1.6 heat; the bullet starts 64 px along the gun. */
    r0->heat = 0, r1->x = 200, r1->y = 100;
    c_step(&env);
    const RcBullet *b = &r0->bullets[0];
    CHECK(r0->energy == 97.0f && NEAR(r0->heat, 1.6) && b->live && b->x == 164.0f);
    CHECK(rewards[0] == 0.0f && rewards[1] == 0.0f);
    /* Robot 1 sees the bullet in its first slot: offset from itself / 768, power / 3. */
    CHECK(NEAR(obs[RC_OBS + 20], (164.0 - 200.0) / 768) && NEAR(obs[RC_OBS + 24], 1.0));
    /* 11 px a step: at x 175 it is within 32 px of robot 1: 16 damage, 9 energy back. */
    ACT(0, 2, 2, 2, 2, 0);
    c_step(&env);
    CHECK(!b->live && r1->energy == 84.0f && r0->energy == 106.0f && r0->hits == 1);
    CHECK(NEAR(rewards[0], 0.16) && NEAR(rewards[1], -0.16));
    /* A kill: 10 energy left and a power-3 shot (16 damage): +1 / -1 besides the damage. */
    r1->energy = 10, r0->heat = 0;
    ACT(0, 2, 2, 2, 2, 3);
    c_step(&env);
    ACT(0, 2, 2, 2, 2, 0);
    c_step(&env);
    CHECK(terminals[0] && terminals[1] && NEAR(rewards[0], 1.16) && NEAR(rewards[1], -1.16));
    CHECK(env.log.n == 2.0f && env.log.score == 1.0f && env.log.hits == 2.0f);
    CHECK(env.tick == 0 && env.robots[1].energy == 100.0f && !env.robots[0].bullets[1].live);
    c_step(&env);
    CHECK(!terminals[0] && !truncations[0]);
    /* max_steps: truncation for both. */
    env.tick = 999;
    c_step(&env);
    CHECK(truncations[0] && truncations[1] && !terminals[0] && env.log.n == 4.0f);
    c_close(&env);""",
    )


def test_robocode_radar_sweep_sees_the_other_robot(run_c) -> None:
    run_c(
        "robocode/robocode.h",
        SETUP
        + """
    r1->x = 300, r1->y = 100; /* due east: bearing 0 */
    /* The radar sweeps 350 -> 5 (through 0): seen; then 5 -> 20: not seen. */
    r0->radar = 350;
    ACT(0, 2, 2, 2, 3, 0);
    c_step(&env);
    CHECK(NEAR(r0->radar, 5) && obs[RC_SELF_OBS + 8] == 1.0f);
    c_step(&env);
    CHECK(NEAR(r0->radar, 20) && obs[RC_SELF_OBS + 8] == 0.0f);
    /* Sweeping back -45 from 20 to 335 (through 0): seen again. */
    ACT(0, 2, 2, 2, 0, 0);
    c_step(&env);
    CHECK(NEAR(r0->radar, 335) && obs[RC_SELF_OBS + 8] == 1.0f);
    c_close(&env);""",
    )
