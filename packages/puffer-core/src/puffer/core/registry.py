"""The env registry: `make(name, **kwargs)` for every env any installed package provides.

Names come from three places:
- the `puffer.envs` entry-point group: an installed package declares
  `[project.entry-points."puffer.envs"] bandit = "puffer.ocean.sanity:Bandit"`, a callable
  that takes `buf=None` and keyword config and returns a `PufferEnv`;
- the `puffer.env_families` group: one entry point names a mapping `{name: creator}`, for a
  package whose envs are enumerated at import (`ocean = "puffer.ocean:ENVS"`, every C env);
- `gym-<id>` for every id `gymnasium.make` accepts (emulated with `GymnasiumPufferEnv`): ids
  Gymnasium knows, its `module:EnvId` form (`gym-minigrid:MiniGrid-DoorKey-6x6-v0` imports
  `minigrid` first), and ids an installed package registers when imported, found without the
  module: the old `gymnasium.envs` plugin entry points are loaded, then the installed packages
  that depend on Gymnasium are imported one at a time, the one whose name is closest to the id
  first, until the id is registered (`resolve_gym_id`);
- `pettingzoo-<family>.<module>` (e.g. `pettingzoo-classic.rps_v2`), a PettingZoo registry
  id (`pettingzoo-classic/rps-v2`), any importable module with a `parallel_env` or `env`
  (`pettingzoo-magent2.environments.battle_v4`) or a `module:creator` (a third-party package's
  env function), emulated with `emulate_pettingzoo` (parallel API where the env has one, else
  its AEC env through PettingZoo's converter).

A name of one of these shapes whose package does not import (`gym-minigrid:...` without
MiniGrid, a `pettingzoo-` id without PettingZoo, `atari-breakout` without puffer-envs) raises
`MissingPackageError` naming the failed import and the install line (`puffer.core._install`).

Envs with a training config of their own declare it: an Ocean class or a puffer-envs creator
carries `config_sources`, the ordered TOML layers of its config. Every creator declares its
`vectorization` (`puffer.core.vectorization`): Ocean and puffer-envs creators 'native', the
Gymnasium and PettingZoo creators made here 'single'. The PPO configs of the Python
envs emulated here (`gym-<id>`, `pettingzoo-<id>`) are the trainer's, in puffer-train
(`puffer.train.config.sources`): this package holds the env contract, no hyperparameters.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import re
import warnings
from collections.abc import Callable
from importlib.metadata import distribution, entry_points, packages_distributions
from typing import Any

from gymnasium.vector import AutoresetMode

from puffer.core._install import (
    PUFFER_ENVS_FAMILIES,
    family_of,
    import_failure,
    install_line,
    missing_module_message,
)
from puffer.core.env import PufferEnv
from puffer.core.errors import EnvNotFoundError, MissingPackageError
from puffer.core.vectorization import Vectorization

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILY_GROUP",
    "SingleEnvCreator",
    "env_creator",
    "env_package",
    "gym_creator",
    "make",
    "ours_for_pufferlib_name",
    "registered_envs",
    "resolve_gym_id",
]

ENTRY_POINT_GROUP = "puffer.envs"
FAMILY_GROUP = "puffer.env_families"
GYM_PREFIX = "gym-"
# Older Gymnasium's plugin hook: `register_function` entry points, called before a lookup.
PLUGIN_GROUP = "gymnasium.envs"
PETTINGZOO_PREFIX = "pettingzoo-"


class SingleEnvCreator(functools.partial):
    """A creator of one emulated env per object (a Gymnasium or PettingZoo env), as declared."""

    vectorization = Vectorization.SINGLE


def _entries() -> dict[str, tuple[str, Callable[[], Any], str | None]]:
    """Every registered name -> (`module:attr`, a loader of its creator, its distribution)."""
    entries: dict[str, tuple[str, Callable[[], Any], str | None]] = {}
    for ep in entry_points(group=FAMILY_GROUP):
        package = ep.dist.name if ep.dist is not None else None
        for name, creator in ep.load().items():
            entries[name] = (f"{ep.value}[{name!r}]", lambda creator=creator: creator, package)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        entries[ep.name] = (ep.value, ep.load, ep.dist.name if ep.dist is not None else None)
    return entries


def registered_envs() -> dict[str, str]:
    """Names registered through the `puffer.envs` and `puffer.env_families` entry points,
    mapped to their `module:attr` (`module:attr['name']` for a family member)."""
    return {name: value for name, (value, _, _) in _entries().items()}


def env_package(name: str) -> str | None:
    """The distribution that registers `name` (e.g. `puffer-ocean`), None when not registered."""
    entry = _entries().get(name)
    return entry[2] if entry is not None else None


def _known_names() -> list[str]:
    import gymnasium

    parallel_ids, aec_ids = _pettingzoo_ids()
    return [
        *registered_envs(),
        *(GYM_PREFIX + env_id for env_id in gymnasium.registry),
        *(PETTINGZOO_PREFIX + env_id for env_id in {**aec_ids, **parallel_ids}),
    ]


def ours_for_pufferlib_name(name: str) -> str | None:
    """Our name for PufferLib's `puffer_<env>` (`puffer_breakout` -> `breakout`), when no env
    is registered as `name` itself and one is as `<env>`; else None."""
    ours = name.removeprefix("puffer_")
    if ours == name:
        return None
    entries = _entries()
    return ours if name not in entries and ours in entries else None


def env_creator(name: str) -> Callable[..., PufferEnv]:
    """Resolve `name` to a callable `creator(buf=None, **kwargs) -> PufferEnv`; PufferLib's
    `puffer_<env>` names resolve to ours (`ours_for_pufferlib_name`).

    Raises:
        EnvNotFoundError: no installed package registers `name`; the message lists close names.
    """
    entry = _entries().get(ours_for_pufferlib_name(name) or name)
    if entry is not None:
        return entry[1]()
    if name.startswith(GYM_PREFIX) and resolve_gym_id(name[len(GYM_PREFIX) :]):
        return gym_creator(name[len(GYM_PREFIX) :])
    if name.startswith(PETTINGZOO_PREFIX):
        _require_pettingzoo(name)  # emulation needs it, whatever module the id names
        creator = _pettingzoo_creator(name[len(PETTINGZOO_PREFIX) :])
        if creator is not None:
            return SingleEnvCreator(_make_pettingzoo, creator)
    _raise_if_a_package_is_missing(name)
    close = difflib.get_close_matches(name, _known_names(), n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "."
    raise EnvNotFoundError(
        f"no env named {name!r}{hint} `puffer list` shows the registered names; any id "
        "gymnasium.make accepts works as gym-<id> (gym-<module>:<id> imports the module that "
        "registers it), any PettingZoo env as pettingzoo-<family>.<module> or "
        "pettingzoo-<module>:<creator>",
        suggestions=tuple(close),
    )


def _raise_if_a_package_is_missing(name: str) -> None:
    """Raise `MissingPackageError` when `name` has the shape of an env whose package does not
    import: a `gym-<module>:<id>`, a `pettingzoo-` id whose module's own imports fail, or a puffer-envs family id without puffer-envs."""
    if name.startswith(GYM_PREFIX):
        module = name[len(GYM_PREFIX) :].rpartition(":")[0]
        error = import_failure(module) if module else None
        if error is not None:
            raise MissingPackageError(missing_module_message(name, module, error))
    elif name.startswith(PETTINGZOO_PREFIX):
        suffix = name[len(PETTINGZOO_PREFIX) :]
        failures = {module: import_failure(module) for module in _pettingzoo_modules(suffix)}
        for module, error in failures.items():
            if error is not None and not _is_absent(module, error):
                raise MissingPackageError(missing_module_message(name, module, error))
        own, error = list(failures.items())[-1]
        # `module:creator` names its module outright, so its absence is the whole story.
        if ":" in suffix and error is not None and all(failures.values()):
            raise MissingPackageError(missing_module_message(name, own, error))
    else:
        family = family_of(name)
        if family is not None and not any(
            value.startswith(f"puffer.envs.{family}:") for value in registered_envs().values()
        ):
            raise MissingPackageError(
                f"{name} is an id of puffer-envs' {family} family, which is not installed "
                f"(it needs {', '.join(PUFFER_ENVS_FAMILIES[family])}); install it with: "
                f'pip install "puffer-envs[{family}]"'
            )


