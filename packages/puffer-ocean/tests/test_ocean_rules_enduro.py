"""Rules of enduro (PufferLib 3.0's Enduro task), checked in C on scripted play and hand-placed
cars against the rules table in csrc/enduro/enduro.h. The `run_c` fixture is in conftest.py."""

from __future__ import annotations

# quiet(): no cars and no spawns (the timer never reaches an interval), mid-morning of day 1,
# far from the day's end; the road is straight and no curve can start for 750 frames.
# put() places a car of `lane` at row y, as if it had been there a frame already.
PRELUDE = """
static void quiet(Enduro *e) {
    e->num_cars = 0, e->spawn_timer = -1e9f;
    e->frame = 600, e->stage = e->prev_stage = 0;
}
static EdCar *put(Enduro *e, int lane, float y) {
    EdCar *c = &e->cars[e->num_cars++];
    c->lane = lane, c->y = c->last_y = y, c->x = e->vp_x, c->passed = 0, c->color = 0;
    return c;
}
#define ACT(a) (actions[0] = (a), c_step(&env))
#define RATE (10.0f / 675.0f) /* half of fire's speed step per frame in gear 0 */
"""
SETUP = """
    Enduro env = {0};
    static float obs[ED_OBS];
    BIND(&env, obs);
    quiet(&env);
"""


def play(run_c, body: str) -> None:
    """Runs `body` on a fresh quiet env (SETUP), with PRELUDE's helpers, then closes it."""
    run_c("enduro/enduro.h", SETUP + body + "\n    c_close(&env);", prelude=PRELUDE)


def test_enduro_start_observation_and_scaling(run_c) -> None:
    play(
        run_c,
        """
    CHECK(env.speed == -2.5f && env.y == 143.0f && env.x == 69.0f && env.gear == 0);
    CHECK(env.day == 1 && env.quota == 200 && env.num_agents == 1);
    /* reset: a random frame of the day, written into the observation */
    CHECK(env.frame == 600 && obs[62] < 1.0f && obs[62] >= 0.0f);
    CHECK(obs[1] == 0.0f && obs[2] == 0.0f && obs[7] == 0.5f);
    for (int i = 0; i < 10; i++) {
        const float *s = obs + 8 + 5 * i;
        CHECK(s[0] == 0.5f && s[1] == 0.5f && s[2] == 0 && s[3] == 0 && s[4] == 0);
    }
    CHECK(obs[58] == 0.5f && obs[59] == -1.0f && obs[60] == 0.0f && obs[61] == 0.0f);
    CHECK(obs[63] == 1.0f && obs[64] == 1.0f && obs[65] == 1.0f && obs[66] == 1.0f);
    CHECK(obs[67] == 0.0f);
    ACT(ED_NOOP);
    CHECK(NEAR(obs[62], 601.0 / 13920) && rewards[0] == 0.05f);
    /* x between the step's starting edges; edges / 152 (right minus the car's width) */
    CHECK(NEAR(obs[0], (69 - env.last_left) / (env.last_right - env.last_left)));
    CHECK(NEAR(obs[5], env.last_left / 152) && NEAR(obs[6], env.last_right / 152));
    float left, right;
    ed_edges(&env, env.y, 0, &left, &right);
    CHECK(NEAR(obs[3], left / 152) && NEAR(obs[4], (right - 16) / 152));
    /* A car 30 rows ahead in the player's lane: slot 0 and lane 1's distance. */
    EdCar *c = put(&env, 1, 113.0f);
    c->last_y = 115.0f;
    ed_observe(&env);
    CHECK(NEAR(obs[8], (c->x - 8 - env.last_left) / (env.last_right - env.last_left)));
    CHECK(NEAR(obs[9], (154 - (113 - 5.5)) / 102) && obs[10] == 0.0f);
    CHECK(NEAR(obs[11], 2.0 / 102) && obs[12] == 1.0f);
    CHECK(NEAR(obs[65], 30.0 / 102) && obs[64] == 1.0f && obs[66] == 1.0f);
    /* The quota after day 1 reads 300 / 200. */
    env.quota = 300, ed_observe(&env);
    CHECK(obs[63] == 1.5f);""",
    )


