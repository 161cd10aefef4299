"""Rules of terraform (PufferLib 3.0's dozer terraforming task), checked in C on hand-set maps
against the rules table in csrc/terraform/terraform.h. The `run_c` fixture is in conftest.py."""

from __future__ import annotations

# One dozer on the default 64x64 map made flat (terrain 0; the 4x4 pads of height-1 targets
# stay), at rest at whole cell (20, 30) facing +x: its bucket covers x in {21, 22}, y in {29, 30}
# (between the pad rows 17..27 and 31..41, so every target there is 0).
# FLAT() re-measures and starts a new episode after the terrain is edited; ACT(a, s, b) sets the
# action and steps.
SETUP = """
    Terraform env = {0};
    static float obs[TF_OBS];
    OPEN(&env, obs, env.agents = 1);
    float *height = tf_height(&env), *terrain = tf_terrain(&env);
    TfDozer *d = &env.dozers[0];
#define AT(x, y) ((int)(y) * 64 + (int)(x))
#define FLAT()                                                             \\
    tf_measure(&env), tf_new_episode(&env);                                \\
    d->x = 20.0f, d->y = 30.0f;                                            \\
    tf_observe(&env)
#define ACT(a, s, b) actions[0] = (a), actions[1] = (s), actions[2] = (b), c_step(&env)
    memset(terrain, 0, 64 * 64 * sizeof(float));
    FLAT();
"""


def test_terraform_terrain_pads_spawn_and_observation(run_c) -> None:
    run_c(
        "terraform/terraform.h",
        """
    Terraform env = {0}, same = {0}, other = {0};
    static float obs[8 * TF_OBS], obs2[8 * TF_OBS], obs3[8 * TF_OBS];
    BIND(&env, obs);
    OPEN(&same, obs2, (void)0);
    OPEN(&other, obs3, (void)0);
    other.rng = 2, c_reset(&other);
    const float *terrain = tf_terrain(&env);
    /* 4x4 pads of 11x11 cells at 3 + 14k: 1,936 target cells of height 1. */
    float pads = 0.0f, volume = 0.0f, top = 0.0f;
    for (int i = 0; i < 64 * 64; i++) {
        pads += tf_target_at(&env, i % 64, i / 64), volume += terrain[i];
        top = terrain[i] > top ? terrain[i] : top;
        CHECK(terrain[i] >= 0.0f && terrain[i] <= 32.0f);
    }
    CHECK(pads == 1936.0f && tf_target_at(&env, 3, 3) == 1.0f && tf_target_at(&env, 13, 13) == 1);
    CHECK(tf_target_at(&env, 14, 14) == 0 && tf_target_at(&env, 17, 45) == 1);
    CHECK(tf_target_at(&env, 2, 5) == 0 && tf_target_at(&env, 59, 59) == 0);
    /* Scaled to the target's volume (no cell reached the 32 cap on this seed). */
    CHECK(top < 32.0f && fabs(volume - 1936.0) < 0.05);
    CHECK(env.num_agents == 8 && env.quadrants == 36 && env.tick == 0);
    /* Same seed, same terrain; another seed, another. */
    CHECK(memcmp(env.cells, same.cells, 2 * 64 * 64 * sizeof(float)) == 0);
    CHECK(memcmp(env.cells, other.cells, 64 * 64 * sizeof(float)) != 0);
    for (int i = 0; i < 8; i++) {
        const TfDozer *d = &env.dozers[i];
        const float *o = obs + i * TF_OBS;
        CHECK(d->x == floorf(d->x) && d->y == floorf(d->y) && terrain[AT(d->x, d->y)] == 0.0f);
        CHECK(d->speed == 0.0f && d->heading == 0.0f && d->load == 0.0f);
        /* The centre of the 11x11 view is the dozer's own cell. */
        CHECK(o[60] == 0.0f && o[121 + 60] == tf_target_at(&env, d->x, d->y) / 64.0f);
        CHECK(o[242] == d->x / 64.0f && o[243] == d->y / 64.0f && o[244] == 0.0f);
        const int q = ((int)d->y / 11) * 6 + (int)d->x / 11;
        float ones = 0.0f;
        for (int k = 0; k < 36; k++) {
            CHECK(NEAR(o[247 + k], env.start_volume[k] / 121.0f));
            ones += o[283 + k];
        }
        CHECK(ones == 1.0f && o[283 + q] == 1.0f);
    }
    c_close(&env), c_close(&same), c_close(&other);""",
        prelude="#define AT(x, y) ((int)(y) * 64 + (int)(x))",
    )


