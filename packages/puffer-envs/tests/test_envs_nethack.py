"""NetHack's promises: the structured row reads back as glyphs + blstats + message, finished
episodes report the game's score, depth and turns, and the encoder looks around the hero."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from puffer.core import nativize
from puffer.envs import NetHackEnv
from puffer.envs.nethack_encoder import CROP, NetHackEncoder
from puffer.train import PolicyConfig


def test_rows_read_back_as_the_nle_observation() -> None:
    env = NetHackEnv(num_envs=2)
    obs, _ = env.reset(seed=0)
    parts = nativize(obs, env.obs_layout)
    game = env.games[1].last_observation  # nle's own arrays, in its observation_keys order
    glyphs, blstats, message = (
        game[env.games[1]._observation_keys.index(k)] for k in ("glyphs", "blstats", "message")
    )
    np.testing.assert_array_equal(parts["glyphs"][1], glyphs)
    np.testing.assert_array_equal(parts["blstats"][1], blstats)
    np.testing.assert_array_equal(parts["message"][1], message)
    x, y = parts["blstats"][0, :2]
    assert parts["glyphs"][0, y, x] != parts["glyphs"][0, 0, 0]  # the hero stands on the map
    env.close()


def test_truncated_episode_reports_score_depth_and_turns() -> None:
    env = NetHackEnv(num_envs=2, max_episode_steps=40)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    infos, truncations = [], 0
    for _ in range(45):
        _, _, _, trunc, step_infos = env.step(rng.integers(0, 23, 2).astype(np.int32))
        infos += step_infos
        truncations += int(trunc.sum())
    env.close()
    assert truncations == len(infos) == 2  # both games hit the 40-step limit once
    for info in infos:
        assert info["episode_length"] == 40
        assert info["depth"] >= 1 and info["turns"] >= 1 and info["score"] >= 0


def test_encoder_crop_is_centred_on_the_hero() -> None:
    env = NetHackEnv(num_envs=3)
    obs, _ = env.reset(seed=5)
    encoder = NetHackEncoder(env, PolicyConfig(hidden_size=32, cnn_channels=8))
    parts = nativize(torch.from_numpy(obs), env.obs_layout)
    glyphs, blstats = parts["glyphs"].long(), parts["blstats"]
    crop = encoder._crop(glyphs, blstats[:, 0], blstats[:, 1])
    assert crop.shape == (3, CROP, CROP)
    centre = crop[:, CROP // 2, CROP // 2]
    assert torch.equal(centre, glyphs[torch.arange(3), blstats[:, 1], blstats[:, 0]])
    assert encoder(torch.from_numpy(obs)).shape == (3, 32)
    env.close()


def test_encoder_refuses_other_observations() -> None:
    from puffer.envs import MiniGridEnv

    env = MiniGridEnv(num_envs=1)
    with pytest.raises(ValueError, match="NetHackEncoder reads nethack"):
        NetHackEncoder(env, PolicyConfig())