def test_enduro_speed_gears_brake_steering_and_odometer(run_c) -> None:
    play(
        run_c,
        """
    /* Fire: 4 x 10 / 11.25 / 60 a frame in gear 0, half that in gears 1-3; gears end at
     * 1.06, 3.28, 6.17, 7.5; top speed after about 4 / 4 + 2.5 / 2 + 3.25 / 2 + 1.5 / 2 s. */
    int frames = 0, capped = 0;
    while (env.speed < 7.5f && frames < 1000) {
        const float before = env.speed;
        const int gear = env.gear;
        ACT(ED_FIRE), frames++;
        const float step = env.speed - before;
        if (gear == 0 && env.gear == 0) CHECK(NEAR(step, 4 * RATE) || env.speed == ED_GEAR_TOP[0]);
        if (env.gear > 0 && !NEAR(step, 2 * RATE)) capped++;
        CHECK(env.speed <= ED_GEAR_TOP[env.gear] && rewards[0] == 0.05f);
    }
    CHECK(frames >= 276 && frames <= 282 && env.gear == 3 && capped <= 3);
    CHECK(NEAR(ED_GEAR_TOP[0], 1.0556) && NEAR(ED_GEAR_TOP[1], 3.2778));
    CHECK(NEAR(ED_GEAR_TOP[2], 6.1667) && ED_GEAR_TOP[3] == 7.5f);
    /* y = 143 - 9 (speed + 2.5) / 10 */
    CHECK(env.y == 134.0f && obs[1] == 1.0f && obs[2] == 1.0f);
    /* Fire at top speed changes nothing; steering moves (speed + 2.5) / 10 + 0.3 px. */
    float x = env.x;
    ACT(ED_RIGHTFIRE);
    CHECK(env.speed == 7.5f && NEAR(env.x, x + 1.3));
    x = env.x, ACT(ED_LEFT);
    CHECK(NEAR(env.x, x - 1.3));
    /* The odometer: +2 a frame at speed >= 2, +1 below. */
    int odo = env.score;
    ACT(ED_NOOP);
    CHECK(env.score == odo + 2);
    /* Down: -0.01 a frame; the gear stays. */
    ACT(ED_DOWN);
    CHECK(NEAR(env.speed, 7.49) && env.gear == 3);
    ACT(ED_DOWNLEFT);
    CHECK(NEAR(env.speed, 7.48));
    env.speed = 0.5f, ACT(ED_NOOP), odo = env.score, ACT(ED_NOOP);
    CHECK(env.score == odo + 1 && NEAR(env.y, 143 - 0.9 * 3.0));
    /* Gears never go down: from 0.5 fire adds the gear-3 step. */
    ACT(ED_FIRE);
    CHECK(NEAR(env.speed, 0.5 + 2 * RATE));
    /* Down does nothing at -2.5; steering at -2.5 moves 0.3 px. */
    env.speed = -2.5f, ACT(ED_DOWN);
    CHECK(env.speed == -2.5f);
    x = env.x, ACT(ED_RIGHT);
    CHECK(NEAR(env.x, x + 0.3));
    CHECK(env.terminals[0] == 0 && env.truncations[0] == 0 && env.edge_hits == 0);""",
    )


