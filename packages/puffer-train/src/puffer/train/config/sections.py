"""The typed sections of a run's config: `[train]`, `[policy]` and `[vec]`, one dataclass each.

These dataclasses hold the defaults of every key (an env's TOML sets only what it changes).
Every field carries a one-line meaning (`field_help(cls)` lists them, `--help` and `puffer config
ENV --keys` show them) and, where its type is not enough, the range or choices it must fall in.
A section checks every value when it is built (`TrainConfig(learning_rate="fast")` raises
`ConfigError` naming the key, the value and the expected form), so a bad value stops a run
before any env or directory exists. What depends on the machine (the device, a writable
`data_dir`) is checked by `TrainConfig.check_host`, which creates nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from puffer.core import APIUsageError
from puffer.vector import BACKENDS

__all__ = [
    "ENCODER_DTYPES",
    "MATMUL_PRECISIONS",
    "RENAMED_KEYS",
    "TYPED_SECTIONS",
    "ConfigError",
    "PolicyConfig",
    "TrainConfig",
    "VecConfig",
    "check_field",
    "field_help",
    "refuse_renamed",
]


class ConfigError(APIUsageError):
    """A config value of the wrong type or out of range, or an unknown key; the message names
    the key, the value and the expected form."""


@dataclass(frozen=True)
class _Check:
    """A condition on a field's value beyond its type; `text` reads after the type's name."""

    test: Callable[[Any], bool]
    text: str


def _at_least(low: float) -> _Check:
    return _Check(lambda v: v >= low, f">= {low}")


def _above(low: float) -> _Check:
    return _Check(lambda v: v > low, f"> {low}")


def _within(low: float, high: float, *, high_open: bool = False) -> _Check:
    if high_open:
        return _Check(lambda v: low <= v < high, f"in [{low}, {high})")
    return _Check(lambda v: low <= v <= high, f"in [{low}, {high}]")


def _one_of(*choices: str) -> _Check:
    return _Check(lambda v: v in choices, "among " + ", ".join(map(repr, choices)))


_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")
_ANY_DEVICE = _Check(lambda v: _DEVICE.fullmatch(v) is not None, "naming a torch device")
# A run id is one directory level under <data_dir>/<env>/; a separator would escape or nest it.
_DIR_NAME = _Check(
    lambda v: not re.search(r"[/\\]", v) and v not in (".", ".."), "naming one directory (no '/')"
)
_NON_EMPTY = _Check(bool, "that is not empty")
# An encoder named by import path: "package.module:attribute".
_FACTORY = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def _f(default: Any, help: str, check: _Check | None = None) -> Any:
    return field(default=default, metadata={"help": help, "check": check})


_TYPE_WORDS = {bool: "true or false", int: "an int", float: "a finite float", str: "a string"}


def _typed(kind: type, value: Any) -> tuple[bool, Any]:
    """`(True, value as kind)` when `value` is of `kind` (ints pass as floats), else (False, _)."""
    if isinstance(value, bool) or kind is bool:
        return (kind is bool and isinstance(value, bool)), value
    if kind is int and isinstance(value, numbers.Integral):
        return True, int(value)
    if kind is float and isinstance(value, numbers.Real):
        return math.isfinite(value), float(value)
    return isinstance(value, kind), value


@functools.cache
def _kinds(section: type) -> dict[str, type]:
    return get_type_hints(section)


def check_field(
    section: type, name: str, value: Any, where: str | None = None, default: Any = MISSING
) -> Any:
    """Check one value for field `name` of the config dataclass `section`.

    Args:
        section: `TrainConfig`, `PolicyConfig` or `VecConfig`.
        name: a field of it.
        value: the candidate value; numpy scalars and ints (for float fields) are accepted.
        where: names the key in the message; default `Section.name`, the CLI passes its flag.
        default: the default the message quotes; the field's own unless given (the CLI
            passes the env's shipped value, e.g. cartpole's 99,840 total_timesteps).

    Returns:
        the value as the field stores it (int, float, bool or str).

    Raises:
        ConfigError: wrong type, not finite, or out of range; the message names the key, the
            value, the expected form, the field's meaning and its default.

    Example:
        >>> check_field(TrainConfig, "gamma", 1)
        1.0
        >>> check_field(TrainConfig, "gamma", 1.5)
        Traceback (most recent call last):
        ...
        puffer.train.config.sections.ConfigError: TrainConfig.gamma is 1.5; set it to a finite float in [0, 1] (discount factor); default 0.995
    """
    spec = {f.name: f for f in dataclasses.fields(section)}[name]
    kind = _kinds(section)[name]
    check: _Check | None = spec.metadata.get("check")
    ok, typed = _typed(kind, value)
    if ok and (check is None or check.test(typed)):
        return typed
    form = _TYPE_WORDS[kind] + (f" {check.text}" if check is not None else "")
    quoted = spec.default if default is MISSING else default
    raise ConfigError(
        f"{where or f'{section.__name__}.{name}'} is {value!r}; set it to {form} "
        f"({spec.metadata['help']}); default {quoted!r}"
    )


class _Checked:
    """Mixin: `__post_init__` checks every field with `check_field`, then `_check_together`."""

    def __post_init__(self) -> None:
        for spec in dataclasses.fields(self):  # type: ignore[arg-type]
            value = check_field(type(self), spec.name, getattr(self, spec.name))
            object.__setattr__(self, spec.name, value)
        self._check_together()

    def _check_together(self) -> None:
        """Conditions across fields; none by default."""


# torch.set_float32_matmul_precision's settings, for `TrainConfig.matmul_precision`.
MATMUL_PRECISIONS = ("highest", "high", "medium")
# What a policy's encoder computes in, for `PolicyConfig.encoder_dtype`.
ENCODER_DTYPES = ("float32", "bfloat16", "auto")
# The MLP encoder's nonlinearities, for `PolicyConfig.activation`.
MLP_ACTIVATIONS = ("gelu", "tanh", "relu")
# How a Gaussian action reaches a Box with finite bounds, for `PolicyConfig.box_actions`.
BOX_ACTIONS = ("map", "clip")
# How Muon accumulates its momentum, for `TrainConfig.muon_momentum_rule`.
MUON_MOMENTUM_RULES = ("average", "sum")
# Policy architectures, for `PolicyConfig.network`.
NETWORKS = ("default", "puffernet")


@dataclass
class TrainConfig(_Checked):
    """The `[train]` section: PPO, the puff advantage, replay, optimizer and bookkeeping."""

    seed: int = _f(
        42, "seed of torch, numpy and env resets (rank r of DDP uses seed + r)", _at_least(0)
    )
    device: str = _f(
        "auto", "'cpu', 'cuda', 'cuda:N', or 'auto' (cuda when available)", _ANY_DEVICE
    )
    torch_threads: int = _f(
        0,
        "torch intra-op threads; 0 (auto): the cores (or OMP_NUM_THREADS) less one per env "
        "worker process",
        _at_least(0),
    )
    matmul_precision: str = _f(
        "highest",
        "float32 matrix products, set for the process (torch.set_float32_matmul_precision): "
        "'highest' float32; 'high' TF32 on GPUs that have it; 'medium' bfloat16 products on "
        "GPUs and on CPUs with AMX or AVX512-BF16 (the CPU sequence kernels stay float32)",
        _one_of(*MATMUL_PRECISIONS),
    )
    cuda_graphs: bool = _f(
        True, "on CUDA, replay the rollout forward of full batches from a CUDA graph"
    )
    total_timesteps: int = _f(10_000_000, "agent steps to train for", _at_least(1))
    batch_size: int = _f(0, "agent steps per epoch; 0 means num_agents * horizon", _at_least(0))
    horizon: int = _f(64, "steps per segment (the BPTT length of recurrent policies)", _at_least(1))
    minibatch_size: int = _f(8192, "agent steps per minibatch; a multiple of horizon", _at_least(1))
    microbatch_size: int = _f(
        0,
        "agent steps per forward/backward pass; a larger minibatch sums the gradients of its "
        "passes (the same update, less memory); 0: 8192 on the CPU, the whole minibatch on GPUs",
        _at_least(0),
    )
    update_epochs: int = _f(
        1, "passes over the batch per epoch (minibatches sampled with replay)", _at_least(1)
    )
    replay_ratio: float = _f(
        0.0,
        "minibatches per epoch as a multiple of the batch, int(replay_ratio * batch_size / "
        "minibatch_size) (PufferLib 4.0's way to set them); 0: update_epochs passes",
        _at_least(0),
    )
    gamma: float = _f(0.995, "discount factor", _within(0, 1))
    gae_lambda: float = _f(0.90, "GAE lambda", _within(0, 1))
    vtrace: bool = _f(
        True,
        "before each minibatch, weight the advantages by V-trace with the ratios the epoch's "
        "earlier minibatches left, as PufferLib's trainer does; false: GAE from the rollout, "
        "as CleanRL and SB3 train",
    )
    vtrace_rho_clip: float = _f(
        1.0, "V-trace rho-bar: clip of the importance ratio in delta", _at_least(0)
    )
    vtrace_c_clip: float = _f(
        1.0, "V-trace c-bar: clip of the importance ratio in the trace", _at_least(0)
    )
    sample_steps: bool = _f(
        False,
        "minibatches draw single steps rather than whole segments, as CleanRL shuffles them "
        "(feedforward policies only; advantages still run over whole segments)",
    )
    prio_alpha: float = _f(
        0.8,
        "priority exponent alpha of segments (of steps with sample_steps); 0 is uniform",
        _at_least(0),
    )
    prio_beta0: float = _f(
        0.2, "importance-weight exponent beta at the start, annealed to 1", _within(0, 1)
    )
    clip_coef: float = _f(0.2, "PPO ratio clip", _above(0))
    vf_clip_coef: float = _f(0.2, "value clip around the rollout value", _above(0))
    vf_coef: float = _f(2.0, "value-loss weight", _at_least(0))
    ent_coef: float = _f(0.001, "entropy-bonus weight", _at_least(0))
    normalize_reward: bool = _f(
        False, "scale rewards by the running std of the discounted return (kept in checkpoints)"
    )
    reward_clip: float = _f(
        1.0,
        "rewards are clipped to [-reward_clip, reward_clip] as they are stored (after "
        "normalize_reward), as PufferLib's trainer does; 0 stores them as they are",
        _at_least(0),
    )
    refresh_values: bool = _f(
        True,
        "after each minibatch, store its new value estimates over the rollout's, so later "
        "minibatches' advantages and value clip start from them, as PufferLib's trainer does",
    )
    recurrent_state: str = _f(
        "carry",
        "'carry': each agent's recurrent state runs on from epoch to epoch and training "
        "replays every segment from the state it started with; 'zero': every epoch's rollout "
        "starts each agent from zeros, as PufferLib's trainer does (feedforward policies "
        "ignore it)",
        _one_of("carry", "zero"),
    )
    max_grad_norm: float = _f(1.5, "global gradient-norm clip", _above(0))
    optimizer: str = _f(
        "muon",
        "'muon' (PufferLib 3.0's: Muon on every parameter, momentum muon_momentum) or 'adam'",
        _one_of("muon", "adam"),
    )
    learning_rate: float = _f(0.015, "peak learning rate", _above(0))
    anneal_lr: bool = _f(True, "cosine-decay the learning rate to 0 over training")
    adam_beta1: float = _f(0.95, "Adam/AdamW beta1", _within(0, 1, high_open=True))
    adam_beta2: float = _f(0.999, "Adam/AdamW beta2", _within(0, 1, high_open=True))
    adam_eps: float = _f(1e-12, "Adam/AdamW epsilon", _above(0))
    muon_momentum: float = _f(
        0.95,
        "Muon's momentum, the weight of its gradient average on the past (PufferLib's configs "
        "call it adam_beta1)",
        _within(0, 1, high_open=True),
    )
    muon_momentum_rule: str = _f(
        "average",
        "how Muon's momentum m accumulates gradients g: 'average' (m <- beta m + (1 - beta) g, "
        "step direction g + m: PufferLib 3.0's heavyball) or 'sum' (m <- beta m + g, step "
        "direction g + beta m: PufferLib 4.0's, which weighs the past beta / (1 - beta) times "
        "more against the fresh gradient)",
        _one_of(*MUON_MOMENTUM_RULES),
    )
    weight_decay: float = _f(0.0, "decoupled weight decay (Muon and Adam)", _at_least(0))
    data_dir: str = _f(
        "experiments", "root of run directories: <data_dir>/<env>/<run_id>/", _NON_EMPTY
    )
    run_id: str = _f("", "run directory name; empty makes a fresh time-stamped id", _DIR_NAME)
    checkpoint_interval: int = _f(
        50, "epochs between checkpoints; 0: only the one always written at the end", _at_least(0)
    )
    checkpoint_minutes: float = _f(
        5.0,
        "also checkpoint once this many minutes of training passed since the last one, so a "
        "kill loses at most that (or one epoch); 0: epochs only",
        _at_least(0),
    )
    resume: bool = _f(False, "continue the run in <data_dir>/<env>/<run_id> from its checkpoint")
    score_stat: str = _f(
        "auto",
        "the env statistic a run is scored by (its mean over the last epochs holding 100 "
        "episodes, the score everywhere: train's last line, dashboards, metrics, sweeps); "
        "'auto': score where the env reports it, else episode_return",
        _NON_EMPTY,
    )
    tensorboard: bool = _f(
        False, "also log metrics to <run dir>/tensorboard/ (the tensorboard extra)"
    )
    wandb: bool = _f(
        False, "also log metrics to Weights & Biases, files in <run dir>/wandb/ (the wandb extra)"
    )
    wandb_project: str = _f("puffer", "wandb project of the run", _NON_EMPTY)
    wandb_entity: str = _f("", "wandb entity (team or user); empty: your wandb default")
    wandb_group: str = _f("", "wandb group; empty: the env name")
    wandb_tags: str = _f("", "wandb tags, comma-separated (e.g. 'baseline,lstm')")

    def _check_together(self) -> None:
        if self.replay_ratio > 0 and self.update_epochs != 1:
            raise ConfigError(
                f"train.replay_ratio is {self.replay_ratio} and train.update_epochs is "
                f"{self.update_epochs}; both set the minibatches per epoch: keep one (the "
                "other at replay_ratio = 0 or update_epochs = 1)"
            )
        if self.resume and not self.run_id:
            raise ConfigError(
                "train.resume is set but train.run_id is empty; set run_id to the run to "
                "continue (a directory under <data_dir>/<env>/)"
            )

    def check_host(self) -> None:
        """Check what depends on this machine, creating nothing.

        `device` must exist here (a 'cuda' device needs a visible GPU with that index) and
        `data_dir` must be creatable and writable: it, or its nearest existing parent, is a
        writable directory.

        Raises:
            ConfigError: naming the key, the value and what to use instead.
        """
        if self.device.startswith("cuda"):
            import torch  # only here: building a config should not need torch

            index = int(self.device.partition(":")[2] or 0)
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if index >= count:
                raise ConfigError(
                    f"train.device is {self.device!r} but this machine has {count} visible "
                    "CUDA device(s); use 'cpu', or 'auto' (cuda when available)"
                )
        path = Path(self.data_dir).absolute()
        existing = next(p for p in (path, *path.parents) if p.exists())
        problem = None
        if not existing.is_dir():
            problem = f"{existing} is not a directory"
        else:
            # os.access answers from permission bits, which root bypasses and special file
            # systems (/proc, read-only mounts) ignore: only creating something tells.
            try:
                os.rmdir(tempfile.mkdtemp(prefix=".puffer-probe-", dir=existing))
            except OSError as error:
                problem = f"{existing} is not writable ({error.strerror})"
        if problem:
            raise ConfigError(
                f"train.data_dir is {self.data_dir!r}, where runs cannot be written: {problem}; "
                "point it at a writable directory"
            )


@dataclass
class PolicyConfig(_Checked):
    """The `[policy]` section: which network maps observations to actions and values."""

    network: str = _f(
        "default",
        "'default' (the encoder, core and heads the other keys name) or 'puffernet' "
        "(PufferLib 4.0's: a bias-free linear encoder, `mingru_layers` MinGRU layers with "
        "highway gates, one bias-free decoder for the logits and the value, its init; reads "
        "hidden_size, mingru_layers and normalize_obs, needs recurrent = 'mingru')",
        _one_of(*NETWORKS),
    )

    encoder: str = _f(
        "mlp",
        "'mlp', 'nature_cnn', 'impala' (image obs), 'multi' (Dict/Tuple obs with image leaves), "
        "or 'module:factory' for a family's own encoder (factory(env, policy_config) -> module "
        "giving (B, hidden_size))",
        _Check(
            lambda v: (
                v in ("mlp", "nature_cnn", "impala", "multi") or _FACTORY.fullmatch(v) is not None
            ),
            "among 'mlp', 'nature_cnn', 'impala', 'multi' or of the form 'module:factory'",
        ),
    )
    normalize_obs: bool = _f(
        False, "standardize observations with running mean/std (saved with the model; 'mlp')"
    )
    hidden_size: int = _f(128, "width of the encoder output and the recurrent core", _at_least(1))
    num_layers: int = _f(
        0, "hidden Linear+activation layers after the first in the MLP encoder", _at_least(0)
    )
    activation: str = _f(
        "gelu",
        "the MLP encoder's nonlinearity: 'gelu', 'tanh' (bounded, as SB3's and CleanRL's "
        "MLPs for continuous control) or 'relu' (RL Zoo's tuned MuJoCo PPO)",
        _one_of(*MLP_ACTIVATIONS),
    )
    box_actions: str = _f(
        "map",
        "how an action reaches a Box whose bounds are all finite: 'map' (the policy acts in "
        "[-1, 1], clipped there and mapped onto [low, high], so a unit Gaussian explores the "
        "whole range whatever its units) or 'clip' (the policy acts in the env's units, "
        "clipped to [low, high], as SB3 and CleanRL)",
        _one_of(*BOX_ACTIONS),
    )
    log_std_init: float = _f(
        0.0,
        "initial log standard deviation of every Gaussian (Box) action dimension, learned "
        "from there: 0 explores with std 1, -2 with std 0.135 (RL Zoo's tuned MuJoCo PPO)",
    )
    recurrent: str = _f("none", "'none', 'lstm' or 'mingru'", _one_of("none", "lstm", "mingru"))
    critic: str = _f(
        "shared",
        "'shared' (the value head reads the actor's features) or 'separate' (the value has an "
        "encoder of its own, as SB3's MlpPolicy for continuous actions; feed-forward only)",
        _one_of("shared", "separate"),
    )
    mingru_layers: int = _f(1, "stacked MinGRU layers when recurrent = 'mingru'", _at_least(1))
    cnn_channels: int = _f(32, "base channel count of the CNN encoders", _at_least(1))
    init: str = _f(
        "puffer",
        "initial weights: 'puffer' (orthogonal: encoder gain sqrt 2, action head 0.01, value 1, "
        "recurrent core gain 1 with zero biases) or 'pufferlib' (PufferLib 3.0's: with a "
        "recurrent core every other weight orthogonal at gain 1 and biases 0, the LSTM at "
        "torch's default; without one its default policy's, the encoder at torch's default)",
        _one_of("puffer", "pufferlib"),
    )
    encoder_dtype: str = _f(
        "float32",
        "what the encoder computes in: 'float32'; 'bfloat16' (torch.autocast, in rollout and "
        "training alike; the core, heads and loss stay float32), which pays for CNN encoders "
        "on GPUs and on CPUs with bfloat16 instructions (AVX512-BF16, AMX); or 'auto', "
        "bfloat16 on those devices and float32 elsewhere",
        _one_of(*ENCODER_DTYPES),
    )

    def _check_together(self) -> None:
        if self.network != "puffernet":
            return
        # PufferNet fixes what these keys choose; a value off their default would be ignored.
        conflicts = {
            "recurrent": (self.recurrent, "mingru"),
            "encoder": (self.encoder, "mlp"),
            "num_layers": (self.num_layers, 0),
            "critic": (self.critic, "shared"),
            "init": (self.init, "puffer"),
            "activation": (self.activation, "gelu"),
        }
        for key, (value, wanted) in conflicts.items():
            if value != wanted:
                raise ConfigError(
                    f"policy.network is 'puffernet' with policy.{key} {value!r}; PufferNet is "
                    f"a linear encoder, MinGRU layers and one decoder with its own init: set "
                    f"policy.{key} = {wanted!r}, or policy.network = 'default' for the other "
                    "architectures"
                )


RENAMED_KEYS: dict[tuple[str, str], str] = {
    ("vec", "num_envs"): "num_instances",
    ("vec", "batch_size"): "instances_per_recv",
}
"""Keys that were renamed, `(section, old key): new key`. Every way a key enters (a TOML file,
an override, `Config.from_dict`, a section's constructor) refuses the old name with
`refuse_renamed`'s error."""

# Why each old name went: it meant something else in another section.
_COLLIDED_WITH = {
    ("vec", "num_envs"): "[env] num_envs, an env's own keyword (agents per instance in Ocean)",
    ("vec", "batch_size"): "[train] batch_size, agent steps per epoch",
}


def refuse_renamed(section: str, key: str, where: str | None = None) -> None:
    """Raise when `section.key` is a renamed key (`RENAMED_KEYS`); do nothing otherwise.

    Args:
        section: the key's section, e.g. "vec".
        key: the key as it arrived (underscores).
        where: names the key and its origin, e.g. "--vec.num-envs (in my.toml)".

    Raises:
        ConfigError: naming the old key, the new one and the key the old name collided with.

    Example:
        >>> refuse_renamed("vec", "num_envs")
        Traceback (most recent call last):
        ...
        puffer.train.config.sections.ConfigError: vec.num_envs was renamed vec.num_instances, apart from [env] num_envs, an env's own keyword (agents per instance in Ocean); set vec.num_instances (env instances the vectorizer makes) instead
    """
    new = RENAMED_KEYS.get((section, key))
    if new is None:
        return
    meaning = field_help(TYPED_SECTIONS[section])[new].split(" (")[0].split(";")[0]
    origin = f"{where}: " if where else ""
    raise ConfigError(
        f"{origin}{section}.{key} was renamed {section}.{new}, apart from "
        f"{_COLLIDED_WITH[section, key]}; set {section}.{new} ({meaning}) instead"
    )


def _refuses_renamed_keys(section: str) -> Callable[[type], type]:
    """Class decorator: `cls(old_key=...)` raises `refuse_renamed`'s error, not a TypeError."""

    def decorate(cls: type) -> type:
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            for key in kwargs:
                refuse_renamed(section, key)
            init(self, *args, **kwargs)

        cls.__init__ = __init__  # type: ignore[misc]
        return cls

    return decorate


@_refuses_renamed_keys("vec")
@dataclass
class VecConfig(_Checked):
    """The `[vec]` section: how `train(env_name, ...)` vectorizes the env.

    `num_instances` and `instances_per_recv` are `puffer.vector.make`'s `num_envs` and
    `batch_size`; the config names them apart from `[env] num_envs` (an env's own keyword, for
    Ocean envs the agents one instance holds) and `[train] batch_size` (agent steps per epoch).
    """

    backend: str = _f(
        "native",
        "'native' (the env itself), 'serial', 'multiprocessing' or 'ray'",
        _one_of("native", *BACKENDS),
    )
    num_instances: int = _f(
        1, "env instances the vectorizer makes (each may hold many agents)", _at_least(1)
    )
    num_workers: int = _f(
        1,
        "worker processes (or Ray actors), each owning num_instances/num_workers",
        _at_least(1),
    )
    instances_per_recv: int = _f(
        0,
        "env instances per recv(); 0 means num_instances (synchronous), fewer is EnvPool-style "
        "async",
        _at_least(0),
    )
    zero_copy: bool = _f(True, "async batches are fixed worker groups returned as views")
    worker_timeout: float = _f(
        30.0,
        "seconds a multiprocessing worker may show no heartbeat (stopped, hung) before the "
        "run stops with an error naming it",
        _above(0),
    )

    def _check_together(self) -> None:
        if self.backend != "native":
            return
        if self.num_instances != 1:
            raise ConfigError(
                f"vec.num_instances is {self.num_instances} with vec.backend 'native'; a native "
                "env is one object (give it its own agent count in [env]) or use backend "
                "'serial' / 'multiprocessing' / 'ray'"
            )
        if self.instances_per_recv not in (0, 1):
            raise ConfigError(
                f"vec.instances_per_recv is {self.instances_per_recv} with vec.backend 'native'; "
                "async batches need a vectorizer: use backend 'serial' / 'multiprocessing' / "
                "'ray'"
            )


TYPED_SECTIONS: dict[str, type] = {"vec": VecConfig, "policy": PolicyConfig, "train": TrainConfig}
"""The typed sections by TOML name, in the order `puffer config` prints them."""


def field_help(section: type) -> dict[str, str]:
    """`{field name: one-line meaning}` for a config dataclass."""
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(section)}
