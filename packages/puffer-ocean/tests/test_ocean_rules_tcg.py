"""Rules of tcg (the card game of PufferLib 3.0's tcg header, with our scripted opponent and
episode end), checked in C on hand-dealt cards against the rules table in csrc/tcg/tcg.h. The
`run_c` fixture is in conftest.py."""

from __future__ import annotations

PRELUDE = """
static TcgCard creature(int cost) {
    return (TcgCard){(int8_t)cost, (int8_t)(cost + 1), (int8_t)(cost + 1), 0, 0, 0, -1};
}
static TcgCard land(void) { return (TcgCard){0, 0, 0, 1, 0, 0, -1}; }
/* Empties a player's hand and board and gives it a deck of `n` lands. */
static void clear(TcgPlayer *p, int n) {
    p->hand_len = p->board_len = 0, p->mana = p->land_played = 0, p->deck_len = n;
    for (int i = 0; i < n; i++) p->deck[i] = land();
}
"""

SETUP = """
    Tcg env = {0};
    float obs[TCG_OBS];
    BIND(&env, obs);
    TcgPlayer *me = &env.players[0], *op = &env.players[1];
    clear(me, 20), clear(op, 20);
    me->health = op->health = 20;
"""


def test_tcg_deal(run_c) -> None:
    run_c(
        "tcg/tcg.h",
        """
    Tcg env = {0};
    float obs[TCG_OBS];
    BIND(&env, obs);
    CHECK(env.turn == 0 && (env.phase == TCG_PLAY || env.phase == TCG_ATTACK));
    int lands = 0;
    for (int side = 0; side < 2; side++) {
        const TcgPlayer *p = &env.players[side];
        CHECK(p->health == 20 && p->hand_len + p->board_len + p->deck_len == 60);
        CHECK(p->hand_len >= 5 - p->board_len);
        for (int i = 0; i < p->deck_len; i++) {
            const TcgCard *c = &p->deck[i];
            CHECK(c->land ? c->cost == 0 && c->attack == 0
                          : c->cost <= 5 && c->attack == c->cost + 1 && c->health == c->attack);
            lands += c->land;
        }
    }
    CHECK(lands > 10 && lands < 60); /* about a third of ~100 cards */
    CHECK(obs[210] == 1.0f && obs[211] <= 1.0f && obs[217] + obs[218] == 1.0f);
    c_close(&env);""",
        PRELUDE,
    )


def test_tcg_play_attack_and_turns(run_c) -> None:
    run_c(
        "tcg/tcg.h",
        SETUP
        + """
    me->hand[0] = land(), me->hand[1] = creature(2), me->hand[2] = creature(0);
    me->hand[3] = land(), me->hand_len = 4;
    env.turn = 0, env.phase = TCG_PLAY;
    /* Cost 2 with no land: nothing. A land; a second land the same turn: nothing. */
    actions[0] = 1, c_step(&env);
    CHECK(me->board_len == 0 && me->hand_len == 4 && obs[217] == 1.0f);
    actions[0] = 0, c_step(&env);
    CHECK(me->board_len == 1 && me->board[0].land && me->land_played && obs[213] == 1.0f);
    actions[0] = 2, c_step(&env);
    CHECK(me->board_len == 1 && me->hand_len == 3);
    /* Cost 2 with one land: nothing; cost 0: played, nothing tapped. */
    actions[0] = 0, c_step(&env);
    CHECK(me->board_len == 1);
    actions[0] = 1, c_step(&env);
    CHECK(me->board_len == 2 && me->board[1].attack == 1 && !me->board[0].tapped);
    CHECK(obs[50 + 8] == 1.0f && NEAR(obs[50 + 8 + 6], 1.0 / 6));
    /* Enter: the attack phase. A land cannot attack; the 1/1 can (its toggle shows). */
    actions[0] = TCG_ENTER, c_step(&env);
    CHECK(env.phase == TCG_ATTACK && obs[218] == 1.0f);
    actions[0] = 0, c_step(&env);
    CHECK(!me->board[0].attacking);
    actions[0] = 1, c_step(&env);
    CHECK(me->board[1].attacking && obs[50 + 8 + 3] == 1.0f);
    /* Declared: the opponent cannot block (no creatures), takes 1 and draws; its turn (it
     * draws and plays a land, has no attacker); then yours: your land untaps, you draw. */
    actions[0] = TCG_ENTER, c_step(&env);
    CHECK(op->health == 19 && op->deck_len == 18 && op->board_len == 1 && op->hand_len == 1);
    CHECK(env.turn == 0 && env.phase == TCG_PLAY && me->deck_len == 19 && !me->land_played);
    CHECK(!me->board[1].attacking && NEAR(obs[211], 19.0 / 20));
    /* The drawn land goes down; a cost-2 creature needs 2 lands. */
    me->hand[me->hand_len++] = creature(1);
    actions[0] = me->hand_len - 1, c_step(&env);
    CHECK(me->board_len == 3 && me->board[0].tapped && me->mana == 0);
    c_close(&env);""",
        PRELUDE,
    )


