/* Tower climb's puzzle: the block tower, the climber's moves and the level generator (the rules
 * table is in tower_climb.h). Shared by the env's step and by the generator's breadth-first
 * solver, which checks every level with the same move function the agent plays.
 *
 * Cells are flat indices x + 10 z + 100 y (x, z in [0, 10) across a floor, y the floor). Moves
 * add +1, +10, -1, -10 to an index as PufferLib does, so a step off the side of a floor lands on
 * the neighbouring row (x) or floor (z); cells outside [0, 1000) read empty.
 */
#ifndef PUFFER_TOWER_PUZZLE_H
#define PUFFER_TOWER_PUZZLE_H

#include "../puffer.h"

enum { TC_SIDE = 10, TC_FLOOR = 100, TC_CELLS = 1000, TC_MASK_BYTES = 128 };
/* Directions and move actions share numbers; then grab and drop. */
enum { TC_RIGHT, TC_DOWN, TC_LEFT, TC_UP, TC_GRAB, TC_DROP, TC_ACTIONS };
enum { TC_ILLEGAL, TC_OK, TC_DEATH };
enum { TC_FALL_QUEUE = 4096 }; /* settling queue; PufferLib's holds 1,000 and can overrun */
static const int TC_STEP[4] = {1, TC_SIDE, -1, -TC_SIDE};

/* The tower and the climber. Plain bytes with no padding holes, so equal states compare and hash
 * equal byte for byte (the solver relies on it). */
typedef struct {
    uint8_t blocks[TC_MASK_BYTES]; /* bit c: a block at cell c (bits >= 1000 stay 0) */
    int16_t position;              /* the climber's cell */
    int16_t grabbed;               /* the held block's cell, -1 if none */
    uint8_t orientation;           /* TC_RIGHT .. TC_UP: the direction it faces */
    uint8_t hanging;               /* 1: hangs from the ledge of the block it faces */
    uint8_t unused[2];
} TcPuzzle;
_Static_assert(sizeof(TcPuzzle) == TC_MASK_BYTES + 8, "TcPuzzle has no padding");

/* What a successful move did, for the env's rewards (the solver ignores it). */
typedef struct {
    int climbed_to; /* floor reached by a climb from standing, else 0 */
    int fell;       /* walked off a ledge */
    int moved;      /* a push, a pull or a turn while holding a block */
} TcEvents;

static inline int tc_valid(int c) {
    return c >= 0 && c < TC_CELLS;
}
static inline int tc_block(const TcPuzzle *s, int c) {
    return tc_valid(c) && (s->blocks[c >> 3] >> (c & 7)) & 1;
}
static inline void tc_set(TcPuzzle *s, int c) {
    if (tc_valid(c)) s->blocks[c >> 3] |= (uint8_t)(1u << (c & 7));
}
static inline void tc_clear(TcPuzzle *s, int c) {
    if (tc_valid(c)) s->blocks[c >> 3] &= (uint8_t)~(1u << (c & 7));
}

/* A block (or the goal) at c rests if a block lies below it or below one of its four sides. */
static int tc_supported(const TcPuzzle *s, int c) {
    const int below = c - TC_FLOOR;
    return tc_block(s, below) || tc_block(s, below - 1) || tc_block(s, below + 1) ||
           tc_block(s, below - TC_SIDE) || tc_block(s, below + TC_SIDE);
}
static int tc_unsupported(const TcPuzzle *s, int c, int goal) {
    return tc_valid(c) && (tc_block(s, c) || c == goal) && !tc_supported(s, c);
}

typedef struct {
    int cells[TC_FALL_QUEUE];
    int front, rear;
} TcFallQueue;

static void tc_queue(TcFallQueue *q, int c) {
    if (q->rear < TC_FALL_QUEUE) q->cells[q->rear++] = c;
}
/* Queues the unsupported cells among the one above c and that cell's four sides. */
static void tc_queue_above(const TcPuzzle *s, TcFallQueue *q, int c, int goal) {
    const int above = c + TC_FLOOR;
    const int near[5] = {above, above - 1, above + 1, above - TC_SIDE, above + TC_SIDE};
    for (int i = 0; i < 5; i++)
        if (tc_unsupported(s, near[i], goal)) tc_queue(q, near[i]);
}

