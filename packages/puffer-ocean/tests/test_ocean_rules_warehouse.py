"""Rules of the warehouse and maze envs ported from PufferLib 3.0 (rware, grid), checked in C on
hand-built states against each header's rules table."""

from __future__ import annotations

RWARE_PRELUDE = r"""
/* Tiny map (10 columns): every robot stands on floor, `cells` free of requests. */
static void rw_clear(Rware *env) {
    memcpy(env->cells, env->layout, sizeof(env->cells));
    for (int i = 0; i < RW_MAX_CELLS; i++) env->robot_at[i] = -1;
}
static void rw_put(Rware *env, int i, int x, int y, int heading) {
    env->robot[i] = (RwRobot){(int16_t)(y * 10 + x), (uint8_t)heading, 0, 0.0f, 0};
    env->robot_at[y * 10 + x] = (int16_t)i;
}
/* Robot 0 takes `action` `times` times (the others wait); returns robot 0's last reward. */
static float rw_do(Rware *env, int action, int times) {
    for (int t = 0; t < times; t++) actions[0] = action, c_step(env);
    return rewards[0];
}
"""


def test_rware_fetch_deliver_return_trip(run_c) -> None:
    run_c(
        "rware/rware.h",
        """
    Rware env = {0};
    static float obs[8 * RW_OBS];
    OPEN(&env, obs, env.agents = 2);
    CHECK(env.cols == 10 && env.rows == 11 && env.num_shelves == 32);
    CHECK(env.layout[104] == RW_GOAL && env.layout[105] == RW_GOAL && env.layout[11] == RW_SHELF);
    rw_clear(&env);
    env.cells[11] = RW_REQUESTED;
    rw_put(&env, 0, 1, 0, 1); /* above the requested shelf, heading south */
    rw_put(&env, 1, 9, 10, 0);
    actions[1] = RW_WAIT;
    CHECK(rw_do(&env, RW_FORWARD, 1) == 0.0f && env.robot[0].cell == 11); /* under it */
    CHECK(rw_do(&env, RW_TOGGLE, 1) == 0.5f && env.robot[0].load == RW_CARRY_REQUESTED);
    CHECK(obs[2] == 1.0f);
    /* Loaded, it cannot pass under the shelf at (1, 2): the aisle is row 0 and column 3. */
    CHECK(rw_do(&env, RW_FORWARD, 1) == 0.0f && env.robot[0].cell == 11);
    rw_do(&env, RW_RIGHT, 2); /* south -> west -> north */
    rw_do(&env, RW_FORWARD, 1);
    CHECK(env.robot[0].cell == 1 && env.cells[1] == RW_REQUESTED && env.cells[11] == RW_FLOOR);
    rw_do(&env, RW_RIGHT, 1), rw_do(&env, RW_FORWARD, 2), rw_do(&env, RW_RIGHT, 1);
    rw_do(&env, RW_FORWARD, 10);
    CHECK(env.robot[0].cell == 103);
    rw_do(&env, RW_LEFT, 1), rw_do(&env, RW_FORWARD, 1);
    CHECK(env.robot[0].cell == 104 && env.cells[104] == RW_GOAL && env.cells[103] == RW_FLOOR);
    int requested = 0;
    for (int i = 0; i < 110; i++) requested += env.cells[i] == RW_REQUESTED;
    CHECK(requested == 0);
    CHECK(rw_do(&env, RW_TOGGLE, 1) == 0.5f && env.robot[0].load == RW_CARRY_EMPTY);
    for (int i = 0; i < 110; i++) requested += env.cells[i] == RW_REQUESTED;
    CHECK(requested == 1); /* delivering requests another shelf */
    /* An empty shelf may not enter a goal; toggling again on the goal does nothing. */
    CHECK(rw_do(&env, RW_FORWARD, 1) == 0.0f && env.robot[0].cell == 104);
    CHECK(rw_do(&env, RW_TOGGLE, 1) == 0.0f && env.robot[0].load == RW_CARRY_EMPTY);
    /* Back to the free slot at (1, 1): north 10, west 3, south 1; set down for +1. */
    rw_do(&env, RW_LEFT, 1), rw_do(&env, RW_FORWARD, 10);
    CHECK(env.robot[0].cell == 4 && env.cells[4] == RW_SHELF && env.cells[94] == RW_FLOOR);
    rw_do(&env, RW_LEFT, 1), rw_do(&env, RW_FORWARD, 3), rw_do(&env, RW_LEFT, 1);
    CHECK(rw_do(&env, RW_FORWARD, 1) == 0.0f && env.robot[0].cell == 11);
    CHECK(env.log.n == 0.0f);
    CHECK(rw_do(&env, RW_TOGGLE, 1) == 1.0f && env.robot[0].load == RW_EMPTY_HANDED);
    /* 43 steps from the start of the trip: perf = 1 - 0.01 * 43; the trip returned 2. */
    CHECK(env.log.n == 1.0f && env.log.score == 1.0f && env.log.episode_return == 2.0f);
    CHECK(env.log.episode_length == 43.0f && NEAR(env.log.perf, 1 - 0.43));
    CHECK(env.cells[11] == RW_SHELF && !terminals[0] && !truncations[0]);
    return 0;
""",
        RWARE_PRELUDE,
    )