def test_enduro_edge_crash_lock_and_sticky_penalty(run_c) -> None:
    play(
        run_c,
        """
    env.speed = 2.0f, env.gear = 2;
    int frames = 0;
    do ACT(ED_LEFT), frames++;
    while (env.edge_hits == 0 && frames < 500);
    /* Touching the edge: -0.5 (beside the lane's +0.05), speed - 1.25, pushed 1 px inside. */
    CHECK(env.edge_hits == 1 && NEAR(rewards[0], 0.05 - 0.5) && env.edge_lock == 20);
    CHECK(NEAR(env.speed, 0.75) && NEAR(env.x, env.last_left + 1) && env.drift == 0);
    /* 20 frames without control, drifting 0.12 px a frame towards the far (right) edge (0.25 on
     * the last, whose lock already reads 0, as theirs), each paying the lock penalty; fire is
     * ignored. */
    for (int i = 0; i < 20; i++) {
        const float x = env.x;
        ACT(ED_FIRE);
        CHECK(env.speed == 0.75f && env.drift == 1 && env.edge_lock == 19 - i);
        CHECK(NEAR(env.x, x + (i < 19 ? 0.12 : 0.25)) && NEAR(rewards[0], 0.05 - 0.01));
    }
    ACT(ED_FIRE);
    CHECK(NEAR(env.speed, 0.75 + 2 * RATE) && env.edge_hits == 1);
    /* Their reset of the lock penalty is unreachable: -0.01 stays for the episode. */
    for (int i = 0; i < 50; i++) ACT(ED_NOOP), CHECK(NEAR(rewards[0], 0.04));
    /* At -2.5 an edge crash keeps the speed at -2.5. */
    env.speed = -2.5f;
    frames = 0;
    do ACT(ED_RIGHT), frames++;
    while (env.edge_hits == 1 && frames < 2000);
    CHECK(env.speed == -2.5f && NEAR(env.x, env.last_right - 1) && env.edge_lock == 20);""",
    )


def test_enduro_passing_passed_car_crash_and_removal(run_c) -> None:
    play(
        run_c,
        """
    /* Speed 5: the player's rear is at 143 - 6.75 + 11 = 147.25. A car in lane 2 just above it
     * moves 5 x 0.75 x 0.9 depth px a frame and crosses: +1, quota - 1, +0.001 a frame after. */
    env.speed = 5.0f, env.gear = 3, env.y = 136.25f;
    put(&env, 2, 146.0f);
    ACT(ED_NOOP);
    CHECK(env.passed == 1 && env.quota == 199 && env.cars[0].passed == 1);
    CHECK(NEAR(rewards[0], 0.05 + 1 + 0.001));
    ACT(ED_NOOP);
    CHECK(NEAR(rewards[0], 0.05 + 0.001) && env.quota == 199);
    /* A second pass: the bonus grows to 0.002 a frame. */
    put(&env, 0, 146.5f);
    ACT(ED_NOOP);
    CHECK(env.passed == 2 && NEAR(rewards[0], 0.05 + 1 + 0.002));
    /* Removed 55 px below the road (y > 209). */
    env.cars[0].y = env.cars[0].last_y = 208.5f;
    ACT(ED_NOOP);
    CHECK(env.num_cars == 1 && env.cars[0].lane == 0);
    env.num_cars = 0;
    /* A car ahead in the player's lane: no lane reward. */
    put(&env, 1, 90.0f);
    ACT(ED_NOOP);
    CHECK(NEAR(rewards[0], 0.002) && obs[12] == 1.0f);
    env.num_cars = 0;
    /* Reversing (speed -1): a car crossing the player's top costs -0.1 and gives a car back to
     * the quota; with the quota full (200 on day 1) it is only counted. */
    env.speed = -1.0f, ACT(ED_NOOP);
    env.quota = 200;
    put(&env, 2, env.y + 0.5f);
    ACT(ED_NOOP);
    CHECK(env.passed_by == 1 && env.quota == 200 && NEAR(rewards[0], 0.05 + 0.002));
    env.quota = 150, env.num_cars = 0;
    put(&env, 2, env.y + 0.5f);
    ACT(ED_NOOP);
    CHECK(env.passed_by == 2 && env.quota == 151 && NEAR(rewards[0], 0.05 - 0.1 + 0.002));
    /* Reversing, a car behind the player's rear moves to the far lane (the player, in lane 1,
     * is left of the road's centre) and skips its update; one at y <= 64 goes. */
    env.num_cars = 0;
    put(&env, 1, env.y + 20.0f), put(&env, 2, 64.05f);
    ACT(ED_NOOP);
    CHECK(env.lane == 1 && env.num_cars == 1 && env.cars[0].lane == 2);
    CHECK(env.cars[0].last_y == env.y + 20.0f);
    /* A car crash: -0.5, speed -1.5, 90 frames without control, the bonus gone; the drift
     * clears the cars behind in the middle lane and the lane it heads for. */
    env.num_cars = 0, env.speed = 0.0f;
    ACT(ED_NOOP);
    EdCar *hit = put(&env, 1, env.y + 2.0f);
    hit->x = 0; /* (never read by the rules) */
    put(&env, 0, env.y + 4.0f);
    ACT(ED_NOOP);
    CHECK(env.car_hits == 1 && NEAR(rewards[0], 0.05 - 0.5) && env.speed == -1.5f);
    CHECK(env.car_lock == 90 && env.bonus == 0.0f && env.bonus_on == 0 && env.drift == 0);
    ACT(ED_FIRE);
    CHECK(env.car_lock == 89 && env.speed == -1.5f && NEAR(rewards[0], 0.05 - 0.01));
    const int right = env.drift == 1;
    CHECK(env.num_cars == (right ? 1 : 0));
    /* Fire stays ignored for the lock (the drift may meet an edge: the road slides under the
     * car, and that crash drops the speed further). */
    for (int i = 0; i < 89; i++) ACT(ED_FIRE), CHECK(env.speed <= -1.5f);
    CHECK(env.car_lock == 0 && env.edge_lock == 0 && env.car_hits == 1);
    const float speed = env.speed;
    ACT(ED_FIRE);
    CHECK(env.speed > speed);""",
    )


