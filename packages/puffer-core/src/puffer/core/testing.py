"""Small deterministic envs over arbitrary spaces, and a catalog of spaces, for tests.

`SpaceEnv` draws its observations from its own observation space (seeded on reset), ends
episodes after a random length, and remembers the last action it received, so a test can
compare an emulated env with the raw one observation for observation and action for action.
Other packages (vectorizers, trainers) may use the catalog to test against every layout case.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from puffer.core.emulation import GymnasiumPufferEnv
from puffer.core.layout import Layout, action_layout, nativize

__all__ = [
    "ACTION_CATALOG",
    "OBSERVATION_CATALOG",
    "SpaceEnv",
    "action_to_row",
    "assert_aec_equivalence",
    "assert_gymnasium_equivalence",
    "assert_same_tree",
    "float32_exact",
    "map_leaves",
]


def _nested_dict() -> spaces.Dict:
    # Keys deliberately out of alphabetical order: layouts follow the space's own order.
    return spaces.Dict(
        OrderedDict(
            zeta=spaces.Box(-1.0, 1.0, (3,), np.float32),
            alpha=spaces.Tuple(
                (
                    spaces.Discrete(7, start=-3),
                    spaces.MultiBinary(5),
                    spaces.Dict(
                        OrderedDict(
                            grid=spaces.Box(0, 255, (2, 3), np.uint8),
                            counts=spaces.MultiDiscrete([[2, 3], [4, 5]]),
                        )
                    ),
                )
            ),
            mid=spaces.Box(-5, 5, (), np.float64),
        )
    )


OBSERVATION_CATALOG: dict[str, spaces.Space] = {
    "box": spaces.Box(-2.0, 2.0, (4,), np.float32),
    "image": spaces.Box(0, 255, (8, 8, 3), np.uint8),
    "discrete": spaces.Discrete(6, start=1),
    "multidiscrete": spaces.MultiDiscrete([3, 4, 5]),
    "multibinary": spaces.MultiBinary((2, 3)),
    "tuple-discrete": spaces.Tuple((spaces.Discrete(4), spaces.Discrete(9))),
    "dict-mixed-dtypes": spaces.Dict(
        OrderedDict(
            pos=spaces.Box(-1.0, 1.0, (2,), np.float32),
            id=spaces.Discrete(3),
            flags=spaces.MultiBinary(3),
        )
    ),
    "nested": _nested_dict(),
}

ACTION_CATALOG: dict[str, spaces.Space] = {
    "discrete": spaces.Discrete(5),
    "discrete-start": spaces.Discrete(4, start=-2),
    "box": spaces.Box(-1.0, 1.0, (2,), np.float32),
    "box-2d-float64": spaces.Box(-1.0, 1.0, (2, 2), np.float64),
    "multidiscrete": spaces.MultiDiscrete([3, 2, 4], start=[1, 0, -1]),
    "multibinary": spaces.MultiBinary(4),
    "dict-discrete": spaces.Dict(OrderedDict(move=spaces.Discrete(4), fire=spaces.MultiBinary(2))),
    "dict-mixed": spaces.Dict(
        OrderedDict(
            move=spaces.Discrete(4, start=1),
            aim=spaces.Box(-1.0, 1.0, (2,), np.float32),
            buttons=spaces.Tuple((spaces.MultiDiscrete([2, 3]), spaces.Discrete(2))),
        )
    ),
}


class SpaceEnv(gymnasium.Env):
    """An env observing random samples of `observation_space`; episodes last 5-40 steps.

    Rewards are drawn from the env's RNG; `last_action` holds the action last received.
    `bad_obs_at` makes the env return an observation outside its space at that step.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": [], "name": "SpaceEnv"}

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        bad_obs_at: int | None = None,
    ):
        # Copies: spaces carry their own RNG, and two envs must not share one.
        self.observation_space = copy.deepcopy(observation_space)
        self.action_space = copy.deepcopy(action_space)
        self.bad_obs_at = bad_obs_at
        self.last_action: Any = None
        self._steps = 0
        self._length = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self._steps = 0
        self._length = int(self.np_random.integers(5, 40))
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.last_action = action
        self._steps += 1
        obs = self.observation_space.sample()
        if self._steps == self.bad_obs_at:
            obs = "not an observation"
        reward = float(self.np_random.normal())
        done = self._steps >= self._length
        terminated = done and self._length % 2 == 0
        return obs, reward, terminated, done and not terminated, {"hits": 1, "bonus": 0.5}


