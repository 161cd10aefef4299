"""A person plays an Ocean env: its key map, the other agents, and the pygame window.

The key map is the header's `KEYS` (csrc/puffer.h `PufferKey`), exported as
`SPECS[env]["keys"]`: `(key, head, value)` triples. With an "idle" entry play is real time (a
step every frame; held keys set their heads, the rest keep the idle value); without one it is
turn-based (each key press is one step). A turn-based key may be a sequence of key names
separated by spaces ("c 4": press c, then 4), so board games with more moves than a keyboard
has keys name a point by its column and row; the step comes when a sequence is complete. The
person is agent row 0; the other rows act from a checkpoint's policy or at random.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, PufferEnv, action_dtype, random_actions
from puffer.train import Policy
from puffer.train.rollout import Rollout

__all__ = ["IDLE", "KeyMap", "Others", "PlayWindow", "PolicyOthers", "RandomOthers", "Score"]

IDLE = "idle"
# Pixel height of the score line drawn above the env's frame.
HUD_HEIGHT = 20
# The automatic window scale makes the longer side at least this many pixels.
MIN_SIDE = 480
# A legend longer than this many entries is shortened to its first few.
LEGEND_ENTRIES = 12


class KeyMap:
    """An env's key map, resolved to pygame key codes and checked against its action space.

    Args:
        env_name: For messages.
        entries: `(key, head, value)` triples, as `SPECS[env]["keys"]`.
        space: The env's single-agent action space (Discrete, MultiDiscrete or Box).

    Raises:
        APIUsageError: No entries, an unknown key name, a head or value outside the space.

    Example:
        >>> from gymnasium.spaces import Discrete
        >>> keys = KeyMap("breakout", [("idle", 0, 0), ("left", 0, 1)], Discrete(3))
        >>> keys.realtime, keys.action([]).tolist(), keys.action([keys.code("left")]).tolist()
        (True, 0, 1)
    """

    def __init__(self, env_name: str, entries: Iterable[tuple[str, int, float]], space: Any):
        import pygame

        self.entries = [(str(k), int(h), float(v)) for k, h, v in entries]
        if not self.entries:
            raise APIUsageError(
                f"{env_name} declares no key map; add `static const PufferKey KEYS[]` to its "
                "header (csrc/puffer.h says how)"
            )
        self.space = space
        self.dtype = action_dtype(space)
        if isinstance(space, spaces.Discrete):
            sizes = [int(space.n)]
        elif isinstance(space, spaces.MultiDiscrete):
            sizes = [int(n) for n in space.nvec.ravel()]
        elif isinstance(space, spaces.Box):
            sizes = [0] * int(np.prod(space.shape))
        else:
            raise APIUsageError(f"{env_name}: cannot play action space {space} by keyboard")
        self._idle = np.zeros(len(sizes), dtype=np.float64)
        self._keys: list[tuple[tuple[int, ...], int, float]] = []
        for key, head, value in self.entries:
            if not 0 <= head < len(sizes):
                raise APIUsageError(
                    f"{env_name} key map: {key!r} sets head {head}, but the action has "
                    f"{len(sizes)}; fix KEYS in its header"
                )
            if sizes[head] and not (value.is_integer() and 0 <= value < sizes[head]):
                raise APIUsageError(
                    f"{env_name} key map: {key!r} sets head {head} to {value}, outside "
                    f"[0, {sizes[head] - 1}]; fix KEYS in its header"
                )
            if key == IDLE:
                self._idle[head] = value
                continue
            try:
                codes = tuple(_key_code(pygame, name) for name in key.split())
            except ValueError:
                raise APIUsageError(
                    f"{env_name} key map: {key!r} is not a pygame key name (e.g. 'left', "
                    "'space', 'a', '1') or a sequence of them ('c 4'); fix KEYS in its header"
                ) from None
            self._keys.append((codes, head, value))
        self.realtime = any(key == IDLE for key, _, _ in self.entries)
        if self.realtime and any(len(codes) > 1 for codes, _, _ in self._keys):
            raise APIUsageError(
                f"{env_name} key map: key sequences need turn-based play, but it has an "
                f"{IDLE!r} entry; fix KEYS in its header"
            )
        # Keys pressed so far of a sequence not yet complete (turn-based play).
        self.pending: tuple[int, ...] = ()

    def code(self, name: str) -> int:
        """The pygame key code of a key name."""
        import pygame

        return _key_code(pygame, name)

    def codes(self, key: str) -> list[int]:
        """The pygame key codes of a key or a key sequence ("c 4")."""
        return [self.code(name) for name in key.split()]

    def _shaped(self, values: np.ndarray) -> np.ndarray:
        shape = () if isinstance(self.space, spaces.Discrete) else self.space.shape
        return values.reshape(shape).astype(self.dtype)

    def action(self, held: Iterable[int]) -> np.ndarray:
        """Real time: the action while the keys `held` (pygame codes) are down; the idle
        action where none of them is mapped. Shape: the single action space's; its dtype."""
        held = set(held)
        values = self._idle.copy()
        for (code,), head, value in self._keys:
            if code in held:
                values[head] = value
        return self._shaped(values)

    def press(self, key: int) -> np.ndarray | None:
        """Turn-based: the action that one press of `key` completes, or None (an unmapped
        key, or a sequence still incomplete: `pending` holds it). A key that no sequence
        continues with starts over as the first key of a new one."""
        for sequence in ((*self.pending, key), (key,)):
            values = self._idle.copy()
            complete = False
            for codes, head, value in self._keys:
                if codes == sequence:
                    values[head] = value
                    complete = True
            if complete:
                self.pending = ()
                return self._shaped(values)
            if any(codes[: len(sequence)] == sequence for codes, _, _ in self._keys):
                self.pending = sequence
                return None
        self.pending = ()
        return None

    def pending_text(self) -> str:
        """The keys typed so far of an incomplete sequence, e.g. "c", or ""."""
        import pygame

        return " ".join(pygame.key.name(code) for code in self.pending)

    def legend(self) -> str:
        """The map as text, e.g. "left: head 0 = 1, right: head 0 = 2"; a long map shows
        its first LEGEND_ENTRIES entries and how many there are."""
        shown = ", ".join(
            f"{key}: {'action' if len(self._idle) == 1 else f'head {head}'} = {value:g}"
            for key, head, value in self.entries[:LEGEND_ENTRIES]
        )
        if len(self.entries) > LEGEND_ENTRIES:
            shown += f", ... ({len(self.entries)} in all; the env's docstring says the scheme)"
        return shown


