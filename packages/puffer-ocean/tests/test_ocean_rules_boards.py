"""Rules of the board and card games ported from PufferLib 3.0 (tripletriad, checkers), checked
in C on hand-built positions against the numbers in each header's rules table."""

from __future__ import annotations


def test_tripletriad_capture_costs_and_time_limit(run_c) -> None:
    run_c(
        "tripletriad/tripletriad.h",
        """
    TripleTriad env = {0};
    float obs[TT_OBS];
    OPEN(&env, obs, );
    CHECK(env.score[0] == 5 && env.score[1] == 5);
    /* Placing with nothing selected costs 0.1 and changes nothing. */
    actions[0] = TT_PLACE + 4;
    c_step(&env);
    CHECK(NEAR(rewards[0], -0.1) && env.owner[4] == 0 && !terminals[0]);
    /* Selecting costs 0.1 too. */
    actions[0] = 2;
    c_step(&env);
    CHECK(NEAR(rewards[0], -0.1) && env.selected[0] == 2);
    /* An enemy card north of the centre with south edge 3; ours has north edge 5: it flips.
     * An enemy card west of the centre with east edge 5 against our west edge 5: it stays. */
    env.owner[1] = -1, env.cell_values[1][TT_S] = 3;
    env.owner[3] = -1, env.cell_values[3][TT_E] = 5;
    env.hand[0][2][TT_N] = 5, env.hand[0][2][TT_W] = 5;
    tt_place(&env, 0, 4);
    CHECK(env.owner[1] == 1 && env.owner[3] == -1 && env.owner[4] == 1);
    CHECK(env.score[0] == 6 && env.score[1] == 4 && env.selected[0] == -1);
    CHECK(env.location[0][2] == 5);
    /* A fresh game: 29 select steps, then the 30th step pays -1 and ends it. */
    c_reset(&env);
    for (int i = 0; i < 29; i++) {
        actions[0] = 0;
        c_step(&env);
        CHECK(NEAR(rewards[0], -0.1) && !terminals[0]);
    }
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.log.n == 1.0f);
    CHECK(NEAR(env.log.episode_return, -3.9) && env.log.episode_length == 30.0f);
    /* A full game: five placements on free cells; the fifth fills the board and pays the
     * sign of the score difference. */
    c_reset(&env);
    float last = 0;
    for (int card = 0; card < TT_CARDS; card++) {
        actions[0] = card;
        c_step(&env);
        int cell = 0;
        while (env.owner[cell]) cell++;
        const int mine = env.score[0], theirs = env.score[1];
        actions[0] = TT_PLACE + cell;
        c_step(&env);
        CHECK(terminals[0] == (card == TT_CARDS - 1));
        if (card < TT_CARDS - 1) CHECK(rewards[0] == 0.0f);
        CHECK(mine + theirs == 10);
        last = rewards[0];
    }
    const float perf = env.log.perf;
    CHECK(last == 1.0f ? perf == 1.0f : perf == 0.0f);
    CHECK(env.log.n == 2.0f && env.log.episode_length == 40.0f);
    return 0;
""",
    )


CHECKERS_SETUP = """
    Checkers env = {0};
    uint8_t obs[CK_SQUARES];
    OPEN(&env, obs, );
#define SQ(r, c) ((r) * CK_SIZE + (c))
"""


