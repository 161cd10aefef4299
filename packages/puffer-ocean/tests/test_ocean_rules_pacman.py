"""Rules of pacman (PufferLib 3.0's task), checked in C on hand-set positions against the rules
table in csrc/pacman/pacman.h. The `run_c` fixture is in conftest.py."""

from __future__ import annotations

# Ghosts held in the house (a long start delay) unless a test releases one.
SETUP = """
    Pacman env = {0};
    float obs[PM_OBS];
    BIND(&env, obs);
    for (int g = 0; g < PM_GHOSTS; g++) env.ghosts[g].start_timeout = 100000;
#define PELLET(x, y) obs[PM_OBS - PM_PICKUPS + env.pickup[y][x]]
"""


def test_pacman_start_observation(run_c) -> None:
    run_c(
        "pacman/pacman.h",
        SETUP
        + """
    CHECK(env.player.x == 13 && env.player.y == 23 && env.direction == PM_RIGHT);
    CHECK(NEAR(obs[0], 13.0 / 28) && NEAR(obs[1], 23.0 / 31) && obs[5] == 1.0f && obs[2] == 0);
    /* Up and down are walls at the start, left and right open. */
    CHECK(obs[6] == 0 && obs[7] == 0 && obs[8] == 1 && obs[9] == 1 && obs[10] == 0);
    /* Pinky starts at (14, 11) facing up, chasing. */
    CHECK(NEAR(obs[11], 14.0 / 28) && NEAR(obs[12], 11.0 / 31) && obs[13] == 1 && obs[17] == 1);
    int pellets = 0;
    for (int i = 0; i < PM_PICKUPS; i++) pellets += obs[PM_OBS - PM_PICKUPS + i] == 1.0f;
    CHECK(pellets == 244 && env.remaining == 244);
    CHECK(env.pickup[1][1] == 0 && env.pickup[3][1] == 30 && env.pickup[29][26] == 243);
    c_close(&env);""",
    )


def test_pacman_pellets_walls_tunnel_and_ghosts(run_c) -> None:
    run_c(
        "pacman/pacman.h",
        SETUP
        + """
    /* A dot: +1; then down is a wall, so the move keeps going left. */
    actions[0] = PM_LEFT;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && env.player.x == 12 && env.score == 1 && PELLET(12, 23) == 0);
    actions[0] = PM_DOWN;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && env.player.x == 11 && env.direction == PM_LEFT && obs[4] == 1);
    /* The tunnel wraps: left from (0, 14) is (27, 14). */
    env.player = (PmPos){0, 14};
    actions[0] = PM_LEFT;
    c_step(&env);
    CHECK(env.player.x == 27 && env.player.y == 14 && rewards[0] == 0.0f);
    /* A power pellet beside a ghost: +1 for the pellet, +1 for the frightened ghost eaten,
     * which turns to eyes heading home. */
    env.player = (PmPos){2, 23};
    env.ghosts[PM_BLINKY].pos = (PmPos){1, 22};
    c_step(&env);
    CHECK(rewards[0] == 2.0f && env.frightened_left == 35 && obs[10] == 1.0f);
    CHECK(env.ghosts[PM_BLINKY].returning && !env.ghosts[PM_BLINKY].frightened);
    CHECK(obs[11 + 9 + 8] == 1 && obs[11 + 9 + 6] == 0 && env.ghosts[PM_PINKY].frightened);
    CHECK(obs[11 + 7] == 1 && PELLET(1, 23) == 0 && env.score == 3);
    c_step(&env);
    CHECK(NEAR(obs[10], 34.0 / 35));
    /* Fright lasts 35 steps: cleared at the 36th. */
    for (int i = 0; i < 34; i++) c_step(&env);
    CHECK(env.frightened_left == 0 && env.ghosts[PM_PINKY].frightened);
    c_step(&env);
    CHECK(!env.ghosts[PM_PINKY].frightened);
    /* A ghost next to you that is not frightened: caught, terminal, no penalty, logged. */
    env.player = (PmPos){6, 5};
    env.ghosts[PM_PINKY].pos = (PmPos){8, 5};
    actions[0] = PM_RIGHT;
    c_step(&env);
    CHECK(terminals[0] && !truncations[0] && rewards[0] == 1.0f && env.log.n == 1.0f);
    CHECK(env.log.score == 4.0f && env.log.episode_length == 41.0f && env.score == 0);
    c_close(&env);""",
    )


def test_pacman_modes_targets_and_time_limit(run_c) -> None:
    run_c(
        "pacman/pacman.h",
        SETUP
        + """
    /* In the corner (1, 1) facing left, pressing up: both walls, you stand still. */
    env.player = (PmPos){1, 1};
    env.direction = PM_LEFT;
    actions[0] = PM_UP;
    /* Modes: scatter from step 1 (70 steps), chase 140, ..., 7 switches, then scatter stays. */
    int switches[] = {1, 71, 211, 281, 421, 491, 631};
    int k = 0, last = -1;
    for (int step = 1; step <= 1000; step++) {
        c_step(&env);
        if (env.scatter != last) CHECK(k < 7 && step == switches[k]), k++, last = env.scatter;
    }
    CHECK(k == 7 && env.scatter && env.mode_changes == 7 && env.player.x == 1);
    /* Chase: blinky targets you; at (6, 5) heading left it weighs down (6, 6), up (6, 4) and
     * left (5, 5) by squared distance to (1, 1): 50, 34, 32, so it goes left. */
    env.scatter = 0;
    env.ghosts[PM_BLINKY].pos = (PmPos){6, 5};
    env.ghosts[PM_BLINKY].direction = PM_LEFT;
    env.ghosts[PM_BLINKY].start_timeout = 0;
    c_step(&env);
    CHECK(env.ghosts[PM_BLINKY].pos.x == 5 && env.ghosts[PM_BLINKY].pos.y == 5);
    /* Inky: blinky (6, 5) mirrored through 2 tiles ahead of you, (-1, 1): (-8, -3). */
    CHECK(env.ghosts[PM_INKY].target.x == -8 && env.ghosts[PM_INKY].target.y == -3);
    /* Pinky: 4 tiles ahead of you; clyde, 14 and 10 tiles away (beyond 8): you. */
    CHECK(env.ghosts[PM_PINKY].target.x == 1 - 4 && env.ghosts[PM_PINKY].target.y == 1);
    CHECK(env.ghosts[PM_CLYDE].target.x == 1 && env.ghosts[PM_CLYDE].target.y == 1);
    /* Within 8 tiles clyde heads for his corner (0, 31). */
    env.ghosts[PM_CLYDE].pos = (PmPos){5, 5};
    pm_targets(&env);
    CHECK(env.ghosts[PM_CLYDE].target.x == 0 && env.ghosts[PM_CLYDE].target.y == 31);
    /* Frightened ghosts move every other step. */
    env.frightened_left = 10;
    env.ghosts[PM_BLINKY].frightened = 1;
    int moves = 0;
    for (int i = 0; i < 4; i++) {
        PmPos before = env.ghosts[PM_BLINKY].pos;
        c_step(&env);
        moves += before.x != env.ghosts[PM_BLINKY].pos.x || before.y != env.ghosts[PM_BLINKY].pos.y;
    }
    CHECK(moves == 2);
    /* The 10,000th step truncates. */
    env.steps = 9999;
    env.ghosts[PM_BLINKY].start_timeout = 100000;
    env.ghosts[PM_BLINKY].pos = env.ghosts[PM_BLINKY].spawn;
    c_step(&env);
    CHECK(truncations[0] && !terminals[0] && env.log.n == 1.0f && env.steps == 0);
    c_close(&env);""",
    )