def _key_code(pygame: Any, name: str) -> int:
    with warnings.catch_warnings():
        # SDL's key-name table needs no video device; pygame warns before pygame.init() anyway.
        warnings.simplefilter("ignore")
        return pygame.key.key_code(name)


class Others(Protocol):
    """Steps the env with the person's action in row 0 and its own in the other rows."""

    def reset(self, seed: int | None) -> None:
        """Reset the env."""

    def act(self, human: np.ndarray) -> list[dict[str, float]]:
        """One env step; returns its infos. The env's bound arrays then hold the result."""


class RandomOthers:
    """The other agents act uniformly at random (seeded)."""

    def __init__(self, env: PufferEnv, seed: int = 0):
        self.env = env
        self.seed = seed

    def reset(self, seed: int | None) -> None:
        self.env.reset(seed)

    def act(self, human: np.ndarray) -> list[dict[str, float]]:
        env = self.env
        actions = random_actions(env.single_action_space, env.num_agents, 1, self.seed)[0]
        self.seed += 1
        actions[0] = human
        return env.step(actions)[4]


class _Seat:
    """The env as a vecenv whose row 0 is the person's: `send` swaps in their action."""

    def __init__(self, env: PufferEnv):
        self.env = env
        self.human: np.ndarray | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def send(self, actions: np.ndarray) -> None:
        actions = np.array(actions, copy=True)
        actions[0] = self.human
        self.env.send(actions)


