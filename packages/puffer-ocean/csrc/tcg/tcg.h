/* TCG: a small trading-card duel of lands and creatures against a scripted opponent (PufferLib
 * 3.0's tcg header, a game engine without an RL interface; its rules restated in our own code,
 * the interface and the opponent ours).
 *
 * Rules (you are player 0; the opponent, player 1, plays by script):
 * | decks    | 60 cards each, drawn from the top; a card is a land with chance 1/3, else a    |
 * |          | creature of cost c in 0..5 (uniform) with attack and health c + 1              |
 * | start    | 20 health each, 5 cards each, a random player begins with its draw step       |
 * | turn     | untap (your lands untap, your mana pool empties), draw 1 (hand at most 10),   |
 * |          | play, attack; then the other player's turn                                      |
 * | play     | a card index plays that card: one land a turn; a creature whose cost the pool  |
 * |          | plus untapped lands covers (lands tap in board order); at most 10 cards on the |
 * |          | board. Enter ends the phase; it also ends by itself when the board is full or  |
 * |          | nothing can be played (no land in hand and no creature affordable)              |
 * | attack   | a card index toggles that creature as an attacker; enter declares them; with   |
 * |          | no creature the turn ends                                                        |
 * | block    | the defender, attacker by attacker: a card index toggles one of its creatures  |
 * |          | blocking it, enter moves to the next attacker                                   |
 * | combat   | each attacker meets its blockers in board order: one whose health its         |
 * |          | remaining attack reaches dies and uses that attack up, else the attack is      |
 * |          | spent; every blocker's attack wounds the attacker, which dies at 0 health. The |
 * |          | attack left over hits the defending player. Then the defender draws a card    |
 * | reward   | each step, (health the opponent lost - health you lost) / 20, counting health  |
 * |          | down to 0 only                                                                  |
 * | end      | a player at 0 health: +1 to you if it is the opponent, -1 if it is you        |
 * |          | (terminal); a draw from an empty deck: terminal, 0; after max_steps [1000] of  |
 * |          | your decisions you forfeit: -1, terminal (so stalling never beats losing)       |
 * Invalid actions (an empty slot, a second land, a card too dear, a land attacking) change
 * nothing. The opponent plays its first land, then its dearest affordable creature, attacks
 * with every creature, and never blocks.
 * Observation: (221,) float32 in [0, 1]: your hand (10 slots: present, land, cost / 5,
 * attack / 6, health / 6), your board and the opponent's (10 slots each: present, land,
 * tapped, attacking, blocking, attacker blocked + 1 / 10, attack / 6, health / 6), your health
 * / 20, the opponent's / 20, your mana / 10, land played, opponent's hand / 10, decks / 60,
 * phase one-hot (play, attack, block), attacker to block / 10.
 * Action: Discrete(12): card 0-9 (hand in play, board in attack and block), enter, no-op.
 *
 * Deliberate differences from PufferLib 3.0's header (no observation, reward, opponent or
 * episode end there: all ours, above): combat damage hits the defending player (theirs
 * subtracts it from the attacker's own health) and a finished game ends the episode instead of
 * restarting inside the combat that ended it.
 */
#ifndef PUFFER_TCG_H
#define PUFFER_TCG_H

#include "../puffer.h"
#include "../raster.h"

PUFFER_ENV_BEGIN(tcg)

enum { TCG_HAND = 10, TCG_BOARD = 10, TCG_DECK = 60, TCG_HEALTH = 20, TCG_START_HAND = 5 };
enum { TCG_ENTER = 10, TCG_NOOP = 11 };
enum { TCG_UNTAP, TCG_DRAW, TCG_PLAY, TCG_ATTACK, TCG_BLOCK };
enum { TCG_HAND_OBS = 5, TCG_BOARD_OBS = 8 };
enum { TCG_OBS = TCG_HAND * TCG_HAND_OBS + 2 * TCG_BOARD * TCG_BOARD_OBS + 11 };
enum { TCG_W = 1080, TCG_H = 720, TCG_CARD_W = 64, TCG_CARD_H = 128 };