/* Gravity after blocks moved from `from` (n_from cells, -1 skipped) to `to` (n_to cells): each
 * queued block drops floor by floor until it rests (one that passes floor 1 leaves the tower),
 * and the blocks it uncovered are queued in turn. A queued cell is processed even if it was
 * queued twice, as PufferLib's queue does. Returns 0 if the goal would fall (the move fails,
 * what moved so far stays moved). */
static int tc_settle(TcPuzzle *s, const int *to, int n_to, const int *from, int n_from, int goal) {
    TcFallQueue q;
    q.front = q.rear = 0;
    for (int i = 0; i < n_to; i++)
        tc_queue(&q, to[i]);
    for (int i = 0; i < n_from; i++)
        if (from[i] >= 0) tc_queue_above(s, &q, from[i], goal);
    while (q.front < q.rear) {
        const int c = q.cells[q.front++];
        if (c == goal) return 0;
        tc_clear(s, c);
        for (int at = c; at >= TC_FLOOR; at -= TC_FLOOR) {
            tc_set(s, at);
            if (tc_supported(s, at)) break;
            tc_clear(s, at);
        }
        tc_queue_above(s, &q, c, goal);
    }
    return 1;
}

static int tc_floor_edge(int c, int offset) {
    const int x = c % TC_SIDE, z = (c % TC_FLOOR) / TC_SIDE;
    return (x == 0 && offset == -1) || (x == TC_SIDE - 1 && offset == 1) ||
           (z == 0 && offset == -TC_SIDE) || (z == TC_SIDE - 1 && offset == TC_SIDE);
}

/* Push the held block and the line of blocks behind it (up to 10) one cell away. The front cell
 * counts as the line's first even if it is empty (the goal). A block at the floor's edge stays;
 * the front one is lifted first, so a line that cannot move loses its first block. */
static int tc_push(TcPuzzle *s, int offset, int goal) {
    int line[TC_SIDE], moved[TC_SIDE], n_moved = 0;
    line[0] = s->position + TC_STEP[s->orientation];
    for (int i = 1; i < TC_SIDE; i++) {
        const int c = line[0] + i * offset;
        line[i] = line[i - 1] >= 0 && tc_block(s, c) ? c : -1;
    }
    for (int i = 0; i < TC_SIDE; i++) {
        if (line[i] < 0) continue;
        if (i == 0) tc_clear(s, line[0]);
        if (tc_floor_edge(line[i], offset)) continue;
        tc_set(s, line[i] + offset);
        moved[n_moved++] = line[i] + offset;
    }
    s->grabbed = -1;
    return tc_settle(s, moved, n_moved, line, TC_SIDE, goal);
}

/* Pull the held block into the climber's cell while it steps back; with no floor behind, it
 * drops to hang from the ledge it stood on and lets go. */
static int tc_pull(TcPuzzle *s, int offset, int goal) {
    const int front = s->position + TC_STEP[s->orientation];
    const int back = s->position + offset, below_back = back - TC_FLOOR;
    if (tc_block(s, back)) return 0;
    if (tc_block(s, front)) {
        tc_clear(s, front);
        tc_set(s, s->position);
        if (tc_block(s, below_back)) {
            s->grabbed = s->position;
            s->position = (int16_t)back;
        } else {
            s->position = (int16_t)below_back;
            s->hanging = 1;
            s->grabbed = -1;
        }
    }
    return tc_settle(s, NULL, 0, &front, 1, goal);
}

/* Hanging and moving sideways (LEFT/RIGHT turn the climber's own left/right): slide along the
 * ledge, turn into an inside corner, or wrap around an outside corner. */
