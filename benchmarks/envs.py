"""Third-party env families: agent steps per second through our stack vs the best peer here.

Every row steps `--envs` copies of one env with uniformly random actions (seeded) and counts
agent steps per wall-clock second, auto-reset included. Rows, each the median of `--repeats`
runs of `--seconds` seconds, measured in the same process one after another:

- Atari Breakout, the same preprocessing on every row (84x84 gray, frame skip 4 with max-pool,
  4-frame stack, up to 30 no-ops, episodic life, clipped rewards):
  ours with ale-py's C++ threads (`AtariEnv(num_threads=2)`, the default backend), ours with
  puffer.vector Multiprocessing (2 workers, each an `AtariEnv` with one thread), and EnvPool
  (`Breakout-v5`, 2 threads) when it is importable: it is not a workspace dependency (its
  wheels bring ~600 MB of MuJoCo assets), so run this with `uv run --with envpool`.
- MinAtar Breakout, MiniGrid DoorKey-5x5, Crafter: ours (one process looping over the games;
  then Multiprocessing with 2 workers) vs Gymnasium's `SyncVectorEnv` and `AsyncVectorEnv`
  (2 workers... one process per env, as Gymnasium does) over the library's own Gymnasium env.
- NetHack (score task, glyphs + blstats + message) and ViZDoom Basic (frame skip 4): the same
  four rows as MinAtar, the peers over nle's and ViZDoom's own Gymnasium envs (ours also
  packs NetHack's three arrays into one row and subsamples ViZDoom's screen).
- Butterfly knights-archers-zombies and MAgent2 battle (162 soldiers): ours
  (PettingZooPufferEnv) vs the raw PettingZoo parallel env stepped with action dicts (the
  emulation's overhead; PettingZoo has no vectorizer).

Recommended: an idle machine, `--seconds 5 --repeats 5`. Run:

    uv run --with envpool python benchmarks/envs.py
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from functools import partial

import gymnasium
import numpy as np
from peers import gymnasium_vector

import puffer.vector
from puffer.cli.bench import header, timed
from puffer.core import make

Stepper = Callable[[], int]  # one call steps every env once and returns the agent steps taken


def measure(build: Callable[[], tuple[Stepper, Callable[[], None]]], seconds: float) -> float:
    """Agent steps per second of one freshly built stepper over `seconds` (after a warm-up)."""
    step, close = build()
    try:
        return timed(step, seconds, warmup=10).per_wall
    finally:
        close()


def puffer_native(name: str, **kwargs) -> Callable[[], tuple[Stepper, Callable[[], None]]]:
    def build():
        env = make(name, **kwargs)
        env.reset(seed=0)
        rng, n, actions = np.random.default_rng(0), env.single_action_space.n, env.actions

        def step() -> int:
            actions[:] = rng.integers(0, n, len(actions))
            env.step(actions)
            return len(actions)

        return step, env.close

    return build


def puffer_multiprocessing(name: str, copies: int, **kwargs):
    def build():
        vecenv = puffer.vector.make(
            name, num_instances=copies, backend="multiprocessing", num_workers=2, seed=0,
            env_kwargs=kwargs,
        )  # fmt: skip
        vecenv.reset(seed=0)
        rng, n = np.random.default_rng(0), vecenv.single_action_space.n
        rows = vecenv.num_agents

        def step() -> int:
            vecenv.step(rng.integers(0, n, rows).astype(np.int32))
            return rows

        return step, vecenv.close

    return build


def gymnasium_peer(make_env: Callable[[], gymnasium.Env], num_envs: int, mode: str):
    return partial(gymnasium_vector, make_env, num_envs, mode)


def envpool_atari(num_envs: int):
    def build():
        import envpool

        env = envpool.make(
            "Breakout-v5", env_type="gymnasium", num_envs=num_envs, batch_size=num_envs,
            num_threads=2, episodic_life=True, reward_clip=True, stack_num=4, noop_max=30,
            frame_skip=4, img_height=84, img_width=84, repeat_action_probability=0.0,
            max_episode_steps=27_000,
        )  # fmt: skip
        env.reset()
        rng = np.random.default_rng(0)

        def step() -> int:
            env.step(rng.integers(0, 4, num_envs).astype(np.int32))
            return num_envs

        return step, env.close

    return build


class _CrafterGymnasium(gymnasium.Env):
    """crafter.Env under the Gymnasium API (it has the old Gym one), for the peer rows."""

    def __init__(self):
        import crafter

        self.env = crafter.Env()
        self.observation_space = gymnasium.spaces.Box(0, 255, (64, 64, 3), np.uint8)
        self.action_space = gymnasium.spaces.Discrete(17)

    def reset(self, seed=None, options=None):
        return self.env.reset(), {}

    def step(self, action):
        obs, reward, done, info = self.env.step(int(action))
        dead = info["discount"] == 0
        return obs, reward, dead, done and not dead, {}


def _minatar_gym() -> gymnasium.Env:
    from minatar.gym import BaseEnv

    return BaseEnv("breakout")  # all 6 actions and sticky actions 0.1, as ours


def _minigrid_gym() -> gymnasium.Env:
    from minigrid.wrappers import ImgObsWrapper

    return ImgObsWrapper(gymnasium.make("MiniGrid-DoorKey-5x5-v0"))


def _nethack_gym() -> gymnasium.Env:
    from nle.env.tasks import NetHackScore

    from puffer.envs.nethack import OBS_KEYS

    return NetHackScore(observation_keys=OBS_KEYS)  # the same three observation keys as ours


def _vizdoom_gym() -> gymnasium.Env:
    import tempfile

    from vizdoom import gymnasium_wrapper  # noqa: F401  (registers the Vizdoom ids)

    ini = f"{tempfile.mkdtemp(prefix='bench-vizdoom-')}/vizdoom.ini"
    return gymnasium.make("VizdoomBasic-v1", frame_skip=4, doom_config_path=ini)


def pettingzoo_raw(make_env: Callable[[], object]):
    """A PettingZoo parallel env stepped with action dicts (no vectorizer exists for them)."""

    def build():
        env = make_env()
        env.reset(seed=0)
        rng = np.random.default_rng(0)

        def step() -> int:
            if not env.agents:
                env.reset()
            n = env.action_space(env.possible_agents[0]).n
            actions = rng.integers(0, n, len(env.agents))
            env.step({agent: int(a) for agent, a in zip(env.agents, actions, strict=True)})
            return len(env.possible_agents)

        return step, env.close

    return build


def _kaz() -> object:
    import pettingzoo

    return pettingzoo.make("parallel", "butterfly/knights_archers_zombies-v11")


def _pistonball() -> object:
    import pettingzoo

    return pettingzoo.make(
        "parallel", "butterfly/pistonball-v6", continuous=False, render_mode="rgb_array"
    )


def _battle() -> object:
    from magent2.environments import battle_v4

    return battle_v4.parallel_env()


def rows(num_envs: int) -> dict[str, list[tuple[str, Callable]]]:
    half = num_envs // 2
    families = {
        "atari-breakout": [
            ("ours: ale-py threads (2)", puffer_native("atari-breakout", num_envs=num_envs,
                                                       num_threads=2)),
            ("ours: multiprocessing (2 workers)", puffer_multiprocessing(
                "atari-breakout", 2, num_envs=half, num_threads=1)),
            ("peer: EnvPool (2 threads)", envpool_atari(num_envs)),
        ],
        "minatar-breakout": [
            ("ours: one process", puffer_native("minatar-breakout", num_envs=num_envs)),
            ("ours: multiprocessing (2 workers)", puffer_multiprocessing(
                "minatar-breakout", 2, num_envs=half)),
            ("peer: gymnasium SyncVectorEnv", gymnasium_peer(_minatar_gym, num_envs, "sync")),
            ("peer: gymnasium AsyncVectorEnv", gymnasium_peer(_minatar_gym, num_envs, "async")),
        ],
        "minigrid-doorkey-5x5": [
            ("ours: one process", puffer_native("minigrid-doorkey-5x5", num_envs=num_envs)),
            ("ours: multiprocessing (2 workers)", puffer_multiprocessing(
                "minigrid-doorkey-5x5", 2, num_envs=half)),
            ("peer: gymnasium SyncVectorEnv", gymnasium_peer(_minigrid_gym, num_envs, "sync")),
            ("peer: gymnasium AsyncVectorEnv", gymnasium_peer(_minigrid_gym, num_envs, "async")),
        ],
        "crafter": [
            ("ours: one process", puffer_native("crafter", num_envs=num_envs)),
            ("ours: multiprocessing (2 workers)", puffer_multiprocessing(
                "crafter", 2, num_envs=half)),
            ("peer: gymnasium SyncVectorEnv", gymnasium_peer(_CrafterGymnasium, num_envs, "sync")),
            ("peer: gymnasium AsyncVectorEnv", gymnasium_peer(_CrafterGymnasium, num_envs, "async")),
        ],
        "butterfly-kaz": [
            ("ours: PettingZooPufferEnv", puffer_native("butterfly-kaz")),
            ("peer: raw PettingZoo parallel env", pettingzoo_raw(_kaz)),
        ],
        "butterfly-pistonball": [
            ("ours: PettingZooPufferEnv", puffer_native("butterfly-pistonball")),
            ("peer: raw env, no resize or stack", pettingzoo_raw(_pistonball)),
        ],
        "nethack-score": [
            ("ours: one process", puffer_native("nethack-score", num_envs=num_envs)),
            ("ours: multiprocessing (2 workers)", puffer_multiprocessing(
                "nethack-score", 2, num_envs=half)),
            ("peer: gymnasium SyncVectorEnv", gymnasium_peer(_nethack_gym, num_envs, "sync")),
            ("peer: gymnasium AsyncVectorEnv", gymnasium_peer(_nethack_gym, num_envs, "async")),
        ],
        "vizdoom-basic": [
            ("ours: one process", puffer_native("vizdoom-basic", num_envs=num_envs)),
            ("ours: multiprocessing (2 workers)", puffer_multiprocessing(
                "vizdoom-basic", 2, num_envs=half)),
            ("peer: gymnasium SyncVectorEnv", gymnasium_peer(_vizdoom_gym, num_envs, "sync")),
            ("peer: gymnasium AsyncVectorEnv", gymnasium_peer(_vizdoom_gym, num_envs, "async")),
        ],
        "magent-battle": [
            ("ours: PettingZooPufferEnv", puffer_native("magent-battle")),
            ("peer: raw PettingZoo parallel env", pettingzoo_raw(_battle)),
        ],
    }  # fmt: skip
    return families


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8, help="env copies per row (even)")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (median shown)")
    parser.add_argument("--only", default="", help="comma-separated family ids to run")
    args = parser.parse_args()
    print(
        f"{header('numpy', 'gymnasium')}; {args.envs} envs per row, median of {args.repeats} x "
        f"{args.seconds:g} s; unit: agent steps per wall-clock second"
    )
    only = {name for name in args.only.split(",") if name}
    for family, entries in rows(args.envs).items():
        if only and family not in only:
            continue
        print(f"\n{family}")
        # Rows alternate within each repeat, so a load change on a shared machine hits all.
        rates: dict[str, list[float]] = {label: [] for label, _ in entries}
        for _ in range(args.repeats):
            for label, build in entries:
                if label not in rates:
                    continue
                try:
                    rates[label].append(measure(build, args.seconds))
                except ImportError as error:
                    del rates[label]
                    print(f"  {label:38s} not run: {error} (uv run --with envpool ...)")
        first = None
        for label, runs in rates.items():
            if not runs:
                continue
            rate = statistics.median(runs)
            first = first or rate
            print(f"  {label:38s} {rate:12,.0f}   ours(first row) / this = {first / rate:5.2f}")


if __name__ == "__main__":
    main()