typedef struct {
    float episode_return;
    float episode_length;
    float score; /* 1 for a win */
    float n;
} Log;
_Static_assert(sizeof(Log) % sizeof(float) == 0, "Log holds floats only");
static const char *LOG_NAMES[] = {"episode_return", "episode_length", "score", "n"};

typedef struct {
    int8_t cost, attack, health, land, tapped, attacking, defending; /* defending: -1 none */
} TcgCard;

typedef struct {
    TcgCard hand[TCG_HAND], board[TCG_BOARD], deck[TCG_DECK];
    int hand_len, board_len, deck_len, health, mana, land_played;
} TcgPlayer;

typedef struct {
    float *observations; /* (1, 221) */
    int32_t *actions;    /* (1,) */
    float *rewards;
    uint8_t *terminals;
    uint8_t *truncations;
    int num_agents;
    uint64_t rng;
    Log log;
    int max_steps;                           /* config */
    int steps, phase, turn, block_idx, over; /* over: 0 playing, else winner + 1, 3 a draw */
    float episode_return;
    TcgPlayer players[2];
} Tcg;

static const PufferField CONFIG[] = {
    {"max_steps", offsetof(Tcg, max_steps), PUFFER_INT, 1000, 10, 1e9,
     "your decisions before you forfeit the game"},
    {NULL, 0, PUFFER_INT, 0, 0, 0, NULL},
};

static void c_init(Tcg *env) {
    env->num_agents = 1;
}

static void tcg_remove(TcgCard *cards, int *len, int at) {
    for (int i = at; i < *len - 1; i++)
        cards[i] = cards[i + 1];
    (*len)--;
}

/* Draws the top card; an empty deck ends the game as a draw. */
static void tcg_draw(Tcg *env, TcgPlayer *p) {
    if (p->deck_len == 0) {
        env->over = 3;
        return;
    }
    if (p->hand_len == TCG_HAND) return;
    p->hand[p->hand_len++] = p->deck[--p->deck_len];
}

static int tcg_untapped_lands(const TcgPlayer *p) {
    int n = 0;
    for (int i = 0; i < p->board_len; i++)
        n += p->board[i].land && !p->board[i].tapped;
    return n;
}

/* Whether the play phase waits for a decision: a land in hand (even one that cannot be played
 * this turn, as in theirs) or a creature the mana covers. */
static int tcg_can_play(const TcgPlayer *p) {
    int cheapest = 99;
    for (int i = 0; i < p->hand_len; i++) {
        if (p->hand[i].land) return 1;
        if (p->hand[i].cost < cheapest) cheapest = p->hand[i].cost;
    }
    return p->mana + tcg_untapped_lands(p) >= cheapest;
}

static int tcg_has_creature(const TcgPlayer *p) {
    for (int i = 0; i < p->board_len; i++)
        if (!p->board[i].land) return 1;
    return 0;
}

static void tcg_play(TcgPlayer *p, int at) {
    TcgCard card = p->hand[at];
    if (card.land) {
        if (p->land_played) return;
        p->land_played = 1;
    } else {
        if (card.cost > p->mana + tcg_untapped_lands(p)) return;
        for (int i = 0; i < p->board_len && p->mana < card.cost; i++)
            if (p->board[i].land && !p->board[i].tapped) p->board[i].tapped = 1, p->mana++;
        p->mana -= card.cost;
    }
    p->board[p->board_len++] = card;
    tcg_remove(p->hand, &p->hand_len, at);
}

/* Combat of the attacking player against the defender; a defender at 0 health ends the game. */
static void tcg_combat(Tcg *env, TcgPlayer *att, TcgPlayer *def) {
    for (int k = 0; k < att->board_len; k++) {
        TcgCard *attacker = &att->board[k];
        if (!attacker->attacking) continue;
        int attack = attacker->attack, health = attacker->health;
        for (int d = 0; d < def->board_len; d++) {
            TcgCard *blocker = &def->board[d];
            if (blocker->defending != k || blocker->health <= 0) continue;
            if (attack >= blocker->health) {
                attack -= blocker->health;
                blocker->health = 0;
            } else {
                attack = 0;
            }
            health -= blocker->attack;
            if (health <= 0) {
                attacker->health = 0;
                break;
            }
        }
        def->health -= attack;
    }
    for (int side = 0; side < 2; side++) {
        TcgPlayer *p = side ? def : att;
        for (int i = p->board_len - 1; i >= 0; i--)
            if (p->board[i].health <= 0 && !p->board[i].land)
                tcg_remove(p->board, &p->board_len, i);
        for (int i = 0; i < p->board_len; i++)
            p->board[i].attacking = 0, p->board[i].defending = -1;
    }
    if (def->health <= 0) env->over = (int)(att - env->players) + 1;
}

