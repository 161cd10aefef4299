"""Differential harness against PufferLib 3.0: its trainer and its Ocean envs beside ours.

`trainer`: from identical weights and one identical epoch of experience, one `train()` of each
trainer; prints every component (advantages, each loss term, each parameter's gradient and
update) with its largest difference and whether a difference is intended. Each side's update
is its own optimizer's step redone in float64 from the same weights, the same optimizer state
(learning rate included) and the same gradient (PufferLib's): Newton-Schulz orthogonalization
magnifies float32 rounding in a matrix's near-null directions (breakout's 4 x 128 action head:
gradients equal to 2e-8 gave float32 updates 2e-5 to 5e-5 apart, 0.2-0.5 % of the update),
where in float64 two equal optimizers agree to ~1e-16 and a 1 % change of the learning rate
shows as 1 %. Each `train()` must take exactly one optimizer step, so that step is the whole
update. The experience is one epoch our trainer collected on our env with PufferLib's config,
in two cases: an LSTM over segments with no episode end inside them, and an MLP over the
segments as collected (episode ends included). Two intended differences are neutralized in the batch so that everything
else must agree (both are listed in the report with what they change):
- the last step of a segment: ours bootstraps it from the value of the next observation,
  PufferLib sets its advantage to 0; the batch's next values are chosen so that our TD error
  there is 0 too;
- the LSTM's state at an episode start inside a segment: ours zeroes it, PufferLib carries it;
  the LSTM case has no episode ends inside segments.
One minibatch spans the whole epoch, so which segments are sampled cannot differ.

`envs`: for every Ocean env of both libraries, the same action streams (random, and each
constant action) on both; prints the first step where observations, rewards or episode ends
differ, and episode returns and lengths over at least `--episodes` episodes per stream with a
two-sample Kolmogorov-Smirnov test between the libraries.

    uv run python benchmarks/parity.py trainer --pufferlib /work/pl3
    uv run python benchmarks/parity.py trainer --pufferlib /work/pl3 \
        --ours="--train.learning-rate 0.04493"   # a deliberate difference: must be flagged
    uv run python benchmarks/parity.py envs --pufferlib /work/pl3 --episodes 1000

The PufferLib half runs this file under PufferLib's interpreter (`_pufferlib-*` commands), in a
scratch folder (its import writes ./resources); the two exchange .npz files.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from peers import ours_from_pufferlib, pufferlib_config, pufferlib_python

HERE = Path(__file__).resolve()

# A component "matches" when its largest difference is below this fraction of its largest
# magnitude: float32 sums taken in another order differ by ~1e-6 relative.
MATCH = 1e-4

# Every difference between the two trainers, found by reading PufferLib's `pufferl.py` (and
# heavyball's optimizer) beside ours and by this harness: what each does, and what became of it.
# Fixed ones now agree (the batch comparison checks those it can reach); kept ones are neutralized
# in the batch where they would show.
DIFFERENCES = (
    ("optimizer", "fixed",
     "PufferLib: heavyball's ForeachMuon on every parameter (Nesterov average, matrices "
     "orthogonalized and scaled by sqrt(max(1, rows/cols)), vectors as momentum SGD, lr as "
     "given). Ours was torch's Muon on hidden matrices with steps rescaled to AdamW's size, "
     "AdamW on heads and biases; now PufferMuon, the same rule"),
    ("reward clip", "fixed",
     "PufferLib clamps rewards to [-1, 1] as it stores them; ours stored them as given, so "
     "breakout's 4- and 7-point bricks entered the returns unclipped (train.reward_clip, 1)"),
    ("value refresh", "fixed",
     "PufferLib writes each minibatch's new values over the stored ones, so later minibatches' "
     "advantages and value clip start from them; ours kept the rollout's (train.refresh_values)"),
    ("init", "option",
     "initial weights: ours orthogonal (encoder gain sqrt 2, LSTM gain 1 with zero biases, "
     "action head 0.01); PufferLib's LSTM wrapper re-initializes the wrapped policy orthogonal "
     "at gain 1 (its action head too) and keeps torch's uniform LSTM init. Breakout at its "
     "config learns its curve with ours; pong at its config stalls with ours on 3 seeds and "
     "learns with its init, now policy.init = 'pufferlib' (set for every 'same' run)"),
    ("segment end", "kept",
     "PufferLib sets the advantage of a segment's last step to 0 and drops the reward that "
     "arrives with the next segment's first observation; ours bootstraps from V(next obs)"),
    ("truncation", "kept",
     "PufferLib ignores truncations in the advantage (the trace runs on into the next episode); "
     "ours bootstraps from V(final obs) and cuts the trace there"),
    ("recurrent state", "kept",
     "PufferLib zeroes the LSTM state at every epoch start, replays every segment from zero and "
     "never cuts the state at an episode start; ours carries the state, replays each segment "
     "from its stored start state and cuts it where an episode begins"),
    ("beta annealing", "kept",
     "PufferLib's beta = beta0 + (1 - beta0) alpha epoch/epochs (alpha's factor keeps it below "
     "1); ours anneals to 1. The same for breakout's alpha 0.99"),
    ("priority epsilon", "kept",
     "PufferLib adds 1e-6 to the priorities and their sum; ours is uniform only when every sum "
     "is 0 (a 1e-6 relative difference: within this harness's tolerance)"),
    ("advantage std", "kept",
     "PufferLib normalizes by the unbiased std (n - 1), ours by the biased one (1/n relative)"),
)  # fmt: skip


# --- Both halves (under either interpreter) -------------------------------------------------


class StepCapture:
    """Wraps `optimizer.step` to record, at the one step `train()` takes, every parameter's
    gradient and the optimizer's state, so the step can be redone in float64 afterwards."""

    def __init__(self, optimizer, model) -> None:
        self.optimizer, self.model, self.step = optimizer, model, optimizer.step
        self.grads: dict = {}
        self.state: dict | None = None
        self.steps = 0
        optimizer.step = self

    def __call__(self, *args, **kwargs):
        import copy

        self.steps += 1
        self.grads = {n: p.grad.detach().clone() for n, p in self.model.named_parameters()}
        self.state = copy.deepcopy(self.optimizer.state_dict())
        return self.step(*args, **kwargs)

    def float64_update(self, model, weights: dict, grads: dict, **group) -> dict:
        """The captured step redone in float64: `model` (the optimizer's) at `weights`, the
        optimizer at its state then (learning rate included), every parameter's gradient
        `grads[name]`; `group` sets keys of every parameter group. Returns each state-dict
        tensor's change, float64. Leaves `model` in float64."""
        import torch

        if self.steps != 1:
            raise SystemExit(f"train() took {self.steps} optimizer steps; this harness needs 1")
        model.double()  # the optimizer keeps its parameters: .double() converts them in place
        model.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})
        before = {k: v.clone() for k, v in model.state_dict().items()}
        for name, param in model.named_parameters():
            param.grad = torch.as_tensor(grads[name]).to(torch.float64)
        self.optimizer.load_state_dict(self.state)
        for settings in self.optimizer.param_groups:
            settings.update(group)
        self.step()
        return {k: v - before[k] for k, v in model.state_dict().items()}


