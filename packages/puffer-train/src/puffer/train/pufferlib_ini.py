"""PufferLib 3.0 and 4.0 `.ini` configs read as a `--config` layer, in our keys.

`puffer train breakout --config breakout.ini` takes PufferLib's own file: its sections [base],
[vec], [env], [policy] ([rnn] in 3.0, [torch] in 4.0), [train], [sweep] and
`[sweep.<section>.<key>]` are mapped onto ours, key by key, and the result is layered over the
env's shipped config like any `--config` TOML (so what the file leaves out keeps our env's
value, as PufferLib's own default.ini would under its env file). Values are read as PufferLib
reads them (`ast.literal_eval`, else the text).

Every key of the file is one of three things:
- **mapped**: it sets our key of the same meaning (`bptt_horizon` -> `train.horizon`, 3.0's
  `vec.num_envs` x `env.num_envs` -> `env.num_envs`), together with what its version's trainer
  fixes and ours makes a choice of (3.0's `adam_beta1` is its Muon's momentum with the
  'average' rule, 4.0's `beta1` the 'sum' rule; 3.0 counts minibatches by `update_epochs`);
- **not read**: it changes nothing that is trained (how envs are split across processes,
  torch.compile, logger names, Protein's per-parameter `scale`, optimizer terms our Muon does
  not have); they are named, each with why, in one `PufferLibKeysNotRead` warning, which the
  CLI prints as a `note:` line;
- **refused**: it asks for something ours does not do (another env, a policy class of its own,
  an Ocean env's rule at a value our env fixes otherwise): a `ConfigError`
  naming the key, its value and why, before anything runs.

Which PufferLib wrote the file is told by its keys (3.0: [rnn], `adam_beta1`, `bptt_horizon`,
`vec.num_envs`...; 4.0: [torch], `beta1`, `horizon`, `vec.total_agents`...); a file with keys
of both is refused.
"""

from __future__ import annotations

import ast
import configparser
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from puffer.core import Vectorization, declared_vectorization, env_creator, ours_for_pufferlib_name
from puffer.train.config.keys import ConfigError

__all__ = ["PUFFERLIB_CONSTANTS", "PufferLibKeysNotRead", "read_pufferlib_ini"]

Layer = dict[str, dict[str, Any]]

# PufferLib [env] keys that set what our Ocean env fixes in its C header (csrc/<env>/<env>.h):
# a file may repeat these values, never change them.
PUFFERLIB_CONSTANTS: dict[str, dict[str, float]] = {
    "breakout": {
        "width": 576,
        "height": 330,
        "paddle_width": 62,
        "initial_paddle_width": 62,
        "paddle_height": 8,
        "ball_width": 32,
        "ball_height": 32,
        "brick_width": 32,
        "brick_height": 12,
        "brick_rows": 6,
        "brick_cols": 18,
        "initial_ball_speed": 256,
        "max_ball_speed": 448,
        "paddle_speed": 620,
        "continuous": 0,
        "num_agents": 1,
    },
}


class PufferLibKeysNotRead(UserWarning):
    """The keys of a PufferLib `.ini` that change nothing trained here, each with why."""


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class _To:
    """A key mapped to ours, `convert`ed, with the keys its version's trainer fixes (`also`)."""

    section: str
    key: str
    convert: Callable[[Any], Any] = _same
    also: tuple[tuple[str, str, Any], ...] = ()


@dataclass(frozen=True)
class _Skip:
    """A key not read: it changes nothing trained, for `why`."""

    why: str


@dataclass(frozen=True)
class _Only:
    """A key whose value must be one of `allowed` (what ours does), else refused for `why`."""

    allowed: tuple[Any, ...]
    why: str


_Rule = _To | _Skip | _Only

_SPLIT = _Skip("how its envs are split across processes, not what is trained")
_SAME_UPDATE = "it leaves the update as it is"
_ONE_GPU = "its multi-GPU launch; ours runs under torchrun (docs: distributed training)"
_DIRECT_TRAIN = (
    "total_timesteps learning_rate gamma gae_lambda clip_coef vf_coef vf_clip_coef "
    "max_grad_norm ent_coef minibatch_size vtrace_rho_clip vtrace_c_clip prio_alpha prio_beta0 "
    "seed device checkpoint_interval data_dir"
).split()


def _flag(value: Any) -> bool:
    if value in (0, 1, True, False):
        return bool(value)
    raise ConfigError(f"{value!r} is no flag; PufferLib writes True/False or 1/0")


