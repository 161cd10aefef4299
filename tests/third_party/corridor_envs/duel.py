"""Two agents call a coin each step; each scores when it matches the other. Five steps."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

STEPS = 5


class Duel(ParallelEnv):
    metadata: ClassVar[dict] = {"name": "duel_v0", "render_modes": []}

    def __init__(self) -> None:
        self.possible_agents = ["a", "b"]
        self.agents: list[str] = []
        self.t = 0

    def observation_space(self, agent: str) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (2,), np.float32)

    def action_space(self, agent: str) -> spaces.Discrete:
        return spaces.Discrete(2)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        self.agents, self.t = list(self.possible_agents), 0
        return {a: np.zeros(2, np.float32) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict) -> tuple:
        self.t += 1
        match = float(actions["a"] == actions["b"])
        obs = {a: np.eye(2, dtype=np.float32)[int(actions[a])] for a in self.agents}
        rewards = {a: match for a in self.agents}
        over = self.t >= STEPS
        terminations = {a: False for a in self.agents}
        truncations = {a: over for a in self.agents}
        infos = {a: {} for a in self.agents}
        if over:
            self.agents = []
        return obs, rewards, terminations, truncations, infos


def parallel_env() -> Duel:
    return Duel()