# --- PufferLib's half (runs under its interpreter) -------------------------------------------


def pufferlib_trainer(inp: str, out: str) -> None:
    """Load the batch and weights from `inp`, run PufferLib's `PuffeRL.train` once, write the
    advantages, losses, gradients and parameters to `out`."""
    import torch
    from pufferlib import pufferl

    data = dict(np.load(inp))
    meta = json.loads(str(data.pop("meta")))
    torch.set_num_threads(1)
    sys.argv = ["parity", *meta["pufferlib_flags"]]
    args = pufferl.load_config(f"puffer_{meta['env']}")
    if meta["policy"] == "mlp":
        args["rnn_name"] = None
        args["train"]["use_rnn"] = False
    vecenv = pufferl.load_env(f"puffer_{meta['env']}", args)
    fresh = pufferl.load_policy(args, vecenv)
    init_std = {k: float(v.float().std()) for k, v in fresh.state_dict().items() if v.ndim >= 1}
    policy = fresh
    weights = {
        k.removeprefix("w/"): torch.from_numpy(v) for k, v in data.items() if k.startswith("w/")
    }
    policy.load_state_dict(weights)
    pufferl.PuffeRL.print_dashboard = lambda self, *a, **k: None
    trainer = pufferl.PuffeRL(dict(**args["train"], env=meta["env"]), vecenv, policy)
    for name in ("observations", "actions", "logprobs", "values", "rewards", "terminals"):
        buffer = getattr(trainer, name)
        buffer.copy_(torch.from_numpy(data[f"b/{name}"]).to(buffer.dtype))
    trainer.truncations.zero_()
    advantages = pufferl.compute_puff_advantage(
        trainer.values.clone(), trainer.rewards, trainer.terminals, torch.ones_like(trainer.values),
        torch.zeros_like(trainer.values), *(args["train"][k] for k in (
            "gamma", "gae_lambda", "vtrace_rho_clip", "vtrace_c_clip")),
    )  # fmt: skip
    step = StepCapture(trainer.optimizer, policy)
    trainer.train()
    losses = {f"l/{k}": np.float64(v) for k, v in trainer.losses.items()}
    grads = {f"g/{k}": v.numpy() for k, v in step.grads.items()}
    # heavyball keeps its momentum in float32 unless told otherwise.
    updates = step.float64_update(policy, weights, step.grads, storage_dtype="float64")
    updates = {f"u/{k}": v.numpy() for k, v in updates.items()}
    np.savez(
        out, advantages=advantages.numpy(), init_std=json.dumps(init_std), **losses, **grads,
        **updates,
    )  # fmt: skip
    os._exit(0)  # its utilization thread would keep the process alive