def test_terraform_terrain_is_pufferlibs_noise_at_a_seeded_offset(run_c) -> None:
    # PufferLib 3.0 reads its simplex noise from a random whole-cell offset in [0, 10000); the
    # map at offset (1234, 5678) before volume scaling, printed from their perlin_noise: its sum
    # and two cells. Ours draws the offset from the env's seed, then scales to the pads' volume.
    run_c(
        "terraform/terraform.h",
        """
    static float raw[64 * 64];
    simplex_heightmap(raw, 64, 64, 4.0f / 64.0f, TF_OCTAVES, 1234.0f, 5678.0f, TF_NOISE_RANGE,
                      TF_NOISE_FLOOR);
    double sum = 0.0;
    for (int i = 0; i < 64 * 64; i++) sum += raw[i];
    CHECK(fabs(sum - 4765.550) < 0.01 && NEAR(raw[AT(20, 10)], 3.8859));
    CHECK(NEAR(raw[AT(50, 40)], 7.1467));
    Terraform env = {0};
    static float obs[8 * TF_OBS];
    BIND(&env, obs);
    uint64_t rng = 1; /* the seed OPEN gives */
    const int ox = rng_int(&rng, 10000), oy = rng_int(&rng, 10000);
    simplex_heightmap(raw, 64, 64, 4.0f / 64.0f, TF_OCTAVES, (float)ox, (float)oy,
                      TF_NOISE_RANGE, TF_NOISE_FLOOR);
    float volume = 0.0f;
    for (int i = 0; i < 64 * 64; i++) volume += raw[i];
    const float *terrain = tf_terrain(&env);
    for (int i = 0; i < 64 * 64; i++)
        CHECK(fabsf(terrain[i] - fminf(32.0f, raw[i] * 1936.0f / volume)) < 1e-4f);
    c_close(&env);""",
        prelude="#define AT(x, y) ((int)(y) * 64 + (int)(x))",
    )


def test_terraform_view_scaling_and_edges(run_c) -> None:
    run_c(
        "terraform/terraform.h",
        SETUP
        + """
    /* Heights / 32 and (target - height) / 64, row-major from (x - 5, y - 5). */
    height[AT(21, 27)] = 8.0f, height[AT(18, 33)] = 16.0f;
    env.volume[13] = 60.5f;
    tf_observe(&env);
    CHECK(obs[2 * 11 + 6] == 0.25f && obs[121 + 2 * 11 + 6] == (1.0f - 8.0f) / 64.0f);
    CHECK(obs[8 * 11 + 3] == 0.5f && obs[121 + 8 * 11 + 3] == (1.0f - 16.0f) / 64.0f);
    /* Quadrant 13 (x 11..21, y 22..32) holds the dozer. */
    CHECK(obs[247 + 13] == 0.5f && obs[283 + 13] == 1.0f && obs[283 + 12] == 0.0f);
    /* Off the map reads 0 in both planes; the origin truncates toward zero: x = 2.5 puts
     * column 0 at x = -2, so columns 0 and 1 are off the map and column 2 is x = 0. */
    d->x = 2.5f, d->y = 0.0f, d->heading = 3.0f, d->speed = -1.0f, d->load = 25.0f;
    height[AT(0, 0)] = 4.0f;
    tf_observe(&env);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 11; c++) CHECK(obs[r * 11 + c] == 0.0f && obs[121 + r * 11 + c] == 0.0f);
    CHECK(obs[5 * 11 + 1] == 0.0f && obs[5 * 11 + 2] == 4.0f / 32.0f);
    CHECK(obs[243] == 0.0f && obs[242] == 2.5f / 64.0f && obs[244] == -0.5f);
    CHECK(NEAR(obs[245], 3.0 / (2 * 3.14159265358979)) && obs[246] == 0.25f);
    c_close(&env);""",
    )