_COMMON: dict[tuple[str, str], _Rule] = {
    **{("train", key): _To("train", key) for key in _DIRECT_TRAIN},
    ("train", "anneal_lr"): _To("train", "anneal_lr", _flag),
    ("train", "batch_size"): _To("train", "batch_size", lambda v: 0 if v == "auto" else v),
    ("base", "package"): _Skip("its env module; ours finds the env by its name"),
    ("base", "max_suggestion_cost"): _To("sweep", "max_cost"),
    ("policy", "hidden_size"): _To("policy", "hidden_size"),
    ("sweep", "goal"): _To("sweep", "goal"),
    ("sweep", "max_runs"): _To("sweep", "max_runs"),
    ("sweep", "max_suggestion_cost"): _To("sweep", "max_cost"),
    ("sweep", "method"): _To("sweep", "method", str.lower),
    ("sweep", "metric"): _Only(
        ("score",), "ours ranks runs by train.score_stat ('score' where the env reports it)"
    ),
    ("sweep", "use_gpu"): _Skip("where its Protein fits its model"),
    ("sweep", "gpus"): _Skip("where its Protein fits its model"),
    ("sweep", "downsample"): _Skip("how its Protein thins learning curves"),
}

_V3: dict[tuple[str, str], _Rule] = {
    ("train", "bptt_horizon"): _To("train", "horizon"),
    ("train", "update_epochs"): _To(
        "train", "update_epochs", also=(("train", "replay_ratio", 0.0),)
    ),
    ("train", "optimizer"): _To("train", "optimizer"),
    # 'bfloat16' is its autocast of the policy's rollout and training passes, as ours.
    ("train", "precision"): _To("train", "precision"),
    ("train", "max_minibatch_size"): _Skip(
        f"gradient accumulation: {_SAME_UPDATE} (ours: train.microbatch_size)"
    ),
    ("train", "compile"): _Skip(f"torch.compile: {_SAME_UPDATE}"),
    ("train", "compile_mode"): _Skip(f"torch.compile: {_SAME_UPDATE}"),
    ("train", "compile_fullgraph"): _Skip(f"torch.compile: {_SAME_UPDATE}"),
    ("train", "cpu_offload"): _Skip("where its buffers live"),
    ("train", "torch_deterministic"): _Skip("cuDNN's determinism switch"),
    ("train", "name"): _Skip("its Neptune/wandb names (ours: --wandb, train.wandb_project)"),
    ("train", "project"): _Skip("its Neptune/wandb names (ours: --wandb, train.wandb_project)"),
    ("vec", "backend"): _SPLIT,
    ("vec", "num_workers"): _SPLIT,
    ("vec", "batch_size"): _SPLIT,
    ("vec", "zero_copy"): _SPLIT,
    ("vec", "seed"): _Skip("its vectorizer's seed; ours seeds env resets from train.seed"),
    ("sweep", "prune_pareto"): _Skip("how its Protein keeps its Pareto front"),
}

_V4: dict[tuple[str, str], _Rule] = {
    ("train", "horizon"): _To("train", "horizon"),
    ("train", "replay_ratio"): _To("train", "replay_ratio"),
    ("train", "beta1"): _To(
        "train", "muon_momentum", also=(("train", "muon_momentum_rule", "sum"),)
    ),
    ("train", "beta2"): _Skip("its Muon does not read it"),
    ("train", "eps"): _Skip("its Muon does not read it"),
    ("train", "min_lr_ratio"): _Only((0, 0.0), "our annealing ends at 0"),
    ("train", "gpus"): _Only((1,), _ONE_GPU),
    ("base", "rank"): _Only((0,), _ONE_GPU),
    ("base", "world_size"): _Only((1,), _ONE_GPU),
    ("base", "gpu_id"): _Only((0,), _ONE_GPU),
    ("base", "nccl_id"): _Only(("None", None), _ONE_GPU),
    ("base", "profile"): _Skip("its profiler"),
    ("base", "checkpoint_dir"): _Skip("ours keeps a run's checkpoint in its run dir"),
    ("base", "log_dir"): _Skip("ours keeps a run's metrics in its run dir"),
    ("base", "checkpoint_interval"): _To("train", "checkpoint_interval"),
    ("base", "eval_episodes"): _Skip("its evaluation after training (ours: puffer eval)"),
    ("base", "cudagraphs"): _To("train", "cuda_graphs", lambda v: v >= 0),
    ("base", "seed"): _To("train", "seed"),
    ("base", "reset_state"): _To(
        "train", "recurrent_state", lambda v: "zero" if _flag(v) else "carry"
    ),
    ("vec", "num_buffers"): _SPLIT,
    ("vec", "num_threads"): _SPLIT,
    ("policy", "num_layers"): _To("policy", "mingru_layers"),
    ("policy", "expansion_factor"): _Only((1,), "our PufferNet's layers keep the hidden width"),
    ("torch", "network"): _Only(("MinGRU",), "ours is PufferNet with MinGRU layers"),
    ("torch", "encoder"): _Only(("DefaultEncoder",), "ours is PufferNet's linear encoder"),
    ("torch", "decoder"): _Only(("DefaultDecoder",), "ours is PufferNet's one decoder"),
    ("sweep", "metric_distribution"): _Skip("how its Protein models the score"),
    ("sweep", "prune_pareto"): _Skip("how its Protein keeps its Pareto front"),
}

