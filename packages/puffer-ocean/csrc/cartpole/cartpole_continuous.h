/* Cartpole with a continuous force: cartpole.h built with float actions in [-1, 1]. */
#define CARTPOLE_CONTINUOUS
#include "cartpole.h"
#undef CARTPOLE_CONTINUOUS