# The action streams both libraries see: uniformly random (a hash of step, row and seed, so
# numpy versions cannot make them differ), or one constant discrete action.
def stream_actions(space: dict, stream: str, step: int, rows: int, seed: int) -> np.ndarray:
    """(rows, *shape) actions of `stream` ('random' or 'const:K') at `step` for `space`, a
    dict from `_space_spec`."""
    index = np.arange(rows, dtype=np.uint64)[:, None]
    width = np.arange(max(1, space["width"]), dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        h = (np.uint64(step) * np.uint64(0x9E3779B97F4A7C15) + index * np.uint64(0xBF58476D1CE4E5B9)
             + width * np.uint64(0x94D049BB133111EB) + np.uint64(seed))  # fmt: skip
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xD6E8FEB86659FD93)
        h ^= h >> np.uint64(32)
    if space["kind"] == "box":
        unit = (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)
        low, high = np.asarray(space["low"]), np.asarray(space["high"])
        return (low + unit * (high - low)).astype(np.float32).reshape(rows, *space["shape"])
    nvec = np.asarray(space["nvec"], dtype=np.uint64)
    if stream.startswith("const:"):
        actions = np.minimum(np.uint64(int(stream[6:])), nvec - np.uint64(1)) + 0 * h
    else:
        actions = h % nvec
    actions = actions.astype(np.int64)
    return actions[:, 0] if space["scalar"] else actions


def _space_spec(space) -> dict:
    """A JSON-able description of a Discrete, MultiDiscrete or Box action space."""
    name = type(space).__name__
    if name == "Discrete":
        return {"kind": "discrete", "nvec": [int(space.n)], "scalar": True, "width": 1}
    if name == "MultiDiscrete":
        nvec = [int(n) for n in np.asarray(space.nvec).ravel()]
        return {"kind": "discrete", "nvec": nvec, "scalar": False, "width": len(nvec)}
    low, high = (
        np.asarray(space.low, np.float64).ravel(),
        np.asarray(space.high, np.float64).ravel(),
    )
    low, high = np.clip(low, -1, 1), np.clip(high, -1, 1)  # unbounded boxes: sample [-1, 1]
    return {"kind": "box", "low": low.tolist(), "high": high.tolist(), "width": low.size,
            "shape": list(space.shape), "scalar": False}  # fmt: skip


