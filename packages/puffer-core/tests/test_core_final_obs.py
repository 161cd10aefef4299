"""`final_observations` of emulated PettingZoo envs against the raw parallel env."""

from __future__ import annotations

import numpy as np
import pettingzoo

from puffer.core import Buffer, GymnasiumPufferEnv, PettingZooPufferEnv


def test_pettingzoo_final_observations_match_the_raw_env() -> None:
    env = PettingZooPufferEnv(pettingzoo.make("parallel", "classic/rps-v2", max_cycles=5))
    raw = pettingzoo.make("parallel", "classic/rps-v2", max_cycles=5)
    agents = env.possible_agents
    env.reset(seed=2)
    raw.reset(seed=2)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(40):
        actions = rng.integers(0, 3, len(agents))
        env.final_observations[:] = -1
        _, _, terminals, truncations, _ = env.step(actions.astype(np.int32))
        raw_obs, _, raw_terms, raw_truncs, _ = raw.step(
            dict(zip(agents, actions.tolist(), strict=True))
        )
        for i, agent in enumerate(agents):
            assert (terminals[i], truncations[i]) == (raw_terms[agent], raw_truncs[agent])
            if raw_terms[agent] or raw_truncs[agent]:
                ended += 1
                assert env.final_observations[i, 0] == raw_obs[agent]
            else:
                assert env.final_observations[i, 0] == -1  # written only where episodes end
        if not raw.agents:
            raw.reset()
    assert ended >= 8


def test_a_buffer_without_the_side_array_is_accepted() -> None:
    env = GymnasiumPufferEnv("CartPole-v1")
    buf = Buffer.allocate(1, env.single_observation_space, env.single_action_space)
    assert buf.final_observations is None and len(buf.names) == 6
    bare = GymnasiumPufferEnv("CartPole-v1", buf=buf)
    assert bare.final_observations is None
    bare.reset(seed=0)
    for _ in range(50):  # episodes end; nothing to write, nothing breaks
        bare.step(np.zeros(1, np.int32))
    assert env.final_observations.shape == (1, 4)
