"""Families: which library each group of envs needs, whether it is installed, how to install it.

A family module (`puffer.envs.atari`, ...) imports its library only inside the constructors of
its envs, after `Family.require` has checked that it is there, so the entry points of every
family load even where the library is missing; making such an env raises
`MissingDependencyError` with the install line.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib.metadata import entry_points

from puffer.core import ENTRY_POINT_GROUP, PufferError
from puffer.vector.isolated import find_program

__all__ = ["FAMILIES", "Family", "MissingDependencyError", "family"]


class MissingDependencyError(PufferError, ImportError):
    """An env of a family whose library is not installed; the message has the install line."""


@dataclass(frozen=True)
class Family:
    """One group of third-party envs and the optional extra that installs its library.

    Attributes:
        name: the family, also the prefix of its env ids (`atari` -> `atari-breakout`).
        extra: the `puffer-envs` extra that installs it.
        modules: top-level modules that must import (`ale_py`).
        library: what a person would install by hand, for messages (`ale-py>=0.12`).
        summary: one line about what the family holds.
        programs: executables that must be found on PATH or beside this interpreter (Procgen
            needs `uv`, which builds the games' own venv; its extra installs it).
    """

    name: str
    extra: str
    modules: tuple[str, ...]
    library: str
    summary: str
    programs: tuple[str, ...] = ()

    @property
    def install_command(self) -> str:
        """The one line that installs the family: `pip install "puffer-envs[atari]"`."""
        return f'pip install "puffer-envs[{self.extra}]"'

    def missing(self) -> list[str]:
        """The modules of `modules` that cannot be found (without importing them), then the
        programs of `programs` that cannot be found."""
        modules = [module for module in self.modules if importlib.util.find_spec(module) is None]
        return modules + [program for program in self.programs if find_program(program) is None]

    @property
    def installed(self) -> bool:
        return not self.missing()

    def env_ids(self) -> list[str]:
        """The env ids this family registers through the `puffer.envs` entry points, sorted."""
        module = f"puffer.envs.{self.name}:"
        return sorted(
            ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.value.startswith(module)
        )

    def require(self, env: str) -> None:
        """Raise unless every module of the family can be found (nothing is imported here).

        Raises:
            MissingDependencyError: a module of the family is not installed.
        """
        missing = self.missing()
        if missing:
            raise MissingDependencyError(
                f"{env} needs {self.library} ({', '.join(missing)} is not installed); install "
                f"the {self.name} family with: {self.install_command}"
            )


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "atari",
            "atari",
            ("ale_py",),
            "ale-py>=0.12",
            "Arcade Learning Environment games, stepped by ale-py's C++ vector env (threads)",
        ),
        Family("minatar", "minatar", ("minatar",), "minatar", "MinAtar: 10x10 miniature Atari"),
        Family(
            "minigrid", "minigrid", ("minigrid",), "minigrid>=3", "MiniGrid gridworlds (Farama)"
        ),
        Family(
            "crafter", "crafter", ("crafter",), "crafter", "Crafter: 2-D Minecraft-like survival"
        ),
        Family(
            "butterfly",
            "butterfly",
            ("pettingzoo", "pymunk", "pygame"),
            "pettingzoo[butterfly]",
            "PettingZoo butterfly: cooperative multi-agent games (pistonball, knights-archers-"
            "zombies)",
        ),
        Family(
            "nethack",
            "nethack",
            ("nle",),
            "nle>=1.3",
            "NetHack Learning Environment: the roguelike, structured observations",
        ),
        Family(
            "magent",
            "magent",
            ("magent2",),
            "magent2",
            "MAgent2 battle: 162-soldier two-army battles (PettingZoo)",
        ),
        Family(
            "vizdoom",
            "vizdoom",
            ("vizdoom",),
            "vizdoom",
            "ViZDoom: first-person Doom scenarios (its Gymnasium wrapper)",
        ),
        Family(
            "procgen",
            "procgen",
            (),
            "uv (it builds Procgen's own venv: procgen2 0.10.7, numpy<2, gym<1)",
            "Procgen: 16 procedurally generated games, in a venv of their own built on first use",
            programs=("uv",),
        ),
    )
}


def family(name: str) -> Family:
    """The family called `name` (a key of `FAMILIES`).

    Raises:
        KeyError: no such family; the message lists the families.
    """
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"no env family {name!r}; families: {', '.join(FAMILIES)}") from None