/* Runs the current phase with `action`; returns 1 when it waits for the player to move. */
static int tcg_phase(Tcg *env, int action) {
    TcgPlayer *p = &env->players[env->turn], *other = &env->players[1 - env->turn];
    switch (env->phase) {
    case TCG_UNTAP:
        p->land_played = 0;
        env->turn = 1 - env->turn;
        other->mana = 0;
        for (int i = 0; i < other->board_len; i++)
            if (other->board[i].land) other->board[i].tapped = 0;
        env->phase = TCG_DRAW;
        return 0;
    case TCG_DRAW:
        tcg_draw(env, p);
        env->phase = TCG_PLAY;
        return 0;
    case TCG_PLAY:
        if (p->board_len == TCG_BOARD || !tcg_can_play(p) || action == TCG_ENTER) {
            env->phase = TCG_ATTACK;
            return 0;
        }
        if (action < p->hand_len) tcg_play(p, action);
        return 1;
    case TCG_ATTACK:
        if (!tcg_has_creature(p)) {
            env->phase = TCG_UNTAP;
            return 0;
        }
        if (action == TCG_ENTER) {
            env->turn = 1 - env->turn;
            env->phase = TCG_BLOCK;
            return 0;
        }
        if (action < p->board_len && !p->board[action].land)
            p->board[action].attacking = !p->board[action].attacking;
        return 1;
    default: /* block: `p` defends, `other` attacks */
        while (env->block_idx < other->board_len && !other->board[env->block_idx].attacking)
            env->block_idx++;
        int can_block = 0;
        for (int i = 0; i < p->board_len; i++) {
            const TcgCard *c = &p->board[i];
            can_block |= !c->land && (c->defending == -1 || c->defending == env->block_idx);
        }
        if (!can_block || env->block_idx >= other->board_len) {
            tcg_combat(env, other, p);
            if (!env->over) tcg_draw(env, p);
            env->block_idx = 0;
            env->turn = 1 - env->turn;
            env->phase = TCG_UNTAP;
            return 0;
        }
        if (action == TCG_ENTER) {
            env->block_idx++;
            return 0;
        }
        if (action >= p->board_len || p->board[action].land) return 1;
        TcgCard *c = &p->board[action];
        if (c->defending >= 0 && c->defending < env->block_idx) return 1;
        c->defending = (int8_t)(c->defending == env->block_idx ? -1 : env->block_idx);
        return 1;
    }
}

/* The scripted opponent's move in the phase waiting for it. */
static int tcg_opponent(const Tcg *env) {
    const TcgPlayer *p = &env->players[1];
    if (env->phase == TCG_PLAY) {
        int best = -1;
        for (int i = 0; i < p->hand_len; i++) {
            const TcgCard *c = &p->hand[i];
            if (c->land && !p->land_played) return i;
            if (!c->land && c->cost <= p->mana + tcg_untapped_lands(p) &&
                (best < 0 || c->cost > p->hand[best].cost))
                best = i;
        }
        return best >= 0 ? best : TCG_ENTER;
    }
    if (env->phase == TCG_ATTACK)
        for (int i = 0; i < p->board_len; i++)
            if (!p->board[i].land && !p->board[i].attacking) return i;
    return TCG_ENTER;
}

/* Plays phases, the opponent's decisions included, until the game waits for you or ends. */
static void tcg_advance(Tcg *env, int action) {
    while (!env->over) {
        if (tcg_phase(env, action)) {
            if (env->turn == 0) return;
            action = tcg_opponent(env);
        } else {
            action = TCG_NOOP;
        }
    }
}