def test_terraform_bucket_rewards_and_refusals(run_c) -> None:
    run_c(
        "terraform/terraform.h",
        SETUP
        + """
    const float s = 0.01f; /* reward_scale */
    for (int x = 21; x <= 22; x++)
        for (int y = 29; y <= 30; y++) height[AT(x, y)] = 3.0f;
    env.total_delta = 12.0f;
    /* Quadrants (11x11 blocks) 13 and 14 (x 11..21 and 22..32, y 22..32) hold 2 cells each. */
    const float volume13 = env.volume[13], volume14 = env.volume[14];
    /* Load at rest: 1 unit from each of the 4 cells, (1 - s) / 10 each. */
    ACT(2, 2, TF_LOAD);
    CHECK(NEAR(rewards[0], 4 * (1 - s) / 10) && d->load == 4.0f && height[AT(22, 30)] == 2.0f);
    CHECK(NEAR(env.total_delta, 8.0f) && NEAR(env.volume[13], volume13 - 2) && NEAR(env.volume[14], volume14 - 2));
    CHECK(terminals[0] == 0 && truncations[0] == 0);
    /* Unload at rest: 1 unit back into each, (s - 1) / 10 each. */
    ACT(2, 2, TF_UNLOAD);
    CHECK(NEAR(rewards[0], 4 * (s - 1) / 10) && d->load == 0.0f && height[AT(21, 29)] == 3.0f);
    /* An empty bucket cannot unload: -0.05 per cell. */
    ACT(2, 2, TF_UNLOAD);
    CHECK(NEAR(rewards[0], -0.2) && height[AT(21, 29)] == 3.0f);
    /* A cell holding <= 1 gives all of it; the bucket stops at 100, then refuses. */
    height[AT(21, 29)] = 0.25f, d->load = 99.0f;
    ACT(2, 2, TF_LOAD);
    /* (21, 29): 0.25 -> 0 (reward (0.25 - 0.25 s) / 10); (21, 30): 0.75 taken, load 100,
     * ((3 + 99.25 s) - (2.25 + 100 s)) / 10; the two cells at x = 22: -0.05 each. */
    CHECK(height[AT(21, 29)] == 0.0f && height[AT(21, 30)] == 2.25f && d->load == 100.0f);
    CHECK(NEAR(rewards[0], (0.25 - 0.25 * s) / 10 + (0.75 - 0.75 * s) / 10 - 0.1));
    /* Cells are capped at 32 when unloading. */
    height[AT(21, 29)] = 31.5f, d->load = 10.0f;
    ACT(2, 2, TF_UNLOAD);
    CHECK(height[AT(21, 29)] == 32.0f && height[AT(21, 30)] == 3.25f && d->load == 6.5f);
    memcpy(height, terrain, 64 * 64 * sizeof(float));
    /* Moving forward (speed 1 after this step's bucket): unloading is refused next step,
     * loading allowed; reversing refuses loading. */
    ACT(4, 2, TF_NONE);
    CHECK(d->speed == 1.0f && d->x == 21.0f && rewards[0] == 0.0f);
    ACT(2, 2, TF_UNLOAD);
    CHECK(NEAR(rewards[0], -4 * 0.05) && d->load == 6.5f);
    d->speed = -1.0f;
    ACT(2, 2, TF_LOAD);
    CHECK(NEAR(rewards[0], -4 * 0.05) && d->load == 6.5f);
    /* A bucket centre off whole cells covers 3x3; half off the map, only the cells on it. */
    memcpy(height, terrain, 64 * 64 * sizeof(float));
    d->x = 20.5f, d->y = 30.5f, d->speed = 0.0f, d->load = 0.0f;
    ACT(2, 2, TF_UNLOAD);
    CHECK(NEAR(rewards[0], -9 * 0.05));
    d->x = 62.0f, d->y = 30.0f, d->speed = 0.0f;
    ACT(2, 2, TF_UNLOAD);
    CHECK(NEAR(rewards[0], -2 * 0.05));
    c_close(&env);""",
    )


