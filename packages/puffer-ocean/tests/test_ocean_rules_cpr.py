"""Rules of cpr (PufferLib 3.0's common-pool resources task), checked in C on hand-built grids
against the rules table in csrc/cpr/cpr.h. The `run_c` fixture is in conftest.py."""

from __future__ import annotations

# Two agents on an emptied 32x32 grid, no regrowth; PLACE(i, r, c) puts agent i by hand.
SETUP = """
    Cpr env = {0};
    uint8_t obs[2 * CPR_OBS];
    OPEN(&env, obs, env.agents = 2, env.spawn_rate = 0.0f);
#define AT(r, c) ((r) * 32 + (c))
#define PLACE(i, rr, cc)                                                   \\
    env.grid[AT(env.agent[i].r, env.agent[i].c)] = CPR_EMPTY;              \\
    env.agent[i].r = (rr), env.agent[i].c = (cc);                          \\
    env.grid[AT(rr, cc)] = (uint8_t)(CPR_AGENT + (i))
    while (env.food_count) cpr_remove_food(&env, env.food[0]);
"""


def test_cpr_reset_food_walls_and_view(run_c) -> None:
    run_c(
        "cpr/cpr.h",
        """
    Cpr env = {0};
    uint8_t obs[8 * CPR_OBS];
    BIND(&env, obs);
    /* 26x26 interior: 676 / 20 = 33 food and 676 / 50 = 13 shared food; walls 3 deep. */
    int food = 0, shared = 0, walls = 0, agents = 0;
    for (int i = 0; i < 32 * 32; i++) {
        food += env.grid[i] == CPR_FOOD, shared += env.grid[i] == CPR_SHARED;
        walls += env.grid[i] == CPR_WALL, agents += env.grid[i] >= CPR_AGENT;
    }
    CHECK(food == 33 && shared == 13 && env.food_count == 46);
    CHECK(walls == 32 * 32 - 26 * 26 && agents == 8);
    for (int i = 0; i < 8; i++) {
        const CprAgent *a = &env.agent[i];
        CHECK(a->hp == 80 && obs[i * CPR_OBS + 24] == CPR_AGENT + i);
        for (int k = 0; k < CPR_OBS; k++) {
            int r = a->r - 3 + k / 7, c = a->c - 3 + k % 7;
            CHECK(obs[i * CPR_OBS + k] == env.grid[r * 32 + c]);
        }
    }
    c_close(&env);""",
    )


def test_cpr_food_moves_walls_and_shared_food(run_c) -> None:
    run_c(
        "cpr/cpr.h",
        SETUP
        + """
    PLACE(0, 10, 10);
    PLACE(1, 3, 20);
    cpr_add_food(&env, AT(10, 11), CPR_FOOD);
    /* Food: +1 and +20 hp (80 + 20 - 1 = 99). Up into the wall: stay, -0.01. */
    actions[0] = CPR_RIGHT, actions[1] = CPR_UP;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && env.agent[0].c == 11 && env.agent[0].hp == 99);
    CHECK(env.grid[AT(10, 10)] == CPR_EMPTY && env.grid[AT(10, 11)] == CPR_AGENT);
    CHECK(NEAR(rewards[1], -0.01) && env.agent[1].r == 3 && env.agent[1].hp == 79);
    CHECK(env.food_count == 0 && obs[24] == CPR_AGENT && obs[CPR_OBS + 3] == CPR_WALL);
    /* Stay: no reward, hp still falls; the hp cap is 100. */
    actions[0] = CPR_STAY;
    env.agent[1].hp = 100;
    c_step(&env);
    CHECK(rewards[0] == 0.0f && env.agent[0].hp == 98 && env.agent[1].hp == 99);
    /* Shared food at (12, 12), agents reaching its sides in one step: the first marks it, the
     * second completes it; both get +5 besides the move's -0.01 and +50 hp (capped). */
    PLACE(0, 11, 11);
    PLACE(1, 11, 13);
    cpr_add_food(&env, AT(12, 12), CPR_SHARED);
    env.agent[0].hp = 30;
    actions[0] = CPR_DOWN, actions[1] = CPR_DOWN;
    c_step(&env);
    CHECK(NEAR(rewards[0], 4.99) && NEAR(rewards[1], 4.99));
    CHECK(env.agent[0].hp == 79 && env.agent[1].hp == 99 && env.grid[AT(12, 12)] == CPR_EMPTY);
    CHECK(NEAR(env.agent[0].score, 0.1 + 0.2) && env.food_count == 0);
    /* Moving into shared food is blocked; an agent that stays does not complete it. */
    cpr_add_food(&env, AT(13, 12), CPR_SHARED);
    PLACE(0, 13, 11);
    PLACE(1, 14, 12);
    actions[0] = CPR_RIGHT, actions[1] = CPR_STAY;
    c_step(&env);
    CHECK(NEAR(rewards[0], -0.01) && env.agent[0].c == 11 && env.grid[AT(13, 12)] == CPR_SHARED);
    CHECK(rewards[1] == 0.0f);
    /* Marks last one step: next step agent 1 alone marks it again, still no reward. */
    actions[0] = CPR_STAY, actions[1] = CPR_UP;
    c_step(&env);
    CHECK(rewards[1] == -0.01f && env.grid[AT(13, 12)] == CPR_SHARED);
    c_close(&env);""",
    )


def test_cpr_death_episode_end_and_regrowth(run_c) -> None:
    run_c(
        "cpr/cpr.h",
        SETUP
        + """
    PLACE(0, 10, 10);
    PLACE(1, 20, 20);
    actions[0] = CPR_STAY, actions[1] = CPR_STAY;
    /* hp 1: the step's -1 kills: -1 reward, terminal, logged; gone from the grid next step. */
    env.agent[0].hp = 1;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && !terminals[1] && env.log.n == 1.0f);
    CHECK(env.log.score == -1.0f && env.log.episode_length == 1.0f);
    CHECK(env.grid[AT(10, 10)] == CPR_AGENT);
    c_step(&env);
    CHECK(rewards[0] == 0.0f && terminals[0] && env.grid[AT(10, 10)] == CPR_EMPTY);
    /* The last agent dies: terminal for all, the grid resets (food back). */
    env.agent[1].hp = 1;
    c_step(&env);
    CHECK(terminals[0] && terminals[1] && !truncations[0] && env.log.n == 2.0f);
    CHECK(env.tick == 0 && env.food_count == 46 && env.agent[0].hp == 80);
    c_step(&env);
    CHECK(!terminals[0] && !terminals[1]);
    /* The 1,001st step truncates every agent and logs the survivors. */
    env.tick = 1000;
    c_step(&env);
    CHECK(truncations[0] && truncations[1] && !terminals[0] && env.log.n == 4.0f);
    CHECK(env.tick == 0);
    /* Regrowth at rate 1: each empty cell around food grows the same food; food grown this
     * step does not seed. Shared food grows at a tenth of the rate. */
    while (env.food_count) cpr_remove_food(&env, env.food[0]);
    PLACE(0, 4, 4);
    PLACE(1, 4, 8);
    env.spawn_rate = 1.0f, env.skip[0] = 0;
    cpr_add_food(&env, AT(15, 15), CPR_FOOD);
    c_step(&env);
    CHECK(env.food_count == 9);
    for (int r = 14; r <= 16; r++)
        for (int c = 14; c <= 16; c++) CHECK(env.grid[AT(r, c)] == CPR_FOOD);
    c_close(&env);""",
    )
