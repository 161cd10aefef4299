"""Rules of tower_climb (PufferLib 3.0's block-tower climbing puzzle), checked in C on hand-built
towers against the rules table in csrc/tower_climb/tower_climb.h. The `run_c` fixture is in
conftest.py."""

from __future__ import annotations

HEADER = "tower_climb/tower_climb.h"

# One climber, a pool of one level. TOWER(goal, x, y, z, facing) makes that level a slab of
# blocks on floor 1 over x, z in 1..7 with the goal cell `goal` and the climber standing at
# (x, y, z), then starts an episode on it; BLOCK(x, y, z) adds a block to the episode's tower.
# ACT(a) sets the action and steps; `s` is the climber's puzzle, `o` its observation row.
PRELUDE = """
#define CELL(x, y, z) ((x) + 10 * (z) + 100 * (y))
static void tower(TowerClimb *env, int goal, int x, int y, int z, int facing) {
    TcLevel *level = &env->levels[0];
    memset(&level->start, 0, sizeof(TcPuzzle));
    for (int i = 1; i <= 7; i++)
        for (int k = 1; k <= 7; k++)
            tc_set(&level->start, CELL(i, 1, k));
    level->goal = (int16_t)goal;
    level->start.position = (int16_t)CELL(x, y, z);
    level->start.orientation = (uint8_t)facing;
    level->start.grabbed = -1;
    tc_new_episode(env, 0);
    tc_observe(env, 0);
}
static int count_blocks(const TcPuzzle *s) {
    int n = 0;
    for (int c = 0; c < TC_CELLS; c++)
        n += tc_block(s, c);
    return n;
}
"""
SETUP = """
    TowerClimb env = {0};
    static uint8_t o[TC_OBS];
    OPEN(&env, o, env.agents = 1, env.num_maps = 1, env.reward_fall_row = -0.5f);
    TcPuzzle *s = &env.climbers[0].puzzle;
#define FAR CELL(7, 2, 7) /* a goal on the slab's corner, out of the way */
#define TOWER(goal, x, y, z, facing) tower(&env, goal, x, y, z, facing)
#define BLOCK(x, y, z) tc_set(s, CELL(x, y, z))
#define ACT(a) (actions[0] = (a), c_step(&env))
"""


def test_tower_climb_levels_spawn_goal_and_solution_length(run_c) -> None:
    run_c(
        HEADER,
        """
    TowerClimb env = {0}, same = {0}, other = {0};
    static uint8_t obs[64 * TC_OBS], obs2[64 * TC_OBS], obs3[64 * TC_OBS];
    BIND(&env, obs);
    OPEN(&same, obs2, (void)0);
    OPEN(&other, obs3, (void)0);
    other.rng = 2, c_reset(&other);
    CHECK(env.num_agents == 64 && env.num_maps == 50);
    /* Same seed, same pool; another seed, another. */
    CHECK(memcmp(env.levels, same.levels, 50 * sizeof(TcLevel)) == 0);
    CHECK(memcmp(env.levels, other.levels, 50 * sizeof(TcLevel)) != 0);
    TcSolver solver = {0};
    int floors[9] = {0};
    for (int k = 0; k < 50; k++) {
        const TcLevel *level = &env.levels[k];
        const TcPuzzle *s = &level->start;
        const int g = level->goal_floor, goal = level->goal, spawn = s->position;
        floors[g]++;
        CHECK(g >= 5 && g <= 8 && goal / 100 == g);
        /* Blocks only where the generator may put them: 1 <= x, z <= 7, z <= 8 - y, y < g. */
        for (int c = 0; c < TC_CELLS; c++) {
            const int x = c % 10, z = (c % 100) / 10, y = c / 100;
            if (tc_block(s, c))
                CHECK(x >= 1 && x <= 7 && z >= 1 && z <= 7 && z <= 8 - y && y >= 1 && y < g);
        }
        /* The spawn: floor 2 over a block, empty, facing up, standing, holding nothing; every
         * allowed floor-2 cell scanned before it (higher z, or same z and lower x) has no block
         * below. */
        CHECK(spawn / 100 == 2 && tc_block(s, spawn - 100) && !tc_block(s, spawn));
        CHECK(s->orientation == TC_UP && s->hanging == 0 && s->grabbed == -1);
        const int sx = spawn % 10, sz = (spawn % 100) / 10;
        for (int z = 6; z >= sz; z--)
            for (int x = 1; x <= 7 && (z > sz || x < sx); x++) CHECK(!tc_block(s, CELL(x, 1, z)));
        /* The goal rests on a block below it, below-left, below-right or below-behind. */
        CHECK(tc_block(s, goal - 100) || tc_block(s, goal - 101) || tc_block(s, goal - 99) ||
              tc_block(s, goal - 90));
        const int moves = tc_solve(&solver, s, goal);
        CHECK(moves >= 10 && moves <= 15);
    }
    tc_solver_close(&solver);
    for (int g = 5; g <= 8; g++) CHECK(floors[g] > 0);
    /* Every climber starts on its level's spawn: the observation's self cell and the three
     * state bytes (facing up, standing, holding nothing). */
    for (int i = 0; i < 64; i++) {
        const TcClimber *c = &env.climbers[i];
        CHECK(c->level >= 0 && c->level < 50 && c->tick == 0);
        CHECK(memcmp(&c->puzzle, &env.levels[c->level].start, sizeof(TcPuzzle)) == 0);
        const uint8_t *row = obs + i * TC_OBS;
        int selves = 0;
        for (int j = 0; j < TC_VIEW; j++) selves += row[j] == 3;
        CHECK(selves == 1 && row[225] == TC_UP && row[226] == 0 && row[227] == 0);
    }
    c_close(&env), c_close(&same), c_close(&other);
    """,
        PRELUDE,
    )


