"""Rules of school (PufferLib 3.0's armies over a height-map), checked in C on hand-placed units
against the rules table of csrc/school/school.h."""

from __future__ import annotations

# PUT places unit i at rest, facing +z and level; PARK moves every unit out of reach: army 0 at
# x = -1.5, army 1 at x = +1.5 (3 apart, beyond every range), air units at y = 1.
PRELUDE = r"""
static void put(School *env, int i, float x, float y, float z) {
    SchoolUnit *u = &env->unit[i];
    u->x = x, u->y = y, u->z = z, u->vx = u->vy = u->vz = 0.0f;
    u->q.w = 1.0f, u->q.x = u->q.y = u->q.z = 0.0f;
}
static float ground(School *env, float x, float z) { return school_ground(env, x, z); }
static void put_ground(School *env, int i, float x, float z) { put(env, i, x, ground(env, x, z), z); }
static void park(School *env) {
    for (int i = 0; i < env->agents; i++) {
        const float x = env->unit[i].army ? 1.5f : -1.5f;
        if (school_is_ground(env->unit[i].type)) put_ground(env, i, x, 0.0f);
        else put(env, i, x, 1.0f, 0.0f);
    }
    memset(actions, 0, sizeof(actions));
}
"""


def test_school_units_spawn_and_observation_layout(run_c) -> None:
    run_c(
        "school/school.h",
        """
    static School env;
    static float obs[512 * SCHOOL_OBS];
    BIND(&env, obs); /* defaults: 512 units, 2 armies, box 4 x 4 x 4 */
    CHECK(env.num_agents == 512 && SCHOOL_OBS == 75 && env.terrain_w == 512);
    const int types[][2] = {{0, SCHOOL_MOTHERSHIP}, {1, SCHOOL_TANK}, {4, SCHOOL_TANK},
        {5, SCHOOL_ARTILLERY}, {6, SCHOOL_ARTILLERY}, {7, SCHOOL_BOMBER}, {10, SCHOOL_BOMBER},
        {11, SCHOOL_FIGHTER}, {14, SCHOOL_FIGHTER}, {15, SCHOOL_INFANTRY}, {32, SCHOOL_INFANTRY},
        {33, SCHOOL_DRONE}, {63, SCHOOL_DRONE}, {64, SCHOOL_MOTHERSHIP}, {256, SCHOOL_MOTHERSHIP}};
    for (int k = 0; k < 15; k++) CHECK(env.unit[types[k][0]].type == types[k][1]);
    CHECK(env.unit[255].army == 0 && env.unit[256].army == 1);
    const SchoolUnit *tank = &env.unit[1];
    CHECK(tank->health == 2.0f && tank->damage == 0.5f && tank->range == 0.25f);
    CHECK(tank->max_turn == 0.25f && tank->max_speed == 0.75f && env.unit[0].health == 10.0f);
    /* Bases inside [-1.5, 1.5], 2.0 or more apart, on the ground. */
    for (int f = 0; f < 2; f++) CHECK(fabsf(env.base[f].x) <= 1.5f && fabsf(env.base[f].z) <= 1.5f);
    CHECK(hypotf(env.base[0].x - env.base[1].x, env.base[0].z - env.base[1].z) >= 2.0f);
    CHECK(env.base[0].y == ground(&env, env.base[0].x, env.base[0].z));
    /* Ground units on the ground at their base, air units 0.2 above, drones on the mothership. */
    CHECK(tank->x == env.base[0].x && tank->z == env.base[0].z && tank->y == env.base[0].y);
    CHECK(NEAR(env.unit[7].y, env.base[0].y + 0.2) && env.unit[300].x == env.unit[256].x);
    CHECK(env.unit[100].x == env.unit[64].x && env.unit[100].y == env.unit[64].y);
    /* The tank's row: base offsets, centroid offsets, 19 stats, one-hot, zeros past 39. */
    const float *o = obs + SCHOOL_OBS;
    CHECK(o[0] == 0.0f && o[1] == 0.0f && o[2] == 0.0f);
    CHECK(o[3] == env.base[1].x - tank->x && o[5] == env.base[1].z - tank->z);
    float cx = 0.0f, cx1 = 0.0f;
    for (int i = 0; i < 256; i++) cx += 2.0f * env.unit[i].x / 512.0f;
    for (int i = 256; i < 512; i++) cx1 += 2.0f * env.unit[i].x / 512.0f;
    CHECK(NEAR(o[6], tank->x - cx) && NEAR(o[9], tank->x - cx1));
    CHECK(o[12] == 0.0f && o[15] == 1.0f && o[16] == 0.0f && o[19] == tank->x && o[22] == 0.0f);
    CHECK(o[24] == 2.0f && o[25] == 0.25f && o[26] == 0.75f && o[27] == 0.5f && o[28] == 0.25f);
    CHECK(o[29] == 0.0f && o[30] == 0.0f);
    for (int k = 0; k < 8; k++) CHECK(o[31 + k] == (k == SCHOOL_TANK));
    for (int k = 39; k < SCHOOL_OBS; k++) CHECK(o[k] == 0.0f);
    /* Army 1's rows list their own centroid first. */
    CHECK(NEAR(obs[300 * SCHOOL_OBS + 6], env.unit[300].x - cx1));
    c_close(&env);
    return 0;
""",
        PRELUDE,
    )