# Steps recorded in full for the identity check, and the rows recorded.
IDENTITY_STEPS, IDENTITY_ROWS = 200, 8


def roll(env, stream: str, seed: int, episodes: int, max_steps: int) -> dict[str, np.ndarray]:
    """Step `env` (either library's vectorized Ocean env, reset with `seed`) with `stream`'s
    actions until `episodes` episodes have ended or `max_steps` steps; returns the first
    steps of a few rows in full, and every finished episode's return and length (from the
    reward and end flags, the same rule on both sides)."""
    obs, _ = env.reset(seed=seed)
    rows = len(obs)
    space = _space_spec(env.single_action_space)
    ret, length = np.zeros(rows), np.zeros(rows, np.int64)
    returns, lengths, step_rewards = [], [], []
    first = {"obs": [np.array(obs[:IDENTITY_ROWS], np.float64)], "rew": [], "done": []}
    for step in range(max_steps):
        actions = stream_actions(space, stream, step, rows, seed)
        obs, rewards, terminals, truncations, _ = env.step(actions)
        done = np.asarray(terminals, bool) | np.asarray(truncations, bool)
        ret += rewards
        step_rewards.append(float(np.sum(rewards)) / rows)
        length += 1
        returns.extend(ret[done].tolist())
        lengths.extend(length[done].tolist())
        ret[done], length[done] = 0.0, 0
        if step < IDENTITY_STEPS:
            first["obs"].append(np.array(obs[:IDENTITY_ROWS], np.float64))
            first["rew"].append(np.array(rewards[:IDENTITY_ROWS], np.float64))
            first["done"].append(np.array(done[:IDENTITY_ROWS]))
        if len(returns) >= episodes and step >= IDENTITY_STEPS:
            break
    return {
        "returns": np.array(returns),
        "lengths": np.array(lengths),
        "steps": np.array(step + 1),
        "step_rewards": np.array(step_rewards),
        **{f"first_{k}": np.array(v) for k, v in first.items()},
    }


def pufferlib_env(spec: str, out: str) -> None:
    """Run PufferLib's env `spec['env']` through each stream; write `roll`'s arrays to `out`."""
    from pufferlib.ocean.environment import env_creator

    spec = json.loads(spec)
    results = {}
    for stream in spec["streams"]:
        # A fresh env per stream: some of its envs' reset() leaves state from the last stream.
        env = env_creator(f"puffer_{spec['env']}")(
            num_envs=spec["num_envs"], **spec["pufferlib_kwargs"]
        )
        for key, value in roll(
            env, stream, spec["seed"], spec["episodes"], spec["max_steps"]
        ).items():
            results[f"{stream}/{key}"] = value
    results["space"] = np.array(json.dumps(_space_spec(env.single_action_space)))
    results["num_agents"] = np.array(env.num_agents)
    np.savez(out, **results)
    os._exit(0)


# --- our half --------------------------------------------------------------------------------

# Our parameter names -> PufferLib's (its LSTM wrapper holds the policy as `policy.`, and its
# LSTMCell shares the LSTM's tensors under `cell.`).
_LSTM_NAMES = {
    "encoder.input.weight": ["policy.encoder.0.weight"],
    "encoder.input.bias": ["policy.encoder.0.bias"],
    "core.lstm.weight_ih_l0": ["lstm.weight_ih_l0", "cell.weight_ih"],
    "core.lstm.weight_hh_l0": ["lstm.weight_hh_l0", "cell.weight_hh"],
    "core.lstm.bias_ih_l0": ["lstm.bias_ih_l0", "cell.bias_ih"],
    "core.lstm.bias_hh_l0": ["lstm.bias_hh_l0", "cell.bias_hh"],
    "head.linear.weight": ["policy.decoder.weight"],
    "head.linear.bias": ["policy.decoder.bias"],
    "value.weight": ["policy.value.weight"],
    "value.bias": ["policy.value.bias"],
}
_MLP_NAMES = {
    "encoder.input.weight": ["encoder.0.weight"],
    "encoder.input.bias": ["encoder.0.bias"],
    "head.linear.weight": ["decoder.weight"],
    "head.linear.bias": ["decoder.bias"],
    "value.weight": ["value.weight"],
    "value.bias": ["value.bias"],
}