# Helpers to compare emulated envs with raw ones --------------------------------------------


def map_leaves(space: spaces.Space, value: Any, fn: Callable[[spaces.Space, Any], Any]) -> Any:
    """Apply `fn(leaf_space, leaf_value)` at every leaf of a nested sample of `space`."""
    if isinstance(space, spaces.Dict):
        return {key: map_leaves(sub, value[key], fn) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(
            map_leaves(sub, item, fn) for sub, item in zip(space.spaces, value, strict=True)
        )
    return fn(space, value)


def float32_exact(space: spaces.Space, action: Any) -> Any:
    """`action` with Box leaves rounded through float32, the precision of puffer action rows."""

    def rounded(leaf: spaces.Space, value: Any) -> Any:
        if isinstance(leaf, spaces.Box):
            return value.astype(np.float32).astype(leaf.dtype)
        return value

    return map_leaves(space, action, rounded)


def action_to_row(layout: Layout, action: Any) -> np.ndarray:
    """A Gymnasium action as one puffer action row (zero-based discrete leaves)."""

    def zero_based(leaf: spaces.Space, value: Any) -> Any:
        if isinstance(leaf, spaces.Discrete | spaces.MultiDiscrete):
            return np.asarray(value) - leaf.start
        return value

    return layout.sample_to_row(map_leaves(layout.space, action, zero_based))


def assert_same_tree(native: Any, raw: Any) -> None:
    """Assert nested equality of values, dtypes and Dict key order (0-d views match scalars)."""
    if isinstance(raw, dict):
        assert list(native) == list(raw), (list(native), list(raw))
        for key in raw:
            assert_same_tree(native[key], raw[key])
    elif isinstance(raw, tuple):
        assert len(native) == len(raw)
        for item, raw_item in zip(native, raw, strict=True):
            assert_same_tree(item, raw_item)
    else:
        raw, native = np.asarray(raw), np.asarray(native)
        assert native.dtype == raw.dtype, (native.dtype, raw.dtype)
        np.testing.assert_array_equal(native.reshape(raw.shape), raw)


def assert_gymnasium_equivalence(
    make_raw: Callable[[], gymnasium.Env], steps: int = 1000, seed: int = 7
) -> list[tuple[float, int]]:
    """Step a raw env and `GymnasiumPufferEnv(make_raw)` with the same seeded random actions.

    Asserts, every step, equal rewards, terminal and truncation flags, nativized observations
    equal to the raw ones (values, dtypes, key order), the action the wrapped env received
    (when it records `last_action`), and one stats dict exactly when an episode ends.

    Returns:
        (return, length) of every episode the raw env finished.
    """
    raw, emulated = make_raw(), GymnasiumPufferEnv(make_raw)
    layout = action_layout(raw.action_space)

    def native_obs() -> Any:
        row = emulated.observations[0]
        return row if emulated.obs_layout is None else nativize(row, emulated.obs_layout)

    raw.action_space.seed(seed)
    raw_obs, _ = raw.reset(seed=seed)
    emulated.reset(seed=seed)
    assert_same_tree(native_obs(), raw_obs)
    episodes, raw_return, raw_length = [], 0.0, 0
    for _ in range(steps):
        action = float32_exact(raw.action_space, raw.action_space.sample())
        raw_obs, reward, terminated, truncated, _ = raw.step(action)
        raw_return, raw_length = raw_return + float(reward), raw_length + 1
        if terminated or truncated:
            raw_obs, _ = raw.reset()
            episodes.append((raw_return, raw_length))
            raw_return, raw_length = 0.0, 0
        _, rewards, terminals, truncations, infos = emulated.step(
            action_to_row(layout, action)[None]
        )
        assert rewards[0] == np.float32(reward)
        assert terminals[0] == terminated and truncations[0] == truncated
        assert_same_tree(native_obs(), raw_obs)
        if hasattr(emulated.env, "last_action"):
            assert_same_tree(emulated.env.last_action, action)
        if terminated or truncated:
            (stats,) = infos
            assert np.isclose(stats["episode_return"], episodes[-1][0], rtol=1e-5)
            assert stats["episode_length"] == episodes[-1][1]
        else:
            assert infos == []
    raw.close()
    emulated.close()
    return episodes


def assert_aec_equivalence(make_raw: Callable[[], Any], moves: int = 1000, seed: int = 7) -> int:
    """Play a raw turn-based AEC env and its emulation with the same random legal moves.

    Each move is drawn from the acting agent's legal moves (its observation's `action_mask`).
    Asserts, every move: the one row with mask True is the raw env's `agent_selection`; every
    agent's nativized observation equals `raw.observe(agent)` (values, dtypes; keys in the
    space's order);
    the `action_masks` row equals the observed mask; after the move every agent's reward and
    terminal / truncation flag equal the raw env's; a stats dict comes back per agent exactly
    when the game ends, with the episode return the raw env accumulated. Both reset (without a
    seed) when a game ends.

    Returns:
        the number of games finished.
    """
    from puffer.core.aec import AECPufferEnv
    from puffer.core.emulation import ACTION_MASK_KEY

    raw, emulated = make_raw(), AECPufferEnv(make_raw(), seed=seed)
    agents = list(raw.possible_agents)
    rng = np.random.default_rng(seed)
    raw.reset(seed=seed)
    emulated.reset()
    returns, games = dict.fromkeys(agents, 0.0), 0

    def check_rows() -> None:
        acting = agents.index(raw.agent_selection)
        assert emulated.masks.tolist() == [i == acting for i in range(len(agents))]
        for i, agent in enumerate(agents):
            native = nativize(emulated.observations[i], emulated.agent_obs_layouts[agent])
            raw_obs = raw.observe(agent)
            # The row follows the space's key order; PettingZoo's dicts come in their own.
            assert sorted(native) == sorted(raw_obs)
            assert_same_tree(native, {key: raw_obs[key] for key in native})
            mask = np.asarray(raw_obs[ACTION_MASK_KEY], bool).ravel()
            np.testing.assert_array_equal(emulated.action_masks[i], mask)

    check_rows()
    for _ in range(moves):
        acting = raw.agent_selection
        legal = np.flatnonzero(raw.observe(acting)[ACTION_MASK_KEY])
        action = int(rng.choice(legal))
        raw.step(action)
        row = np.zeros(len(agents), np.int32)
        row[agents.index(acting)] = action
        _, rewards, terminals, truncations, infos = emulated.step(row)
        for i, agent in enumerate(agents):
            assert rewards[i] == np.float32(raw.rewards[agent]), (agent, rewards, raw.rewards)
            assert terminals[i] == raw.terminations[agent]
            assert truncations[i] == raw.truncations[agent]
            returns[agent] += float(raw.rewards[agent])
        if all(raw.terminations[a] or raw.truncations[a] for a in raw.agents):
            games += 1
            assert sorted(stats["episode_return"] for stats in infos) == sorted(returns.values())
            returns = dict.fromkeys(agents, 0.0)
            raw.reset()
        else:
            assert infos == []
        check_rows()
    raw.close()
    emulated.close()
    return games