def test_rware_traffic_queues_loops_and_view(run_c) -> None:
    run_c(
        "rware/rware.h",
        """
    Rware env = {0};
    static float obs[8 * RW_OBS];
    OPEN(&env, obs, env.agents = 4);
    /* A queue of three heading east on row 0 moves as one, front first. */
    rw_clear(&env);
    rw_put(&env, 0, 3, 0, 0), rw_put(&env, 1, 4, 0, 0), rw_put(&env, 2, 5, 0, 0);
    rw_put(&env, 3, 9, 9, 0);
    actions[0] = actions[1] = actions[2] = RW_FORWARD, actions[3] = RW_WAIT;
    c_step(&env);
    CHECK(env.robot[0].cell == 4 && env.robot[1].cell == 5 && env.robot[2].cell == 6);
    /* Two robots face to face never swap. */
    rw_clear(&env);
    rw_put(&env, 0, 3, 5, 0), rw_put(&env, 1, 4, 5, 2);
    rw_put(&env, 2, 9, 0, 0), rw_put(&env, 3, 9, 9, 0);
    actions[2] = RW_WAIT;
    c_step(&env);
    CHECK(env.robot[0].cell == 53 && env.robot[1].cell == 54);
    /* A loop of four turns as one. */
    rw_clear(&env);
    rw_put(&env, 0, 3, 1, 0), rw_put(&env, 1, 4, 1, 1), rw_put(&env, 2, 4, 2, 2);
    rw_put(&env, 3, 3, 2, 3);
    /* The view: robot 0 sees robot 1 east (heading south: 2/4) on floor, off-map nothing. */
    rw_observe(&env);
    CHECK(obs[0] == 13.0f / 110 && obs[1] == 0.25f && obs[3 + 6] == 1.0f && obs[4 + 6] == 0.5f);
    CHECK(obs[5 + 6] == 0.25f && obs[3 + 12] == 1.0f && obs[3 + 0] == 0.0f && obs[5 + 0] == 0.25f);
    CHECK(obs[3 + 9] == 1.0f && obs[4 + 9] == 0.75f); /* south-east: robot 2, heading west */
    actions[0] = actions[1] = actions[2] = actions[3] = RW_FORWARD;
    c_step(&env);
    CHECK(env.robot[0].cell == 14 && env.robot[1].cell == 24 && env.robot[2].cell == 23);
    CHECK(env.robot[3].cell == 13);
    /* Two robots want one free cell: equal queues, the lower index takes it. */
    rw_clear(&env);
    rw_put(&env, 0, 5, 5, 2), rw_put(&env, 1, 3, 5, 0), rw_put(&env, 2, 9, 0, 0);
    rw_put(&env, 3, 9, 9, 0);
    actions[2] = actions[3] = RW_WAIT;
    c_step(&env);
    CHECK(env.robot[0].cell == 54 && env.robot[1].cell == 53);
    /* A longer queue behind robot 1 gives it the cell instead. */
    rw_clear(&env);
    rw_put(&env, 0, 5, 5, 2), rw_put(&env, 1, 3, 5, 0), rw_put(&env, 2, 9, 0, 0);
    rw_put(&env, 3, 2, 5, 0);
    actions[3] = RW_FORWARD;
    c_step(&env);
    CHECK(env.robot[1].cell == 54 && env.robot[3].cell == 53 && env.robot[0].cell == 55);
    /* The left edge: the west cells are off the map and read 0. */
    rw_clear(&env);
    rw_put(&env, 0, 0, 5, 0), rw_put(&env, 1, 9, 1, 0), rw_put(&env, 2, 9, 0, 0);
    rw_put(&env, 3, 9, 9, 0);
    rw_observe(&env);
    CHECK(obs[3 + 15] == 0.0f && obs[5 + 15] == 0.0f && obs[5 + 18] == 0.0f);
    return 0;
""",
        RWARE_PRELUDE,
    )