class PolicyOthers:
    """The other agents act with a trained policy (the trainer's `Rollout`, recurrent state
    carried); the policy's action for row 0 is replaced by the person's."""

    def __init__(self, env: PufferEnv, policy: Policy):
        self.seat = _Seat(env)
        self.rollout = Rollout(policy, self.seat)
        self.pending: Any = None

    def reset(self, seed: int | None) -> None:
        self.rollout.reset(seed)
        self.pending = self.rollout.recv()

    def act(self, human: np.ndarray) -> list[dict[str, float]]:
        self.seat.human = human
        self.rollout.act(self.pending)
        self.pending = self.rollout.recv()
        return self.pending.infos


@dataclass
class Score:
    """Agent 0's running tally.

    Attributes:
        step: Steps taken.
        episode_return: Reward of agent 0 in the episode going on.
        returns: Returns of agent 0's finished episodes.
        logs: The env's last reported episode stats (e.g. score).
    """

    step: int = 0
    episode_return: float = 0.0
    returns: list[float] = field(default_factory=list)
    logs: dict[str, float] = field(default_factory=dict)

    def update(self, env: PufferEnv, infos: list[dict[str, float]]) -> None:
        """Count one step from the env's bound arrays (row 0) and its infos."""
        self.step += 1
        self.episode_return += float(env.rewards[0])
        for info in infos:
            self.logs.update({k: float(v) for k, v in info.items() if k != "n"})
        if env.terminals[0] or env.truncations[0]:
            self.returns.append(self.episode_return)
            self.episode_return = 0.0

    def line(self) -> str:
        """The text shown above the frame."""
        text = f"return {self.episode_return:.3g}  step {self.step}  episodes {len(self.returns)}"
        if "score" in self.logs:
            text += f"  last score {self.logs['score']:.3g}"
        return text


class PlayWindow:
    """The pygame window: the env's frame under a score line, scaled up; keyboard state.

    Args:
        title: Window caption.
        scale: Integer upscaling of the composed picture; 0 picks one that makes the longer
            side at least MIN_SIDE pixels.
    """

    def __init__(self, title: str, scale: int):
        import pygame

        self._pygame = pygame
        pygame.display.init()
        pygame.font.init()
        pygame.display.set_caption(title)
        self.font = pygame.font.Font(None, HUD_HEIGHT)
        self.scale = scale
        self.screen: Any = None
        self.held: set[int] = set()
        self.clock = pygame.time.Clock()

    def tick(self, fps: int) -> None:
        """Wait out the rest of this frame at `fps` frames per second."""
        self.clock.tick(fps)

    def events(self) -> tuple[bool, list[int]]:
        """Drain the event queue. Returns (quit asked: close, Escape or q; keys pressed now);
        `held` is updated to the keys down."""
        pygame = self._pygame
        pressed = []
        quit_asked = False
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                quit_asked = True
            elif event.type == pygame.KEYDOWN:
                if event.key in (pygame.K_ESCAPE, pygame.K_q):
                    quit_asked = True
                self.held.add(event.key)
                pressed.append(event.key)
            elif event.type == pygame.KEYUP:
                self.held.discard(event.key)
        return quit_asked, pressed

    def show(self, frame: np.ndarray, line: str) -> np.ndarray:
        """Draw an (H, W, 3) uint8 frame under `line`; returns the composed picture, unscaled,
        as an (H + HUD_HEIGHT, W, 3) uint8 array (what --record writes)."""
        pygame = self._pygame
        height, width, _ = frame.shape
        canvas = pygame.Surface((width, height + HUD_HEIGHT))
        canvas.fill((20, 20, 30))
        canvas.blit(self.font.render(line, True, (240, 240, 240)), (4, 3))
        # pygame surfaces are indexed (x, y): transpose the (H, W, 3) frame.
        image = pygame.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
        canvas.blit(image, (0, HUD_HEIGHT))
        scale = self.scale or max(1, MIN_SIDE // max(width, height + HUD_HEIGHT))
        size = (width * scale, (height + HUD_HEIGHT) * scale)
        if self.screen is None or self.screen.get_size() != size:
            self.screen = pygame.display.set_mode(size)
        self.screen.blit(pygame.transform.scale(canvas, size), (0, 0))
        pygame.display.flip()
        return pygame.surfarray.array3d(canvas).transpose(1, 0, 2).copy()

    def close(self) -> None:
        """Close the window."""
        self._pygame.quit()