static void tcg_card_obs(float *o, const TcgCard *c, int on_board) {
    o[0] = 1.0f, o[1] = c->land;
    if (!on_board) {
        o[2] = c->cost / 5.0f, o[3] = c->attack / 6.0f, o[4] = c->health / 6.0f;
        return;
    }
    o[2] = c->tapped, o[3] = c->attacking, o[4] = c->defending >= 0;
    o[5] = (c->defending + 1) / 10.0f, o[6] = c->attack / 6.0f, o[7] = c->health / 6.0f;
}

static void tcg_observe(Tcg *env) {
    float *o = env->observations;
    const TcgPlayer *me = &env->players[0], *op = &env->players[1];
    memset(o, 0, TCG_OBS * sizeof(float));
    for (int i = 0; i < me->hand_len; i++)
        tcg_card_obs(o + i * TCG_HAND_OBS, &me->hand[i], 0);
    o += TCG_HAND * TCG_HAND_OBS;
    for (int side = 0; side < 2; side++, o += TCG_BOARD * TCG_BOARD_OBS)
        for (int i = 0; i < env->players[side].board_len; i++)
            tcg_card_obs(o + i * TCG_BOARD_OBS, &env->players[side].board[i], 1);
    o[0] = me->health / (float)TCG_HEALTH, o[1] = op->health / (float)TCG_HEALTH;
    o[2] = me->mana / 10.0f, o[3] = me->land_played, o[4] = op->hand_len / 10.0f;
    o[5] = me->deck_len / (float)TCG_DECK, o[6] = op->deck_len / (float)TCG_DECK;
    o[7] = env->phase == TCG_PLAY, o[8] = env->phase == TCG_ATTACK;
    o[9] = env->phase == TCG_BLOCK, o[10] = env->block_idx / 10.0f;
}

static void tcg_deal(Tcg *env) {
    for (int side = 0; side < 2; side++) {
        TcgPlayer *p = &env->players[side];
        memset(p, 0, sizeof(*p));
        p->deck_len = TCG_DECK, p->health = TCG_HEALTH;
        for (int i = 0; i < TCG_DECK; i++) {
            TcgCard *c = &p->deck[i];
            c->defending = -1;
            if (rng_int(&env->rng, 3) == 0) {
                c->land = 1;
                continue;
            }
            c->cost = (int8_t)rng_int(&env->rng, 6);
            c->attack = c->health = (int8_t)(c->cost + 1);
        }
    }
    env->turn = rng_int(&env->rng, 2);
    for (int i = 0; i < TCG_START_HAND; i++)
        tcg_draw(env, &env->players[0]), tcg_draw(env, &env->players[1]);
    env->phase = TCG_DRAW;
    env->block_idx = env->over = 0;
}

static void c_reset(Tcg *env) {
    env->steps = 0;
    env->episode_return = 0.0f;
    do { /* a game the opponent finishes before you move is dealt again */
        tcg_deal(env);
        tcg_advance(env, TCG_NOOP);
    } while (env->over);
    tcg_observe(env);
}

static void c_step(Tcg *env) {
    TcgPlayer *me = &env->players[0], *op = &env->players[1];
    const int me_before = me->health, op_before = op->health;
    env->steps++;
    tcg_advance(env, env->actions[0]);
    if (!env->over && env->steps >= env->max_steps) env->over = 2;
    const int me_lost = me_before - (me->health > 0 ? me->health : 0);
    const int op_lost = op_before - (op->health > 0 ? op->health : 0);
    float reward = (float)(op_lost - me_lost) / TCG_HEALTH;
    reward += env->over == 1 ? 1.0f : (env->over == 2 ? -1.0f : 0.0f);
    env->rewards[0] = reward;
    env->terminals[0] = (uint8_t)(env->over != 0);
    env->truncations[0] = 0;
    env->episode_return += reward;
    if (env->over) {
        env->log.episode_return += env->episode_return;
        env->log.episode_length += (float)env->steps;
        env->log.score += (float)(env->over == 1);
        env->log.n += 1.0f;
        c_reset(env);
        return;
    }
    tcg_observe(env);
}

static void c_frame_size(const Tcg *env, int *width, int *height) {
    (void)env;
    *width = TCG_W;
    *height = TCG_H;
}