def _require_pettingzoo(name: str) -> None:
    error = import_failure("pettingzoo")
    if error is not None:
        family = name[len(PETTINGZOO_PREFIX) :].partition(".")[0]
        raise MissingPackageError(
            f"{name} needs PettingZoo, whose import failed ({type(error).__name__}: "
            f"{error}); install it with: {install_line('pettingzoo', family)}"
        )


def _is_absent(module: str, error: ImportError) -> bool:
    """True when `error` says `module` itself (or a package above it) does not exist, as
    opposed to an existing module whose own imports failed."""
    missing = getattr(error, "name", None)
    return isinstance(error, ModuleNotFoundError) and (
        missing is not None and (module == missing or module.startswith(missing + "."))
    )


def gym_creator(
    env_id: str, autoreset_mode: AutoresetMode = AutoresetMode.SAME_STEP
) -> Callable[..., PufferEnv]:
    """A picklable `creator(buf=None, **kwargs) -> GymnasiumPufferEnv` for a Gymnasium id.

    The keyword arguments go to `gymnasium.make`. The creator finds the id's registration in
    whichever process it runs (a spawned worker has not imported what the parent imported).

    Args:
        env_id: any id `gymnasium.make` accepts (see `resolve_gym_id`).
        autoreset_mode: `GymnasiumPufferEnv`'s; NEXT_STEP only for Gymnasium code.

    Raises:
        EnvNotFoundError: the id cannot be found (as `env_creator`).
    """
    if not resolve_gym_id(env_id):
        env_creator(GYM_PREFIX + env_id)  # raises, with the close names
    return SingleEnvCreator(_make_gym, env_id, autoreset_mode)