def test_tower_climb_turn_walk_climb_step_down_and_view(run_c) -> None:
    run_c(
        HEADER,
        SETUP
        + """
    TOWER(FAR, 3, 2, 5, TC_UP);
    /* A direction other than the facing one turns in place; the next one walks. */
    ACT(TC_RIGHT), CHECK(s->orientation == TC_RIGHT && s->position == CELL(3, 2, 5));
    CHECK(rewards[0] == 0.0f && !terminals[0] && !truncations[0]);
    ACT(TC_RIGHT), CHECK(s->position == CELL(4, 2, 5) && rewards[0] == 0.0f);
    /* Climbing to floor 3 (1 above the spawn's floor) pays reward_climb_row. */
    BLOCK(5, 2, 5);
    ACT(TC_RIGHT), CHECK(s->position == CELL(5, 3, 5) && NEAR(rewards[0], 0.25));
    CHECK(env.climbers[0].rows_cleared == 1);
    /* Walking off onto a block one floor down pays reward_fall_row and keeps standing. */
    ACT(TC_RIGHT), CHECK(s->position == CELL(6, 2, 5) && s->hanging == 0);
    CHECK(s->orientation == TC_RIGHT && NEAR(rewards[0], -0.5));
    /* Climbing back to floor 3 is no new floor: 0. */
    ACT(TC_LEFT), ACT(TC_LEFT), CHECK(s->position == CELL(5, 3, 5) && rewards[0] == 0.0f);
    /* Grab with nothing ahead and drop while standing are illegal: reward_illegal_move; so is a
     * climb with a block above the one ahead. */
    TOWER(FAR, 5, 3, 5, TC_LEFT);
    BLOCK(5, 2, 5);
    ACT(TC_GRAB), CHECK(NEAR(rewards[0], -0.01) && s->position == CELL(5, 3, 5));
    ACT(TC_DROP), CHECK(NEAR(rewards[0], -0.01) && !terminals[0]);
    BLOCK(4, 3, 5), BLOCK(4, 4, 5);
    ACT(TC_LEFT), CHECK(NEAR(rewards[0], -0.01) && s->position == CELL(5, 3, 5));
    /* The view: 5 floors x 5 rows x 9 columns, index x + 9 z + 45 y, centred on (floor + 1, z,
     * x) and kept inside the tower: at (5, 3, 5) it starts at floor 2, row 3, column 1. */
    CHECK(o[4 + 9 * 2 + 45 * 1] == 3);                         /* self (5, 3, 5) */
    CHECK(o[4 + 9 * 2 + 45 * 0] == 1);                         /* block (5, 2, 5) */
    CHECK(o[3 + 9 * 2 + 45 * 1] == 1 && o[3 + 9 * 2 + 45 * 2] == 1); /* (4, 3..4, 5) */
    CHECK(o[6 + 9 * 4 + 45 * 0] == 2);                         /* goal (7, 2, 7) */
    CHECK(o[5 + 9 * 2 + 45 * 0] == 0 && o[225] == TC_LEFT && o[226] == 0 && o[227] == 0);
    /* Near the corner the window is shifted in: at (1, 2, 1) it starts at floor 1, row 0,
     * column 0, so the slab shows on its bottom floor. */
    TOWER(FAR, 1, 2, 1, TC_UP);
    CHECK(o[1 + 9 * 1 + 45 * 1] == 3 && o[1 + 9 * 1] == 1 && o[0] == 0 && o[7 + 9 * 1] == 1);
    CHECK(o[8 + 9 * 1] == 0);
    c_close(&env);
    """,
        PRELUDE,
    )