static int tc_shimmy(TcPuzzle *s, int action) {
    const int o = s->orientation, p = s->position;
    const int side = action == TC_LEFT ? (o + 3) % 4 : (o + 1) % 4;
    const int ahead = p + TC_STEP[o], path = p + TC_STEP[side], corner = ahead + TC_STEP[side];
    const int x = p % TC_SIDE + (o == TC_RIGHT) - (o == TC_LEFT);
    const int z = (p % TC_FLOOR) / TC_SIDE + (o == TC_DOWN) - (o == TC_UP);
    if (tc_valid(corner) && tc_valid(path) && tc_block(s, corner) && !tc_block(s, path)) {
        if (!tc_valid(path + TC_FLOOR) || tc_block(s, path + TC_FLOOR)) return TC_ILLEGAL;
        s->position = (int16_t)path;
        return TC_OK;
    }
    if (tc_block(s, path)) {
        s->orientation = (uint8_t)side;
        return TC_OK;
    }
    if (x >= 0 && x < TC_SIDE && z >= 0 && z < TC_SIDE && !tc_block(s, corner)) {
        if (tc_block(s, corner + TC_FLOOR)) return TC_ILLEGAL;
        s->position = (int16_t)corner;
        s->orientation = (uint8_t)((side + 2) % 4);
        return TC_OK;
    }
    return -1; /* none applies: the caller goes on to the generic cases */
}

/* Let go (or DROP while standing with a block held): fall to the first block below the cell
 * under the climber, scanning down while above floor 1; landing needs a cell index >= 100. */
static int tc_let_go(TcPuzzle *s) {
    int below = s->position - TC_FLOOR;
    while (below > TC_FLOOR && !tc_block(s, below))
        below -= TC_FLOOR;
    if (below < TC_FLOOR) return TC_DEATH;
    s->position = (int16_t)(below + TC_FLOOR);
    s->hanging = 0;
    return TC_OK;
}

/* One action on the puzzle: TC_OK, TC_ILLEGAL (the state may still have changed: a push or pull
 * that would drop the goal) or TC_DEATH (fell off the tower, or a block fell on the climber). */
static int tc_apply(TcPuzzle *s, int action, int goal, TcEvents *ev) {
    const int o = s->orientation, p = s->position;
    const int ahead = p + TC_STEP[o];
    const int walkable = tc_block(s, ahead - TC_FLOOR);
    const int in_front = tc_valid(ahead) && (tc_block(s, ahead) || ahead == goal);
    const int moving = action >= 0 && action < 4;
    const int free_standing = !s->hanging && s->grabbed == -1;
    ev->climbed_to = ev->fell = ev->moved = 0;
    if (free_standing && moving) {
        if (action != o) {
            s->orientation = (uint8_t)action;
            return TC_OK;
        }
        if (walkable && !in_front) {
            s->position = (int16_t)ahead;
            return TC_OK;
        }
        if (in_front) { /* climb onto the block ahead */
            const int up = p + TC_FLOOR, onto = up + TC_STEP[action];
            if (up >= TC_CELLS || onto >= TC_CELLS || tc_block(s, up) || tc_block(s, onto) ||
                up == goal || onto == goal)
                return TC_ILLEGAL;
            s->position = (int16_t)onto;
            s->hanging = 0;
            ev->climbed_to = up / TC_FLOOR; /* the floor above the start, even if `onto`
                                                wrapped across a floor boundary */
            return TC_OK;
        }
        /* walk off the ledge: onto a block one floor down, else hang from the one left */
        if (ahead - TC_FLOOR < 0) return TC_ILLEGAL;
        ev->fell = 1;
        s->position = (int16_t)(ahead - TC_FLOOR);
        if (!tc_block(s, ahead - 2 * TC_FLOOR)) {
            s->orientation = (uint8_t)((o + 2) % 4);
            s->hanging = 1;
        }
        return TC_OK;
    }
    if (s->hanging && moving) {
        if (action == TC_UP) { /* pull up onto the ledge */
            const int onto = ahead + TC_FLOOR, up = p + TC_FLOOR;
            if (!tc_valid(onto) || !tc_valid(up) || tc_block(s, onto) || tc_block(s, up))
                return TC_ILLEGAL;
            s->position = (int16_t)onto;
            s->hanging = 0;
            return TC_OK;
        }
        if (action == TC_DOWN) return TC_ILLEGAL;
        const int result = tc_shimmy(s, action);
        if (result >= 0) return result;
    }
    if (action == TC_DROP && !free_standing) return tc_let_go(s);
    if (action == TC_GRAB && free_standing && in_front) {
        s->grabbed = (int16_t)ahead;
        return TC_OK;
    }
    if (action == TC_GRAB && s->grabbed != -1) {
        s->grabbed = -1;
        return TC_OK;
    }
    if (moving && in_front && s->grabbed != -1) {
        const int offset = TC_STEP[action];
        int result = TC_OK;
        if (action == o) {
            result = tc_push(s, offset, goal);
        } else if (action == (o + 2) % 4) {
            result = tc_pull(s, offset, goal);
        } else { /* turning lets go */
            s->orientation = (uint8_t)action;
            s->grabbed = -1;
        }
        if (tc_block(s, s->position)) return TC_DEATH;
        ev->moved = result == TC_OK;
        return result;
    }
    return TC_ILLEGAL;
}