def _make_gym(
    env_id: str, autoreset_mode: AutoresetMode, buf: Any = None, **kwargs: Any
) -> PufferEnv:
    from puffer.core.emulation import GymnasiumPufferEnv

    resolve_gym_id(env_id)
    return GymnasiumPufferEnv(env_id, env_kwargs=kwargs, buf=buf, autoreset_mode=autoreset_mode)


def _make_pettingzoo(creator: Callable[..., Any], buf: Any = None, **kwargs: Any) -> PufferEnv:
    from puffer.core.pettingzoo import emulate_pettingzoo

    return emulate_pettingzoo(creator, env_kwargs=kwargs, buf=buf)


@functools.cache
def resolve_gym_id(env_id: str) -> bool:
    """Make `env_id` known to `gymnasium.make` in this process; False when nothing registers it.

    `module:EnvId` imports the module (as `gymnasium.make` would). A bare id missing from
    Gymnasium's registry is looked for where third-party packages register theirs: first the
    `gymnasium.envs` entry points (the plugin hook of older Gymnasium, still declared by e.g.
    MinAtar), then by importing, one at a time, each installed package that requires
    Gymnasium, the name closest to the id first (`minigrid` for `MiniGrid-DoorKey-6x6-v0`),
    until the id is registered. A package that fails to import is passed over.

    Example:
        >>> resolve_gym_id("CartPole-v1"), resolve_gym_id("NoSuchEnv-v0")
        (True, False)
    """
    import gymnasium

    module, _, bare = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ImportError:
            return False
        return bare in gymnasium.registry
    if env_id in gymnasium.registry:
        return True
    named, others = _gymnasium_packages(env_id)
    # Cheapest first: a package named like the id, then the plugins (MinAtar's takes seconds),
    # then every other package.
    attempts = [
        *(functools.partial(_import, module) for module in named),
        *(functools.partial(_load_plugin, ep.value) for ep in entry_points(group=PLUGIN_GROUP)),
        *(functools.partial(_import, module) for module in others),
    ]
    for attempt in attempts:
        attempt()
        if env_id in gymnasium.registry:
            return True
    return False


