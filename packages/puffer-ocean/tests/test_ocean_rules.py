"""Game rules of the connect4 and g2048 headers, checked in C on hand-built states.

Each test compiles a short C program against one header (with AddressSanitizer and UBSan) that
sets up a position, applies the rule and CHECKs the outcome; a failed CHECK prints its line.
The compiler and the program's prelude are the `run_c` fixture (conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable

RunC = Callable[..., None]


def test_ocean_g2048_slides_and_merges(run_c: RunC) -> None:
    run_c(
        "g2048/g2048.h",
        """
    G2048 env = {0};
    uint8_t obs[G2048_OBS];
    BIND(&env, obs);
    int levels = 0;
    float points = 0;
    /* "2 2 4 ." left: the 2s merge once, the 4 does not merge with the new 4. */
    memset(env.board, 0, sizeof(env.board));
    env.board[0] = 1, env.board[1] = 1, env.board[2] = 2;
    CHECK(g2048_slide(&env, G2048_LEFT, &levels, &points));
    CHECK(env.board[0] == 2 && env.board[1] == 2 && env.board[2] == 0 && env.board[3] == 0);
    CHECK(levels == 2 && points == 4.0f);
    /* "2 2 2 2" right: two merges, both toward the right. */
    memset(env.board, 0, sizeof(env.board));
    levels = 0, points = 0;
    for (int c = 0; c < 4; c++) env.board[4 + c] = 1;
    CHECK(g2048_slide(&env, G2048_RIGHT, &levels, &points));
    CHECK(env.board[4] == 0 && env.board[5] == 0 && env.board[6] == 2 && env.board[7] == 2);
    CHECK(levels == 4 && points == 8.0f);
    /* Column 0 "2 . 2 ." up becomes "4 . . .". */
    memset(env.board, 0, sizeof(env.board));
    env.board[0] = 1, env.board[8] = 1;
    CHECK(g2048_slide(&env, G2048_UP, &levels, &points));
    CHECK(env.board[0] == 2 && env.board[8] == 0);
    /* A move that changes nothing reports so. */
    CHECK(!g2048_slide(&env, G2048_UP, &levels, &points));
    /* A full checkerboard has no move left. */
    for (int i = 0; i < G2048_OBS; i++) env.board[i] = (uint8_t)(1 + ((i / 4 + i % 4) % 2));
    CHECK(!g2048_can_move(&env));
    env.board[1] = 1;
    CHECK(g2048_can_move(&env));
    /* A step merges, pays 0.01 per level, and spawns one 2 or 4. */
    memset(env.board, 0, sizeof(env.board));
    env.board[2] = 1, env.board[3] = 1;
    actions[0] = G2048_LEFT;
    c_step(&env);
    CHECK(rewards[0] == 2 * G2048_MERGE_REWARD && !terminals[0]);
    int tiles = 0, total = 0;
    for (int i = 0; i < G2048_OBS; i++) tiles += obs[i] > 0, total += obs[i] ? 1 << obs[i] : 0;
    CHECK(obs[0] == 2 && tiles == 2 && (total == 6 || total == 8));
    return 0;""",
    )


def test_ocean_connect4_book_negamax_wins_and_full_columns(run_c: RunC) -> None:
    run_c(
        "connect4/connect4.h",
        """
    Connect4 env = {0};
    float obs[CONNECT4_OBS];
    BIND(&env, obs);
    /* The book: a centre opening is answered in column 2, a column-4 opening in column 3. */
    actions[0] = 3;
    c_step(&env);
    CHECK(obs[3 * 6] == 1.0f && obs[2 * 6] == -1.0f && rewards[0] == 0.0f && !terminals[0]);
    c_reset(&env);
    actions[0] = 4;
    c_step(&env);
    CHECK(obs[4 * 6] == 1.0f && obs[3 * 6] == -1.0f);
    /* The search against a plain transcription of the rule (every leaf visited). */
    uint64_t rng = 5;
    for (int game = 0; game < 200; game++) {
        uint64_t a = 0, o = 0;
        for (int ply = 0; ply < 2 + game % 20; ply++) {
            int col = rng_int(&rng, 7);
            if (connect4_full(a | o, col)) continue;
            uint64_t cell = connect4_landing(a | o, col);
            if (ply % 2) o |= cell; else a |= cell;
        }
        if (connect4_has_line(a) || connect4_has_line(o)) continue;
        for (int depth = 0; depth <= 3; depth++) {
            CHECK(connect4_negamax(a, o, depth) == slow_negamax(a, o, depth));
            CHECK(connect4_negamax(o, a, depth) == slow_negamax(o, a, depth));
        }
    }
    /* An immediate win is taken: three opponent pieces in column 6, so -1 at once. */
    c_reset(&env);
    env.agent = connect4_bit(0, 0) | connect4_bit(0, 1) | connect4_bit(1, 0);
    env.opponent = connect4_bit(0, 6) | connect4_bit(1, 6) | connect4_bit(2, 6);
    actions[0] = 5;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.log.score == -1.0f && env.log.perf == 0);
    CHECK(env.agent == 0 && env.opponent == 0 && obs[0] == 0.0f);
    /* A double threat (columns 1 and 5 both complete the bottom row) cannot be blocked. */
    env.agent = connect4_bit(0, 2) | connect4_bit(0, 3);
    env.opponent = connect4_bit(1, 2) | connect4_bit(1, 3);
    actions[0] = 4;
    c_step(&env);
    CHECK(!terminals[0]);
    actions[0] = connect4_full(env.agent | env.opponent, 1) ||
                 (env.opponent & connect4_bit(0, 1)) ? 5 : 1;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && terminals[0] && env.log.perf == 1.0f && env.log.n == 2.0f);
    /* A move into a full column loses. */
    for (int r = 0; r < 6; r++) env.agent |= (r % 2) ? connect4_bit(r, 0) : 0;
    for (int r = 0; r < 6; r++) env.opponent |= (r % 2) ? 0 : connect4_bit(r, 0);
    actions[0] = 0;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.log.n == 3.0f);
    /* Two cells left on a board without a line: only their columns are legal, and the
     * opponent's move that fills the board ends the game (their draw, -1). */
    for (int c = 0; c < 7; c++)
        for (int r = 0; r < 6; r++) {
            if (r == 5 && (c == 4 || c == 5)) continue;
            if ((r + c / 2 + c) % 2) env.opponent |= connect4_bit(r, c);
            else env.agent |= connect4_bit(r, c);
        }
    uint8_t legal[7];
    connect4_action_mask(&env, legal);
    for (int c = 0; c < 7; c++) CHECK(legal[c] == (c == 4 || c == 5));
    actions[0] = 5;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.log.n == 4.0f && env.log.perf == 1.0f);
    connect4_action_mask(&env, legal);
    for (int c = 0; c < 7; c++) CHECK(legal[c] == 1);
    return 0;""",
        prelude="""
/* Their negamax as written: every leaf visited, 10^depth for the side that just won. */
static long slow_negamax(uint64_t mover, uint64_t other, int depth) {
    long power = 1;
    for (int d = 0; d < depth; d++) power *= 10;
    if (connect4_has_line(other)) return power;
    if (connect4_has_line(mover) || depth == 0 || (mover | other) == CONNECT4_BOARD) return 0;
    long value = 0;
    for (int col = 0; col < 7; col++) {
        if (connect4_full(mover | other, col)) continue;
        value -= slow_negamax(other, mover | connect4_landing(mover | other, col), depth - 1);
    }
    return value;
}
""",
    )