def test_tcg_blocking_and_combat(run_c) -> None:
    run_c(
        "tcg/tcg.h",
        SETUP
        + """
    /* The opponent attacks with a 4/4 and a 2/2 against your 1/1 and 3/3. */
    op->board[0] = creature(3), op->board[1] = creature(1), op->board_len = 2;
    me->board[0] = creature(0), me->board[1] = creature(2), me->board[2] = land();
    me->board_len = 3;
    me->hand[0] = land(), me->hand_len = 1;
    env.turn = 1, env.phase = TCG_ATTACK;
    tcg_advance(&env, TCG_NOOP);
    CHECK(env.turn == 0 && env.phase == TCG_BLOCK && env.block_idx == 0);
    CHECK(op->board[0].attacking && op->board[1].attacking && obs[219] == 0.0f);
    /* Toggle: block, unblock, block again; both creatures block the 4/4. */
    actions[0] = 0, c_step(&env);
    CHECK(me->board[0].defending == 0);
    c_step(&env);
    CHECK(me->board[0].defending == -1);
    c_step(&env);
    actions[0] = 1, c_step(&env);
    actions[0] = 2, c_step(&env); /* a land cannot block */
    CHECK(me->board[1].defending == 0 && me->board[2].defending == -1 && obs[219] == 1.0f);
    /* Next attacker: no free blocker left, so combat resolves. The 4/4 kills the 1/1 (3
     * attack left), then the 3/3 (0 left) and dies to their 1 + 3 damage; the 2/2 is
     * unblocked: 2 damage. You draw for the combat and for your turn. */
    actions[0] = TCG_ENTER, c_step(&env);
    CHECK(me->health == 18 && me->board_len == 1 && me->board[0].land && NEAR(rewards[0], -0.1));
    CHECK(op->board_len == 1 && op->board[0].attack == 2 && !op->board[0].attacking);
    CHECK(me->hand_len == 3 && me->deck_len == 18 && env.turn == 0 && env.phase == TCG_PLAY);
    /* A blocker the attack does not reach survives unhurt, and the attacker's attack is
     * spent: your 5/5 stops a 2/2 (which dies to its 5 damage), no damage to you. */
    me->board[1] = creature(4), me->board_len = 2;
    op->board[0] = creature(1), op->board_len = 1;
    env.turn = 1, env.phase = TCG_ATTACK;
    tcg_advance(&env, TCG_NOOP);
    actions[0] = 1, c_step(&env);
    actions[0] = TCG_ENTER, c_step(&env);
    CHECK(me->health == 18 && me->board_len == 2 && me->board[1].health == 5);
    CHECK(op->board_len == 0);
    c_close(&env);""",
        PRELUDE,
    )


def test_tcg_game_ends(run_c) -> None:
    run_c(
        "tcg/tcg.h",
        SETUP
        + """
    /* Your unblocked 6/6 finishes the opponent at 5: 5 / 20 for the health (down to 0 only)
     * and +1, terminal, logged as a win. */
    me->board[0] = creature(5), me->board_len = 1;
    op->health = 5;
    env.turn = 0, env.phase = TCG_ATTACK;
    actions[0] = 0, c_step(&env);
    actions[0] = TCG_ENTER, c_step(&env);
    CHECK(NEAR(rewards[0], 1.25) && terminals[0] && env.log.score == 1.0f && env.log.n == 1.0f);
    CHECK(NEAR(env.log.episode_return, 1.25));
    CHECK(env.log.episode_length == 2.0f && env.players[0].health == 20);
    /* The opponent's 3/3 finishes you at 3: -3 / 20 - 1. */
    clear(me, 20), clear(op, 20);
    me->health = 3, op->health = 20;
    op->board[0] = creature(2), op->board_len = 1;
    env.turn = 1, env.phase = TCG_ATTACK;
    actions[0] = TCG_NOOP, c_step(&env);
    CHECK(NEAR(rewards[0], -1.15) && terminals[0] && env.log.n == 2.0f && env.log.score == 1.0f);
    /* Drawing from an empty deck: a draw, 0. */
    clear(me, 0), clear(op, 20);
    me->hand[0] = land(), me->hand_len = 1;
    env.turn = 1, env.phase = TCG_ATTACK; /* no attacker: your turn comes, and your draw */
    actions[0] = TCG_NOOP, c_step(&env);
    CHECK(rewards[0] == 0.0f && terminals[0] && env.log.n == 3.0f);
    /* max_steps of your decisions: you forfeit. */
    env.steps = 999;
    actions[0] = TCG_NOOP, c_step(&env);
    CHECK(rewards[0] == -1.0f && terminals[0] && !truncations[0] && env.log.n == 4.0f);
    CHECK(env.steps == 0 && env.log.score == 1.0f);
    c_close(&env);""",
        PRELUDE,
    )
