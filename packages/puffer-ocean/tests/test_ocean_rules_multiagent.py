"""PufferLib 3.0's snake and target rules, checked in C on hand-built positions.

The `run_c` fixture (conftest.py) compiles each snippet against the header with ASan/UBSan.
"""

from __future__ import annotations

from collections.abc import Callable

RunC = Callable[..., None]

SETUP = """
    Snake env = {0};
    int8_t obs[2 * SNAKE_OBS];
    env.observations = obs, env.actions = actions, env.rewards = rewards;
    env.terminals = terminals, env.truncations = truncations;
    puffer_set_defaults(&SPEC, &env);
    env.width = 20, env.height = 16, env.num_snakes = 2, env.num_food = 0;
    CHECK(snake_check(&env) == NULL);
    c_init(&env);
    env.rng = 1;
    c_reset(&env);
#define AT(r, c) ((r) * 20 + (c))
    /* Both snakes placed by hand: length 1, snake 0 at (7, 7), snake 1 at (9, 12). */
    memset(env.grid, SNAKE_WALL, 20 * 16);
    for (int r = 5; r < 11; r++) memset(env.grid + AT(r, 5), SNAKE_EMPTY, 10);
    int starts[2] = {AT(7, 7), AT(9, 12)};
    for (int i = 0; i < 2; i++) {
        env.snakes[i].head = 0, env.snakes[i].length = 1, env.snakes[i].tick = 0;
        env.snakes[i].body[0] = starts[i];
        env.grid[starts[i]] = snake_color(i);
    }
"""


def test_ocean_snake_eats_grows_and_does_not_reverse(run_c: RunC) -> None:
    run_c(
        "snake/snake.h",
        SETUP
        + """
    CHECK(snake_color(0) == 7 && snake_color(1) == 5 && snake_color(4) == 4);
    env.grid[AT(7, 8)] = SNAKE_FOOD, env.grid[AT(7, 10)] = SNAKE_CORPSE;
    /* Food: +0.1 and a cell longer; a replacement appears on some empty cell. */
    actions[0] = SNAKE_RIGHT, actions[1] = SNAKE_DOWN;
    c_step(&env);
    CHECK(rewards[0] == 0.1f && env.snakes[0].length == 2 && !terminals[0]);
    CHECK(env.grid[AT(7, 7)] == 7 && env.grid[AT(7, 8)] == 7 && obs[60] == 7);
    CHECK(rewards[1] == 0.0f && env.snakes[1].length == 1 && env.grid[AT(9, 12)] == 0);
    CHECK(obs[SNAKE_OBS + 60] == 5 && obs[SNAKE_OBS + 49] == 0 && obs[SNAKE_OBS + 71] == 3);
    int food = 0;
    for (int i = 0; i < 20 * 16; i++) {
        food += env.grid[i] == SNAKE_FOOD;
        if (env.grid[i] == SNAKE_FOOD) env.grid[i] = SNAKE_EMPTY; /* keep the path clear */
    }
    CHECK(food == 1);
    /* Left would turn onto the neck: the snake goes straight on, right, to (7, 9). Snake 1
     * heads along the bottom row, out of the way. */
    actions[0] = SNAKE_LEFT, actions[1] = SNAKE_LEFT;
    c_step(&env);
    CHECK(env.snakes[0].body[env.snakes[0].head] == AT(7, 9) && env.grid[AT(7, 7)] == 0);
    /* A corpse cell: +0.1, grow, no replacement. */
    actions[0] = SNAKE_RIGHT;
    c_step(&env);
    CHECK(rewards[0] == 0.1f && env.snakes[0].length == 3);
    for (int i = 0; i < 20 * 16; i++) CHECK(env.grid[i] != SNAKE_FOOD);
    /* Four more cells right reach column 14; the fifth is the wall: -1 and a terminal. The
     * 3-cell body leaves a corpse on its middle cell (2nd from the tail), the rest empty. */
    for (int step = 0; step < 4; step++) c_step(&env), CHECK(rewards[0] == 0.0f);
    CHECK(env.snakes[0].body[env.snakes[0].head] == AT(7, 14));
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.snakes[0].length == 1);
    CHECK(env.log.n == 1.0f && env.log.score == 3.0f && env.log.episode_length == 8.0f);
    CHECK(fabsf(env.log.episode_return - (0.2f - 1.0f)) < 1e-6f);
    CHECK(env.grid[AT(7, 13)] == SNAKE_CORPSE || env.snakes[0].body[0] == AT(7, 13));
    CHECK(env.grid[AT(7, 12)] != SNAKE_CORPSE && env.grid[AT(7, 14)] != SNAKE_CORPSE);
    c_close(&env);
    return 0;""",
    )