def test_terraform_driving_blocking_and_teleport(run_c) -> None:
    run_c(
        "terraform/terraform.h",
        SETUP
        + """
    /* Speed += (a0 - 2) / 2, clipped at 2; position += speed (cos, sin)(heading). */
    ACT(3, 2, TF_NONE);
    CHECK(d->speed == 0.5f && d->x == 20.5f);
    ACT(4, 2, TF_NONE), ACT(4, 2, TF_NONE);
    CHECK(d->speed == 2.0f && d->x == 24.0f);
    ACT(0, 2, TF_NONE);
    CHECK(d->speed == 1.0f && d->x == 25.0f);
    /* Steering: heading += (a1 - 2) / 10, wrapped into [0, 2 pi]. */
    d->speed = 0.0f;
    ACT(2, 0, TF_NONE);
    CHECK(NEAR(d->heading, 2 * 3.14159265f - 0.2f));
    ACT(2, 4, TF_NONE), ACT(2, 3, TF_NONE);
    CHECK(NEAR(d->heading, 0.1f) && d->x == 25.0f);
    /* A step of more than 5 in the 3x3 box around the destination stops the dozer. */
    d->heading = 0.0f, d->x = 20.0f;
    height[AT(22, 31)] = 6.0f;
    ACT(4, 2, TF_NONE);
    CHECK(d->speed == 0.0f && d->x == 20.0f);
    height[AT(22, 31)] = 5.0f; /* 5 is climbable */
    ACT(4, 2, TF_NONE);
    CHECK(d->speed == 1.0f && d->x == 21.0f);
    /* A cliff one cell ahead; cells in the last column never block. */
    height[AT(22, 31)] = 0.0f, height[AT(22, 30)] = 9.0f, d->x = 21.0f, d->speed = 1.5f;
    ACT(2, 2, TF_NONE);
    CHECK(d->speed == 0.0f && d->x == 21.0f);
    height[AT(22, 30)] = 0.0f, height[AT(63, 30)] = 9.0f, d->x = 61.0f, d->speed = 1.0f;
    ACT(4, 2, TF_NONE);
    CHECK(d->speed == 2.0f && d->x == 63.0f);
    /* Moving off the map clamps to [0, 63]. */
    ACT(2, 2, TF_NONE);
    CHECK(d->x == 63.0f && d->speed == 2.0f);
    d->heading = 3.14159265f, d->speed = -2.0f;
    ACT(2, 2, TF_NONE);
    CHECK(d->x == 63.0f);
    /* Every 512th step the dozer jumps to a flat whole cell, keeping speed, heading and load. */
    height[AT(63, 30)] = 0.0f;
    for (int x = 0; x < 64; x++) height[AT(x, 10)] = 2.0f;
    d->x = 30.0f, d->y = 30.0f, d->speed = 0.0f, d->heading = 1.0f, d->load = 7.0f;
    env.tick = 510;
    ACT(2, 2, TF_NONE);
    CHECK(d->x == 30.0f && d->y == 30.0f);
    ACT(2, 2, TF_NONE);
    CHECK(env.tick == 512 && (d->x != 30.0f || d->y != 30.0f));
    CHECK(d->x == floorf(d->x) && d->y == floorf(d->y) && height[AT(d->x, d->y)] == 0.0f);
    CHECK(d->heading == 1.0f && d->load == 7.0f);
    c_close(&env);""",
    )


def test_terraform_episode_ends_and_log(run_c) -> None:
    run_c(
        "terraform/terraform.h",
        SETUP
        + """
    /* Timed end at step reset_frequency: the step takes no action, pays 0, truncates. */
    env.reset_frequency = 5;
    for (int x = 21; x <= 22; x++)
        for (int y = 29; y <= 30; y++) terrain[AT(x, y)] = 3.0f;
    FLAT();
    const float initial = env.initial_delta;
    CHECK(initial == 1936.0f + 12.0f);
    ACT(2, 2, TF_LOAD);
    CHECK(NEAR(env.progress, 4.0f / initial) && d->load == 4.0f);
    for (int t = 2; t <= 4; t++) ACT(2, 2, TF_NONE);
    CHECK(rewards[0] == 0.0f && truncations[0] == 0 && env.log.n == 0.0f);
    ACT(2, 2, TF_LOAD);
    CHECK(truncations[0] == 1 && terminals[0] == 0 && rewards[0] == 0.0f && env.tick == 0);
    CHECK(env.log.n == 1.0f && env.log.episode_length == 5.0f);
    CHECK(NEAR(env.log.score, 4.0f / initial) && env.log.perf == env.log.score);
    CHECK(NEAR(env.log.episode_return, 4 * 0.99f / 10));
    /* The new episode restores the heights and empties the bucket. */
    CHECK(height[AT(21, 29)] == 3.0f && d->load == 0.0f && env.total_delta == initial);
    CHECK(height[AT(d->x, d->y)] == 0.0f && obs[283 + ((int)d->y / 11) * 6 + (int)d->x / 11] == 1);
    /* Solved (total |height - target| < 0.01): the next step pays +1 to all and is terminal. */
    memset(&env.log, 0, sizeof(env.log));
    env.total_delta = 0.005f;
    ACT(2, 2, TF_NONE);
    CHECK(rewards[0] == 1.0f && terminals[0] == 1 && truncations[0] == 0);
    CHECK(env.log.n == 1.0f && env.log.episode_length == 1.0f && env.log.episode_return == 1.0f);
    /* reset_frequency 0: no timed end. */
    env.reset_frequency = 0;
    for (int t = 0; t < 600; t++) ACT(2, 2, TF_NONE), CHECK(truncations[0] == 0);
    c_close(&env);""",
    )