_ADAM_V3 = ("adam_beta1", "adam_beta2", "adam_eps")
# A searched 3.0 adam_* key, as under its default optimizer (Muon).
_ADAM_V3_SEARCHED: dict[tuple[str, str], _Rule] = {
    ("train", "adam_beta1"): _To("train", "muon_momentum"),
    ("train", "adam_beta2"): _Skip("our Muon keeps no second moment or epsilon"),
    ("train", "adam_eps"): _Skip("our Muon keeps no second moment or epsilon"),
}
# Keys only one version has: they tell which wrote the file.
_V3_MARKS = {k for k in _V3 if k[0] != "sweep"} | {("train", k) for k in _ADAM_V3}
_V3_MARKS |= {("base", "rnn_name"), ("base", "policy_name"), ("vec", "num_envs")}
_V4_MARKS = {k for k in _V4 if k[0] != "sweep"} | {("vec", "total_agents")}
_PUFFERNET = (("policy", "network", "puffernet"), ("policy", "recurrent", "mingru"))


def _parse(path: Path) -> dict[str, dict[str, Any]]:
    """The file's sections as PufferLib reads them: `ast.literal_eval` of each value, else
    its text."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_bytes().decode("utf-8"), source=str(path))
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"--config {path}: byte {error.start} is not UTF-8; save it as UTF-8 text"
        ) from None
    except configparser.Error as error:
        message = " ".join(str(error).split())
        raise ConfigError(
            f"--config {path} is no PufferLib .ini: {message}; fix the file"
        ) from None
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error}; check the path") from None
    return {name: {k: _value(v) for k, v in parser[name].items()} for name in parser.sections()}


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _version(sections: Mapping[str, Mapping[str, Any]]) -> str | None:
    keys = {(s, k) for s, table in sections.items() for k in table}
    v3 = sorted(f"[{s}] {k}" for s, k in keys & _V3_MARKS) + ["[rnn]"] * ("rnn" in sections)
    v4 = sorted(f"[{s}] {k}" for s, k in keys & _V4_MARKS) + ["[torch]"] * ("torch" in sections)
    if v3 and v4:
        raise ConfigError(
            f"it mixes PufferLib 3.0 keys ({', '.join(v3[:3])}) with 4.0 keys "
            f"({', '.join(v4[:3])}); give one version's file"
        )
    return "4.0" if v4 else "3.0" if v3 else None


class _Reader:
    """Maps one file's keys onto a layer of ours, collecting the keys it does not read."""

    def __init__(
        self, path: Path, env_name: str, env_keys: Mapping[str, Any], closed_env: bool
    ) -> None:
        self.path = path
        self.env_name = env_name
        self.env_keys = env_keys
        self.closed_env = closed_env  # an Ocean env: its config keys are all it takes
        # A native env takes the agent count as [env] num_envs; a single one is copied by
        # [vec] num_instances (its registration says which).
        declared = declared_vectorization(env_creator(env_name), env_name)
        self.native = declared is Vectorization.NATIVE
        self.layer: Layer = {}
        self.not_read: list[str] = []

    def refuse(self, where: str, value: Any, why: str) -> ConfigError:
        return ConfigError(f"{where} = {value!r} in {self.path}: {why}")

    def put(self, section: str, key: str, value: Any) -> None:
        self.layer.setdefault(section, {})[key] = value

    def apply(self, rule: _Rule, where: str, value: Any) -> None:
        if isinstance(rule, _Skip):
            self.not_read.append(f"{where} ({rule.why})")
        elif isinstance(rule, _Only):
            if value not in rule.allowed:
                allowed = " or ".join(repr(a) for a in rule.allowed)
                raise self.refuse(where, value, f"{rule.why}, so only {allowed} is read here")
        else:
            try:
                self.put(rule.section, rule.key, rule.convert(value))
            except (ConfigError, TypeError, ValueError, AttributeError) as error:
                raise self.refuse(where, value, f"{error}; fix the value") from None
            for section, key, implied in rule.also:
                self.put(section, key, implied)

    def env(self, key: str, value: Any) -> None:
        where = f"[env] {key}"
        if key in self.env_keys or not self.closed_env:
            self.put("env", key, value)
            return
        fixed = PUFFERLIB_CONSTANTS.get(self.env_name, {})
        if key not in fixed:
            raise self.refuse(
                where,
                value,
                f"our {self.env_name} has no such key or rule; its keys are "
                f"{', '.join(sorted(self.env_keys))}",
            )
        if value != fixed[key]:
            raise self.refuse(
                where,
                value,
                f"our {self.env_name} fixes it at {fixed[key]!r} (a constant of "
                "its game); remove the line or set it to that",
            )


