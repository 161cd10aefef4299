"""PufferLib 3.0's tetris rules, checked in C on scripted play from hand-set positions.

Each test drives csrc/tetris/tetris.h through `c_step` (the `run_c` fixture of conftest.py
compiles it with ASan/UBSan) and CHECKs the numbers of its rules table (SPEC.doc): piece shapes
and entry point, gravity, drop and line rewards, hold, and both episode ends.
"""

from __future__ import annotations

from collections.abc import Callable

RunC = Callable[..., None]

# Helpers: a fresh episode with a chosen queue, and rows filled by column mask.
PRELUDE = r"""
static void set_queue(Tetris *env, int a, int b, int c) {
    env->queue[0] = a, env->queue[1] = b, env->queue[2] = c;
    env->row = 0, env->col = TETRIS_SPAWN_COL, env->rotation = 0;
    tetris_observe(env);
}
static void fill_row(Tetris *env, int row, int mask) {
    env->filled[row] = (uint16_t)mask;
    for (int c = 0; c < TETRIS_COLS; c++) env->well[row][c] = (mask >> c & 1) ? 1 : 0;
}
static int count_equal(const float *obs, int n, float value) {
    int k = 0;
    for (int i = 0; i < n; i++) k += obs[i] == value;
    return k;
}
"""


def test_ocean_tetris_shapes_are_theirs(run_c: RunC) -> None:
    """Every piece's four rotations, drawn as rows of its 4x4 box (their ids: O I S Z T L J)."""
    run_c(
        "tetris/tetris.h",
        r"""
    Tetris env = {0};
    float obs[TETRIS_OBS];
    BIND(&env, obs); /* the prelude's arrays are used */
    static const char *DRAWN[7][4] = {
        {"11/11", "11/11", "11/11", "11/11"},
        {"1/1/1/1", "1111", "1/1/1/1", "1111"},
        {"1/11/01", "011/11", "1/11/01", "011/11"},
        {"01/11/1", "11/011", "01/11/1", "11/011"},
        {"01/11/01", "01/111", "1/11/1", "111/01"},
        {"1/1/11", "111/1", "11/01/01", "001/111"},
        {"01/01/11", "1/111", "11/1/1", "111/001"},
    };
    for (int p = 0; p < 7; p++) {
        for (int rot = 0; rot < 4; rot++) {
            int mask = 0, row = 0, col = 0;
            for (const char *s = DRAWN[p][rot]; *s; s++) {
                if (*s == '/') row++, col = 0;
                else mask |= (*s == '1') << (4 * row + col++);
            }
            CHECK(TETRIS_SHAPES[p][rot] == mask);
        }
    }
    return 0;""",
    )


def test_ocean_tetris_entry_gravity_moves_and_hard_drop(run_c: RunC) -> None:
    run_c(
        "tetris/tetris.h",
        """
    Tetris env = {0};
    float obs[TETRIS_OBS];
    BIND(&env, obs);
    CHECK(env.row == 0 && env.col == 5 && env.rotation == 0 && env.hold == -1 && env.can_hold);
    CHECK(obs[200] == 0.0f && obs[201] == 0.0f && obs[202] == 0.0f && obs[203] == 0.5f);
    CHECK(obs[204] == 0.0f && obs[205] == 1.0f && count_equal(obs, 200, 2.0f) == 4);
    for (int j = 0; j < 3; j++) CHECK(obs[206 + 7 * j + env.queue[j]] == 1.0f);
    CHECK(count_equal(obs + 206, 28, 1.0f) == 3); /* three queued, nothing held */
    /* A T (pointing left) at (0, 5): cells (0,6), (1,5), (1,6), (2,6). */
    set_queue(&env, TETRIS_T, TETRIS_O, TETRIS_I);
    CHECK(obs[6] == 2.0f && obs[15] == 2.0f && obs[16] == 2.0f && obs[26] == 2.0f);
    /* Gravity: one row on the 4th step, the phase shown in quarters. */
    actions[0] = TETRIS_NOOP;
    for (int step = 1; step <= 4; step++) {
        c_step(&env);
        CHECK(rewards[0] == 0.0f && !terminals[0] && !truncations[0]);
        CHECK(env.row == (step == 4) && obs[201] == (step % 4) / 4.0f);
    }
    CHECK(obs[200] == 4.0f / 10000 && obs[202] == 1.0f / 20);
    CHECK(obs[6] == 0.0f && obs[15] == 0.0f && obs[25] == 2.0f && obs[36] == 2.0f);
    actions[0] = TETRIS_LEFT, c_step(&env);
    CHECK(env.col == 4 && obs[203] == 0.4f);
    actions[0] = TETRIS_ROTATE, c_step(&env);
    CHECK(env.rotation == 1 && obs[204] == 1.0f);
    /* Soft drop: +0.01 and one row; on the 4th step of the phase gravity adds another. */
    actions[0] = TETRIS_SOFT_DROP, c_step(&env);
    CHECK(env.row == 2 && NEAR(rewards[0], 0.01));
    c_step(&env);
    CHECK(env.row == 4 && NEAR(rewards[0], 0.01) && env.score == 2);
    /* Hard drop from row 4: the flat T lands with its box at row 18, 14 rows, +0.28. */
    actions[0] = TETRIS_HARD_DROP, c_step(&env);
    CHECK(NEAR(rewards[0], 0.28) && env.score == 30 && !terminals[0]);
    CHECK(env.filled[19] == 0x70 && env.filled[18] == 0x20 && env.well[19][4] == TETRIS_T + 1);
    CHECK(obs[185] == 1.0f && obs[194] == 1.0f && obs[195] == 1.0f && obs[196] == 1.0f);
    /* The queue moves up: the O enters at (0, 5), the I is next. */
    CHECK(env.queue[0] == TETRIS_O && env.queue[1] == TETRIS_I && env.row == 0 && env.col == 5);
    CHECK(obs[206 + TETRIS_O] == 1.0f && obs[213 + TETRIS_I] == 1.0f && obs[5] == 2.0f);
    /* An O at the right wall cannot move further; an upright I at column 9 cannot turn. */
    actions[0] = TETRIS_RIGHT;
    for (int i = 0; i < 5; i++) c_step(&env);
    CHECK(env.col == 8);
    set_queue(&env, TETRIS_I, TETRIS_O, TETRIS_O);
    env.col = 9, tetris_observe(&env);
    actions[0] = TETRIS_ROTATE, c_step(&env);
    CHECK(env.rotation == 0 && rewards[0] == 0.0f);
    return 0;""",
        PRELUDE,
    )


