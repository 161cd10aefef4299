"""Evaluation: a trained policy acting until enough episodes end, and what those episodes report.

The episode statistics are the env's own, never recounted from rewards: each stat dict an env
reports in its infos is either one finished episode (emulated Gymnasium and PettingZoo envs,
`puffer.core.emulation`; the loop envs of puffer-envs) or the means over the `n` episodes that
ended since its last log (Ocean envs and the sanity envs, whose dicts carry `n`).
`episode_weight` is the one reading of that rule; the trainer's running means use it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from puffer.core import PufferEnv, Vectorization, declared_vectorization, env_creator
from puffer.train.config import env_defaults
from puffer.train.policies import Policy
from puffer.train.rollout import Rollout

__all__ = [
    "episode_count",
    "episode_means",
    "episode_weight",
    "evaluate_episodes",
    "one_instance",
]

# The key of a stat dict that holds the means over several episodes: how many.
EPISODES_KEY = "n"


def episode_weight(stat: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """How many finished episodes one stat dict stands for, and its statistics.

    A dict with `n` holds means over n episodes, so it weighs n; any other is one episode.

    Example:
        >>> episode_weight({"score": 2.0, "n": 3.0})
        (3, {'score': 2.0})
        >>> episode_weight({"episode_return": 1.0})
        (1, {'episode_return': 1.0})
    """
    count = int(stat.get(EPISODES_KEY, 1))
    return count, {key: value for key, value in stat.items() if key != EPISODES_KEY}


def episode_count(stats: Iterable[dict[str, float]]) -> int:
    """Finished episodes that `stats` hold, by `episode_weight`.

    Example:
        >>> episode_count([{"episode_return": 1.0}, {"score": 2.0, "n": 3.0}])
        4
    """
    return sum(episode_weight(stat)[0] for stat in stats)


def episode_means(stats: Iterable[dict[str, float]]) -> dict[str, float]:
    """The mean per episode of each statistic in `stats`, in the order first reported.

    Each dict weighs its `episode_weight` (its values are already means over that many);
    `n` itself is left out.

    Example:
        >>> episode_means([{"score": 1.0}, {"score": 4.0, "n": 3.0}])
        {'score': 3.25}
    """
    sums: dict[str, float] = {}
    weights: dict[str, int] = {}
    for stat in stats:
        count, values = episode_weight(stat)
        for key, value in values.items():
            sums[key] = sums.get(key, 0.0) + count * value
            weights[key] = weights.get(key, 0) + count
    return {key: total / weights[key] for key, total in sums.items()}


def one_instance(name: str, env_config: dict[str, Any]) -> PufferEnv:
    """One instance of an env to watch or play: `[env]` with `num_envs` 1 (a native creator's
    count), RGB frames, and episode stats reported every step (`log_interval` 1, where the
    creator takes it)."""
    creator = env_creator(name)
    kwargs = dict(env_config, render_mode="rgb_array")
    if declared_vectorization(creator, name) is Vectorization.NATIVE:
        kwargs["num_envs"] = 1
    if "log_interval" in env_defaults(creator):
        kwargs["log_interval"] = 1
    return creator(**kwargs)


def evaluate_episodes(
    policy: Policy,
    vecenv: Any,
    episodes: int,
    seed: int = 0,
    max_steps: int = 10_000_000,
    on_step: Callable[[list[dict[str, float]]], bool] | None = None,
) -> list[dict[str, float]]:
    """Run `policy` (sampling its actions) until `episodes` episodes have been reported.

    Acting is the trainer's: `puffer.train.rollout.Rollout` (recurrent state cut at episode
    ends, Box actions clipped to the action space).

    Args:
        policy: a trained policy (its device is used).
        vecenv: any env with the async API; reset here with `seed`, not closed.
        episodes: finished episodes to collect, counted by `episode_count`.
        seed: reset seed.
        max_steps: agent steps after which to stop anyway.
        on_step: called after the reset and after every step with the stat dicts so far
            (to render or report progress); returning False stops there.

    Returns:
        the stat dicts in arrival order, up to the one that completed `episodes` episodes
        (all of them when stopped before).
    """
    rollout = Rollout(policy, vecenv)
    rollout.reset(seed)
    stats: list[dict[str, float]] = []
    finished = steps = 0
    while True:
        step = rollout.recv()
        reported = [{k: float(v) for k, v in info.items()} for info in step.infos]
        stats += reported
        finished += episode_count(reported)
        # Called before the stop checks, so the step that ends the last episode is seen too.
        going = on_step is None or on_step(stats)
        if finished >= episodes:
            return _first_episodes(stats, episodes)
        if not going or steps >= max_steps:
            return stats
        rollout.act(step)
        steps += len(step.ids)


def _first_episodes(stats: list[dict[str, float]], episodes: int) -> list[dict[str, float]]:
    """The first dicts of `stats` that together hold at least `episodes` episodes."""
    finished = 0
    for index, stat in enumerate(stats):
        finished += episode_count([stat])
        if finished >= episodes:
            return stats[: index + 1]
    return stats