def read_pufferlib_ini(
    path: str | Path, env_name: str, env_keys: Mapping[str, Any], *, closed_env: bool
) -> Layer:
    """The layer of our keys a PufferLib 3.0 or 4.0 `.ini` stands for.

    Args:
        path: The `.ini` file (untrusted: checked key by key).
        env_name: Our name of the env trained; the file's [base] env_name must name it
            (`puffer_breakout` or `breakout` for breakout).
        env_keys: Our env's [env] keys with their values (its creator's keywords).
        closed_env: The env takes only `env_keys` (an Ocean env); other [env] keys are then
            refused unless they repeat a constant of its game (`PUFFERLIB_CONSTANTS`).

    Returns:
        `{section: {key: value}}` in our sections and keys, as a `--config` TOML would hold.

    Raises:
        ConfigError: a key refused (named, with its value and why), or a file that is no .ini.

    Warns:
        PufferLibKeysNotRead: once, naming every key not read and why.
    """
    path = Path(path)
    sections = _parse(path)
    try:
        version = _version(sections)
    except ConfigError as error:
        raise ConfigError(f"--config {path}: {error}") from None
    rules = {**_COMMON, **{"3.0": _V3, "4.0": _V4}.get(version or "", {})}
    reader = _Reader(path, ours_for_pufferlib_name(env_name) or env_name, env_keys, closed_env)
    base, vec, env = (sections.get(name, {}) for name in ("base", "vec", "env"))
    _env_name(reader, base.get("env_name"))
    _agents(reader, version, vec, env)
    policy_v3 = version == "3.0" and bool(
        {"policy", "rnn"} & set(sections) or base.keys() & {"policy_name", "rnn_name"}
    )
    if policy_v3:
        _policy_v3(reader, sections)
    if version == "4.0" and {"policy", "torch"} & set(sections):
        for section, key, value in _PUFFERNET:
            reader.put(section, key, value)
    if version == "3.0" and "train" in sections:
        # 3.0 has no replay ratio: its minibatches are update_epochs passes over the batch.
        reader.put("train", "replay_ratio", 0.0)
        reader.put("train", "update_epochs", sections["train"].get("update_epochs", 1))
    handled = {("base", "env_name"), ("vec", "num_envs"), ("vec", "total_agents")}
    handled |= {("env", "num_envs")} if version == "3.0" else {("env", "num_agents")}
    handled |= {("base", "policy_name"), ("base", "rnn_name")}
    for section, table in sections.items():
        if section.startswith("sweep."):
            _param(reader, rules, version, section.removeprefix("sweep."), table)
            continue
        for key, value in table.items():
            where = f"[{section}] {key}"
            if (section, key) in handled or (policy_v3 and section in ("policy", "rnn")):
                continue
            if section == "env":
                reader.env(key, value)
            elif version == "3.0" and section == "train" and key in _ADAM_V3:
                _adam_v3(reader, table.get("optimizer", "muon"), key, value)
            elif (section, key) in rules:
                reader.apply(rules[(section, key)], where, value)
            else:
                raise reader.refuse(
                    where, value, f"PufferLib {version}'s key has no counterpart in puffer"
                )
    if reader.not_read:
        warnings.warn(
            PufferLibKeysNotRead(
                f"{path} (PufferLib {version}): not read, as they change nothing trained here: "
                + "; ".join(reader.not_read)
            ),
            stacklevel=3,
        )
    return reader.layer


def _env_name(reader: _Reader, named: Any) -> None:
    if named is None or named == "None":
        return
    names = str(named).split()  # 3.0 lets one file serve several envs
    if not any(reader.env_name in (n, ours_for_pufferlib_name(n)) for n in names):
        raise reader.refuse(
            "[base] env_name",
            named,
            f"the file configures {' or '.join(names)}, not {reader.env_name}; train that env "
            "with it",
        )


