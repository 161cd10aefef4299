"""Every env's [vec] backend is the one it resolved to before the backend followed the
registration's declared vectorization (`puffer.core.declared_vectorization`), rather than
whether the creator has a `num_envs` keyword.

`tests/data/vec_backends_before.json` holds `load_config(name).vec.backend` as main resolved it
then, for every registered env and the `gym-`/`pettingzoo-` ids of `tests/data/config_before`
(and a few more). An env registered since must be added to it, with the backend it should get.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from puffer.core import Vectorization, declared_vectorization, env_creator, registered_envs
from puffer.train.config import load_config

BEFORE: dict[str, str] = json.loads(
    (Path(__file__).parent / "data" / "vec_backends_before.json").read_text()
)


def test_every_registered_env_has_its_backend_recorded() -> None:
    assert sorted(set(registered_envs()) - set(BEFORE)) == []


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_the_env_resolves_the_backend_it_resolved_before(name: str) -> None:
    backend = load_config(name).vec.backend
    assert backend == BEFORE[name]
    # The declaration and the backend agree: native envs step their own batch, the others are
    # copied by a vectorizer (the TOML of a declared-single env names its vectorizer).
    declared = declared_vectorization(env_creator(name), name)
    assert (declared is Vectorization.NATIVE) == (backend == "native")