def test_checkers_opening_moves_and_illegal_actions(run_c) -> None:
    run_c(
        "checkers/checkers.h",
        CHECKERS_SETUP
        + """
    int pawns = 0, enemies = 0;
    for (int s = 0; s < CK_SQUARES; s++) pawns += obs[s] == CK_PAWN, enemies += obs[s] == CK_ENEMY_PAWN;
    CHECK(pawns == 12 && enemies == 12 && obs[SQ(2, 1)] == CK_PAWN && obs[SQ(5, 0)] == CK_ENEMY_PAWN);
    /* A pawn may not step backwards: -1 and nothing moves, not even the opponent. */
    uint8_t before[CK_SQUARES];
    memcpy(before, obs, sizeof(before));
    actions[0] = SQ(2, 1) * 8 + 0;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && !terminals[0] && memcmp(before, obs, sizeof(before)) == 0);
    /* A legal step forward (SE): +0.01, and the opponent answers with one step. */
    actions[0] = SQ(2, 1) * 8 + 3;
    c_step(&env);
    CHECK(NEAR(rewards[0], 0.01) && obs[SQ(2, 1)] == CK_EMPTY && obs[SQ(3, 2)] == CK_PAWN);
    int moved = 0;
    for (int c = 0; c < CK_SIZE; c++) moved += obs[SQ(4, c)] == CK_ENEMY_PAWN;
    CHECK(moved == 1);
    return 0;
""",
    )


def test_checkers_forced_jump_promotion_and_win(run_c) -> None:
    run_c(
        "checkers/checkers.h",
        CHECKERS_SETUP
        + """
    /* One pawn each; ours can jump, so a plain step is illegal. Jumping takes the last enemy
     * piece: +1 and terminal. */
    memset(obs, 0, CK_SQUARES);
    obs[SQ(2, 1)] = CK_PAWN, obs[SQ(3, 2)] = CK_ENEMY_PAWN;
    actions[0] = SQ(2, 1) * 8 + 2;
    c_step(&env);
    CHECK(rewards[0] == -1.0f && obs[SQ(2, 1)] == CK_PAWN);
    actions[0] = SQ(2, 1) * 8 + 7;
    c_step(&env);
    CHECK(rewards[0] == 1.0f && terminals[0] && env.log.perf == 1.0f && env.log.n == 1.0f);
    CHECK(obs[SQ(2, 1)] == CK_PAWN && obs[SQ(5, 0)] == CK_ENEMY_PAWN); /* a new game */
    /* Promotion: a pawn stepping onto row 7 becomes a king, +0.01 + 0.05; the enemy pawn far
     * away then steps. */
    memset(obs, 0, CK_SQUARES);
    obs[SQ(6, 1)] = CK_PAWN, obs[SQ(2, 7)] = CK_ENEMY_PAWN;
    actions[0] = SQ(6, 1) * 8 + 3;
    c_step(&env);
    CHECK(obs[SQ(7, 2)] == CK_KING && NEAR(rewards[0], 0.06) && !terminals[0]);
    CHECK(obs[SQ(1, 6)] == CK_ENEMY_PAWN);
    /* The enemy pawn then jumps our pawn (-0.05 on top of the move's +0.01) and we are left
     * with no piece: -1, terminal. */
    memset(obs, 0, CK_SQUARES);
    obs[SQ(0, 1)] = CK_PAWN, obs[SQ(3, 4)] = CK_ENEMY_PAWN;
    actions[0] = SQ(0, 1) * 8 + 3; /* steps to (1, 2) */
    c_step(&env);
    CHECK(!terminals[0] && NEAR(rewards[0], 0.01) && obs[SQ(2, 3)] == CK_ENEMY_PAWN);
    actions[0] = SQ(1, 2) * 8 + 3; /* into (2, 3)? occupied: illegal */
    c_step(&env);
    CHECK(rewards[0] == -1.0f);
    obs[SQ(2, 3)] = CK_EMPTY, obs[SQ(3, 4)] = CK_ENEMY_PAWN; /* put it back two rows down */
    actions[0] = SQ(1, 2) * 8 + 3; /* to (2, 3): now the enemy must jump it */
    c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && env.log.perf == 1.0f && env.log.n == 2.0f);
    return 0;
""",
    )


GO_SETUP = """
    Go env = {0};
    float obs[GO_OBS];
    OPEN(&env, obs, );
#define PT(r, c) ((r) * GO_N + (c))
"""