def _agents(
    reader: _Reader, version: str | None, vec: Mapping[str, Any], env: Mapping[str, Any]
) -> None:
    """The env count: 3.0 runs vec.num_envs env objects of env.num_envs agents each, 4.0
    vec.total_agents agents of env.num_agents per env; ours one env of them all (Ocean), or
    that many instances."""
    if version == "3.0":
        copies, each = vec.get("num_envs"), env.get("num_envs")
        if copies is None and each is None:
            return
        if not reader.native:  # a Gymnasium-style env: one per instance
            reader.put("vec", "num_instances", copies if copies is not None else 1)
            return
        if each is None:
            raise reader.refuse(
                "[vec] num_envs", copies, "3.0 multiplies it by [env] num_envs; give that too"
            )
        reader.put("env", "num_envs", (copies if copies is not None else 1) * each)
        return
    total, per_env = vec.get("total_agents"), env.get("num_agents", 1)
    if total is None or version is None:
        return
    if not isinstance(per_env, int) or per_env < 1 or total % per_env:
        raise reader.refuse(
            "[env] num_agents", per_env, f"it must divide [vec] total_agents {total}"
        )
    if reader.native:
        reader.put("env", "num_envs", total // per_env)
    else:
        reader.put("vec", "num_instances", total)


def _policy_v3(reader: _Reader, sections: Mapping[str, Mapping[str, Any]]) -> None:
    """3.0's [base] policy_name / rnn_name and its [policy] and [rnn] arguments."""
    base = sections.get("base", {})
    policy, rnn = sections.get("policy", {}), sections.get("rnn", {})
    name = base.get("policy_name", "Policy")
    if name != "Policy":
        raise reader.refuse(
            "[base] policy_name",
            name,
            "a policy class of its own; ours builds the default "
            "policy (its Policy) or PufferNet from [policy] keys",
        )
    reader.put("policy", "network", "default")
    rnn_name = base.get("rnn_name")
    if rnn_name in (None, "None"):
        reader.put("policy", "recurrent", "none")
    elif rnn_name == "Recurrent":
        # Its LSTM wrapper; its rollout starts every iteration from zero state.
        reader.put("policy", "recurrent", "lstm")
        reader.put("train", "recurrent_state", "zero")
    else:
        raise reader.refuse("[base] rnn_name", rnn_name, "ours has its LSTM (Recurrent) only")
    for key, value in policy.items():
        if key != "hidden_size":
            raise reader.refuse(
                f"[policy] {key}", value, "an argument of its policy class; ours reads hidden_size"
            )
        reader.put("policy", "hidden_size", value)
    width = policy.get("hidden_size")
    for key, value in rnn.items():
        if key not in ("input_size", "hidden_size") or (width is not None and value != width):
            raise reader.refuse(
                f"[rnn] {key}",
                value,
                "our LSTM reads and keeps the encoder's width "
                "([policy] hidden_size); give them one value",
            )
        reader.put("policy", "hidden_size", value)


def _adam_v3(reader: _Reader, optimizer: Any, key: str, value: Any) -> None:
    """3.0's adam_* keys: Adam's under optimizer 'adam'; under 'muon' (its default) adam_beta1
    is its Muon's momentum with the 'average' rule and the others are not read."""
    if optimizer == "adam":
        reader.put("train", key, value)
    elif key == "adam_beta1":
        reader.put("train", "muon_momentum", value)
        reader.put("train", "muon_momentum_rule", "average")
    else:
        reader.not_read.append(f"[train] {key} (our Muon keeps no second moment or epsilon)")


def _param(
    reader: _Reader,
    rules: Mapping[tuple[str, str], _Rule],
    version: str | None,
    name: str,
    spec: Mapping[str, Any],
) -> None:
    """`[sweep.<section>.<key>]`: the searched key renamed as the key itself maps."""
    section, _, key = name.partition(".")
    where = f"[sweep.{name}]"
    rule = rules.get((section, key))
    if version == "3.0":
        rule = _ADAM_V3_SEARCHED.get((section, key), rule)
    if section == "env" and key in reader.env_keys:
        rule = _To("env", key)
    elif (section, key) == ("vec", "total_agents") and reader.native:
        rule = _To("env", "num_envs")
    if isinstance(rule, _Skip):
        reader.not_read.append(f"{where} (searches {section}.{key}: {rule.why})")
        return
    if not isinstance(rule, _To) or rule.convert is not _same:
        raise reader.refuse(where, dict(spec), "a search of a key with no counterpart here")
    table = {}
    for field, value in spec.items():
        if field == "scale":
            reader.not_read.append(f"{where} scale (our Protein sets each spread itself)")
        else:
            table[field] = value
    reader.layer.setdefault("sweep", {})[f"{rule.section}.{rule.key}"] = table
