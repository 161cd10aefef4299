"""Keyboard play of the Ocean envs: every env's key map gives distinct, valid actions, key
sequences wait for their last key, bad maps name the fix, and the person is agent 0 while the
other agents act for themselves."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

import puffer.ocean
from puffer.core import APIUsageError, make
from puffer.ocean import _ocean
from puffer.train import PolicyConfig, make_policy
from puffer.view import KeyMap, PolicyOthers, RandomOthers, Score
from puffer.view.play import IDLE


@pytest.mark.parametrize("name", _ocean.ENVS)
def test_every_ocean_env_has_a_key_map(name: str) -> None:
    space = puffer.ocean.ENVS[name].single_action_space
    keys = KeyMap(name, _ocean.SPECS[name]["keys"], space)
    pressed = [k for k, _, _ in keys.entries if k != IDLE]
    assert pressed, f"{name} maps no key"
    assert len(set(pressed)) == len(pressed), f"{name} maps a key twice"
    # Every mapped key (or key sequence) makes an action the env accepts, and they differ.
    actions = [_type(keys, key) for key in pressed]
    for action in actions:
        assert space.contains(action), f"{name}: {action} is not in {space}"
    assert len({a.tobytes() for a in actions}) == len(actions)
    if isinstance(space, spaces.Discrete) and not keys.realtime:
        assert len(actions) == space.n, f"{name}: some action has no key"


def _type(keys: KeyMap, key: str) -> np.ndarray:
    """The action a person makes with `key`: held in real time, else typed press by press."""
    if keys.realtime:
        return keys.action([keys.code(key)])
    *first, last = keys.codes(key)
    for code in first:
        assert keys.press(code) is None, f"{key!r}: a prefix already made a move"
    action = keys.press(last)
    assert action is not None and keys.pending == ()
    return action


def test_key_sequences_wait_for_the_last_key_and_start_over_on_a_stray_one() -> None:
    space = spaces.Discrete(50)
    keys = KeyMap("go", _ocean.SPECS["go"]["keys"], space)
    c, four, x = keys.code("c"), keys.code("4"), keys.code("x")
    assert keys.press(c) is None and keys.pending_text() == "c"
    assert keys.press(four) == 1 + 3 * 7 + 2  # column c, row 4 from the top
    assert keys.press(keys.code("p")) == 0 and keys.pending == ()  # pass: one key
    # A key that continues no sequence drops the pending one; one that starts a sequence
    # starts it afresh.
    assert keys.press(c) is None and keys.press(x) is None and keys.pending == ()
    assert keys.press(c) is None and keys.press(keys.code("d")) is None
    assert keys.pending_text() == "d" and keys.press(four) == 1 + 3 * 7 + 3
    with pytest.raises(APIUsageError, match="key sequences need turn-based play"):
        KeyMap("x", [("idle", 0, 0), ("a 1", 0, 1)], spaces.Discrete(3))


def test_key_map_errors_name_the_fix() -> None:
    with pytest.raises(APIUsageError, match="declares no key map; add `static const PufferKey"):
        KeyMap("x", [], spaces.Discrete(3))
    with pytest.raises(APIUsageError, match="'jump' is not a pygame key name"):
        KeyMap("x", [("jump", 0, 1)], spaces.Discrete(3))
    with pytest.raises(APIUsageError, match=r"sets head 0 to 5.0, outside \[0, 2\]"):
        KeyMap("x", [("left", 0, 5)], spaces.Discrete(3))
    with pytest.raises(APIUsageError, match="sets head 2, but the action has 2"):
        KeyMap("x", [("left", 2, 1)], spaces.MultiDiscrete([3, 3]))


@pytest.mark.parametrize("policy", [False, True])
def test_the_person_is_agent_0_and_the_others_act_for_themselves(policy: bool) -> None:

    torch.manual_seed(0)
    env = make("target", num_envs=1, log_interval=1)  # 8 agents per instance
    others = (
        PolicyOthers(env, make_policy(PolicyConfig(hidden_size=8), env))
        if policy
        else RandomOthers(env, seed=0)
    )
    keys = KeyMap("target", _ocean.SPECS["target"]["keys"], env.single_action_space)
    human = keys.action([keys.code("left"), keys.code("up")])  # turn hard left at full speed
    score = Score()
    others.reset(seed=0)
    seen = []
    for _ in range(64):
        score.update(env, others.act(human))
        np.testing.assert_array_equal(env.actions[0], human)
        seen.append(env.actions[1:].copy())
    # The other seven agents chose their own, varied actions.
    assert len({a.tobytes() for a in seen}) > 1
    assert score.step == 64
    env.close()