static void tcg_draw_cards(Canvas *canvas, const TcgCard *cards, int n, int row, int lift,
                           Color color, int labels) {
    for (int i = 0; i < n; i++) {
        const TcgCard *c = &cards[i];
        const int x = TCG_W / 2 - 36 * n + 72 * i, y = 64 + 148 * row + (c->attacking ? lift : 0);
        const Color dim = {(uint8_t)(color.r / 2), (uint8_t)(color.g / 2), (uint8_t)(color.b / 2)};
        const Color face = c->tapped ? dim : color;
        raster_rect(canvas, x, y, TCG_CARD_W, TCG_CARD_H, face);
        if (c->land) {
            raster_text(canvas, x + 8, y + 40, "LAND", 3, COLOR_WHITE);
        } else {
            raster_number(canvas, x + 26, y + 12, c->cost, 3, COLOR_WHITE);
            raster_number(canvas, x + 26, y + 36, c->attack, 3, COLOR_WHITE);
            raster_number(canvas, x + 26, y + 60, c->health, 3, COLOR_WHITE);
        }
        if (c->defending >= 0) raster_rect(canvas, x + 28, y - 20, 8, 20, COLOR_WHITE);
        if (labels) raster_number(canvas, x + 26, y + 96, (i + 1) % 10, 3, COLOR_YELLOW);
    }
}

static void c_render(const Tcg *env, Canvas *canvas) {
    static const char *PHASES[] = {"UNTAP", "DRAW", "PLAY", "ATTACK", "BLOCK"};
    const TcgPlayer *me = &env->players[0], *op = &env->players[1];
    raster_clear(canvas, COLOR_BACKGROUND);
    tcg_draw_cards(canvas, op->hand, op->hand_len, 0, 0, COLOR_BLUE, 0);
    tcg_draw_cards(canvas, op->board, op->board_len, 1, 16, COLOR_BLUE, 0);
    tcg_draw_cards(canvas, me->board, me->board_len, 2, -16, COLOR_RED, env->phase != TCG_PLAY);
    tcg_draw_cards(canvas, me->hand, me->hand_len, 3, 0, COLOR_RED, env->phase == TCG_PLAY);
    raster_text(canvas, TCG_W - 160, 24, PHASES[env->phase], 4, COLOR_WHITE);
    raster_number(canvas, 24, 24, op->health, 4, COLOR_BLUE);
    raster_number(canvas, 24, TCG_H - 48, me->health, 4, COLOR_RED);
}

static void c_close(Tcg *env) {
    (void)env;
}

static const int ACTION_SIZES[] = {12};
static const PufferKey KEYS[] = {{"1", 0, 0},
                                 {"2", 0, 1},
                                 {"3", 0, 2},
                                 {"4", 0, 3},
                                 {"5", 0, 4},
                                 {"6", 0, 5},
                                 {"7", 0, 6},
                                 {"8", 0, 7},
                                 {"9", 0, 8},
                                 {"0", 0, 9},
                                 {"return", 0, TCG_ENTER},
                                 {"space", 0, TCG_NOOP},
                                 {NULL, 0, 0}};
static const PufferSpec SPEC = {
    .doc = "A trading-card duel: lands pay for creatures (cost 0-5, attack = health = cost + "
           "1), creatures attack and block, 20 health each, against a scripted opponent that "
           "plays its best card and always attacks. Health swing / 20 each step; +1 win, -1 loss "
           "(terminal), 0 when a deck "
           "runs out, -1 on reaching max_steps decisions. Observation: (221,) float32: your hand, "
           "both boards, health, mana, phase. "
           "Action: Discrete(12): card 0-9, enter (end the phase / next attacker), no-op.",
    .obs_dtype = PUFFER_FLOAT32,
    .obs_size = TCG_OBS,
    .obs_low = 0,
    .obs_high = 1,
    .action_heads = PUFFER_COUNT(ACTION_SIZES),
    .action_sizes = ACTION_SIZES,
    PUFFER_SPEC_TABLES(Tcg),
};

PUFFER_ENV_END(tcg, Tcg)

#endif