def test_ocean_snake_dies_on_own_tail_and_on_others_in_turn(run_c: RunC) -> None:
    run_c(
        "snake/snake.h",
        SETUP
        + """
    /* Snake 1 coiled in a 2x2 square, head at (9, 6), tail at (8, 6) right above it. */
    env.grid[AT(9, 12)] = SNAKE_EMPTY;
    int coil[4] = {AT(8, 6), AT(8, 7), AT(9, 7), AT(9, 6)};
    for (int k = 0; k < 4; k++) env.snakes[1].body[k] = coil[k], env.grid[coil[k]] = 5;
    env.snakes[1].head = 3, env.snakes[1].length = 4;
    /* Its tail counts as body even though it would move on: up is death. Cells 4th and 2nd
     * from the tail (the head and (8, 7)) become corpses. */
    actions[0] = SNAKE_UP, actions[1] = SNAKE_UP;
    c_step(&env);
    CHECK(rewards[1] == -1.0f && terminals[1] && env.log.score == 4.0f);
    CHECK(rewards[0] == 0.0f && !terminals[0]);
    int corpse[4] = {0, 1, 0, 1};
    for (int k = 0; k < 4; k++) {
        int cell = coil[k], head = env.snakes[1].body[0];
        CHECK(cell == head || env.grid[cell] == (corpse[k] ? SNAKE_CORPSE : SNAKE_EMPTY));
    }
    /* Snakes move in index order: both heading for (8, 9), snake 0 takes it first and
     * snake 1 runs into it. */
    env.grid[env.snakes[1].body[0]] = SNAKE_EMPTY;
    env.grid[env.snakes[0].body[env.snakes[0].head]] = SNAKE_EMPTY;
    env.snakes[0].head = 0, env.snakes[0].length = 1, env.snakes[0].body[0] = AT(8, 8);
    env.snakes[1].head = 0, env.snakes[1].length = 1, env.snakes[1].body[0] = AT(8, 10);
    env.grid[AT(8, 8)] = 7, env.grid[AT(8, 10)] = 5;
    actions[0] = SNAKE_RIGHT, actions[1] = SNAKE_LEFT;
    c_step(&env);
    CHECK(rewards[0] == 0.0f && !terminals[0] && env.grid[AT(8, 9)] == 7);
    CHECK(rewards[1] == -1.0f && terminals[1] && env.log.n == 2.0f);
    c_close(&env);
    return 0;""",
    )


def test_ocean_target_moves_eats_and_moves_idle_agents(run_c: RunC) -> None:
    run_c(
        "target/target.h",
        """
    Target env = {0};
    float obs[TARGET_AGENTS * TARGET_OBS];
    BIND(&env, obs);
    CHECK(env.width == 1080 && env.height == 720);
    for (int i = 0; i < TARGET_AGENTS; i++) {
        env.agents[i].x = 100.0f + 100.0f * i, env.agents[i].y = 600.0f;
        actions[2 * i] = 4, actions[2 * i + 1] = 2; /* no turn, no acceleration */
    }
    for (int g = 0; g < TARGET_GOALS; g++) env.goals[g][0] = 1000.0f, env.goals[g][1] = 50.0f;
    TargetAgent *a = &env.agents[0];
    /* Accelerate twice (+1 px per step each) along heading 0: x 100 -> 101 -> 103. */
    actions[1] = 3;
    c_step(&env);
    c_step(&env);
    CHECK(a->speed == 2.0f && a->x == 103.0f && a->y == 600.0f);
    CHECK(obs[8] == 0.0f && obs[9] == 0.0f && fabsf(obs[10] - 97.0f / 1080) < 1e-6f);
    CHECK(fabsf(obs[26] - 103.0f / 1080) < 1e-6f && fabsf(obs[27] - 600.0f / 720) < 1e-6f);
    CHECK(obs[24] == 0.0f);
    /* Heading is clamped to [0, 2 pi], never wrapped: turning below 0 stays at 0. */
    actions[0] = 0, actions[1] = 2;
    c_step(&env);
    CHECK(a->turn == 0 && a->x == 105.0f);
    actions[0] = 8, actions[1] = 0; /* +1/3 rad, brake by 2 */
    c_step(&env);
    CHECK(target_heading(a) == 4.0f / 12.0f && a->speed == 0.0f);
    /* ... and turning past 2 pi stops at 2 pi, from where it turns back down. */
    CHECK(target_turn(72, 4) == -1 && target_turn(-1, -4) == -5 && target_turn(-1, 3) == -1);
    CHECK(target_turn(-74, -3) == 0 && target_turn(2, -4) == 0);
    CHECK(fabsf(obs[24] - 1.0f / 3.0f / TARGET_TWO_PI) < 1e-6f);
    /* A goal 30 px away (within 32) pays 1 and moves; the log counts it as an episode of
     * the 5 steps it took. */
    actions[0] = 4, actions[1] = 2;
    env.goals[2][0] = a->x + 30.0f, env.goals[2][1] = a->y;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && obs[25] == 1.0f && rewards[1] == 0.0f);
    CHECK(env.log.n == 1.0f && env.log.episode_length == 5.0f && a->since_goal == 0);
    CHECK(env.goals[2][0] != a->x + 30.0f || env.goals[2][1] != a->y);
    /* 33 px is out of reach. */
    env.goals[2][0] = a->x, env.goals[2][1] = a->y + 33.0f;
    c_step(&env);
    CHECK(rewards[0] == 0.0f && env.log.n == 1.0f);
    /* 512 steps without a goal: the agent is moved to a random pixel. Agent 1 sits still at
     * (200, 600) until its 512th step. */
    for (int g = 0; g < TARGET_GOALS; g++) env.goals[g][0] = 1000.0f, env.goals[g][1] = 50.0f;
    for (int t = 7; t < 512; t++) c_step(&env);
    CHECK(env.agents[1].x == 200.0f && env.agents[1].since_goal == 511);
    c_step(&env);
    CHECK(env.agents[1].x != 200.0f || env.agents[1].y != 600.0f);
    CHECK(!terminals[0] && !truncations[0]);
    return 0;""",
    )