def test_ocean_tetris_line_clears_pay_by_count(run_c: RunC) -> None:
    run_c(
        "tetris/tetris.h",
        """
    Tetris env = {0};
    float obs[TETRIS_OBS];
    BIND(&env, obs);
    /* Rows 16-19 full but for column 0: an upright I dropped 16 rows clears all four. */
    for (int r = 16; r < 20; r++) fill_row(&env, r, 0x3FE);
    set_queue(&env, TETRIS_I, TETRIS_O, TETRIS_O);
    env.col = 0, tetris_observe(&env);
    actions[0] = TETRIS_HARD_DROP, c_step(&env);
    CHECK(NEAR(rewards[0], 16 * 0.02 + 1.0) && env.score == 32 + 1000 && env.lines == 4);
    for (int r = 0; r < 20; r++) CHECK(env.filled[r] == 0);
    CHECK(count_equal(obs, 200, 1.0f) == 0);
    /* Rows 17 and 19 full but for column 0, rows 16 and 18 hold column 1 only: two lines
     * (+0.3), and the two partial rows fall to the bottom with the I's cells in them. */
    fill_row(&env, 16, 0x2), fill_row(&env, 17, 0x3FE);
    fill_row(&env, 18, 0x2), fill_row(&env, 19, 0x3FE);
    set_queue(&env, TETRIS_I, TETRIS_O, TETRIS_O);
    env.col = 0, tetris_observe(&env);
    c_step(&env);
    CHECK(NEAR(rewards[0], 16 * 0.02 + 0.3) && env.lines == 6 && env.combos == 2);
    CHECK(env.filled[19] == 0x3 && env.filled[18] == 0x3 && env.filled[17] == 0);
    CHECK(env.well[19][0] == TETRIS_I + 1 && obs[190] == 1.0f && obs[191] == 1.0f);
    /* One line by a gravity lock: no drop reward, +0.1. */
    fill_row(&env, 18, 0x3), fill_row(&env, 19, 0x3F3);
    set_queue(&env, TETRIS_O, TETRIS_O, TETRIS_O);
    env.col = 2, env.row = 18, env.fall_tick = 3, tetris_observe(&env);
    actions[0] = TETRIS_NOOP, c_step(&env);
    CHECK(NEAR(rewards[0], 0.1) && env.lines == 7 && env.filled[19] == 0xF && env.row == 0);
    CHECK(env.score == 32 + 1000 + 32 + 300 + 100);
    return 0;""",
        PRELUDE,
    )