def test_go_capture_suicide_and_greedy_reply(run_c) -> None:
    run_c(
        "go/go.h",
        GO_SETUP
        + """
    /* A white stone at the centre with three black neighbours: black fills the last liberty,
     * captures it: +0.1 + 0.25. */
    env.board[PT(3, 3)] = GO_WHITE;
    env.board[PT(2, 3)] = env.board[PT(3, 2)] = env.board[PT(3, 4)] = GO_BLACK;
    actions[0] = 1 + PT(4, 3);
    c_step(&env);
    CHECK(NEAR(rewards[0], 0.35) && env.captures[0] == 1 && env.board[PT(3, 3)] == GO_EMPTY);
    CHECK(obs[2 * GO_POINTS] == 1.0f && obs[PT(4, 3)] == 1.0f);
    /* The greedy reply: every black stone has 4 liberties; the first group in board order is
     * (2, 3), whose lowest liberty is (1, 3). */
    CHECK(env.board[PT(1, 3)] == GO_WHITE && obs[GO_POINTS + PT(1, 3)] == 1.0f);
    /* Suicide: (0, 0) with white on (0, 1) and (1, 0) and no capture is illegal: -0.1, and the
     * opponent does not move. */
    env.board[PT(0, 1)] = env.board[PT(1, 0)] = GO_WHITE;
    int8_t before[GO_POINTS];
    memcpy(before, env.board, GO_POINTS);
    actions[0] = 1 + PT(0, 0);
    c_step(&env);
    CHECK(NEAR(rewards[0], -0.1) && memcmp(before, env.board, GO_POINTS) == 0);
    /* An occupied point is illegal too; a pass costs 0.25 and the opponent moves. */
    actions[0] = 1 + PT(4, 3);
    c_step(&env);
    CHECK(NEAR(rewards[0], -0.1));
    actions[0] = 0;
    c_step(&env);
    int white = 0;
    for (int p = 0; p < GO_POINTS; p++) white += env.board[p] == GO_WHITE;
    CHECK(NEAR(rewards[0], -0.25) && white == 4);
    return 0;
""",
    )


def test_go_ko_scoring_and_move_limit(run_c) -> None:
    run_c(
        "go/go.h",
        GO_SETUP
        + """
    /* . B W .
     * B W . W    black takes at (1, 2); white may not retake at (1, 1) at once (ko).
     * . B W .  */
    env.board[PT(0, 1)] = env.board[PT(1, 0)] = env.board[PT(2, 1)] = GO_BLACK;
    env.board[PT(0, 2)] = env.board[PT(1, 1)] = env.board[PT(1, 3)] = env.board[PT(2, 2)] = GO_WHITE;
    memcpy(env.after_move[GO_WHITE - 1], env.board, GO_POINTS);
    int8_t next[GO_POINTS];
    CHECK(go_try(&env, GO_BLACK, PT(1, 2), next) == 1);
    go_commit(&env, GO_BLACK, next, 1);
    CHECK(env.board[PT(1, 1)] == GO_EMPTY && env.captures[0] == 1);
    CHECK(go_try(&env, GO_WHITE, PT(1, 1), next) == -1);
    CHECK(go_try(&env, GO_WHITE, PT(5, 5), next) == 0);
    /* Tromp-Taylor: a black wall down column 3 owns the whole board: 49 - 7.5. */
    memset(env.board, 0, GO_POINTS);
    for (int r = 0; r < GO_N; r++) env.board[PT(r, 3)] = GO_BLACK;
    CHECK(go_area(env.board) == 49);
    env.board[PT(0, 6)] = GO_WHITE; /* the right side now touches both colours */
    CHECK(go_area(env.board) == 7 + 3 * 7 - 1);
    /* Step 148 ends the game unplayed: one black and one white stone, the rest neutral:
     * 1 - 1 - 7.5 < 0 pays -1. */
    c_reset(&env);
    actions[0] = 1 + PT(0, 0);
    for (int t = 0; t < 147; t++) {
        c_step(&env);
        CHECK(!terminals[0]);
    }
    c_step(&env);
    CHECK(terminals[0] && rewards[0] == -1.0f && env.log.n == 1.0f);
    CHECK(env.log.episode_length == 148.0f && NEAR(env.log.score, -7.5) && env.log.perf == 0);
    return 0;
""",
    )
