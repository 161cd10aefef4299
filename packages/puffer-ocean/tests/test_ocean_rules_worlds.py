"""Rules of the multi-agent grid and continuous-control envs ported from PufferLib 3.0
(trash_pickup, drone), checked in C on hand-built states against each header's rules table."""

from __future__ import annotations


def test_trash_pickup_pick_bin_push_and_episode_end(run_c) -> None:
    run_c(
        "trash_pickup/trash_pickup.h",
        """
    TrashPickup env = {0};
    static int8_t obs[256 * TP_OBS];
    OPEN(&env, obs, env.agents = 1; env.num_bins = 1; env.num_trash = 1);
    /* Row 1: agent (1,1), trash (2,1), empty (3,1), bin (4,1). */
    for (int i = 0; i < 100; i++) env.cell[i] = -1;
    env.entities[0] = (TpEntity){1, 1, TP_AGENT, 0};
    env.entities[1] = (TpEntity){4, 1, TP_BIN, 0};
    env.entities[2] = (TpEntity){2, 1, TP_TRASH, 0};
    env.cell[11] = 0, env.cell[14] = 1, env.cell[12] = 2;
    tp_observe(&env);
    /* The agent sees itself at the view's centre (plane 3), the trash right of it (plane 1). */
    const int centre = TP_SIGHT * TP_VIEW + TP_SIGHT;
    CHECK(obs[3 * TP_PLANE + centre] == 1 && obs[1 * TP_PLANE + centre + 1] == 1);
    CHECK(obs[2 * TP_PLANE + centre + 3] == 1 && obs[4 * TP_PLANE + centre] == 0);
    actions[0] = TP_RIGHT;
    c_step(&env); /* picks the trash up */
    CHECK(rewards[0] == 0.5f && env.entities[0].carrying && env.entities[0].x == 2);
    CHECK(obs[4 * TP_PLANE + centre] == 1 && !terminals[0]);
    c_step(&env); /* an empty cell */
    CHECK(rewards[0] == 0.0f && env.entities[0].x == 3);
    c_step(&env); /* into the bin: drops the trash, stays put; the last one ends the episode */
    CHECK(rewards[0] == 0.5f && terminals[0] && !truncations[0]);
    CHECK(env.log.n == 1.0f && env.log.score == 1.0f && env.log.episode_return == 1.0f);
    CHECK(env.log.episode_length == 3.0f && env.log.perf == 1.0f);
    /* Empty-handed into a bin: the bin slides one cell; against the wall it does not. */
    for (int i = 0; i < 100; i++) env.cell[i] = -1;
    env.entities[0] = (TpEntity){6, 1, TP_AGENT, 0};
    env.entities[1] = (TpEntity){7, 1, TP_BIN, 0};
    env.entities[2] = (TpEntity){0, 9, TP_TRASH, 0};
    env.cell[16] = 0, env.cell[17] = 1, env.cell[90] = 2;
    c_step(&env);
    CHECK(rewards[0] == 0.0f && env.entities[0].x == 7 && env.entities[1].x == 8);
    c_step(&env);
    CHECK(env.entities[0].x == 8 && env.entities[1].x == 9);
    c_step(&env); /* the bin is at the wall: nothing moves */
    CHECK(env.entities[0].x == 8 && env.entities[1].x == 9 && env.cell[19] == 1);
    /* Nobody finishes: max_steps (300) truncates for every agent. */
    actions[0] = TP_UP;
    while (!truncations[0]) c_step(&env);
    CHECK(env.tick == 0 && env.log.n == 2.0f && env.log.episode_length == 303.0f);
    return 0;
""",
    )


def test_trash_pickup_agents_block_each_other(run_c) -> None:
    run_c(
        "trash_pickup/trash_pickup.h",
        """
    TrashPickup env = {0};
    static int8_t obs[256 * TP_OBS];
    OPEN(&env, obs, env.agents = 2; env.num_bins = 1; env.num_trash = 1);
    for (int i = 0; i < 100; i++) env.cell[i] = -1;
    env.entities[0] = (TpEntity){1, 5, TP_AGENT, 0};
    env.entities[1] = (TpEntity){2, 5, TP_AGENT, 1};
    env.entities[2] = (TpEntity){9, 9, TP_BIN, 0};
    env.entities[3] = (TpEntity){3, 5, TP_TRASH, 0};
    env.cell[51] = 0, env.cell[52] = 1, env.cell[99] = 2, env.cell[53] = 3;
    /* Agent 0 moves first into agent 1: blocked. Agent 1 carries, so the trash blocks it. */
    actions[0] = TP_RIGHT, actions[1] = TP_RIGHT;
    c_step(&env);
    CHECK(env.entities[0].x == 1 && env.entities[1].x == 2 && rewards[0] == 0 && rewards[1] == 0);
    /* Agent 0 moves before agent 1 steps away, so it is still blocked this step. */
    actions[0] = TP_RIGHT, actions[1] = TP_UP;
    c_step(&env);
    CHECK(env.entities[0].x == 1 && env.entities[1].y == 4);
    c_step(&env);
    CHECK(env.entities[0].x == 2);
    return 0;
""",
    )