def test_school_terrain_is_pufferlibs_map(run_c) -> None:
    # Texel heights of PufferLib 3.0's school map (its perlin_noise over its simplex noise, the
    # same for every run), printed from their code; the terrain's slopes decide how often air
    # units fly into the ground, so another map of the same octaves is another task.
    run_c(
        "school/school.h",
        """
    static School env;
    static float obs[512 * SCHOOL_OBS];
    BIND(&env, obs);
    const float *t = school_terrain(&env);
    const int at[7][2] = {{0, 0}, {100, 37}, {255, 255}, {511, 0}, {0, 511}, {400, 300}, {511, 511}};
    const float height[7] = {211.3626f, 178.0244f, 67.4921f, 224.8276f, 15.8639f, 141.9014f,
                             73.2031f};
    for (int k = 0; k < 7; k++) CHECK(fabsf(t[at[k][0] * 512 + at[k][1]] - height[k]) < 1e-3f);
    /* The noise itself, against their noise2 (negative lattice cells included). */
    CHECK(NEAR(simplex2(0.3f, 0.7f), 0.2552207) && NEAR(simplex2(12.25f, 3.5f), -0.1245954));
    CHECK(NEAR(simplex2(9999.5f, 1234.75f), 0.0074556) && NEAR(simplex2(-2.6f, 5.1f), -0.7531397));
    /* A unit 0.2 above the ground at texel (row 100, column 37): x = 37 / 128 - 2. */
    CHECK(NEAR(school_ground(&env, 37.5f / 128.0f - 2.0f, 100.5f / 128.0f - 2.0f),
               (178.0244 - 256.0) / 128.0));
    c_close(&env);
    return 0;
""",
    )