def test_ocean_tetris_hold(run_c: RunC) -> None:
    run_c(
        "tetris/tetris.h",
        """
    Tetris env = {0};
    float obs[TETRIS_OBS];
    BIND(&env, obs);
    set_queue(&env, TETRIS_T, TETRIS_O, TETRIS_I);
    actions[0] = TETRIS_NOOP, c_step(&env);
    /* Nothing held: the T goes to hold, the O enters, a new piece joins the queue. */
    actions[0] = TETRIS_HOLD, c_step(&env);
    CHECK(env.hold == TETRIS_T && env.queue[0] == TETRIS_O && env.queue[1] == TETRIS_I);
    CHECK(!env.can_hold && env.fall_tick == 0 && rewards[0] == 0.0f);
    CHECK(obs[205] == 0.0f && obs[227 + TETRIS_T] == 1.0f && obs[206 + TETRIS_O] == 1.0f);
    CHECK(obs[201] == 0.0f && obs[5] == 2.0f && obs[6] == 2.0f && obs[16] == 2.0f);
    /* Once per piece: a second hold does nothing, and the step counts toward gravity. */
    c_step(&env);
    CHECK(env.hold == TETRIS_T && env.queue[0] == TETRIS_O && env.fall_tick == 1);
    /* After the O locks, a hold swaps with the held T; the queue stays. */
    actions[0] = TETRIS_HARD_DROP, c_step(&env);
    CHECK(env.can_hold && env.queue[0] == TETRIS_I);
    const int next = env.queue[1];
    actions[0] = TETRIS_HOLD, c_step(&env);
    CHECK(env.hold == TETRIS_I && env.queue[0] == TETRIS_T && env.queue[1] == next);
    CHECK(obs[227 + TETRIS_I] == 1.0f && obs[227 + TETRIS_T] == 0.0f);
    /* Refused when the incoming piece would not fit where it enters. */
    env.can_hold = 1, env.row = 5;
    fill_row(&env, 1, 1 << 5);
    tetris_observe(&env);
    actions[0] = TETRIS_HOLD, c_step(&env);
    CHECK(env.hold == TETRIS_I && env.queue[0] == TETRIS_T && env.can_hold);
    return 0;""",
        PRELUDE,
    )


def test_ocean_tetris_episode_ends(run_c: RunC) -> None:
    run_c(
        "tetris/tetris.h",
        """
    Tetris env = {0};
    float obs[TETRIS_OBS];
    BIND(&env, obs);
    /* Column 5 stacked to row 1: the next O cannot enter, so the lock that precedes it ends
     * the episode (terminal) with the drop's reward, and a fresh well follows. */
    for (int r = 1; r < 20; r++) fill_row(&env, r, 1 << 5);
    set_queue(&env, TETRIS_I, TETRIS_O, TETRIS_O);
    env.col = 0, tetris_observe(&env);
    actions[0] = TETRIS_HARD_DROP, c_step(&env);
    CHECK(terminals[0] && !truncations[0] && NEAR(rewards[0], 0.32));
    CHECK(env.log.n == 1.0f && env.log.score == 32.0f && env.log.episode_length == 1.0f);
    CHECK(NEAR(env.log.perf, 32.0 / 12565) && NEAR(env.log.episode_return, 0.32));
    CHECK(env.log.atn_frac_hard_drop == 1.0f && env.log.avg_combo == 1.0f);
    CHECK(env.tick == 0 && env.hold == -1 && count_equal(obs, 200, 1.0f) == 0);
    /* Time: a lock at tick 9,999 goes on; the first lock at 10,000 ends the episode. */
    env.tick = 9998;
    c_step(&env);
    CHECK(!terminals[0] && env.tick == 9999);
    actions[0] = TETRIS_NOOP;
    for (int i = 0; i < 3; i++) c_step(&env), CHECK(!terminals[0]);
    actions[0] = TETRIS_HARD_DROP, c_step(&env);
    CHECK(terminals[0] && env.log.n == 2.0f && env.log.episode_length == 1.0f + 10003);
    return 0;""",
        PRELUDE,
    )


def test_ocean_tetris_step_updates_match_a_full_rewrite(run_c: RunC) -> None:
    """Steps without a lock or a hold rewrite only the piece's cells and the scalars."""
    run_c(
        "tetris/tetris.h",
        """
    Tetris env = {0};
    float obs[TETRIS_OBS], full[TETRIS_OBS];
    BIND(&env, obs);
    uint64_t action_rng = 7;
    int episodes = 0;
    for (int t = 0; t < 20000; t++) {
        actions[0] = rng_int(&action_rng, 10) < 9 ? rng_int(&action_rng, 5) : 6; /* rare drops */
        c_step(&env);
        episodes += terminals[0];
        memcpy(full, obs, sizeof(full));
        tetris_observe(&env);
        CHECK(memcmp(full, obs, sizeof(full)) == 0 && count_equal(obs, 200, 2.0f) == 4);
    }
    CHECK(episodes > 10);
    return 0;""",
        PRELUDE,
    )
