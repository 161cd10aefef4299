"""Rules of the swarm envs ported from PufferLib 3.0 (boids, convert), checked in C on hand-built
states against each header's rules table."""

from __future__ import annotations


def test_boids_steering_crowding_margins_and_caps(run_c) -> None:
    run_c(
        "boids/boids.h",
        """
    Boids env = {0};
    static float obs[64 * BOIDS_OBS];
    OPEN(&env, obs, env.boids = 2; env.avoid = 1.0f);
    env.flock[0] = (Boid){500, 300, 0, 0};
    env.flock[1] = (Boid){560, 300, 0, 0};
    /* Boid 0 speeds up +1 px/step in x; 59 px apart: one neighbour, -min(1/5, 1). */
    actions[0] = 4, actions[1] = 2, actions[2] = 2, actions[3] = 2;
    c_step(&env);
    CHECK(env.flock[0].x == 501.0f && env.flock[0].vx == 1.0f && env.flock[1].x == 560.0f);
    CHECK(NEAR(rewards[0], (2.0 - 0.2) / 2) && NEAR(rewards[1], (2.0 - 0.2) / 2));
    CHECK(env.log.n == 1.0f && NEAR(env.log.score, 0.9));
    /* Row 0 holds itself (zeros) then boid 1 relative to it, scaled by 1080, 720 and 5. */
    CHECK(obs[0] == 0.0f && obs[2] == 0.0f && NEAR(obs[4], 59.0 / 1080) && NEAR(obs[6], -0.2));
    CHECK(obs[BOIDS_OBS + 4] == 0.0f && NEAR(obs[BOIDS_OBS], -59.0 / 1080) && obs[8] == 0.0f);
    /* Steps of -0.5 px/step: the velocity is capped at 5 in size. */
    actions[0] = 2, actions[1] = 1;
    for (int i = 0; i < 12; i++) c_step(&env);
    CHECK(env.flock[0].vy == -5.0f && env.flock[0].vx == 1.0f);
    /* The corner: position clipped at 0, both axes outside the margins; alone: -1 each. */
    env.flock[0] = (Boid){0.5f, 0.5f, 0, 0};
    env.flock[1] = (Boid){1000, 600, 0, 0};
    actions[0] = 0, actions[1] = 0, actions[2] = 2, actions[3] = 2;
    c_step(&env);
    CHECK(env.flock[0].x == 0.0f && env.flock[0].y == 0.0f && env.flock[0].vx == -1.0f);
    CHECK(rewards[0] == -1.0f);
    /* The far edge clips at 1048 x 688 (the 32 px sprite stays inside); no episode ends. */
    env.flock[0] = (Boid){1047, 687, 5, 5};
    actions[0] = 2, actions[1] = 2;
    c_step(&env);
    CHECK(env.flock[0].x == 1048.0f && env.flock[0].y == 688.0f && !terminals[0] && !truncations[0]);
    /* Crowding saturates at 5 neighbours: 6 boids in one spot, margins off. */
    c_close(&env);
    OPEN(&env, obs, env.boids = 6; env.avoid = 2.0f; env.margin_turn = 0.0f);
    for (int i = 0; i < 6; i++) env.flock[i] = (Boid){500, 300, 0, 0}, actions[2 * i] = 2, actions[2 * i + 1] = 2;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && rewards[5] == -1.0f);
    c_close(&env);
    return 0;
""",
    )


def test_convert_moves_converts_and_factories_bounce(run_c) -> None:
    run_c(
        "convert/convert.h",
        """
    Convert env = {0};
    static float obs[1024 * CV_OBS];
    OPEN(&env, obs, env.width = 1000; env.height = 1000; env.num_factories = 2;
         env.num_resources = 2);
    for (int a = 1; a < 1024; a++) /* the others wait in a corner, far from every factory */
        env.agent[a] = (CvAgent){990, 990, 0, 0, 0, 0}, actions[2 * a] = 4, actions[2 * a + 1] = 2;
    /* Agent 0 accelerates east (+2 px/step per step) toward factory 0 (type 0) drifting east. */
    env.agent[0] = (CvAgent){100, 100, 0, 0, 0, 0};
    env.factory[0] = (CvFactory){140, 100, 0, 0};
    env.factory[1] = (CvFactory){800, 800, 0, 1};
    actions[0] = 4, actions[1] = 4;
    c_step(&env);
    CHECK(env.agent[0].x == 102.0f && env.agent[0].speed == 2.0f && env.factory[0].x == 142.0f);
    c_step(&env); /* x 106, factory 144: 36 px */
    CHECK(env.agent[0].x == 106.0f && rewards[0] == 0.0f);
    float before = env.log.n;
    c_step(&env); /* x 112, factory 144: 32 px, in reach: type 0 -> 1 */
    CHECK(env.agent[0].x == 112.0f && rewards[0] == 1.0f && env.agent[0].item == 1);
    CHECK(env.log.n == before + 1 && env.agent[0].steps == 0);
    /* Row: nearest factory per type, heading, this step's reward, position, item one-hot. */
    CHECK(NEAR(obs[0], (146.0 - 112) / 1000) && NEAR(obs[2], (806.0 - 112) / 1000) && NEAR(obs[3], 0.7));
    CHECK(obs[4] == 0.0f && obs[5] == 1.0f && NEAR(obs[6], 0.112) && obs[8] == 0.0f && obs[9] == 1.0f);
    CHECK(obs[10] == 0.0f); /* 2 types: 3 * 2 + 4 values, the rest 0 */
    /* Two factories in reach, types 0 then 1: two conversions, reward still 1. */
    env.factory[1] = (CvFactory){env.agent[0].x, env.agent[0].y + 20, 0, 1};
    env.factory[0].x = env.agent[0].x, env.factory[0].y = env.agent[0].y + 30;
    env.agent[0].speed = 0, env.agent[0].item = 0, actions[1] = 2;
    before = env.log.n;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && env.log.n == before + 2 && env.agent[0].item == 0);
    /* Turning: -4/12 rad a step clips at 0; +4/12 clips at 2 pi. Speed clips at 20. */
    actions[0] = 0, actions[1] = 4;
    for (int i = 0; i < 12; i++) c_step(&env);
    CHECK(env.agent[0].heading == 0.0f && env.agent[0].speed == 20.0f);
    actions[0] = 8;
    for (int i = 0; i < 30; i++) c_step(&env);
    CHECK(NEAR(env.agent[0].heading, 2 * M_PI));
    /* A factory leaving the arena is clamped and turns to a whole-degree heading. */
    env.factory[0] = (CvFactory){983, 500, 0, 0};
    c_step(&env);
    const float degrees = env.factory[0].heading * 360.0f / CV_TWO_PI;
    CHECK(env.factory[0].x == 984.0f && NEAR(degrees, roundf(degrees)));
    /* One agent: the 1 / num_agents jump happens every step, to a whole point in the arena. */
    Convert solo = {0};
    OPEN(&solo, obs, solo.agents = 1);
    for (int i = 0; i < 50; i++) {
        c_step(&solo);
        const float x = solo.agent[0].x, y = solo.agent[0].y;
        CHECK(x == floorf(x) && y == floorf(y) && x < 1920 && y < 1080 && !terminals[0]);
    }
    c_close(&solo);
    c_close(&env);
    return 0;
""",
    )