def _our_trainer(env: str, flags: list[str], policy_kind: str, agents: int):
    """Our trainer at PufferLib's config (`flags`), one minibatch per epoch, on `agents` envs."""
    from puffer.train import PuffeRL, make_policy
    from puffer.train.config import load_config
    from puffer.train.run import make_vecenv

    horizon = int(flags[flags.index("--train.horizon") + 1])
    flags = [*flags, "--env.num-envs", str(agents), "--train.device", "cpu"]
    flags += ["--train.minibatch-size", str(agents * horizon), "--train.torch-threads", "1"]
    if policy_kind == "mlp":
        flags += ["--policy.recurrent", "none"]
    config = load_config(env, overrides=flags)
    vecenv = make_vecenv(env, config)
    policy = make_policy(config.policy, vecenv)
    return PuffeRL(config, vecenv, policy), config


def _pufferlib_flags(flags: list[str], agents: int, horizon: int) -> list[str]:
    """PufferLib's own flags for the same run: one env object of `agents` envs, serially, and
    one minibatch per epoch."""
    return [
        "--train.device", "cpu", "--vec.backend", "Serial", "--vec.num-envs", "1",
        "--env.num-envs", str(agents), "--train.minibatch-size", str(agents * horizon),
        "--train.max-minibatch-size", str(agents * horizon),
    ]  # fmt: skip


