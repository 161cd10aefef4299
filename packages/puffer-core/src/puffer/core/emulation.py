"""Gymnasium emulation: any single-agent Gymnasium env as a one-row `PufferEnv`.

The env's observation space is packed into one flat row (`puffer.core.layout`), its action
space into one int32 or float32 row. The helpers here (row spaces, action converters, episode
statistics, the early observation check) are shared with the PettingZoo emulation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from puffer.core.buffer import Buffer
from puffer.core.checks import check_mixed_row, check_observation, is_mixed
from puffer.core.env import Infos, PufferEnv
from puffer.core.episodes import EpisodeStats, info_reductions
from puffer.core.errors import APIUsageError, EmulationError
from puffer.core.layout import (
    Layout,
    Leaf,
    action_layout,
    assign,
    map_views,
    nativize,
    observation_layout,
)
from puffer.core.vectorization import Vectorization

__all__ = [
    "ACTION_MASK_KEY",
    "CHECK_STEPS",
    "EmulatedEnv",
    "GymnasiumPufferEnv",
    "action_converter",
    "env_name",
    "obs_writer",
    "row_action_space",
    "row_space",
]

# Observations are checked on this many steps after construction, resets included; actions
# are checked on every step (`PufferEnv.step`, puffer.core.actions).
CHECK_STEPS = 16


# Spaces of the buffer rows ---------------------------------------------------------------


def _leaf_bounds(leaf: Leaf, zero_based: bool) -> tuple[np.ndarray, np.ndarray]:
    """Flat low / high of a leaf; action rows are zero-based, observation rows keep `start`."""
    space = leaf.space
    if isinstance(space, spaces.Box):
        return space.low.ravel(), space.high.ravel()
    if isinstance(space, spaces.Discrete):
        low = np.array([0 if zero_based else space.start])
        return low, low + space.n - 1
    if isinstance(space, spaces.MultiDiscrete):
        low = np.broadcast_to(0 if zero_based else space.start, space.shape).ravel()
        return low, low + space.nvec.ravel() - 1
    return np.zeros(leaf.size), np.ones(leaf.size)


def row_space(layout: Layout) -> spaces.Box:
    """The Box of one observation row: per-element bounds for uniform rows, 0-255 for bytes."""
    if isinstance(layout.space, spaces.Box) and layout.row_shape == layout.space.shape:
        return layout.space  # a lone Box row is the Box itself
    if layout.row_dtype == np.uint8 and any(leaf.dtype != np.uint8 for leaf in layout.leaves):
        return spaces.Box(0, 255, layout.row_shape, np.uint8)
    low = np.zeros(layout.row_shape, layout.row_dtype)
    high = np.zeros(layout.row_shape, layout.row_dtype)
    for leaf in layout.leaves:
        start = leaf.offset // layout.row_dtype.itemsize
        leaf_low, leaf_high = _leaf_bounds(leaf, zero_based=False)
        low[start : start + leaf.size] = leaf_low
        high[start : start + leaf.size] = leaf_high
    return spaces.Box(low, high, layout.row_shape, layout.row_dtype)


def row_action_space(layout: Layout) -> spaces.Space:
    """The puffer action space: Discrete(n), MultiDiscrete(nvec) (int32, zero-based) or Box."""
    if layout.row_dtype == np.int32:
        if isinstance(layout.space, spaces.Discrete):
            return spaces.Discrete(int(layout.space.n))
        nvec = np.concatenate(
            [
                [leaf.space.n]
                if isinstance(leaf.space, spaces.Discrete)
                # MultiBinary leaves are MultiDiscrete with two choices per entry.
                else np.full(leaf.size, 2)
                if isinstance(leaf.space, spaces.MultiBinary)
                else leaf.space.nvec.ravel()
                for leaf in layout.leaves
            ]
        )
        return spaces.MultiDiscrete(nvec.astype(np.int64))
    low, high = (np.empty(layout.row_shape, np.float32) for _ in range(2))
    for leaf in layout.leaves:
        start = leaf.offset // 4
        low[start : start + leaf.size], high[start : start + leaf.size] = _leaf_bounds(
            leaf, zero_based=True
        )
    return spaces.Box(low, high, layout.row_shape, np.float32)


# Actions: from a buffer row to what the wrapped env expects ------------------------------


@functools.singledispatch
def _converter(space: spaces.Space, view: np.ndarray, owner: object) -> Callable[[], Any]:
    raise EmulationError(f"{owner}: action space {space!r} cannot be emulated")


@_converter.register
def _(space: spaces.Discrete, view: np.ndarray, owner: object) -> Callable[[], Any]:
    start = int(space.start)
    # Reading through a memoryview yields a Python number without numpy's scalar machinery.
    # The range was checked by `PufferEnv.step` (puffer.core.actions).
    read = memoryview(view)
    return lambda: int(read[()]) + start


@_converter.register
def _(space: spaces.MultiDiscrete, view: np.ndarray, owner: object) -> Callable[[], Any]:
    return lambda: view.astype(space.dtype) + space.start


@_converter.register
def _(space: spaces.MultiBinary, view: np.ndarray, owner: object) -> Callable[[], Any]:
    return lambda: view.astype(space.dtype)


@_converter.register
def _(space: spaces.Box, view: np.ndarray, owner: object) -> Callable[[], Any]:
    # A copy (astype), so an env that keeps its action never sees the buffer change under it.
    return lambda: view.astype(space.dtype)


def action_converter(layout: Layout, row: np.ndarray, owner: object) -> Callable[[], Any]:
    """A function returning the wrapped env's action built from the buffer row `row` now.

    Ranges are not checked here: `PufferEnv.step` checks every row (`puffer.core.actions`).
    """
    views = nativize(row, layout)
    if layout.single_leaf:
        return _converter(layout.space, views.reshape(layout.tree.shape), owner)
    convert = map_views(layout.tree, views, lambda leaf, view: _converter(leaf.space, view, owner))
    return lambda: _call(convert)


def _call(convert: Any) -> Any:
    if isinstance(convert, dict):
        return {key: _call(fn) for key, fn in convert.items()}
    if isinstance(convert, tuple):
        return tuple(_call(fn) for fn in convert)
    return convert()


# The Gymnasium emulation -----------------------------------------------------------------


def _make_env(env: Any, env_args: tuple, env_kwargs: dict | None, owner: str) -> Any:
    env_kwargs = dict(env_kwargs or {})
    if env is None:
        raise APIUsageError(f"{owner}: no env given; pass a Gymnasium id, class, creator or env")
    if isinstance(env, str):
        if env_args:
            raise APIUsageError(
                f"{owner}: env_args {env_args!r} given with the id {env!r}; Gymnasium ids take "
                "keyword arguments only, pass them as env_kwargs"
            )
        return gymnasium.make(env, **env_kwargs)
    if isinstance(env, type) or (callable(env) and not hasattr(env, "step")):
        return env(*env_args, **env_kwargs)
    if env_args or env_kwargs:
        raise APIUsageError(
            f"{owner}: env_args/env_kwargs given with an env instance {env!r}; pass the class "
            "or a creator function instead to have them applied"
        )
    return env


# The observation / info key of a legal-action mask (PettingZoo's convention, also used here).
ACTION_MASK_KEY = "action_mask"


def _mask_from(env: Any, action_mask: str, owner: str) -> str | None:
    """Where the masks of a Gymnasium env come from: "obs", "info" or None (see the class)."""
    if action_mask not in ("auto", "info", "none"):
        raise APIUsageError(f"{owner}: action_mask={action_mask!r}; use 'auto', 'info' or 'none'")
    act, obs = env.action_space, env.observation_space
    discrete = isinstance(act, spaces.Discrete | spaces.MultiDiscrete)
    if action_mask == "info":
        if not discrete:
            raise APIUsageError(f"{owner}: action_mask='info' needs discrete actions, not {act}")
        return "info"
    if action_mask == "none" or not discrete:
        return None
    if isinstance(obs, spaces.Dict) and ACTION_MASK_KEY in obs.spaces:
        width = int(np.sum(act.nvec)) if isinstance(act, spaces.MultiDiscrete) else int(act.n)
        if int(np.prod(obs[ACTION_MASK_KEY].shape)) == width:
            return "obs"
    return None


def env_name(env: Any) -> str:
    """A short readable name of an env: its registered id, else its class name."""
    spec = getattr(env, "spec", None)
    if getattr(spec, "id", None):
        return spec.id
    unwrapped = getattr(env, "unwrapped", env)
    metadata = getattr(unwrapped, "metadata", None) or {}
    return metadata.get("name") or type(unwrapped).__name__


def obs_writer(row: np.ndarray, layout: Layout) -> Callable[[Any], None]:
    """A function copying one observation of `layout.space` into `row` (views cached once)."""
    views = nativize(row, layout)
    if isinstance(views, np.ndarray):

        def write(obs: Any) -> None:
            views[...] = obs

        return write
    return functools.partial(assign, views)


class EmulatedEnv(PufferEnv):
    """What the Gymnasium and PettingZoo emulations share: a wrapped `env` and its `name`."""

    env: Any
    name: str
    vectorization = Vectorization.SINGLE  # one wrapped env per object

    def render(self) -> Any:
        """The wrapped env's `render()` (per its `render_mode`)."""
        return self.env.render()

    def close(self) -> None:
        """Close the wrapped env. Idempotent."""
        if not self.closed:
            self.env.close()
        super().close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(env={getattr(self, 'name', '?')!r})"