GRID_PRELUDE = r"""
/* Cells reachable from (1, 1) through floor and the goal. */
static int grid_reachable(const Grid *env) {
    int seen[GRID_MAX * GRID_MAX] = {0}, queue[GRID_MAX * GRID_MAX], head = 0, tail = 0;
    const int s = env->side;
    seen[s + 1] = 1, queue[tail++] = s + 1;
    while (head < tail) {
        const int at = queue[head++];
        for (int d = 0; d < 4; d++) {
            const int next = at + GRID_DX[d] + GRID_DY[d] * s;
            if (seen[next] || env->cells[next] == GRID_WALL) continue;
            seen[next] = 1, queue[tail++] = next;
        }
    }
    return seen[(s - 2) * s + s - 2];
}
"""


def test_grid_moves_goal_truncation_and_mazes(run_c) -> None:
    run_c(
        "grid/grid.h",
        """
    Grid env = {0};
    static uint8_t obs[GRID_OBS];
    OPEN(&env, obs, env.map_size = 5);
    CHECK(env.side == 5 && env.horizon == 50 && env.x == 1 && env.y == 1 && env.heading == 0);
    /* An open 3x3 room inside the border, goal at (3, 3). */
    for (int i = 0; i < 25; i++) env.cells[i] = i / 5 % 4 == 0 || i % 5 % 4 == 0 ? GRID_WALL : 0;
    env.cells[6] = GRID_AGENT, env.cells[18] = GRID_GOAL;
    grid_observe(&env);
    const int centre = GRID_VISION * GRID_VIEW + GRID_VISION;
    CHECK(obs[centre] == GRID_AGENT && obs[centre - 1] == GRID_WALL && obs[centre + 1] == 0);
    CHECK(obs[centre + 2 * GRID_VIEW + 2] == GRID_GOAL && obs[0] == 0 && obs[centre + 4] == 0);
    actions[0] = GRID_FORWARD;
    c_step(&env), c_step(&env);
    CHECK(env.x == 3 && env.cells[8] == GRID_AGENT && env.cells[6] == 0 && rewards[0] == 0);
    c_step(&env); /* the wall */
    CHECK(env.x == 3 && !terminals[0]);
    actions[0] = GRID_RIGHT; /* turns south and steps */
    c_step(&env);
    CHECK(env.y == 2 && env.heading == 1);
    actions[0] = GRID_FORWARD;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && terminals[0] && !truncations[0]);
    CHECK(env.log.n == 1.0f && env.log.score == 1.0f && env.log.episode_length == 5.0f);
    CHECK(env.tick == 0 && env.x == 1 && env.y == 1); /* a new level */
    /* Standing still: truncated after 2 * 5 * 5 steps with reward 0. */
    actions[0] = GRID_STAY;
    for (int i = 0; i < 49; i++) c_step(&env), CHECK(!truncations[0]);
    c_step(&env);
    CHECK(truncations[0] && !terminals[0] && rewards[0] == 0.0f);
    CHECK(env.log.n == 2.0f && env.log.score == 1.0f && env.log.episode_length == 55.0f);
    /* Turning back and left both step. */
    actions[0] = GRID_BACK; /* west from (1, 1): the border wall */
    c_step(&env);
    CHECK(env.x == 1 && env.heading == 2);
    actions[0] = GRID_LEFT; /* west -> south */
    c_step(&env);
    CHECK(env.heading == 1);
    /* The pool: each level is an odd-sided maze (5 or 7 below max_size 9) with its goal
     * reachable, a border of walls, and the same cells every time it is drawn. */
    Grid other = {0};
    OPEN(&other, obs, (void)0);
    int sides[8] = {0};
    for (int k = 0; k < 200; k++) {
        grid_build(&other, k);
        const int s = other.side;
        sides[s] = 1;
        CHECK(s % 2 == 1 && s >= 5 && s < 9 && grid_reachable(&other));
        for (int i = 0; i < s; i++)
            CHECK(other.cells[i] == GRID_WALL && other.cells[(s - 1) * s + i] == GRID_WALL &&
                  other.cells[i * s] == GRID_WALL && other.cells[i * s + s - 1] == GRID_WALL);
        uint8_t first[GRID_MAX * GRID_MAX];
        memcpy(first, other.cells, sizeof(first));
        grid_build(&other, k);
        CHECK(memcmp(first, other.cells, sizeof(first)) == 0);
    }
    CHECK(sides[5] && sides[7]);
    return 0;
""",
        GRID_PRELUDE,
    )