def test_tower_climb_hang_shimmy_wrap_and_let_go(run_c) -> None:
    run_c(
        HEADER,
        SETUP
        + """
    /* Walking off the slab's edge with nothing two floors down: hang from it, facing back. */
    TOWER(FAR, 1, 2, 4, TC_LEFT);
    ACT(TC_LEFT), CHECK(s->position == CELL(0, 1, 4) && s->hanging == 1);
    CHECK(s->orientation == TC_RIGHT && NEAR(rewards[0], -0.5) && o[226] == 1);
    ACT(TC_DOWN), CHECK(NEAR(rewards[0], -0.01) && s->position == CELL(0, 1, 4));
    /* Own left (facing +x: -z) slides along the ledge; own right comes back. */
    ACT(TC_LEFT), CHECK(s->position == CELL(0, 1, 3) && s->orientation == TC_RIGHT);
    ACT(TC_RIGHT), CHECK(s->position == CELL(0, 1, 4) && rewards[0] == 0.0f);
    /* At the slab's corner (z = 1) the ledge wraps around: to (1, 1, 0) facing +z. */
    ACT(TC_LEFT), ACT(TC_LEFT), ACT(TC_LEFT), CHECK(s->position == CELL(0, 1, 1));
    ACT(TC_LEFT), CHECK(s->position == CELL(1, 1, 0) && s->orientation == TC_DOWN);
    /* An inside corner turns in place toward the block beside. */
    BLOCK(2, 1, 0);
    ACT(TC_LEFT), CHECK(s->position == CELL(1, 1, 0) && s->orientation == TC_RIGHT);
    ACT(TC_RIGHT), CHECK(s->orientation == TC_DOWN && s->hanging == 1);
    /* Up climbs onto the ledge (no climb reward from hanging). */
    ACT(TC_UP), CHECK(s->position == CELL(1, 2, 1) && s->hanging == 0 && rewards[0] == 0.0f);
    /* Letting go lands on the first block below; none: death, -1, terminal, new episode. */
    TOWER(FAR, 1, 4, 4, TC_LEFT);
    BLOCK(1, 2, 4), BLOCK(1, 3, 4), BLOCK(0, 1, 4);
    ACT(TC_LEFT), CHECK(s->position == CELL(0, 3, 4) && s->hanging == 1);
    ACT(TC_DROP), CHECK(s->position == CELL(0, 2, 4) && s->hanging == 0 && !terminals[0]);
    TOWER(FAR, 1, 2, 4, TC_LEFT);
    ACT(TC_LEFT), ACT(TC_DROP);
    CHECK(rewards[0] == -1.0f && terminals[0] && !truncations[0]);
    CHECK(env.log.n == 1.0f && env.log.perf == 0.0f && env.log.episode_length == 2.0f);
    CHECK(NEAR(env.log.episode_return, -1.5) && env.log.score == 0.0f);
    CHECK(s->position == CELL(1, 2, 4) && s->hanging == 0 && env.climbers[0].tick == 0);
    c_close(&env);
    """,
        PRELUDE,
    )