def test_school_driving_and_flying(run_c) -> None:
    run_c(
        "school/school.h",
        """
    static School env;
    static float obs[64 * SCHOOL_OBS];
    OPEN(&env, obs, env.agents = 64; env.armies = 1); /* one army: nothing to shoot */
    park(&env);
    /* Tank (max_speed 0.75): 0.0075 a step along +z, on the ground. */
    put_ground(&env, 1, 0.0f, 0.0f);
    put(&env, 11, 0.5f, 1.0f, 0.0f); /* fighter, level */
    c_step(&env);
    CHECK(env.unit[1].x == 0.0f && NEAR(env.unit[1].z, 0.0075) && env.unit[1].speed == 0.0075f);
    CHECK(env.unit[1].y == ground(&env, 0.0f, env.unit[1].z));
    CHECK(NEAR(obs[SCHOOL_OBS + 8], 0.75)); /* vz / 0.01 (one army: stats start at 6) */
    /* Level flight: speed * (forward + up - (0, 1, 0)) is 0.0075 along +z, height kept. */
    CHECK(env.unit[11].y == 1.0f && NEAR(env.unit[11].z, 0.0075) && env.unit[11].vy == 0.0f);
    /* a1 = -1 turns the tank by +0.1 rad about y: heading (sin 0.1, 0, cos 0.1). */
    actions[3 * 1 + 1] = -1.0f;
    /* a0 = 1 pitches the fighter by max_turn * 0.1 = 0.1 rad: nose up. */
    actions[3 * 11 + 0] = 1.0f;
    c_step(&env);
    CHECK(NEAR(env.unit[1].vx, 0.0075 * sin(0.1)) && NEAR(env.unit[1].vz, 0.0075 * cos(0.1)));
    CHECK(NEAR(env.unit[11].vy, 0.0075 * sin(0.1)) && NEAR(env.unit[11].vz, 0.0075 * cos(0.1)));
    CHECK(NEAR(env.unit[11].y, 1.0 + 0.0075 * sin(0.1)));
    /* The mothership pitches at max_turn 0.5: 0.05 rad, at 0.005 a step. */
    put(&env, 0, -0.5f, 1.0f, 0.0f);
    actions[0] = 1.0f;
    c_step(&env);
    CHECK(NEAR(env.unit[0].vy, 0.005 * sin(0.05)) && NEAR(env.unit[0].vz, 0.005 * cos(0.05)));
    c_close(&env);
    return 0;
""",
        PRELUDE,
    )


def test_school_episode_ends_respawn_and_log(run_c) -> None:
    run_c(
        "school/school.h",
        """
    static School env;
    static float obs[64 * SCHOOL_OBS];
    OPEN(&env, obs, env.agents = 64; env.armies = 1);
    park(&env);
    const SchoolVec base = env.base[0];
    /* A fighter under the ground: -1, terminal, a collision; respawns 0.2 above its base. */
    put(&env, 11, 0.5f, ground(&env, 0.5f, 0.5f) - 0.1f, 0.5f);
    env.unit[11].episode_length = 9;
    c_step(&env);
    CHECK(rewards[11] == -1.0f && terminals[11] && !truncations[11]);
    CHECK(env.unit[11].x == base.x && NEAR(env.unit[11].z, base.z + 0.0075));
    CHECK(NEAR(env.unit[11].y, base.y + 0.2) && env.unit[11].episode_length == 0);
    CHECK(env.log.n == 1.0f && env.log.collision_rate == 1.0f && env.log.oob_rate == 0.0f);
    CHECK(env.log.episode_return == -1.0f && env.log.episode_length == 10.0f);
    CHECK(env.log.score == 0.0f); /* a crash scores 0 */
    CHECK(obs[11 * SCHOOL_OBS + 23] == -1.0f && obs[11 * SCHOOL_OBS + 24] == 1.0f);
    /* A drone past 0.95 size_x: -1, out of bounds; it respawns on unit 0 (its mothership). */
    put(&env, 40, 1.92f, 1.0f, 0.0f);
    c_step(&env);
    CHECK(rewards[40] == -1.0f && terminals[40] && env.log.oob_rate == 1.0f);
    CHECK(env.unit[40].x == env.unit[0].x && env.unit[40].y == env.unit[0].y);
    CHECK(env.log.n == 2.0f && env.log.score == -1.0f);
    /* Above 0.95 size_y = 1.9: out of bounds too. Just inside: nothing. */
    put(&env, 12, 0.0f, 1.91f, 0.5f);
    put(&env, 13, 0.0f, 1.89f, -0.5f);
    c_step(&env);
    CHECK(rewards[12] == -1.0f && terminals[12] && rewards[13] == 0.0f && !terminals[13]);
    /* Health at 0: terminal with reward 0, full health again. */
    env.unit[1].health = 0.0f;
    c_step(&env);
    CHECK(rewards[1] == 0.0f && terminals[1] && env.unit[1].health == 2.0f);
    CHECK(env.log.n == 4.0f && env.log.collision_rate == 1.0f && env.log.oob_rate == 2.0f);
    /* With probability 1/9000 a step restarts everything: every unit truncated, at its base. */
    uint64_t r = 0, probe = 0;
    do probe = ++r; while (rng_int(&probe, 9000) != 0);
    park(&env);
    env.rng = r;
    c_step(&env);
    for (int i = 0; i < 64; i++) CHECK(truncations[i] && !terminals[i]);
    CHECK(env.unit[1].x == env.base[0].x && env.unit[1].episode_length == 0);
    c_close(&env);
    return 0;
""",
        PRELUDE,
    )