class GymnasiumPufferEnv(EmulatedEnv):
    """A single-agent Gymnasium env as a one-row `PufferEnv`, with auto-reset.

    Args:
        env: a Gymnasium id (`"CartPole-v1"`), an env class, a creator function, or an env.
        env_args: positional arguments for the class / creator.
        env_kwargs: keyword arguments for `gymnasium.make`, the class or the creator.
        buf: a one-row `Buffer` to write into (allocated when None).
        seed: seed for the first `reset()` called without one.
        action_mask: where legal-action masks come from: "auto" (the default) reads the
            observation's `action_mask` key when the observation space is a Dict with one of
            the action size; "info" reads `info["action_mask"]` after every reset and step
            (the env must always provide it); "none" declares no masks. The masks land in
            `action_masks` (see `puffer.core.buffer`); an observation key also stays in the
            observation.
        autoreset_mode: `AutoresetMode.SAME_STEP` (the default and the buffer contract: the
            step that ends an episode already shows the next one's first observation) or
            `NEXT_STEP` (that step shows the episode's last observation; the next step resets,
            leaves its action unused and reports reward 0 and no flags), as Gymnasium's
            vector envs offer it. Only code written for Gymnasium's NEXT_STEP wants it; the
            trainer needs SAME_STEP.
        info_reduce: how an info key becomes the episode's value, per key: "mean", "last" or
            "sum" (over the updates `puffer.core.episodes` describes: numbers "mean", booleans
            "last"); the env's `metadata["puffer.info_reduce"]` gives its own.

    Attributes:
        env: the wrapped Gymnasium env.
        obs_layout: the `Layout` of an observation row, or None when the observation space is
            a single Box / Discrete / MultiDiscrete / MultiBinary (the row is that leaf).
        action_layout: the `Layout` of an action row, or None for a single leaf.

    Observations: (1, *row_shape) of `single_observation_space.dtype` (a lone Box keeps its
    shape and dtype; a lone Discrete is (1, 1) int64; structured spaces are packed, see
    `puffer.core.layout`). Actions: (1,) int32 for Discrete, (1, n) int32 for other discrete
    spaces (zero-based), (1, n) float32 when a Box is involved. Each step's infos hold one
    `{episode_return, episode_length, <numeric infos>}` dict when an episode ended (return and
    length summed, each info key reduced per `info_reduce`).
    `final_observations` (same shape as observations) receives the episode's last observation
    on a step that ends it (terminated or truncated), before auto-reset replaces it.

    Raises:
        EmulationError: the env's spaces cannot be emulated, or it returns an observation
            outside its observation space during the first `CHECK_STEPS` steps.
        APIUsageError: bad arguments, actions of the wrong shape or dtype, out of range or
            not finite (checked on every step), step before reset.

    Example:
        >>> env = GymnasiumPufferEnv("Blackjack-v1", seed=1)
        >>> obs, infos = env.reset()
        >>> obs.shape, obs.dtype, env.single_action_space
        ((1, 3), dtype('int64'), Discrete(2))
        >>> player_sum, dealer_card, usable_ace = nativize(obs, env.obs_layout)
        >>> player_sum.shape
        (1,)
    """

    writes_final_observations = True

    def __init__(
        self,
        env: str | gymnasium.Env | Callable[..., gymnasium.Env] | None = None,
        env_args: tuple = (),
        env_kwargs: dict[str, Any] | None = None,
        buf: Buffer | None = None,
        seed: int | None = None,
        action_mask: str = "auto",
        autoreset_mode: AutoresetMode = AutoresetMode.SAME_STEP,
        info_reduce: dict[str, str] | None = None,
    ):
        if autoreset_mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise APIUsageError(
                f"{type(self).__name__}(autoreset_mode={autoreset_mode!r}): use "
                "AutoresetMode.SAME_STEP or AutoresetMode.NEXT_STEP"
            )
        self.autoreset_mode = autoreset_mode
        self.env = _make_env(env, tuple(env_args), env_kwargs, type(self).__name__)
        self.name = env_name(self.env)
        self._mask_from = _mask_from(self.env, action_mask, type(self).__name__)
        self._info_reduce = info_reductions(self.env, info_reduce, type(self).__name__)
        self.writes_action_masks = self._mask_from is not None
        try:
            self._obs_layout = observation_layout(self.env.observation_space)
            self._act_layout = action_layout(self.env.action_space)
        except EmulationError as error:
            raise EmulationError(f"{self!r}: {error}") from None
        self.single_observation_space = row_space(self._obs_layout)
        self.single_action_space = row_action_space(self._act_layout)
        self.obs_layout = None if self._obs_layout.single_leaf else self._obs_layout
        self.action_layout = None if self._act_layout.single_leaf else self._act_layout
        self.num_agents = 1
        self.render_mode = getattr(self.env, "render_mode", None)
        super().__init__(buf)
        self._seed = seed
        self._stats = EpisodeStats(self._info_reduce)
        self._checks_left = CHECK_STEPS
        self._write_obs = obs_writer(self.observations[0, ...], self._obs_layout)
        final = self.final_observations
        self._write_final = None if final is None else obs_writer(final[0, ...], self._obs_layout)
        # The owner is the repr, not self: a closure holding self would make a reference
        # cycle that keeps the (possibly shared-memory) buffer alive until the next GC pass.
        self._owner = repr(self)
        self._action = action_converter(self._act_layout, self.actions[0, ...], self._owner)
        self._mixed = is_mixed(self._act_layout)
        self._env_step = self.env.step
        # Python scalars go into one-row arrays several times faster through memoryviews than
        # through numpy item assignment; they address the same memory.
        self._reward_out = memoryview(self.rewards)
        self._terminal_out = memoryview(self.terminals)
        self._truncation_out = memoryview(self.truncations)
        # NEXT_STEP: the last step ended an episode, so this one resets instead.
        self._reset_due = False

    def _reset(self, seed: int | None) -> Infos:
        if seed is None:
            seed, self._seed = self._seed, None
        obs, info = self.env.reset(seed=seed)
        if self._checks_left:
            check_observation(self, self.env.observation_space, obs, "reset()")
        self._write_obs(obs)
        if self._mask_from is not None:
            self._write_mask(obs, info)
        self.rewards[0] = 0.0
        self.terminals[0] = False
        self.truncations[0] = False
        self.masks[0] = True
        self._stats = EpisodeStats(self._info_reduce)
        self._reset_due = False
        return []

    def _step(self) -> Infos:
        if self._reset_due:
            self._reset(None)
            return []
        if self._checks_left:
            self._checks_left -= 1
        if self._mixed:
            check_mixed_row(self._owner, self._act_layout, self.actions[0, ...])
        obs, reward, terminated, truncated, info = self._env_step(self._action())
        stats = self._stats
        stats.total += reward
        stats.length += 1
        if info:
            stats.add_info(info)
        self._reward_out[0] = reward
        self._terminal_out[0] = terminated
        self._truncation_out[0] = truncated
        if terminated or truncated:
            if self._write_final is not None:
                if self._checks_left:
                    check_observation(self, self.env.observation_space, obs, "step()")
                self._write_final(obs)
            infos = [stats.finish()]
            if self.autoreset_mode == AutoresetMode.NEXT_STEP:
                self._reset_due = True
                where = "step()"
            else:
                obs, info = self.env.reset()
                where = "reset()"
        else:
            where = "step()"
            infos = []
        if self._checks_left:
            check_observation(self, self.env.observation_space, obs, where)
        self._write_obs(obs)
        if self._mask_from is not None:
            self._write_mask(obs, info)
        return infos

    def _write_mask(self, obs: Any, info: dict) -> None:
        source = obs if self._mask_from == "obs" else info
        if ACTION_MASK_KEY not in source:
            raise EmulationError(
                f"{self!r}: no {ACTION_MASK_KEY!r} in the env's info; pass action_mask='none' "
                "or make the env return it after every reset and step"
            )
        self.action_masks[0] = np.asarray(source[ACTION_MASK_KEY]).reshape(-1)
