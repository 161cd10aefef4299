"""Every backend's send() runs the one action check (`puffer.core.check_actions`) every step."""

from __future__ import annotations

import numpy as np
import pytest

from puffer.core import APIUsageError
from puffer.vector import make
from puffer.vector.testing import DeterministicEnv

BAD = {
    "discrete": [
        (np.array([0, 0, 5, 0], np.int32), r"action 5 at row 2 is outside Discrete\(5\)"),
        (np.array([0, -1, 0, 0], np.int64), r"action -1 at row 1 is outside"),
        (np.zeros(3, np.int32), r"actions have shape \(3,\), expected \(4,\)"),
        (np.zeros(4, np.float32), r"actions have dtype float32, expected integers"),
    ],
    "box": [
        (np.array([[0, 0], [0, 0], [0, np.nan], [0, 0]], np.float32), r"nan at row 2, element 1"),
        (np.array([[0, 0], [np.inf, 0], [0, 0], [0, 0]], np.float32), r"inf at row 1, element 0"),
        (np.array([[0, 0], [0, 0], [0, 0], [0, -1.5]], np.float32), r"-1.5 at row 3, element 1"),
        (np.zeros((4, 2), np.int32), r"actions have dtype int32, expected floats"),
    ],
}


def good(action: str) -> np.ndarray:
    return np.zeros(4, np.int32) if action == "discrete" else np.zeros((4, 2), np.float32)


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
@pytest.mark.parametrize("step", [1, 100])
def test_send_checks_every_step(backend: str, step: int) -> None:
    for action in BAD:
        with make(
            DeterministicEnv, 4, backend=backend, num_workers=2, env_kwargs={"action": action}
        ) as vec:
            vec.reset(seed=0)
            for _ in range(step - 1):
                vec.step(good(action))
            for actions, message in BAD[action]:
                with pytest.raises(
                    APIUsageError, match=r"^send\(\) on .*DeterministicEnv.*" + message
                ):
                    vec.step(actions)
            vec.step(good(action))  # a refused send changes nothing


def test_async_batches_name_rows_of_the_batch() -> None:
    with make(
        DeterministicEnv, 4, backend="multiprocessing", num_workers=2, instances_per_recv=2
    ) as vec:
        vec.async_reset(seed=0)
        vec.recv()
        with pytest.raises(APIUsageError, match=r"action 9 at row 1 is outside"):
            vec.send(np.array([0, 9], np.int32))
        with pytest.raises(APIUsageError, match=r"shape \(4,\), expected \(2,\)"):
            vec.send(np.zeros(4, np.int32))