def test_tower_climb_grab_push_pull_and_falling_blocks(run_c) -> None:
    run_c(
        HEADER,
        SETUP
        + """
    TOWER(FAR, 2, 2, 4, TC_RIGHT);
    BLOCK(3, 2, 4), BLOCK(4, 2, 4);
    ACT(TC_GRAB), CHECK(s->grabbed == CELL(3, 2, 4) && rewards[0] == 0.0f && o[227] == 1);
    /* Push: the line of blocks ahead moves one cell, the climber stays and lets go. */
    ACT(TC_RIGHT), CHECK(NEAR(rewards[0], 0.2) && s->grabbed == -1);
    CHECK(!tc_block(s, CELL(3, 2, 4)) && tc_block(s, CELL(4, 2, 4)) && tc_block(s, CELL(5, 2, 4)));
    CHECK(s->position == CELL(2, 2, 4) && count_blocks(s) == 49 + 2);
    /* Pull: the block comes into the climber's cell, the climber steps back still holding. */
    ACT(TC_RIGHT), CHECK(s->position == CELL(3, 2, 4));
    ACT(TC_GRAB), ACT(TC_LEFT), CHECK(NEAR(rewards[0], 0.2) && s->position == CELL(2, 2, 4));
    CHECK(tc_block(s, CELL(3, 2, 4)) && !tc_block(s, CELL(4, 2, 4)) && s->grabbed == CELL(3, 2, 4));
    /* A perpendicular direction turns and lets go (and pays reward_move_block). */
    ACT(TC_DOWN), CHECK(NEAR(rewards[0], 0.2) && s->grabbed == -1 && s->orientation == TC_DOWN);
    /* Grab again is a toggle: grab, then grab lets go. */
    ACT(TC_RIGHT), ACT(TC_GRAB), ACT(TC_GRAB), CHECK(s->grabbed == -1 && rewards[0] == 0.0f);
    /* Pulling with no floor behind: the climber drops to hang from its old block, lets go. */
    TOWER(FAR, 1, 2, 4, TC_RIGHT);
    BLOCK(2, 2, 4);
    ACT(TC_GRAB), ACT(TC_LEFT);
    CHECK(s->position == CELL(0, 1, 4) && s->hanging == 1 && s->grabbed == -1);
    CHECK(tc_block(s, CELL(1, 2, 4)) && !tc_block(s, CELL(2, 2, 4)));
    /* A block over the slab's edge rests on the edge below it; one cell further it falls, and
     * past floor 1 it leaves the tower. */
    TOWER(FAR, 6, 2, 2, TC_RIGHT);
    BLOCK(7, 2, 2);
    ACT(TC_GRAB), ACT(TC_RIGHT), CHECK(tc_block(s, CELL(8, 2, 2)) && count_blocks(s) == 50);
    ACT(TC_RIGHT), ACT(TC_GRAB), ACT(TC_RIGHT), CHECK(s->position == CELL(7, 2, 2));
    CHECK(!tc_block(s, CELL(9, 2, 2)) && count_blocks(s) == 49 && NEAR(rewards[0], 0.2));
    /* A block resting on the pushed block's edge falls onto the climber: death. */
    TOWER(FAR, 3, 2, 4, TC_RIGHT);
    BLOCK(4, 2, 4), BLOCK(3, 3, 4);
    ACT(TC_GRAB), ACT(TC_RIGHT), CHECK(rewards[0] == -1.0f && terminals[0]);
    /* A move that would drop the goal is illegal; what moved stays moved. */
    TOWER(CELL(8, 3, 4), 7, 2, 4, TC_RIGHT);
    BLOCK(8, 2, 4);
    ACT(TC_GRAB), ACT(TC_RIGHT), CHECK(NEAR(rewards[0], -0.01) && !terminals[0]);
    CHECK(!tc_block(s, CELL(8, 2, 4)) && !tc_block(s, CELL(9, 2, 4)) && s->grabbed == -1);
    c_close(&env);
    """,
        PRELUDE,
    )


def test_tower_climb_goal_and_time_limit(run_c) -> None:
    run_c(
        HEADER,
        SETUP
        + """
    /* Climbing onto the goal: +1 (in place of the climb reward), terminal, perf 1. */
    TOWER(CELL(4, 2, 4), 3, 2, 4, TC_UP);
    ACT(TC_RIGHT), ACT(TC_RIGHT);
    CHECK(rewards[0] == 1.0f && terminals[0] && !truncations[0]);
    CHECK(env.log.n == 1.0f && env.log.perf == 1.0f && env.log.score == 1.0f);
    CHECK(env.log.episode_length == 2.0f && env.log.episode_return == 1.0f);
    CHECK(s->position == CELL(3, 2, 4) && s->orientation == TC_UP);
    /* 61 actions an episode, as PufferLib's (which resets on the 61st step and plays that
     * action in the next episode): the 61st is played, pays its reward (here an illegal drop's),
     * then truncates and a new episode starts. */
    memset(&env.log, 0, sizeof(env.log));
    for (int t = 0; t < 60; t++) {
        ACT(t % 2 ? TC_LEFT : TC_RIGHT);
        CHECK(!terminals[0] && !truncations[0] && rewards[0] == 0.0f);
    }
    ACT(TC_DROP), CHECK(truncations[0] && !terminals[0] && NEAR(rewards[0], -0.01));
    CHECK(s->orientation == TC_UP && env.climbers[0].tick == 0);
    CHECK(env.log.n == 1.0f && env.log.episode_length == 61.0f && env.log.perf == 0.0f);
    CHECK(NEAR(env.log.episode_return, -0.01));
    ACT(TC_RIGHT), CHECK(s->orientation == TC_RIGHT && env.climbers[0].tick == 1);
    c_close(&env);
    """,
        PRELUDE,
    )