def _import(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # any package may fail to import; the next may register the id
        return


@functools.cache
def _load_plugin(value: str) -> None:
    """Call one `PLUGIN_GROUP` entry point (`module:register_function`), once per process."""
    module, _, function = value.partition(":")
    # A plugin whose package was imported already registers its ids again: Gymnasium warns
    # about each override, which changes nothing here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(importlib.import_module(module), function)()
        except Exception:  # a broken plugin must not hide the envs of the others
            return


def _gymnasium_packages(env_id: str) -> tuple[list[str], list[str]]:
    """Top-level modules of installed distributions that require Gymnasium (ours excluded):
    those named like `env_id`'s leading word or namespace, then the others, closest first."""
    word = _normalized(re.split(r"[/\\-]", env_id, maxsplit=1)[0])
    requiring: set[str] = set()
    for module, dists in packages_distributions().items():
        if module.startswith("_") or not module.isidentifier() or module == "gymnasium":
            continue
        if any(_requires_gymnasium(dist) for dist in dists):
            requiring.add(module)

    def distance(module: str) -> tuple[float, str]:
        return (-difflib.SequenceMatcher(None, _normalized(module), word).ratio(), module)

    def named(module: str) -> bool:
        name = _normalized(module)
        return name.startswith(word) or word.startswith(name)

    ordered = sorted(requiring, key=distance)
    return [m for m in ordered if named(m)], [m for m in ordered if not named(m)]


@functools.cache
def _requires_gymnasium(dist_name: str) -> bool:
    if dist_name.lower().startswith("puffer"):
        return False  # our own packages register puffer envs, not Gymnasium ids
    requires = distribution(dist_name).requires or []
    return any(re.match(r"gymnasium\b", requirement.strip().lower()) for requirement in requires)


def _normalized(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _pettingzoo_ids() -> tuple[dict, dict]:
    try:
        import pettingzoo
    except ImportError:
        return {}, {}
    return getattr(pettingzoo, "parallel_registry", {}), getattr(pettingzoo, "aec_registry", {})


def _pettingzoo_creator(suffix: str) -> Callable[..., Any] | None:
    """A creator for `classic.rps_v2` (module style), `classic/rps-v2` (registry id), a
    third-party env module (`magent2.environments.battle_v4`) or `module:creator`."""
    family, _, module = suffix.partition(".")
    base, _, version = module.rpartition("_v")
    candidates = [suffix, f"{family}/{base}-v{version}"] if base else [suffix]
    parallel_ids, aec_ids = _pettingzoo_ids()
    for env_id in candidates:
        # Prefer PettingZoo's registry: importing env modules directly is deprecated there.
        for env_type, ids in (("parallel", parallel_ids), ("aec", aec_ids)):
            if env_id in ids:
                import pettingzoo

                return functools.partial(pettingzoo.make, env_type, env_id)
    attribute = suffix.partition(":")[2]
    for name in _pettingzoo_modules(suffix):
        try:
            module_object = importlib.import_module(name)
        except ImportError:
            continue
        if attribute:
            return getattr(module_object, attribute, None)
        return getattr(module_object, "parallel_env", None) or getattr(module_object, "env", None)
    return None


def _pettingzoo_modules(suffix: str) -> tuple[str, str]:
    """The modules a `pettingzoo-<suffix>` id may name: PettingZoo's own families first, then a
    third-party module of the same shape."""
    module_name = suffix.partition(":")[0]
    return f"pettingzoo.{module_name}", module_name


def make(name: str, buf=None, **kwargs: Any) -> PufferEnv:
    """Create the env registered as `name`, bound to `buf` if given.

    Example:
        >>> from puffer.core import make
        >>> env = make("gym-CartPole-v1")
        >>> env.single_observation_space.shape
        (4,)
    """
    return env_creator(name)(buf=buf, **kwargs)