static int tc_at_goal(const TcPuzzle *s, int goal) {
    return s->position - TC_FLOOR == goal;
}

/* ---- Level generation ---------------------------------------------------------------------- */

enum { TC_MIN_MOVES = 10, TC_MAX_MOVES = 15, TC_GOAL_FLOOR_LOW = 5, TC_GOAL_FLOORS = 4 };
/* The solver starts with room for 2^16 states and doubles up to 2^21 (PufferLib: 10^7). Searches
 * of 2,000 sampled towers visited at most 84,341 states, so neither cap is ever reached. */
enum { TC_SOLVER_FIRST = 1 << 16, TC_SOLVER_MAX = 1 << 21 };

typedef struct {
    TcPuzzle start; /* the spawn: standing, facing TC_UP, holding nothing */
    int16_t goal;   /* the goal cell: stand on it to win (not a block of the mask) */
    int16_t goal_floor;
} TcLevel;

/* Breadth-first solver scratch: states in visit order (which is also the queue), their depths,
 * and an open-addressing table (twice the room) of state indices + 1 keyed by a hash of the
 * state's bytes. */
typedef struct {
    TcPuzzle *nodes;
    uint8_t *depth;
    uint32_t *table;
    uint32_t room, mask;
} TcSolver;

static void tc_solver_close(TcSolver *solver) {
    free(solver->nodes);
    free(solver->depth);
    free(solver->table);
    memset(solver, 0, sizeof(*solver));
}

