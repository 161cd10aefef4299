/* Every Ocean env, one line each: including a header registers it with the binding (see
 * PUFFER_ENV_END in puffer.h). Included once, by binding.cpp, after the binding's templates. */
#include "squared/squared.h"
#include "cartpole/cartpole.h"
#include "cartpole/cartpole_continuous.h"
#include "pong/pong.h"
#include "breakout/breakout.h"
#include "snake/snake.h"
#include "target/target.h"
#include "connect4/connect4.h"
#include "g2048/g2048.h"
#include "tetris/tetris.h"
#include "memory/memory.h"
#include "corridor/corridor.h"
