"""Every wrapper in `gymnasium.wrappers.vector` over `puffer.vector.gym.VectorEnv`, each with a
check of what it did.

Gymnasium's observation wrappers need `NEXT_STEP` autoreset (`VectorObservationWrapper`
refuses SAME_STEP), and its array conversions cannot convert SAME_STEP's `final_obs` (an object
array, as Gymnasium's own SAME_STEP envs return it), so those cases build the adapter with
`make(..., autoreset_mode=NEXT_STEP)`, as does `RecordVideo` (SAME_STEP videos lack each
episode's last frame, and it warns); the rest run over the default SAME_STEP adapter. Envs: CartPole (Box obs, Discrete actions),
Pendulum (bounded Box obs and Box actions), CarRacing (RGB image obs), MiniGrid (Dict obs).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import gymnasium.wrappers.vector as W
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import (
    ClipReward,
    DictInfoToList,
    NormalizeObservation,
    RecordEpisodeStatistics,
)

from puffer.vector.gym import VectorEnv, make

torch = pytest.importorskip("torch")
NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
STEPS = 80
# Short CartPole episodes: several end within STEPS.
SHORT = {"env_kwargs": {"max_episode_steps": 10}}


@dataclass
class Case:
    """One wrapper: the adapter under it, how to wrap, and what to check after STEPS steps."""

    env: str
    mode: AutoresetMode
    wrap: Callable[[VectorEnv, Path], Any]
    check: Callable[[Any, list[tuple]], None]
    kwargs: dict | None = None
    # Actions for the wrapped env (default: its action_space samples as numpy).
    actions: Callable[[Any, np.random.Generator], Any] | None = None


def _last(outs: list[tuple], index: int) -> Any:
    return outs[-1][index]


def _ended_infos(outs: list[tuple]) -> list[dict]:
    return [out[4] for out in outs if (out[2] | out[3]).any()]


def _check_dict_info_to_list(envs: Any, outs: list[tuple]) -> None:
    ended = [out for out in outs if np.any(out[2] | out[3])]
    assert ended
    for out in ended:
        assert isinstance(out[4], list) and len(out[4]) == envs.num_envs
        for row, info in enumerate(out[4]):
            if out[2][row] or out[3][row]:
                assert info["final_info"]["episode_length"] >= 1
            else:
                assert "final_info" not in info


def _check_episode_statistics(envs: Any, outs: list[tuple]) -> None:
    infos = _ended_infos(outs)
    assert infos
    for info in infos:
        ended = info["_episode"]
        np.testing.assert_array_equal(ended, info["_final_info"])
        np.testing.assert_allclose(
            info["episode"]["r"][ended], info["final_info"]["episode_return"][ended]
        )
        np.testing.assert_array_equal(
            info["episode"]["l"][ended], info["final_info"]["episode_length"][ended]
        )


def _rewards_are(value: float) -> Callable[[Any, list[tuple]], None]:
    def check(envs: Any, outs: list[tuple]) -> None:
        rewards = np.concatenate([np.asarray(out[1]) for out in outs])
        np.testing.assert_allclose(rewards, value)

    return check


def _obs_check(test: Callable[[Any], bool]) -> Callable[[Any, list[tuple]], None]:
    def check(envs: Any, outs: list[tuple]) -> None:
        obs = _last(outs, 0)
        assert test(obs), obs
        assert envs.observation_space.contains(np.asarray(obs)) or isinstance(obs, dict)

    return check


def _pendulum_torque(envs: Any) -> float:
    # The Pendulum's last applied torque, read from its env (Serial backend).
    return float(envs.unwrapped.vec.envs[0].env.unwrapped.last_u)


def _constant_action(value: float) -> Callable[[Any, np.random.Generator], Any]:
    return lambda envs, rng: np.full((envs.num_envs, 1), value, np.float32)


def _check_torque(value: float) -> Callable[[Any, list[tuple]], None]:
    def check(envs: Any, outs: list[tuple]) -> None:
        assert _pendulum_torque(envs) == pytest.approx(value)

    return check


def _videos(envs: Any, outs: list[tuple]) -> None:
    folder = Path(envs.video_folder)
    envs.close()
    videos = sorted(folder.glob("*.mp4"))
    assert videos and all(video.stat().st_size > 1000 for video in videos), videos


def _tensor_obs(envs: Any, outs: list[tuple]) -> None:
    assert isinstance(_last(outs, 0), torch.Tensor) and _last(outs, 0).shape == (3, 4)


def _torch_actions(envs: Any, rng: np.random.Generator) -> Any:
    return torch.as_tensor(rng.integers(0, 2, envs.num_envs))


PENDULUM = {"backend": "serial"}
RENDERED = {"backend": "serial", "env_kwargs": {"render_mode": "rgb_array"}}
TRANSFORM_OBS = gymnasium.wrappers.TransformObservation

CASES: dict[str, Case] = {
    "VectorizeTransformObservation": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: W.VectorizeTransformObservation(
            e, TRANSFORM_OBS, func=lambda o: o * 0, observation_space=e.single_observation_space
        ),
        _obs_check(lambda obs: not obs.any()),
    ),
    "VectorizeTransformAction": Case(
        "gym-Pendulum-v1",
        SAME,
        lambda e, _: W.VectorizeTransformAction(
            e,
            gymnasium.wrappers.TransformAction,
            func=lambda a: a * 2,
            action_space=spaces.Box(-1, 1, (1,), np.float32),
        ),
        _check_torque(1.5),
        PENDULUM,
        _constant_action(0.75),
    ),
    "VectorizeTransformReward": Case(
        "gym-CartPole-v1",
        SAME,
        lambda e, _: W.VectorizeTransformReward(
            e, gymnasium.wrappers.TransformReward, func=lambda r: r + 1
        ),
        _rewards_are(2.0),
    ),
    "DictInfoToList": Case(
        "gym-CartPole-v1", SAME, lambda e, _: DictInfoToList(e), _check_dict_info_to_list, SHORT
    ),
    "TransformObservation": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: W.TransformObservation(e, func=lambda o: o * 0),
        _obs_check(lambda obs: not obs.any()),
    ),
    "FilterObservation": Case(
        "gym-MiniGrid-DoorKey-6x6-v0",
        NEXT,
        lambda e, _: W.FilterObservation(e, ["image"]),
        _obs_check(lambda obs: list(obs) == ["image"] and obs["image"].shape == (3, 7, 7, 3)),
    ),
    "FlattenObservation": Case(
        "gym-MiniGrid-DoorKey-6x6-v0",
        NEXT,
        lambda e, _: W.FlattenObservation(e),
        # direction one-hot (4) then the 7x7x3 image
        _obs_check(lambda obs: obs.shape == (3, 4 + 147) and (obs[:, :4].sum(1) == 1).all()),
    ),
    "GrayscaleObservation": Case(
        "gym-CarRacing-v3",
        NEXT,
        lambda e, _: W.GrayscaleObservation(e),
        _obs_check(lambda obs: obs.shape == (3, 96, 96) and obs.dtype == np.uint8),
    ),
    "ResizeObservation": Case(
        "gym-CarRacing-v3",
        NEXT,
        lambda e, _: W.ResizeObservation(e, (32, 32)),
        _obs_check(lambda obs: obs.shape == (3, 32, 32, 3)),
    ),
    "ReshapeObservation": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: W.ReshapeObservation(e, (2, 2)),
        _obs_check(lambda obs: obs.shape == (3, 2, 2)),
    ),
    "RescaleObservation": Case(
        "gym-Pendulum-v1",
        NEXT,
        lambda e, _: W.RescaleObservation(e, np.float32(0), np.float32(1)),
        _obs_check(lambda obs: (obs >= 0).all() and (obs <= 1).all()),
    ),
    "DtypeObservation": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: W.DtypeObservation(e, np.float64),
        _obs_check(lambda obs: obs.dtype == np.float64),
    ),
    "NormalizeObservation": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: NormalizeObservation(e),
        lambda envs, outs: envs.obs_rms.count > STEPS * envs.num_envs,
        SHORT,
    ),
    "TransformAction": Case(
        "gym-Pendulum-v1",
        SAME,
        lambda e, _: W.TransformAction(e, func=lambda a: a - 1.0),
        _check_torque(-0.5),
        PENDULUM,
        _constant_action(0.5),
    ),
    "ClipAction": Case(
        "gym-Pendulum-v1",
        SAME,
        lambda e, _: W.ClipAction(e),
        # Out of range: the adapter alone refuses 10.0 (APIUsageError); clipped it is 2.0.
        _check_torque(2.0),
        PENDULUM,
        _constant_action(10.0),
    ),
    "RescaleAction": Case(
        "gym-Pendulum-v1",
        SAME,
        lambda e, _: W.RescaleAction(e, np.float32(-1), np.float32(1)),
        _check_torque(2.0),
        PENDULUM,
        _constant_action(1.0),
    ),
    "TransformReward": Case(
        "gym-CartPole-v1",
        SAME,
        lambda e, _: W.TransformReward(e, func=lambda r: 3 * r),
        _rewards_are(3.0),
    ),
    "ClipReward": Case(
        "gym-CartPole-v1",
        SAME,
        lambda e, _: ClipReward(e, max_reward=0.25),
        _rewards_are(0.25),
    ),
    "NormalizeReward": Case(
        "gym-CartPole-v1",
        SAME,
        lambda e, _: W.NormalizeReward(e),
        lambda envs, outs: np.asarray(outs[-1][1]).max() < 1.0,
        SHORT,
    ),
    "RecordEpisodeStatistics": Case(
        "gym-CartPole-v1",
        SAME,
        lambda e, _: RecordEpisodeStatistics(e),
        _check_episode_statistics,
        SHORT,
    ),
    "RecordVideo": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, folder: W.RecordVideo(
            e, str(folder / "videos"), episode_trigger=lambda _: True, fps=30
        ),
        _videos,
        {**RENDERED, "env_kwargs": {"render_mode": "rgb_array", "max_episode_steps": 20}},
    ),
    "HumanRendering": Case(
        "gym-CartPole-v1",
        SAME,
        lambda e, _: W.HumanRendering(e),
        lambda envs, outs: envs.window is not None,
        RENDERED,
    ),
    "ArrayConversion": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: W.ArrayConversion(e, env_xp=np, target_xp=torch),
        _tensor_obs,
        actions=_torch_actions,
    ),
    "NumpyToTorch": Case(
        "gym-CartPole-v1", NEXT, lambda e, _: W.NumpyToTorch(e), _tensor_obs, actions=_torch_actions
    ),
    "JaxToNumpy": Case(
        "gym-CartPole-v1",
        NEXT,
        lambda e, _: W.JaxToNumpy(e),
        _obs_check(lambda obs: isinstance(obs, np.ndarray) and obs.shape == (3, 4)),
    ),
    "JaxToTorch": Case(
        "gym-CartPole-v1", NEXT, lambda e, _: W.JaxToTorch(e), _tensor_obs, actions=_torch_actions
    ),
}


def test_every_gymnasium_vector_wrapper_has_a_case() -> None:
    assert set(W.__all__) == set(CASES)


# Jax, once it has run, warns at every fork (os.fork with its threads alive), which fails the
# later tests of this process that fork workers: its two cases run in a child Python.
IN_CHILD = {"JaxToNumpy", "JaxToTorch"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gymnasium_vector_wrapper_runs_over_the_adapter(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # HumanRendering's window, headless
    if name not in IN_CHILD:
        run_case(name, tmp_path)
        return
    pytest.importorskip("jax")
    child = subprocess.run(
        [sys.executable, "-W", "error", __file__, name, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert child.returncode == 0, child.stdout + child.stderr[-4000:]
    assert child.stdout.strip() == f"{name} ok"


def run_case(name: str, folder: Path) -> None:
    """Wrap the adapter in wrapper `name`, step it STEPS times and run the case's check."""
    case = CASES[name]
    adapter = make(case.env, 3, autoreset_mode=case.mode, **(case.kwargs or {}))
    assert adapter.metadata["autoreset_mode"] == case.mode
    envs = case.wrap(adapter, folder)
    rng = np.random.default_rng(0)
    envs.action_space.seed(0)
    envs.reset(seed=0)
    outs = []
    for _ in range(STEPS):
        action = case.actions(envs, rng) if case.actions else envs.action_space.sample()
        outs.append(envs.step(action))
    result = case.check(envs, outs)
    assert result is None or bool(result), f"{name}: check failed"
    envs.close()
    assert adapter.vec.closed


if __name__ == "__main__":
    run_case(sys.argv[1], Path(sys.argv[2]))
    print(sys.argv[1], "ok")