static uint32_t tc_hash(const TcPuzzle *s) {
    uint64_t h = 0x9E3779B97F4A7C15ull, word;
    for (size_t i = 0; i < sizeof(TcPuzzle); i += 8) {
        memcpy(&word, (const uint8_t *)s + i, 8);
        h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    return (uint32_t)(h ^ (h >> 32));
}

/* Inserts state `index` of solver->nodes unless an equal one is present; returns 1 if new. */
static int tc_visit(TcSolver *solver, uint32_t index) {
    const TcPuzzle *s = &solver->nodes[index];
    for (uint32_t slot = tc_hash(s) & solver->mask;; slot = (slot + 1) & solver->mask) {
        const uint32_t held = solver->table[slot];
        if (held == 0) {
            solver->table[slot] = index + 1;
            return 1;
        }
        if (memcmp(&solver->nodes[held - 1], s, sizeof(TcPuzzle)) == 0) return 0;
    }
}

/* Room for `room` states (the first `kept` of which are re-entered in the table); 0 if out of
 * memory (the old arrays stay valid). */
static int tc_solver_grow(TcSolver *solver, uint32_t room, uint32_t kept) {
    TcPuzzle *nodes = (TcPuzzle *)realloc(solver->nodes, room * sizeof(TcPuzzle));
    if (!nodes) return 0;
    solver->nodes = nodes;
    uint8_t *depth = (uint8_t *)realloc(solver->depth, room);
    if (!depth) return 0;
    solver->depth = depth;
    uint32_t *table = (uint32_t *)calloc(2 * (size_t)room, sizeof(uint32_t));
    if (!table) return 0;
    free(solver->table);
    solver->table = table;
    solver->room = room;
    solver->mask = 2 * room - 1;
    for (uint32_t i = 0; i < kept; i++)
        tc_visit(solver, i);
    return 1;
}

/* Moves in the shortest solution of at most TC_MAX_MOVES moves (deaths are dead ends), or -1 if
 * there is none (or the search outgrows TC_SOLVER_MAX states or memory). */
static int tc_solve(TcSolver *solver, const TcPuzzle *start, int goal) {
    if (tc_at_goal(start, goal)) return 0;
    if (!solver->table && !tc_solver_grow(solver, TC_SOLVER_FIRST, 0)) return -1;
    memset(solver->table, 0, ((size_t)solver->mask + 1) * sizeof(uint32_t));
    uint32_t count = 1;
    solver->nodes[0] = *start;
    solver->depth[0] = 0;
    tc_visit(solver, 0);
    TcEvents ev;
    for (uint32_t head = 0; head < count && solver->depth[head] < TC_MAX_MOVES; head++) {
        for (int action = 0; action < TC_ACTIONS; action++) {
            TcPuzzle next = solver->nodes[head];
            if (tc_apply(&next, action, goal, &ev) != TC_OK) continue;
            if (count == solver->room &&
                (count == TC_SOLVER_MAX || !tc_solver_grow(solver, 2 * count, count)))
                return -1;
            solver->nodes[count] = next;
            if (!tc_visit(solver, count)) continue;
            solver->depth[count] = (uint8_t)(solver->depth[head] + 1);
            if (tc_at_goal(&next, goal)) return solver->depth[count];
            count++;
        }
    }
    return -1;
}

/* One random tower of goal floor g (PufferLib's generator): scanning floors up, rows z from 9 down
 * to 0, columns x up, each cell with 1 <= x <= 7, 1 <= z <= min(7, 8 - y), 1 <= y < g holds a
 * block with probability 1/2; the spawn is the first such cell of floor 2 with a block below
 * (emptied); the goal is, with probability 1/3 each, the first cell of floor g with a block below,
 * below-left or below-right (in x) or below-behind (z + 1). Returns 0 if no spawn or goal. */
static int tc_build(TcLevel *level, int g, uint64_t *rng) {
    uint8_t map[TC_CELLS] = {0};
    int spawn = -1, goal = -1;
    for (int y = 0; y < TC_SIDE; y++) {
        for (int z = TC_SIDE - 1; z >= 0; z--) {
            for (int x = 0; x < TC_SIDE; x++) {
                const int c = x + TC_SIDE * z + TC_FLOOR * y;
                if (x >= 1 && x <= 7 && z >= 1 && z <= 7 && y >= 1 && y < g && z <= 8 - y) {
                    map[c] = (uint8_t)rng_int(rng, 2);
                    if (spawn < 0 && y == 2 && map[c - TC_FLOOR]) {
                        spawn = c;
                        map[c] = 0;
                    }
                }
                const int below = c - TC_FLOOR;
                if (goal < 0 && y == g &&
                    (map[below + TC_SIDE] || map[below - 1] || map[below + 1]) &&
                    (rng_int(rng, 3) == 0 || (x == TC_SIDE - 1 && z == 0)))
                    goal = c;
            }
        }
    }
    if (spawn < 0 || goal < 0) return 0;
    memset(&level->start, 0, sizeof(TcPuzzle));
    for (int c = 0; c < TC_CELLS; c++)
        if (map[c]) tc_set(&level->start, c);
    level->start.position = (int16_t)spawn;
    level->start.orientation = TC_UP;
    level->start.grabbed = -1;
    level->goal = (int16_t)goal;
    level->goal_floor = (int16_t)g;
    return 1;
}

/* A level whose shortest solution takes TC_MIN_MOVES to TC_MAX_MOVES moves: towers are drawn
 * until one qualifies. The goal floor is drawn once, uniform in 5 .. 8. */
static void tc_generate(TcLevel *level, TcSolver *solver, uint64_t *rng) {
    const int g = TC_GOAL_FLOOR_LOW + rng_int(rng, TC_GOAL_FLOORS);
    for (;;) {
        if (!tc_build(level, g, rng)) continue;
        if (tc_solve(solver, &level->start, level->goal) >= TC_MIN_MOVES) return;
    }
}

#endif