def test_drone_free_fall_hover_torque_and_targets(run_c) -> None:
    run_c(
        "drone/drone.h",
        """
    Drone env = {0};
    float obs[DRONE_OBS];
    OPEN(&env, obs, env.n_targets = 2);
    env.pos = (DroneVec){0, 0, 0};
    env.target = (DroneVec){5, 5, 5};
    /* Rotors off (-1): free fall under gravity; position moves with the old velocity. */
    for (int i = 0; i < 4; i++) actions[i] = -1.0f;
    c_step(&env);
    CHECK(NEAR(env.vel.z, -9.81 * 0.02) && env.pos.z == 0.0f && rewards[0] == 0.0f);
    c_step(&env);
    CHECK(NEAR(env.pos.z, -9.81 * 0.02 * 0.02));
    /* Linear drag 0.1 v: the second step's velocity change is (-9.81 - 0.1 v) dt. */
    CHECK(NEAR(env.vel.z, -9.81 * 0.02 + (-9.81 + 0.1 * 9.81 * 0.02) * 0.02));
    /* Hover: 4 * 3e-5 * (750 (a + 1) / 2)^2 = 9.81 holds the drone still. */
    env.vel = (DroneVec){0, 0, 0};
    env.pos = (DroneVec){0, 0, 0};
    const float hover = 2.0f * sqrtf(9.81f / (4 * 3e-5f)) / 750.0f - 1.0f;
    for (int i = 0; i < 4; i++) actions[i] = hover;
    for (int t = 0; t < 50; t++) c_step(&env);
    CHECK(fabsf(env.vel.z) < 1e-3f && fabsf(env.pos.z) < 1e-3f && env.qw == 1.0f);
    /* Rotor 1 above rotor 3: a positive roll rate, 0.1 (T1 - T3) / 0.01 * 0.02 after a step. */
    actions[1] = 1.0f, actions[3] = -1.0f;
    c_step(&env);
    const float t1 = 3e-5f * 750.0f * 750.0f;
    CHECK(NEAR(env.omega.x, 0.1 * t1 / 0.01 * 0.02) && env.omega.y == 0.0f);
    /* Reaching a target: +1 and a new one; the n_targets-th ends the episode. */
    for (int i = 0; i < 4; i++) actions[i] = hover;
    env.omega = (DroneVec){0, 0, 0};
    env.qw = 1, env.qx = env.qy = env.qz = 0;
    env.target = env.pos;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && env.score == 1 && !terminals[0]);
    env.target = env.pos;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && terminals[0] && env.log.score == 2.0f && env.log.perf == 1.0f);
    /* Leaving the cube: -1 and terminal. */
    env.pos = (DroneVec){0, 0, -9.99f};
    env.vel = (DroneVec){0, 0, -5.0f};
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.log.n == 2.0f);
    /* max_steps truncates. */
    env.tick = env.max_steps - 1;
    env.pos = (DroneVec){0, 0, 0};
    env.target = (DroneVec){5, 5, 5};
    c_step(&env);
    CHECK(truncations[0] && !terminals[0] && env.log.n == 3.0f);
    return 0;
""",
    )


def test_freeway_crossing_hits_traffic_and_game_length(run_c) -> None:
    run_c(
        "freeway/freeway.h",
        """
    Freeway env = {0};
    float obs[FW_OBS];
    OPEN(&env, obs, env.env_randomization = 0);
    CHECK(env.y == 688.0f && NEAR(obs[0], 688.0 / 720.0));
    /* Level 0 without randomization: lane 0 starts at x 0 going right at 1216 / 13 px a second,
     * lane 9 at the right edge going left; lane 4 is 1.35^4 times faster. */
    actions[0] = FW_NOOP;
    c_step(&env);
    const double slow = 4 * 1216.0 / 13.0 / 60.0;
    CHECK(NEAR(env.x[0][0], slow) && NEAR(env.x[9][0], 1216 - slow));
    CHECK(fabs(env.x[4][0] - slow * pow(1.35, 4)) < 1e-3 && NEAR(obs[4], slow / 1216));
    CHECK(obs[5] == 0.0f && obs[6] == 0.0f); /* level 0 uses one slot a lane */
    /* With the road clear, walking up takes 189 frames: +0.1 per lane, +1 at the top. */
    for (int l = 0; l < FW_LANES; l++) env.x[l][0] = 5000;
    float total = 0;
    for (int f = 0; f < 188; f++) total += fw_chicken(&env, FW_UP);
    CHECK(NEAR(total, 0.9) && env.lanes == 9 && env.score == 0);
    total += fw_chicken(&env, FW_UP);
    CHECK(NEAR(total, 2.0) && env.score == 1 && env.lanes == 0 && env.y == 688.0f);
    /* A car in lane 0 at the chicken's x: the chicken steps up into it: -0.01, stunned for 40
     * frames without control, pushed down 2.4 px a frame (to the bottom edge, 688). */
    env.x[0][0] = 304;
    CHECK(NEAR(fw_chicken(&env, FW_UP), -0.01) && env.hits == 1 && env.stun == 40);
    CHECK(NEAR(env.y, 688 - 720 / 3.5 / 60));
    CHECK(fw_chicken(&env, FW_UP) == 0.0f && NEAR(env.y, 688 - 720 / 3.5 / 60 + 2.4));
    for (int f = 0; f < 38; f++) CHECK(fw_chicken(&env, FW_UP) == 0.0f);
    CHECK(env.y == 688.0f && env.stun == 1);
    /* Difficulty 1: a hit sends the chicken back to the bottom. */
    env.difficulty = 1, env.stun = 0, env.x[0][0] = 5000;
    env.y = 500, env.x[2][0] = 304;
    fw_chicken(&env, FW_NOOP);
    CHECK(env.y == 688.0f && env.hits == 2);
    /* The game lasts 8,160 frames: 2,040 steps at frameskip 4, then truncation. */
    c_reset(&env);
    int steps = 0;
    do {
        c_step(&env);
        steps++;
    } while (!truncations[0]);
    CHECK(steps == 2040 && !terminals[0] && env.log.n == 1.0f);
    CHECK(env.log.episode_length == 8160.0f && env.log.up_action_frac == 0.0f);
    return 0;
""",
    )