def test_enduro_day_stages_quota_and_episode_end(run_c) -> None:
    play(
        run_c,
        """
    /* Stages start at 0, 20, 40, 60, 100, 108, 114, 116, 120, 124, 130, 134, 138, 170, 198,
     * 214 s; the day wraps at 232 s = 13,920 frames. */
    static const int starts[16] = {0,    1200, 2400, 3600, 6000,  6480,  6840,  6960,
                                   7200, 7440, 7800, 8040, 8280, 10200, 11880, 12840};
    env.frame = 0, env.stage = 0;
    int seen = 1;
    for (int f = 1; f < 13920; f++) {
        env.num_cars = 0, env.speed = -2.5f, env.curve_steps = 0;
        ACT(ED_NOOP);
        CHECK(env.frame == f && terminals[0] == 0);
        if (seen < 16 && f == starts[seen]) CHECK(env.stage == seen), seen++;
        CHECK(env.stage == seen - 1);
    }
    /* The wrap with the quota unmet: terminal, reward 0, a new episode at dawn of day 1. */
    env.quota = 5, env.edge_hits = 3, env.passed = 7, env.days = 0;
    ACT(ED_NOOP);
    CHECK(terminals[0] == 1 && truncations[0] == 0 && rewards[0] == 0.0f);
    CHECK(env.log.n == 1 && env.log.episode_length == 13920 && env.log.cars_to_pass == 5);
    CHECK(env.log.collisions_player_vs_road == 3 && env.log.passed_cars == 7);
    CHECK(env.log.days_completed == 0 && env.log.perf == 0);
    CHECK(env.frame == 0 && env.day == 1 && env.quota == 200 && env.speed == -2.5f);
    CHECK(env.x == 69.0f && env.steps == 0 && obs[62] == 0.0f && obs[2] == 0.0f);
    /* The quota met (a pass that empties it marks the day done): at the wrap +1, day 2, quota
     * 300, and the episode goes on. */
    quiet(&env);
    env.frame = 13919, env.stage = 15, env.quota = 1;
    env.speed = 5.0f, env.gear = 3, env.y = 136.25f;
    put(&env, 2, 146.0f);
    ACT(ED_NOOP);
    CHECK(terminals[0] == 0 && env.day == 2 && env.quota == 300 && env.days == 1);
    CHECK(NEAR(rewards[0], 0.05 + 1 + 0.001 + 1) && obs[63] == 1.5f && env.frame == 0);
    /* On day 2 a car passing a reversing player gives a car back until 300. */
    env.num_cars = 0, env.speed = -1.0f, ACT(ED_NOOP);
    put(&env, 2, env.y + 0.5f);
    ACT(ED_NOOP);
    CHECK(env.quota == 300 && env.passed_by == 1);
    /* max_steps truncates and logs. */
    env.max_steps = env.steps + 1;
    ACT(ED_NOOP);
    CHECK(truncations[0] == 1 && terminals[0] == 0 && env.log.n == 2);
    CHECK(env.log.days_completed == 1 && NEAR(env.log.perf, 0.1) && env.day == 1);""",
    )