def trainer_case(
    python: Path, env: str, policy_kind: str, agents: int, seed: int, extra: list[str]
) -> list[tuple]:
    """One case of the trainer comparison, with `extra` overrides on our side; returns the
    report rows."""
    import torch

    flags = [*ours_from_pufferlib(pufferlib_config(python, env)), "--train.seed", str(seed)]
    ours, config = _our_trainer(env, [*flags, *extra], policy_kind, agents)
    cfg, sizes = config.train, ours.sizes
    ours.evaluate()
    buf = ours.buffer
    S, T = sizes.segments, sizes.horizon
    # Fresh data has ratio 1 and values at their rollout values, which leaves the ratio and
    # value clips idle; stored log-probabilities and values moved by noise engage both.
    noise = torch.Generator().manual_seed(seed)
    buf.logprobs[:S] += 0.3 * torch.randn(S, T, generator=noise)
    buf.values[:S] += cfg.vf_clip_coef * torch.randn(S, T, generator=noise)
    values, rewards = buf.values[:S].clone(), buf.rewards[:S].clone()
    terminals = buf.terminals[:S].clone()
    if policy_kind == "lstm":
        terminals.zero_()  # no episode ends inside segments (see the module docstring)
    # Neutralize the segment-end bootstrap: our TD error at t = T-1 becomes 0.
    last_done = terminals[:, -1] > 0
    rewards[last_done, -1] = values[last_done, -1]
    next_values = (values[:, -1] - rewards[:, -1]) / cfg.gamma
    next_values[last_done] = 0.0
    buf.values[:S], buf.rewards[:S], buf.terminals[:S] = values, rewards, terminals
    buf.truncations[:S] = 0
    buf.next_values[:S] = next_values
    for state in buf.states:
        state.zero_()  # PufferLib replays every segment from a zero state

    names = _LSTM_NAMES if policy_kind == "lstm" else _MLP_NAMES
    weights = {
        f"w/{theirs}": tensor.detach().numpy().copy()
        for ours_name, tensor in ours.policy.state_dict().items()
        for theirs in names[ours_name]
    }
    shift = np.zeros((S, T), np.float32)
    batch = {
        "b/observations": buf.observations[:S].numpy(),
        "b/actions": buf.actions[:S].numpy(),
        "b/logprobs": buf.logprobs[:S].numpy(),
        "b/values": values.numpy(),
    }
    # PufferLib's row t holds the reward and end that came back with o_t (ours: for a_t).
    for name, ours_array in (("rewards", rewards), ("terminals", terminals)):
        theirs = shift.copy()
        theirs[:, 1:] = ours_array[:, :-1].numpy()
        batch[f"b/{name}"] = theirs
    meta = {
        "env": env,
        "policy": policy_kind,
        "pufferlib_flags": _pufferlib_flags(flags, agents, T),
    }
    with tempfile.TemporaryDirectory() as scratch:
        inp, out = Path(scratch) / "in.npz", Path(scratch) / "out.npz"
        np.savez(inp, meta=json.dumps(meta), **weights, **batch)
        done = subprocess.run(
            [str(python), str(HERE), "_pufferlib-trainer", str(inp), str(out)],
            cwd=scratch,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not out.exists():
            raise SystemExit(f"PufferLib's half failed:\n{done.stderr[-3000:]}")
        theirs = dict(np.load(out))

    before = {k: v.detach().clone() for k, v in ours.policy.state_dict().items()}
    step = StepCapture(ours.optimizer, ours.policy)
    from puffer.train.advantage import puff_advantage

    advantages = puff_advantage(
        values, rewards, terminals, buf.truncations[:S], torch.ones_like(values), next_values,
        cfg.gamma, cfg.gae_lambda, cfg.vtrace_rho_clip, cfg.vtrace_c_clip,
    )  # fmt: skip
    losses = ours.train()
    their_grads = {name: theirs[f"g/{names[name][0]}"] for name in step.grads}
    updates = step.float64_update(ours.policy, before, their_grads)
    rows = [_row("advantages", advantages.numpy(), theirs["advantages"])]
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
        rows.append(_row(f"loss: {key}", losses[key], theirs[f"l/{key}"]))
    for name in before:
        theirs_name = names[name][0]
        rows.append(_row(f"grad: {name}", step.grads[name].numpy(), theirs[f"g/{theirs_name}"]))
        rows.append(_row(f"update: {name}", updates[name].numpy(), theirs[f"u/{theirs_name}"]))
    init = json.loads(str(theirs["init_std"]))
    fresh = _our_trainer(env, flags, policy_kind, agents)[0].policy.state_dict()
    for name, tensor in fresh.items():
        if tensor.numel() < 2:
            continue
        ours_std, theirs_std = float(tensor.float().std()), init[names[name][0]]
        differs = abs(ours_std - theirs_std) > 0.1 * max(theirs_std, 1e-8)
        rows.append((f"init std: {name}", ours_std, theirs_std, "intended" if differs else "match"))
    ours.vecenv.close()
    return rows


def _row(name: str, ours, theirs) -> tuple:
    """A report row: (name, largest difference, largest magnitude, verdict)."""
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    diff = float(np.abs(ours - theirs).max())
    scale = float(np.abs(theirs).max())
    verdict = "match" if diff <= MATCH * max(scale, 1e-6) else "DIFFERS"
    return (name, diff, scale, verdict)


def trainer_report(args: argparse.Namespace) -> None:
    python = pufferlib_python(args.pufferlib)
    print(_header())
    unintended = 0
    for policy_kind in ("lstm", "mlp"):
        print(f"\n{args.env}, {policy_kind}, {args.agents} agents, seed {args.seed}")
        print(f"  {'component':40s} {'max |diff|':>11s} {'max |value|':>11s}  verdict")
        for name, diff, scale, verdict in trainer_case(
            python, args.env, policy_kind, args.agents, args.seed, shlex.split(args.ours)
        ):
            if name.startswith("init std"):
                print(
                    f"  {name:40s} {'ours ' + format(diff, '.4f'):>11s} {'its ' + format(scale, '.4f'):>11s}  {verdict}"
                )
            else:
                print(f"  {name:40s} {diff:11.3e} {scale:11.3e}  {verdict}")
            unintended += verdict == "DIFFERS"
    print("\nevery difference found, fixed (now equal) or kept (and why):")
    for key, status, why in DIFFERENCES:
        print(f"  {key} [{status}]: {why}")
    print(f"\n{unintended} unintended difference(s)")
    sys.exit(1 if unintended else 0)


def ks_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and its asymptotic p-value (conservative for
    discrete samples such as episode lengths)."""
    if len(a) == 0 or len(b) == 0:
        return float("nan"), float("nan")
    grid = np.union1d(a, b)
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    d = float(np.abs(cdf_a - cdf_b).max())
    en = np.sqrt(len(a) * len(b) / (len(a) + len(b)))
    lam = (en + 0.12 + 0.11 / en) * d
    j = np.arange(1, 101)
    p = float(np.clip(2 * np.sum((-1.0) ** (j - 1) * np.exp(-2 * j**2 * lam**2)), 0, 1))
    return d, p if d > 0 else 1.0


def _first_difference(ours: np.ndarray, theirs: np.ndarray) -> int | None:
    """The first step (axis 0) where the arrays differ; None when they agree throughout."""
    if ours.shape[1:] != theirs.shape[1:]:
        return 0
    steps = min(len(ours), len(theirs))
    differs = ~np.isclose(ours[:steps], theirs[:steps], rtol=1e-5, atol=1e-6)
    bad = np.flatnonzero(differs.reshape(steps, -1).any(axis=1))
    return int(bad[0]) if len(bad) else None


def env_case(python: Path, env: str, args: argparse.Namespace) -> list[str]:
    """Both libraries' `env` through the same streams; returns the report lines."""
    from puffer.core import make
    from puffer.core.registry import env_creator
    from puffer.train.config import env_defaults

    ini = pufferlib_config(python, env)["env"]
    accepted = env_defaults(env_creator(env))
    # Our C configs take numbers where PufferLib's .ini writes True/False or a one-item list.
    kwargs = {
        k: int(v) if isinstance(v, bool) else v[0] if isinstance(v, list) and len(v) == 1 else v
        for k, v in ini.items()
        if k != "num_envs" and k in accepted
    }
    dropped = sorted(set(ini) - set(kwargs) - {"num_envs"})
    num_envs = max(1, min(int(ini.get("num_envs", 1)), args.num_envs))
    ours = make(env, num_envs=num_envs, **kwargs)
    space = _space_spec(ours.single_action_space)
    ours.close()
    streams = ["random"]
    if space["kind"] == "discrete":
        streams += [f"const:{k}" for k in range(min(2, min(space["nvec"])))]
    theirs_kwargs = {k: ini[k] for k in kwargs}
    spec = {"env": env, "num_envs": num_envs, "pufferlib_kwargs": theirs_kwargs,
            "streams": streams, "seed": args.seed, "episodes": args.episodes,
            "max_steps": args.max_steps}  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out.npz"
        done = subprocess.run(
            [str(python), str(HERE), "_pufferlib-env", json.dumps(spec), str(out)],
            cwd=scratch, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0 or not out.exists():
            return [f"{env}: PufferLib's env failed: {done.stderr.strip().splitlines()[-1:]}"]
        theirs = dict(np.load(out))
    lines = [f"{env} ({num_envs} envs, {len(ours.rewards)} agents; PufferLib "
             f"{int(theirs['num_agents'])}){'; its keys ours lacks: ' + ', '.join(dropped) if dropped else ''}"]  # fmt: skip
    if json.loads(str(theirs["space"])) != space:
        lines.append("  action spaces differ: ours {space}, PufferLib {theirs['space']}")
    for stream in streams:
        fresh = make(env, num_envs=num_envs, **kwargs)
        mine = roll(fresh, stream, args.seed, args.episodes, args.max_steps)
        fresh.close()
        t = {k.split("/", 1)[1]: v for k, v in theirs.items() if k.startswith(f"{stream}/")}
        first = [
            _first_difference(mine[f"first_{k}"], t[f"first_{k}"]) for k in ("obs", "rew", "done")
        ]
        where = [f for f in first if f is not None]
        same = "identical for all" if not where else f"first difference at step {min(where)} of"
        stats = []
        for key in ("returns", "lengths"):
            a, b = mine[key], t[key]
            _, p = ks_test(a, b)
            mean = lambda x: f"{x.mean():.3g}" if len(x) else "-"  # noqa: E731
            stats.append(f"{key[:-1]} {mean(a)} vs {mean(b)} (KS p={p:.2g})")
        # Reward per agent step over the steps both sides ran (one side may stop early).
        common = min(len(mine["step_rewards"]), len(t["step_rewards"]))
        per_step = [float(x["step_rewards"][:common].mean()) for x in (mine, t)]
        lines.append(
            f"  {stream:8s} {same} {IDENTITY_STEPS} steps; reward per agent step "
            f"{per_step[0]:.4g} vs {per_step[1]:.4g} ({common} steps); episodes "
            f"{len(mine['returns'])} vs {len(t['returns'])}; " + "; ".join(stats)
        )
    return lines


# The Ocean envs both libraries have, under the same name.
SHARED_ENVS = (
    "blastar", "boids", "breakout", "cartpole", "checkers", "connect4", "convert", "cpr",
    "drone", "enduro", "freeway", "go", "grid", "pacman", "pong", "rware", "school", "snake",
    "squared", "target", "terraform", "tetris", "tower_climb", "trash_pickup", "tripletriad",
)  # fmt: skip


def env_report(args: argparse.Namespace) -> None:
    python = pufferlib_python(args.pufferlib)
    print(_header())
    print(
        f"{args.episodes}+ episodes per stream (at most {args.max_steps} steps), seed {args.seed}"
    )
    for env in args.envs or SHARED_ENVS:
        try:
            lines = env_case(python, env, args)
        except Exception as error:  # one env's failure is a row of the report, not its end
            lines = [f"{env}: could not run ours: {type(error).__name__}: {error}"]
        for line in lines:
            print(line, flush=True)


def _header() -> str:
    from puffer.core.bench import header  # not at the top: PufferLib's interpreter loads this file

    return header("torch")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    trainer = sub.add_parser("trainer", help="one train() of each trainer on one batch")
    trainer.add_argument("--pufferlib", required=True, metavar="DIR", help="PufferLib 3.0 venv")
    trainer.add_argument("--env", default="breakout")
    trainer.add_argument(
        "--agents",
        type=int,
        default=256,
        help="envs of the batch; from 256 (x horizon 64) the kept advantage-std difference, "
        "1/n relative, is within the tolerance",
    )
    trainer.add_argument("--seed", type=int, default=0)
    trainer.add_argument(
        "--ours",
        default="",
        metavar="FLAGS",
        help="extra `puffer train` overrides for our side only, e.g. '--train.learning-rate X': "
        "a deliberate difference, to check that the report flags it",
    )
    envs = sub.add_parser("envs", help="the same action streams through both libraries' envs")
    envs.add_argument("envs", nargs="*", help=f"default: {' '.join(SHARED_ENVS)}")
    envs.add_argument("--pufferlib", required=True, metavar="DIR", help="PufferLib 3.0 venv")
    envs.add_argument("--episodes", type=int, default=1000)
    envs.add_argument("--max-steps", type=int, default=20000)
    envs.add_argument("--num-envs", type=int, default=64, help="at most this many env copies")
    envs.add_argument("--seed", type=int, default=0)
    env_half = sub.add_parser("_pufferlib-env")
    env_half.add_argument("spec")
    env_half.add_argument("out")
    half = sub.add_parser("_pufferlib-trainer")
    half.add_argument("inp")
    half.add_argument("out")
    args = parser.parse_args()
    if args.command == "_pufferlib-trainer":
        pufferlib_trainer(args.inp, args.out)
    elif args.command == "_pufferlib-env":
        pufferlib_env(args.spec, args.out)
    elif args.command == "trainer":
        trainer_report(args)
    elif args.command == "envs":
        env_report(args)


if __name__ == "__main__":
    main()
