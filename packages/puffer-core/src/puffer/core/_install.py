"""What to install when an env's package is missing: the failed import, named, and the line.

The registry asks here when a name has the shape of an env (`gym-<module>:<id>`,
`pettingzoo-...`, a puffer-envs family id) but a module it needs does not import, so the user
reads which import failed and the command that fixes it, not "no env named ..." and a list of
unrelated names.
"""

from __future__ import annotations

import importlib

__all__ = [
    "PUFFER_ENVS_FAMILIES",
    "family_of",
    "import_failure",
    "install_line",
    "missing_module_message",
]

# puffer-envs' families (`puffer.envs.FAMILIES`: name -> the modules, then the programs, it
# needs; each family's extra is its name), repeated here because the hint matters most when
# puffer-envs itself is not installed. puffer-envs' test_envs_missing.py keeps the two tables in step.
PUFFER_ENVS_FAMILIES: dict[str, tuple[str, ...]] = {
    "atari": ("ale_py",),
    "minatar": ("minatar",),
    "minigrid": ("minigrid",),
    "crafter": ("crafter",),
    "butterfly": ("pettingzoo", "pymunk", "pygame"),
    "nethack": ("nle",),
    "magent": ("magent2",),
    "vizdoom": ("vizdoom",),
    # Its games need no module here: uv builds them a venv of their own.
    "procgen": ("uv",),
}
# Modules whose install line is one of our extras rather than their own distribution's name.
_OWN_EXTRAS = {
    "pettingzoo": "puffer-core[pettingzoo]",
    **{
        modules[0]: f"puffer-envs[{name}]"
        for name, modules in PUFFER_ENVS_FAMILIES.items()
        # butterfly's first module is PettingZoo itself; procgen's uv is a program
        if name not in ("butterfly", "procgen")
    },
    "pymunk": "puffer-envs[butterfly]",
}
# PettingZoo's families and what installs them with PettingZoo.
_PETTINGZOO_FAMILIES = {
    "classic": "puffer-core[classic]",
    "butterfly": "puffer-envs[butterfly]",
    "atari": "pettingzoo[atari]",
    "mpe": "pettingzoo[mpe]",
    "sisl": "pettingzoo[sisl]",
}


def family_of(name: str) -> str | None:
    """The puffer-envs family whose ids `name` has the shape of (`atari-breakout` -> atari)."""
    for family in PUFFER_ENVS_FAMILIES:
        if name == family or name.startswith(family + "-"):
            return family
    return None


def import_failure(module: str) -> ImportError | None:
    """The error importing `module` raises, None when it imports."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        return error
    return None


def install_line(module: str, pettingzoo_family: str | None = None) -> str:
    """The command that installs what provides the top-level `module`.

    Example:
        >>> install_line("minigrid")
        'pip install "puffer-envs[minigrid]"'
    """
    top = module.partition(".")[0]
    if top == "pettingzoo" and pettingzoo_family in _PETTINGZOO_FAMILIES:
        return f'pip install "{_PETTINGZOO_FAMILIES[pettingzoo_family]}"'
    if top in _OWN_EXTRAS:
        return f'pip install "{_OWN_EXTRAS[top]}"'
    return f"pip install {top.replace('_', '-')} (or the distribution that provides {top})"


def missing_module_message(env: str, module: str, error: ImportError) -> str:
    """`env` needs `module`, whose import failed with `error`: what failed and what to install.
    The line names the module that is actually missing (`error.name`), which may be a
    dependency of `module` rather than `module` itself."""
    missing = getattr(error, "name", None) or module
    return (
        f"{env} needs the module {module}, whose import failed "
        f"({type(error).__name__}: {error}); install it with: {install_line(missing)}"
    )