def test_enduro_curves_spawns_and_schedule(run_c) -> None:
    play(
        run_c,
        """
    /* A right curve eases in 0.05 a frame; it pushes the car |speed| x 0.025 px left a frame. */
    env.curve_target = 1.0f, env.speed = 4.0f, env.gear = 3;
    for (int i = 1; i <= 20; i++) {
        const float x = env.x;
        ACT(ED_NOOP);
        CHECK(NEAR(env.curve, 0.05 * i) && (i == 2 || env.curve_dir == (i > 2)));
        CHECK(NEAR(env.x, x - 0.025 * 4 * env.curve) || env.x == env.last_left);
    }
    CHECK(obs[58] == 1.0f && obs[59] == 1.0f && NEAR(obs[60], 4.0 / 7.5) && obs[61] == 1.0f);
    /* The vanishing point settles at 102 - 48 t + 55. */
    for (int i = 0; i < 60; i++) ACT(ED_NOOP);
    const float t_p = env.t_p;
    ACT(ED_NOOP);
    CHECK(NEAR(env.vp_x, 102 - 48 * t_p + 55));
    /* Their schedule: the k-th direction of a chain that never flips sign in one move:
     * P(straight) = 1/3, 4/9, 23/54 for stages 0, 1, 2. */
    uint64_t rng = 5;
    const double want[3] = {1.0 / 3, 4.0 / 9, 23.0 / 54};
    for (int k = 0; k < 3; k++) {
        int straight = 0, right = 0;
        for (int i = 0; i < 30000; i++) {
            const int d = ed_curve_draw(&rng, k);
            straight += d == 0, right += d == 1;
        }
        CHECK(fabs(straight / 30000.0 - want[k]) < 0.012);
        CHECK(fabs(right / 30000.0 - (1 - want[k]) / 2) < 0.012);
    }
    /* A stage lasts 750 (1,500 ticks) to 2,650 frames (5,300 ticks). */
    for (int seed = 0; seed < 40; seed++) {
        Enduro e = env;
        e.rng = seed, e.curve_stage = 0, e.curve_steps = 0;
        int f = 0;
        while (e.curve_stage == 0 && f < 3000) ed_update_curve(&e), f++;
        CHECK(f >= 750 && f <= 2650);
    }
    /* Spawns: every 0.5 s on day 1 at any speed; day 2 at top speed 0.5 - 1.5 x 0.25 =
     * 0.125 s; day 3 0.35 s; day 5 0.05 s. */
    env.num_cars = 0, env.day = 1, env.speed = 7.5f, env.spawn_timer = 0.49f;
    ed_spawn(&env);
    CHECK(NEAR(env.spawn_timer, 0.49 + 1.0 / 60 - 0.5) && env.num_cars >= 1);
    /* A car ahead spawns at the vanishing point's x, row 62 (3 car lengths higher per clump
     * member), its previous row the horizon. */
    CHECK(env.cars[0].y == 62.0f && env.cars[0].last_y == 52.0f && env.cars[0].x == env.vp_x);
    if (env.num_cars == 2) CHECK(env.cars[1].y == 62.0f - 33.0f);
    const int days[3] = {2, 3, 5};
    const double interval[3] = {0.125, 0.35, 0.05};
    for (int i = 0; i < 3; i++) {
        env.day = days[i], env.spawn_timer = (float)interval[i] - 0.01f;
        ed_spawn(&env);
        CHECK(NEAR(env.spawn_timer, interval[i] - 0.01 + 1.0 / 60 - interval[i]));
    }
    /* Reversing (or standing): the spawn goes behind the player, at row 165. */
    env.num_cars = 0, env.day = 1, env.speed = -2.5f, env.spawn_timer = 0.49f;
    ed_spawn(&env);
    CHECK(env.num_cars == 1 && env.cars[0].y == 165.0f);
    /* Day 1 at -2.5: one spawn attempt every 30 frames. */
    env.num_cars = 0, env.speed = -2.5f, env.spawn_timer = 0.0f;
    int first = 0;
    for (int f = 1; f <= 40 && !first; f++) {
        ed_spawn(&env);
        if (env.num_cars) first = f;
    }
    CHECK(first == 30 || first == 31);""",
    )
