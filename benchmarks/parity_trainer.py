"""Differential harness against PufferLib 3.0's trainer: one identical batch through both.

From identical weights and one identical epoch of experience, one `train()` of each
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

    uv run python benchmarks/parity_trainer.py --pufferlib /work/pl3
    uv run python benchmarks/parity_trainer.py --pufferlib /work/pl3 \
        --ours="--train.learning-rate 0.04493"   # a deliberate difference: must be flagged

`parity_envs.py` compares the two libraries' Ocean envs. The PufferLib half runs this file
under PufferLib's interpreter (`_pufferlib-trainer`), in a scratch folder (its import writes
./resources); the two exchange .npz files.
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
        if hasattr(self.optimizer, "flat"):
            # Ours steps flat buffers, which .double() left behind: a new one over the
            # float64 parameters, at the same settings, re-points them into its own buffers.
            params = [p for p in model.parameters() if p.requires_grad]
            self.optimizer = type(self.optimizer)(params, **self.optimizer.defaults)
            self.step = self.optimizer.step
        before = {k: v.clone() for k, v in model.state_dict().items()}
        for name, param in model.named_parameters():
            grad = torch.as_tensor(grads[name]).to(torch.float64)
            if param.grad is None:
                param.grad = grad
            else:
                param.grad.copy_(grad)  # a flat optimizer's gradient is a view: fill it
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
    from puffer.train import PuffeRL, apply_torch_settings, make_policy
    from puffer.train.config import load_config
    from puffer.train.run import make_vecenv

    horizon = int(flags[flags.index("--train.horizon") + 1])
    flags = [*flags, "--env.num-envs", str(agents), "--train.device", "cpu"]
    flags += ["--train.minibatch-size", str(agents * horizon), "--train.torch-threads", "1"]
    if policy_kind == "mlp":
        flags += ["--policy.recurrent", "none"]
    config = load_config(env, overrides=flags)
    apply_torch_settings(config)  # before the policy exists
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
    ours.collect()
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
        values, rewards, terminals, buf.truncations[:S], buf.final_values[:S],
        torch.ones_like(values), next_values,
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
    from puffer.cli.bench import header  # not at the top: PufferLib's interpreter loads this file

    python = pufferlib_python(args.pufferlib)
    print(header("torch"))
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


def main() -> None:
    # PufferLib's half, which `trainer_case` starts under its interpreter with two paths.
    if sys.argv[1:2] == ["_pufferlib-trainer"]:
        pufferlib_trainer(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pufferlib", required=True, metavar="DIR", help="PufferLib 3.0 venv")
    parser.add_argument("--env", default="breakout")
    parser.add_argument(
        "--agents",
        type=int,
        default=256,
        help="envs of the batch; from 256 (x horizon 64) the kept advantage-std difference, "
        "1/n relative, is within the tolerance",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--ours",
        default="",
        metavar="FLAGS",
        help="extra `puffer train` overrides for our side only, e.g. '--train.learning-rate X': "
        "a deliberate difference, to check that the report flags it",
    )
    trainer_report(parser.parse_args())


if __name__ == "__main__":
    main()