def test_school_attacks_by_unit_type(run_c) -> None:
    run_c(
        "school/school.h",
        """
    static School env;
    static float obs[128 * SCHOOL_OBS];
    OPEN(&env, obs, env.agents = 128; env.armies = 2); /* army 0: 0-63, army 1: 64-127 */
    park(&env);
    env.base[0] = (SchoolVec){-1.5f, ground(&env, -1.5f, -1.5f), -1.5f};
    env.base[1] = (SchoolVec){1.5f, ground(&env, 1.5f, 1.5f), 1.5f};
    /* Tank 1 faces +z; enemy infantry 79 and 80 both ahead within 0.25: the lower index is hit. */
    put_ground(&env, 1, -0.8f, -0.8f);
    put_ground(&env, 79, -0.8f, -0.65f);
    put_ground(&env, 80, -0.79f, -0.64f);
    /* Bomber 7 (air) hits the ground unit within 0.1 in x, z below it, skipping enemy fighter
     * 75 just as close (bombers never hit air). */
    put(&env, 7, 0.8f, 1.0f, 0.8f);
    put(&env, 75, 0.85f, 1.0f, 0.75f);
    put_ground(&env, 81, 0.85f, 0.8f);
    /* Artillery 5 hits air units with cos(30 deg) d_xz < dy <= d_xz: fighters 76 (dy = 1.1
     * d_xz), 77 (0.8 d_xz) miss, 78 (0.93 d_xz) is hit. */
    put_ground(&env, 5, -0.8f, 0.8f);
    const float gy = env.unit[5].y;
    put(&env, 76, -0.5f, gy + 1.1f * 0.3f, 0.8f);
    put(&env, 77, -0.8f, gy + 0.8f * 0.3f, 1.1f);
    put(&env, 78, -1.1f, gy + 0.93f * 0.3f, 0.8f);
    /* Drone 33 (range 0.15, aimed within 30 deg of its velocity): enemy drone 97 is 63 deg off,
     * 98 dead ahead. */
    put(&env, 33, 0.8f, 0.5f, -0.8f);
    put(&env, 97, 0.9f, 0.5f, -0.75f);
    put(&env, 98, 0.8f, 0.5f, -0.7f);
    c_step(&env);
    CHECK(env.unit[1].target == 79 && rewards[1] == 0.25f && NEAR(env.unit[79].health, -0.3));
    CHECK(env.unit[80].health == 0.2f && rewards[79] == 0.0f);
    CHECK(env.unit[7].target == 81 && rewards[7] == 0.25f && NEAR(env.unit[81].health, -0.8));
    CHECK(env.unit[75].health == 1.0f);
    CHECK(env.unit[5].target == 78 && NEAR(env.unit[78].health, -1.0));
    CHECK(env.unit[76].health == 1.0f && env.unit[77].health == 1.0f);
    CHECK(env.unit[33].target == 98 && NEAR(env.unit[98].health, 0.3));
    CHECK(env.unit[97].health == 0.4f && env.unit[98].target == -1);
    CHECK(NEAR(obs[SCHOOL_OBS + 29], 0.25) && NEAR(env.unit[1].episode_return, 0.25));
    /* The units shot to 0 or below end next step with reward 0 and respawn at their base. */
    park(&env);
    c_step(&env);
    CHECK(terminals[79] && rewards[79] == 0.0f && terminals[81] && terminals[78]);
    CHECK(!terminals[98] && env.unit[79].x == env.base[1].x && env.unit[79].health == 0.2f);
    c_close(&env);
    return 0;
""",
        PRELUDE,
    )
