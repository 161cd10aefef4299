"""Atari 2600 games through ale-py's own C++ vector env (its threads, its preprocessing).

The standard preprocessing of the DQN/PPO literature (Machado et al. 2018 settings where
they differ are noted): 84x84 grayscale, frame skip 4 with a max over the last two frames,
4 stacked frames, up to 30 no-op actions at reset, FIRE at reset where the game needs it,
rewards clipped to [-1, 1] for training, and a life loss reported as a terminal (the game
goes on: "episodic life"). Episode statistics are the real game's: `episode_return` is the
unclipped score of a whole game (all lives), `episode_length` its agent steps.

ale-py's `episodic_life` option restarts the whole game on a life loss; its `life_loss_info`
option is the usual episodic life (a terminal, the game continues), so that one is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer, PufferEnv
from puffer.envs._family import FAMILIES
from puffer.envs._shipped import creator

__all__ = ["GAMES", "RENDER_SCALE", "AtariEnv"]

# Env ids registered as atari-<id>: id -> the ROM name ale-py knows.
GAMES = {
    "breakout": "breakout",
    "pong": "pong",
    "space-invaders": "space_invaders",
    "seaquest": "seaquest",
    "beam-rider": "beam_rider",
    "qbert": "qbert",
    "enduro": "enduro",
    "ms-pacman": "ms_pacman",
    "asteroids": "asteroids",
    "montezuma-revenge": "montezuma_revenge",
}
# render() shows the newest 84x84 observation frame enlarged this many times.
RENDER_SCALE = 4


class AtariEnv(PufferEnv):
    """`num_envs` copies of one Atari game, stepped together by ale-py's `AtariVectorEnv`.

    Args:
        game: ROM name as ale-py spells it (`"breakout"`, `"space_invaders"`).
        num_envs: games stepped together (rows of the buffer).
        num_threads: ale-py worker threads; 0 lets ale-py choose (one per core).
        frameskip: emulator frames per agent step (with a max over the last two).
        stack: frames stacked in one observation.
        noop_max: up to this many no-op steps after each reset.
        episodic_life: report a life loss as a terminal (the game goes on); for training, so
            it applies only without a render mode: a rendered env (`puffer eval`) plays whole
            games, as evaluations of Atari agents do.
        clip_rewards: rewards in the buffer are clipped to [-1, 1] (stats keep the real score).
        repeat_action_probability: sticky actions (0.25 in Machado et al.'s protocol).
        max_episode_frames: emulator frames before a game is truncated.
        seed: seed of the first `reset()` called without one (games get seed, seed+1, ...).
        render_mode: None or "rgb_array" (`render()` returns the newest frame of game 0).
        buf: a `Buffer` of `num_envs` rows to write into.

    Observations: (num_envs, stack, 84, 84) uint8. Actions: (num_envs,) int32 in the game's
    minimal action set.

    Example:
        >>> env = AtariEnv("breakout", num_envs=2, num_threads=1)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((2, 4, 84, 84), dtype('uint8'), Discrete(4))
        >>> env.close()
    """

    def __init__(
        self,
        game: str = "breakout",
        *,
        num_envs: int = 1,
        num_threads: int = 0,
        frameskip: int = 4,
        stack: int = 4,
        noop_max: int = 30,
        episodic_life: bool = True,
        clip_rewards: bool = True,
        repeat_action_probability: float = 0.0,
        max_episode_frames: int = 108_000,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        name = f"atari-{game.replace('_', '-')}"
        FAMILIES["atari"].require(name)
        from ale_py import roms
        from ale_py.vector_env import AtariVectorEnv

        if num_envs < 1 or num_threads < 0:
            raise APIUsageError(
                f"{name}: num_envs={num_envs} and num_threads={num_threads}; need num_envs >= 1 "
                "and num_threads >= 0 (0 lets ale-py choose)"
            )
        if render_mode not in (None, "rgb_array"):
            raise APIUsageError(f"{name}: render_mode={render_mode!r}; use None or 'rgb_array'")
        if game not in roms.get_all_rom_ids():
            raise APIUsageError(
                f"{name}: ale-py has no ROM {game!r}; ROM names are snake_case, e.g. "
                f"{', '.join(sorted(GAMES.values()))}"
            )
        self.game = game
        self.name = name
        self.render_mode = render_mode
        self._vec = AtariVectorEnv(
            game,
            num_envs,
            num_threads=num_threads,
            frameskip=frameskip,
            stack_num=stack,
            noop_max=noop_max,
            episodic_life=False,
            life_loss_info=episodic_life and render_mode is None,
            reward_clipping=False,
            repeat_action_probability=repeat_action_probability,
            max_num_frames_per_episode=max_episode_frames,
            autoreset_mode="SameStep",
        )
        self.single_observation_space = self._vec.single_observation_space
        self.single_action_space = spaces.Discrete(int(self._vec.single_action_space.n))
        self.num_agents = num_envs
        super().__init__(buf)
        self._clip = clip_rewards
        self._seed = seed
        # ale-py reads paddle strength beside the action; full strength for digital actions.
        self._strength = np.ones(num_envs, np.float32)
        self._score = np.zeros(num_envs, np.float64)
        self._length = np.zeros(num_envs, np.int64)
        self._game_frame = np.zeros(num_envs, np.int64)

    def _reset(self, seed: int | None) -> list[dict[str, Any]]:
        if seed is None:
            seed = self._seed
        obs, info = self._vec.reset(seed=seed)
        self.observations[...] = obs
        self.rewards[...] = 0
        self.terminals[...] = False
        self.truncations[...] = False
        self.masks[...] = True
        self._score[...] = 0
        self._length[...] = 0
        self._game_frame[...] = info["episode_frame_number"]
        return []

    def _step(self) -> list[dict[str, Any]]:
        self._vec.ale.send(self.actions, self._strength)
        obs, rewards, terminals, truncations, info = self._vec.ale.recv()
        self.observations[...] = obs
        if self._clip:
            np.clip(rewards, -1, 1, out=self.rewards, casting="unsafe")
        else:
            self.rewards[...] = rewards
        self.terminals[...] = terminals
        self.truncations[...] = truncations
        self._score += rewards
        self._length += 1
        # Autoreset happens in the same step, so a game that ended shows a frame counter that
        # went back (a new game) while a lost life keeps counting up.
        frame = info["episode_frame_number"]
        ended = np.flatnonzero(frame < self._game_frame)
        self._game_frame[...] = frame
        if not len(ended):
            return []
        infos = [
            {"episode_return": float(self._score[i]), "episode_length": float(self._length[i])}
            for i in ended
        ]
        self._score[ended] = 0
        self._length[ended] = 0
        return infos

    def render(self) -> np.ndarray:
        """The newest observation frame of game 0 as RGB, (84*4, 84*4, 3) uint8."""
        frame = self.observations[0, -1]
        big = frame.repeat(RENDER_SCALE, axis=0).repeat(RENDER_SCALE, axis=1)
        return np.repeat(big[:, :, None], 3, axis=2)

    def close(self) -> None:
        if not self.closed:
            self._vec.close()
        super().close()

    def __repr__(self) -> str:
        return f"AtariEnv(game={self.game!r}, num_envs={self.num_agents})"


breakout = creator(AtariEnv, "atari", game="breakout")
pong = creator(AtariEnv, "atari", game="pong")
space_invaders = creator(AtariEnv, "atari", game="space_invaders")
seaquest = creator(AtariEnv, "atari", game="seaquest")
beam_rider = creator(AtariEnv, "atari", game="beam_rider")
qbert = creator(AtariEnv, "atari", game="qbert")
enduro = creator(AtariEnv, "atari", game="enduro")
ms_pacman = creator(AtariEnv, "atari", game="ms_pacman")
asteroids = creator(AtariEnv, "atari", game="asteroids")
montezuma_revenge = creator(AtariEnv, "atari", game="montezuma_revenge")
