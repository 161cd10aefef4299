"""Rules of blastar, the arcade game ported from PufferLib 3.0, checked in C on hand-built
states against the numbers in each header's rules table."""

from __future__ import annotations


def test_blastar_moves_shots_kills_bombs_and_lives(run_c) -> None:
    run_c(
        "blastar/blastar.h",
        """
    Blastar env = {0};
    float obs[BL_OBS];
    OPEN(&env, obs, );
    CHECK(env.lives == 10 && env.ex == -30.0f && NEAR(obs[2], -30.0 / 640) && NEAR(obs[3], 50.0 / 480));
    /* Moves of 8 px; the enemy flies right 4 a step. */
    env.x = 100, env.y = 300;
    actions[0] = BL_RIGHT;
    c_step(&env);
    CHECK(env.x == 108.0f && env.ex == -26.0f);
    env.x = 0;
    actions[0] = BL_LEFT;
    c_step(&env);
    CHECK(env.x == 0.0f);
    /* A new shot starts at your corner and rises 12 at once: 0.0005 plus the closeness term
     * 0.01 (2 - 250 / 480) while you are below the enemy. */
    env.x = 100;
    actions[0] = BL_FIRE;
    c_step(&env);
    CHECK(env.shot.active && env.shot.x == 100.0f && env.shot.y == 288.0f && obs[6] == 1.0f);
    CHECK(NEAR(rewards[0], 0.0005 + 0.01 * (2 - 250.0 / 480)));
    /* A kill at step 1 of a game: (1.5 + 4.5 (1 - 104 / 640) + 0.01 (2 - 200 / 480) + 1 / 2)
     * x 1.1 (a streak of one). */
    c_reset(&env);
    env.x = 300, env.y = 400, env.ex = 100, env.ey = 200;
    env.shot = (BlShot){100, 215, 1};
    actions[0] = BL_NOOP;
    c_step(&env);
    const double kill = (1.5 + 4.5 * (1 - 104.0 / 640) + 0.01 * (2 - 200.0 / 480) + 0.5) * 1.1;
    CHECK(env.score == 1 && env.kill_streak == 1 && !env.enemy_active && NEAR(rewards[0], kill));
    for (int t = 0; t < 30; t++) {
        c_step(&env);
        CHECK(rewards[0] == 0.0f);
    }
    CHECK(env.enemy_active && env.enemy_timer == 0);
    /* The enemy right above you drops a bomb (when its coin flip says so): you freeze until
     * the bomb, falling 12 a step, hits you 22 steps later: one life. */
    env.ex = 300, env.ey = 100, env.attacking = 0;
    uint64_t seed = 1;
    for (;; seed++) {
        uint64_t probe = seed;
        if (rng_int(&probe, 2) == 0) break;
    }
    env.rng = seed;
    c_step(&env);
    CHECK(env.attacking && env.frozen && env.bomb.active && env.ex == 304.0f);
    CHECK(env.bomb.x == 307.0f && env.bomb.y == 129.0f && NEAR(obs[8], 129.0 / 480));
    actions[0] = BL_RIGHT;
    int steps = 0;
    while (env.lives == 10) {
        c_step(&env);
        CHECK(env.x == 300.0f);
        steps++;
    }
    CHECK(steps == 22 && env.player_timer == 30 && !env.bomb.active && !env.frozen);
    /* Ramming the enemy with the last life ends the game. */
    for (int t = 0; t < 30; t++) c_step(&env);
    env.lives = 1, env.ex = env.x, env.ey = env.y - 4, env.attacking = 1;
    c_step(&env);
    CHECK(terminals[0] && rewards[0] == 0.0f && env.log.n == 1.0f && env.log.lives == 0.0f);
    CHECK(env.log.score == 1.0f && env.lives == 10);
    return 0;
""",
    )
