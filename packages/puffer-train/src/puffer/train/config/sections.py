"""The typed sections of a run's config: `[train]`, `[policy]` and `[vec]`, one dataclass each.

They hold the default of every key (an env's TOML sets only what it changes), each with its
one-line meaning and, where the type is not enough, its range or choices (`keys.spec`). A
section checks its values when it is built, so a bad value stops a run before any env or
directory exists; what depends on the machine is `TrainConfig.check_host`'s, which creates
nothing.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_type_hints

from puffer.sweep import SweepConfig
from puffer.train.config.keys import (
    Check,
    Checked,
    ConfigError,
    above,
    at_least,
    one_of,
    refuse_renamed,
    spec,
    within,
)
from puffer.vector import BACKENDS

__all__ = [
    "BOX_ACTIONS",
    "ENCODER_DTYPES",
    "MATMUL_PRECISIONS",
    "MLP_ACTIVATIONS",
    "MUON_MOMENTUM_RULES",
    "NETWORKS",
    "SWEEP_OPTIONS",
    "TYPED_SECTIONS",
    "PolicyConfig",
    "TrainConfig",
    "VecConfig",
]

_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")
_ANY_DEVICE = Check(lambda v: _DEVICE.fullmatch(v) is not None, "naming a torch device")
# A run id is one directory level under <data_dir>/<env>/; a separator would escape or nest it.
_DIR_NAME = Check(
    lambda v: not re.search(r"[/\\]", v) and v not in (".", ".."), "naming one directory (no '/')"
)
_NON_EMPTY = Check(bool, "that is not empty")
# An encoder named by import path: "package.module:attribute".
_FACTORY = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


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
class TrainConfig(Checked):
    """The `[train]` section: PPO, the puff advantage, replay, optimizer and bookkeeping."""

    seed: int = spec(
        42, "seed of torch, numpy and env resets (rank r of DDP uses seed + r)", at_least(0)
    )
    device: str = spec(
        "auto", "'cpu', 'cuda', 'cuda:N', or 'auto' (cuda when available)", _ANY_DEVICE
    )
    torch_threads: int = spec(
        0,
        "torch intra-op threads; 0 (auto): the cores (or OMP_NUM_THREADS) less one per env "
        "worker process",
        at_least(0),
    )
    matmul_precision: str = spec(
        "highest",
        "float32 matrix products, set for the process (torch.set_float32_matmul_precision): "
        "'highest' float32; 'high' TF32 on GPUs that have it; 'medium' bfloat16 products on "
        "GPUs and on CPUs with AMX or AVX512-BF16 (the CPU sequence kernels stay float32)",
        one_of(*MATMUL_PRECISIONS),
    )
    precision: str = spec(
        "float32",
        "what the policy computes in: 'float32', or 'bfloat16' (torch.autocast over its "
        "rollout and training passes: matrix products in bfloat16; recurrent kernels, the "
        "heads' outputs, the loss, parameters, gradients and optimizer in float32)",
        one_of("float32", "bfloat16"),
    )
    cuda_graphs: bool = spec(
        True, "on CUDA, replay the rollout forward of full batches from a CUDA graph"
    )
    update_graph: bool = spec(
        False,
        "on CUDA, capture one minibatch's whole update (advantages, sampling, forward, loss, "
        "backward, clip, optimizer step) as a CUDA graph after the first iteration and replay it",
    )
    total_timesteps: int = spec(10_000_000, "agent steps to train for", at_least(1))
    batch_size: int = spec(
        0, "agent steps per iteration; 0 means num_agents * horizon", at_least(0)
    )
    horizon: int = spec(
        64, "steps per segment (the BPTT length of recurrent policies)", at_least(1)
    )
    minibatch_size: int = spec(
        8192, "agent steps per minibatch; a multiple of horizon", at_least(1)
    )
    microbatch_size: int = spec(
        0,
        "agent steps per forward/backward pass; a larger minibatch sums the gradients of its "
        "passes (the same update, less memory); 0: 8192 on the CPU, the whole minibatch on GPUs",
        at_least(0),
    )
    update_epochs: int = spec(
        1, "passes over the batch per iteration (minibatches sampled with replay)", at_least(1)
    )
    replay_ratio: float = spec(
        0.0,
        "minibatches per iteration as a multiple of the batch, int(replay_ratio * batch_size / "
        "minibatch_size) (PufferLib 4.0's way to set them); 0: update_epochs passes",
        at_least(0),
    )
    gamma: float = spec(0.995, "discount factor", within(0, 1))
    gae_lambda: float = spec(0.90, "GAE lambda", within(0, 1))
    vtrace: bool = spec(
        True,
        "before each minibatch, weight the advantages by V-trace with the ratios the iteration's "
        "earlier minibatches left, as PufferLib's trainer does; false: GAE from the rollout, "
        "as CleanRL and SB3 train",
    )
    vtrace_rho_clip: float = spec(
        1.0, "V-trace rho-bar: clip of the importance ratio in delta", at_least(0)
    )
    vtrace_c_clip: float = spec(
        1.0, "V-trace c-bar: clip of the importance ratio in the trace", at_least(0)
    )
    action_masks: bool = spec(
        True,
        "sample only the legal actions of an env that provides masks (connect4, board games); "
        "false: every action, an illegal one judged by the env's rules (PufferLib 3.0's way)",
    )
    sample_steps: bool = spec(
        False,
        "minibatches draw single steps rather than whole segments, as CleanRL shuffles them "
        "(feedforward policies only; advantages still run over whole segments)",
    )
    prio_alpha: float = spec(
        0.8,
        "priority exponent alpha of segments (of steps with sample_steps); 0 is uniform",
        at_least(0),
    )
    prio_beta0: float = spec(
        0.2, "importance-weight exponent beta at the start, annealed to 1", within(0, 1)
    )
    clip_coef: float = spec(0.2, "PPO ratio clip", above(0))
    vf_clip_coef: float = spec(0.2, "value clip around the rollout value", above(0))
    vf_coef: float = spec(2.0, "value-loss weight", at_least(0))
    ent_coef: float = spec(0.001, "entropy-bonus weight", at_least(0))
    normalize_reward: bool = spec(
        False, "scale rewards by the running std of the discounted return (kept in checkpoints)"
    )
    reward_clip: float = spec(
        1.0,
        "rewards are clipped to [-reward_clip, reward_clip] as they are stored (after "
        "normalize_reward), as PufferLib's trainer does; 0 stores them as they are",
        at_least(0),
    )
    refresh_values: bool = spec(
        True,
        "after each minibatch, store its new value estimates over the rollout's, so later "
        "minibatches' advantages and value clip start from them, as PufferLib's trainer does",
    )
    recurrent_state: str = spec(
        "carry",
        "'carry': each agent's recurrent state runs on from iteration to iteration and training "
        "replays every segment from the state it started with; 'zero': every iteration's rollout "
        "starts each agent from zeros, as PufferLib's trainer does (feedforward policies "
        "ignore it)",
        one_of("carry", "zero"),
    )
    max_grad_norm: float = spec(1.5, "global gradient-norm clip", above(0))
    optimizer: str = spec(
        "muon",
        "'muon' (PufferLib 3.0's: Muon on every parameter, momentum muon_momentum) or 'adam'",
        one_of("muon", "adam"),
    )
    learning_rate: float = spec(0.015, "peak learning rate", above(0))
    anneal_lr: bool = spec(True, "cosine-decay the learning rate to 0 over training")
    adam_beta1: float = spec(0.95, "Adam/AdamW beta1", within(0, 1, high_open=True))
    adam_beta2: float = spec(0.999, "Adam/AdamW beta2", within(0, 1, high_open=True))
    adam_eps: float = spec(1e-12, "Adam/AdamW epsilon", above(0))
    muon_momentum: float = spec(
        0.95,
        "Muon's momentum, the weight of its gradient average on the past (PufferLib's configs "
        "call it adam_beta1)",
        within(0, 1, high_open=True),
    )
    muon_momentum_rule: str = spec(
        "average",
        "how Muon's momentum m accumulates gradients g: 'average' (m <- beta m + (1 - beta) g, "
        "step direction g + m: PufferLib 3.0's heavyball) or 'sum' (m <- beta m + g, step "
        "direction g + beta m: PufferLib 4.0's, which weighs the past beta / (1 - beta) times "
        "more against the fresh gradient)",
        one_of(*MUON_MOMENTUM_RULES),
    )
    weight_decay: float = spec(0.0, "decoupled weight decay (Muon and Adam)", at_least(0))
    data_dir: str = spec(
        "experiments", "root of run directories: <data_dir>/<env>/<run_id>/", _NON_EMPTY
    )
    run_id: str = spec("", "run directory name; empty makes a fresh time-stamped id", _DIR_NAME)
    checkpoint_interval: int = spec(
        50, "iterations between checkpoints; 0: only the one always written at the end", at_least(0)
    )
    checkpoint_minutes: float = spec(
        5.0,
        "also checkpoint once this many minutes of training passed since the last one, so a "
        "kill loses at most that (or one iteration); 0: iterations only",
        at_least(0),
    )
    resume: bool = spec(False, "continue the run in <data_dir>/<env>/<run_id> from its checkpoint")
    score_stat: str = spec(
        "auto",
        "the env statistic a run is scored by (its mean over the last iterations holding 100 "
        "episodes, the score everywhere: train's last line, dashboards, metrics, sweeps); "
        "'auto': score where the env reports it, else episode_return",
        _NON_EMPTY,
    )
    tensorboard: bool = spec(
        False, "also log metrics to <run dir>/tensorboard/ (the tensorboard extra)"
    )
    wandb: bool = spec(
        False, "also log metrics to Weights & Biases, files in <run dir>/wandb/ (the wandb extra)"
    )
    wandb_project: str = spec("puffer", "wandb project of the run", _NON_EMPTY)
    wandb_entity: str = spec("", "wandb entity (team or user); empty: your wandb default")
    wandb_group: str = spec("", "wandb group; empty: the env name")
    wandb_tags: str = spec("", "wandb tags, comma-separated (e.g. 'baseline,lstm')")

    def _check_together(self) -> None:
        if self.replay_ratio > 0 and self.update_epochs != 1:
            raise ConfigError(
                f"train.replay_ratio is {self.replay_ratio} and train.update_epochs is "
                f"{self.update_epochs}; both set the minibatches per iteration: keep one (the "
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
class PolicyConfig(Checked):
    """The `[policy]` section: which network maps observations to actions and values."""

    network: str = spec(
        "default",
        "'default' (the encoder, core and heads the other keys name) or 'puffernet' "
        "(PufferLib 4.0's: a bias-free linear encoder, `mingru_layers` MinGRU layers with "
        "highway gates, one bias-free decoder for the logits and the value, its init; reads "
        "hidden_size, mingru_layers and normalize_obs, needs recurrent = 'mingru')",
        one_of(*NETWORKS),
    )

    encoder: str = spec(
        "mlp",
        "'mlp', 'nature_cnn', 'impala' (image obs), 'multi' (Dict/Tuple obs with image leaves), "
        "or 'module:factory' for a family's own encoder (factory(env, policy_config) -> module "
        "giving (B, hidden_size))",
        Check(
            lambda v: (
                v in ("mlp", "nature_cnn", "impala", "multi") or _FACTORY.fullmatch(v) is not None
            ),
            "among 'mlp', 'nature_cnn', 'impala', 'multi' or of the form 'module:factory'",
        ),
    )
    normalize_obs: bool = spec(
        False, "standardize observations with running mean/std (saved with the model; 'mlp')"
    )
    hidden_size: int = spec(128, "width of the encoder output and the recurrent core", at_least(1))
    num_layers: int = spec(
        0, "hidden Linear+activation layers after the first in the MLP encoder", at_least(0)
    )
    activation: str = spec(
        "gelu",
        "the MLP encoder's nonlinearity: 'gelu', 'tanh' (bounded, as SB3's and CleanRL's "
        "MLPs for continuous control) or 'relu' (RL Zoo's tuned MuJoCo PPO)",
        one_of(*MLP_ACTIVATIONS),
    )
    box_actions: str = spec(
        "map",
        "how an action reaches a Box whose bounds are all finite: 'map' (the policy acts in "
        "[-1, 1], clipped there and mapped onto [low, high], so a unit Gaussian explores the "
        "whole range whatever its units) or 'clip' (the policy acts in the env's units, "
        "clipped to [low, high], as SB3 and CleanRL)",
        one_of(*BOX_ACTIONS),
    )
    log_std_init: float = spec(
        0.0,
        "initial log standard deviation of every Gaussian (Box) action dimension, learned "
        "from there: 0 explores with std 1, -2 with std 0.135 (RL Zoo's tuned MuJoCo PPO)",
    )
    recurrent: str = spec("none", "'none', 'lstm' or 'mingru'", one_of("none", "lstm", "mingru"))
    critic: str = spec(
        "shared",
        "'shared' (the value head reads the actor's features) or 'separate' (the value has an "
        "encoder of its own, as SB3's MlpPolicy for continuous actions; feed-forward only)",
        one_of("shared", "separate"),
    )
    mingru_layers: int = spec(1, "stacked MinGRU layers when recurrent = 'mingru'", at_least(1))
    cnn_channels: int = spec(32, "base channel count of the CNN encoders", at_least(1))
    init: str = spec(
        "puffer",
        "initial weights: 'puffer' (orthogonal: encoder gain sqrt 2, action head 0.01, value 1, "
        "recurrent core gain 1 with zero biases) or 'pufferlib' (PufferLib 3.0's: with a "
        "recurrent core every other weight orthogonal at gain 1 and biases 0, the LSTM at "
        "torch's default; without one its default policy's, the encoder at torch's default)",
        one_of("puffer", "pufferlib"),
    )
    encoder_dtype: str = spec(
        "float32",
        "what the encoder computes in: 'float32'; 'bfloat16' (torch.autocast, in rollout and "
        "training alike; the core, heads and loss stay float32), which pays for CNN encoders "
        "on GPUs and on CPUs with bfloat16 instructions (AVX512-BF16, AMX); or 'auto', "
        "bfloat16 on those devices and float32 elsewhere",
        one_of(*ENCODER_DTYPES),
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


@dataclass
class VecConfig(Checked):
    """The `[vec]` section: how `train(env_name, ...)` vectorizes the env.

    `num_instances` and `instances_per_recv` are `puffer.vector.make`'s `num_envs` and
    `batch_size`; the config names them apart from `[env] num_envs` (an env's own keyword, for
    Ocean envs the agents one instance holds) and `[train] batch_size` (agent steps per iteration).
    """

    backend: str = spec(
        "native",
        "'native' (the env itself), 'serial', 'multiprocessing' or 'ray'",
        one_of("native", *BACKENDS),
    )
    num_instances: int = spec(
        1, "env instances the vectorizer makes (each may hold many agents)", at_least(1)
    )
    num_workers: int = spec(
        1,
        "worker processes (or Ray actors), each owning num_instances/num_workers",
        at_least(1),
    )
    instances_per_recv: int = spec(
        0,
        "env instances per recv(); 0 means num_instances (synchronous), fewer is EnvPool-style "
        "async",
        at_least(0),
    )
    zero_copy: bool = spec(True, "async batches are fixed worker groups returned as views")
    num_buffers: int = spec(
        1,
        "buffers a native env's agents are split into (env.num_envs / num_buffers instances "
        "each): while one buffer's env steps on a background thread the next one's policy "
        "forward runs; 1 steps every agent together",
        at_least(1),
    )
    worker_timeout: float = spec(
        30.0,
        "seconds a multiprocessing worker may show no heartbeat (stopped, hung) before the "
        "run stops with an error naming it",
        above(0),
    )

    def _check_together(self) -> None:
        if self.backend != "native":
            if self.num_buffers != 1:
                raise ConfigError(
                    f"vec.num_buffers is {self.num_buffers} with vec.backend {self.backend!r}; "
                    "buffers split a native env: a vectorizer's workers already step beside the "
                    "policy, so set vec.instances_per_recv to num_instances / "
                    f"{self.num_buffers} instead (or vec.num_buffers 1)"
                )
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


_vec_init = VecConfig.__init__


def _vec_refusing_renamed(self: VecConfig, *args: Any, **kwargs: Any) -> None:
    for key in kwargs:  # `VecConfig(num_envs=2)` says what the key is called now
        refuse_renamed("vec", key)
    _vec_init(self, *args, **kwargs)


VecConfig.__init__ = _vec_refusing_renamed  # type: ignore[method-assign]

TYPED_SECTIONS: dict[str, type] = {"vec": VecConfig, "policy": PolicyConfig, "train": TrainConfig}
"""The typed sections by TOML name, in the order `puffer config` prints them."""
# [sweep] options are SweepConfig's fields but `space` (built from the parameter tables) and
# `metric`: a sweep ranks its runs by their score, whose statistic is `train.score_stat`.
SWEEP_OPTIONS = {
    k: h for k, h in get_type_hints(SweepConfig).items() if k not in ("space", "metric")
}
