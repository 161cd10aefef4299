"""Differential harness against PufferLib 4.0's torch path: its MinGRU, policy and Muon beside ours.

PufferLib 4.0 is not on PyPI: give a checkout of its release (`git clone
https://github.com/PufferAI/PufferLib && git checkout 8e3e754`) as `--pufferlib4 DIR`. Its
`pufferlib/models.py` and `pufferlib/muon.py` are plain torch and load from DIR by path; its
torch trainer (`pufferlib/torch_pufferl.py`) imports its compiled `_C` (vectorizer and
advantage kernel) at the top, which only its own build makes, so the trainer's loss and
sampling are compared by reading (`DIFFERENCES`), as its native trainer (`src/*.cu`) is.

Each component starts from identical weights, on inputs drawn afresh from `--seed`:
- core: 4.0's `MinGRU` (a log-space Heinsen scan) against our bias-free `MinGRUCore`
  (`puffer.kernels.mingru_scan`): a segment from a zero state, the gradients of a random
  projection of its output (the input's and every layer's), and the rollout step over the
  same segment (outputs and final state);
- policy: 4.0's torch `Policy(DefaultEncoder, MinGRU, DefaultDecoder)` with its biases zeroed
  and our PufferNet's decoder split into its two heads, on breakout observations our env
  produced: logits and values over the segments;
- optimizer: 4.0's `Muon` against our `FlatMuon` with momentum rule 'sum', on PufferNet's
  breakout parameters in float64, after torch's `clip_grad_norm_` on its side and ours on
  ours, for `--steps` steps of random gradients large enough for the clip to act;
- init: each weight's std, fresh, on both sides (4.0's torch path keeps torch's defaults;
  PufferNet follows its native `puf_kaiming_init`).

    uv run python benchmarks/parity_pufferlib4.py --pufferlib4 /path/to/PufferLib-4.0
    uv run python benchmarks/parity_pufferlib4.py --pufferlib4 DIR --momentum-rule average  # flagged

Exit status 1 when a component differs that is not an intended difference.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import torch

# A component "matches" when its largest difference is below this fraction of its largest
# magnitude: float32 scans and sums taken in another order differ by ~1e-6 relative.
MATCH = 1e-4
# Breakout at PufferLib 4.0's config/breakout.ini (8e3e754): hidden 64, 2 layers, Muon.
HIDDEN, LAYERS = 64, 2
LR, MOMENTUM, MAX_GRAD_NORM, THEIR_EPS = 0.1, 0.7279714073125252, 1.8109182724544075, 8.339e-5

# Every difference between 4.0's trainers and ours, read in its pufferlib/models.py,
# pufferlib/muon.py, pufferlib/torch_pufferl.py and src/models.cu, src/pufferlib.cu (the native
# trainer its figures come from): what each does, and what became of it here.
DIFFERENCES = (
    ("MinGRU layer", "same",
     "both: [h~, g, p] = W x without bias, h = lerp(h_prev, phi(h~), sigmoid(g)), highway "
     "sigmoid(p) h + (1 - sigmoid(p)) x; 4.0's torch path scans in log space (Heinsen), ours in "
     "one fused kernel (checked above)"),
    ("encoder and decoder", "kept (native)",
     "4.0's torch path: a biased Linear encoder, biased logits and value heads; its native "
     "models.cu (and ours): a bias-free encoder and one bias-free (actions + 1, H) decoder, "
     "which Muon orthogonalizes as one matrix"),
    ("init", "kept (native)",
     "4.0's torch path keeps torch's Linear default (uniform +-1/sqrt(fan_in)); its native "
     "puf_kaiming_init and ours: gain sqrt(2) on the encoder, 1 on the layers and decoder"),
    ("Muon", "same",
     "both: m <- beta m + g, u = g + beta m, five Newton-Schulz steps of heavyball's schedule "
     "on matrices (as (rows, rest)) divided by their Frobenius norm, scaled by "
     "sqrt(max(1, rows/cols)), vectors as momentum SGD, one global gradient clip before it "
     "(checked above on PufferNet's matrices; it has no vectors)"),
    ("Muon eps", "kept",
     "4.0's torch trainer passes the config's eps (breakout 8.3e-5) as the floor of a "
     "matrix's norm; ours floors it at 1e-7: a difference only for updates of norm below "
     "8.3e-5"),
    ("recurrent state", "option",
     "4.0 zeroes the state at every rollout (reset_state) and replays each segment from zero: "
     "ours with train.recurrent_state = 'zero', as breakout.toml sets it; 4.0 never cuts the "
     "state at an episode start inside a segment, ours does (as 5.0 does)"),
    ("segment end", "kept",
     "4.0's advantage kernel leaves a segment's last step at advantage 0; ours bootstraps it "
     "from V(next observation)"),
    ("minibatch draw", "kept",
     "4.0 draws segments with replacement (torch.multinomial); ours without, so a minibatch "
     "never trains a segment twice"),
    ("beta annealing", "kept",
     "4.0: beta = beta0 + (1 - beta0) alpha epoch / epochs (below 1 at the end: breakout's "
     "alpha 0.1 ends at 0.84); ours anneals beta to 1"),
    ("advantage std", "kept",
     "4.0 normalizes by the unbiased std (n - 1), ours by the biased one (1/n relative)"),
    ("loss", "same (read)",
     "both: clipped policy loss on importance-weighted normalized advantages, 0.5 max(clipped, "
     "unclipped) squared value error, entropy bonus, ratios kept for V-trace, values refreshed "
     "per minibatch, rewards clipped to [-1, 1], cosine learning rate to 0"),
)  # fmt: skip


def load_pufferlib4(folder: Path) -> tuple[ModuleType, ModuleType]:
    """4.0's `pufferlib/models.py` and `pufferlib/muon.py` from a checkout, by path (its
    package's `__init__` would import the compiled `_C`)."""
    modules = []
    for name in ("models", "muon"):
        path = folder / "pufferlib" / f"{name}.py"
        if not path.is_file():
            raise SystemExit(
                f"--pufferlib4 {folder}: no pufferlib/{name}.py there; give a checkout of "
                "PufferLib 4.0 (git clone https://github.com/PufferAI/PufferLib, git checkout "
                "8e3e754)"
            )
        spec = importlib.util.spec_from_file_location(f"pufferlib4_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    return modules[0], modules[1]


def row(name: str, ours: torch.Tensor, theirs: torch.Tensor) -> tuple[str, float, float, str]:
    """A report row: (name, largest difference, largest magnitude, verdict)."""
    ours_, theirs_ = (np.asarray(t.detach().double().cpu()) for t in (ours, theirs))
    if ours_.shape != theirs_.shape:
        return (name, float("inf"), float(np.abs(theirs_).max()), f"DIFFERS: shape {ours_.shape}")
    diff = float(np.abs(ours_ - theirs_).max())
    scale = float(np.abs(theirs_).max())
    return (name, diff, scale, "match" if diff <= MATCH * max(scale, 1e-6) else "DIFFERS")


def core_rows(models: ModuleType, generator: torch.Generator) -> list[tuple]:
    """4.0's MinGRU against our MinGRUCore over B segments of T steps."""
    from puffer.train.policies.recurrent import MinGRUCore

    batch, steps = 16, 64
    theirs = models.MinGRU(HIDDEN, num_layers=LAYERS)
    ours = MinGRUCore(HIDDEN, LAYERS, bias=False)
    with torch.no_grad():
        for mine, its in zip(ours.layers, theirs.layers, strict=True):
            mine.weight.copy_(its.weight)
    x = torch.randn(batch, steps, HIDDEN, generator=generator)
    projection = torch.randn(batch, steps, HIDDEN, generator=generator)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    y_theirs = theirs.forward_train(x_theirs)
    state = ours.initial_state(batch, x.device)
    y_ours = ours.sequence(x_ours, state, torch.zeros(batch, steps, dtype=torch.bool))
    (y_theirs * projection).sum().backward()
    (y_ours * projection).sum().backward()
    rows = [row("core: segment output", y_ours, y_theirs)]
    rows.append(row("core: input gradient", x_ours.grad, x_theirs.grad))
    for i, (mine, its) in enumerate(zip(ours.layers, theirs.layers, strict=True)):
        rows.append(row(f"core: layer {i} weight gradient", mine.weight.grad, its.weight.grad))
    with torch.no_grad():
        their_state, our_state = theirs.initial_state(batch, x.device), state
        outs_theirs, outs_ours = [], []
        for t in range(steps):
            out, their_state = theirs.forward_eval(x[:, t], their_state)
            outs_theirs.append(out)
            out, our_state = ours.step(x[:, t], our_state)
            outs_ours.append(out)
    rows.append(row("core: rollout steps", torch.stack(outs_ours, 1), torch.stack(outs_theirs, 1)))
    # 4.0 keeps (layers, N, H), ours (N, layers, H)
    rows.append(row("core: state after the segment", our_state[0], their_state[0].transpose(0, 1)))
    return rows


def _our_puffernet():
    """Our breakout config's PufferNet, the env it is made for and its observation rows."""
    from puffer.core import env_creator
    from puffer.train import make_policy
    from puffer.train.config import load_config

    config = load_config("breakout", overrides=["--env.num-envs", "16", "--train.device", "cpu"])
    env = env_creator("breakout")(**config.env_kwargs())
    return make_policy(config.policy, env), env


def policy_rows(models: ModuleType, generator: torch.Generator) -> list[tuple]:
    """4.0's torch Policy, its biases zeroed, against our PufferNet on breakout observations."""
    policy, env = _our_puffernet()
    steps, actions = 64, env.single_action_space.n
    obs = []
    env.reset(seed=0)
    for _ in range(steps):
        obs.append(torch.as_tensor(env.observations).clone())
        pick = torch.randint(actions, (env.num_agents,), generator=generator)
        env.step(pick.numpy().astype(env.actions.dtype))
    env.close()
    segments = torch.stack(obs, 1).float()  # (agents, T, 118)
    obs_size = segments.shape[-1]
    theirs = models.Policy(
        models.DefaultEncoder(obs_size, HIDDEN),
        models.DefaultDecoder([actions], HIDDEN),
        models.MinGRU(HIDDEN, num_layers=LAYERS),
    )
    ours = dict(policy.named_parameters())
    (encoder,) = (p for name, p in ours.items() if name.startswith("encoder."))
    with torch.no_grad():
        theirs.encoder.encoder.weight.copy_(encoder)
        for i, layer in enumerate(theirs.network.layers):
            layer.weight.copy_(ours[f"core.layers.{i}.weight"])
        theirs.decoder.decoder.weight.copy_(ours["decoder.weight"][:actions])
        theirs.decoder.value_function.weight.copy_(ours["decoder.weight"][actions:])
        for bias in (theirs.encoder.encoder, theirs.decoder.decoder, theirs.decoder.value_function):
            bias.bias.zero_()
        logits, values = theirs(segments)
        state = policy.initial_state(segments.shape[0])
        starts = torch.zeros(segments.shape[:2], dtype=torch.bool)
        params, value = policy.forward_train(segments, state, starts)
    return [
        row("policy: logits", params.reshape(-1, actions), logits),
        row("policy: values", value, values),
    ]


def optimizer_rows(
    muon: ModuleType, generator: torch.Generator, steps: int, rule: str = "sum"
) -> list[tuple]:
    """4.0's Muon against FlatMuon (momentum rule `rule`) on PufferNet's parameters, float64,
    clipped."""
    from puffer.train.optim import FlatMuon

    policy, env = _our_puffernet()
    env.close()
    policy.double()
    start = {name: p.detach().clone() for name, p in policy.named_parameters()}
    theirs = {name: p.clone().requires_grad_() for name, p in start.items()}
    ours = FlatMuon(list(policy.parameters()), lr=LR, momentum=MOMENTUM, momentum_rule=rule)
    their_muon = muon.Muon(list(theirs.values()), lr=LR, momentum=MOMENTUM, eps=THEIR_EPS)
    rows = []
    for step in range(steps):
        for name, param in policy.named_parameters():
            grad = 3.0 * torch.randn(param.shape, generator=generator, dtype=torch.float64)
            param.grad.copy_(grad)
            theirs[name].grad = grad.clone()
        ours.clip_grad_norm_(MAX_GRAD_NORM)
        torch.nn.utils.clip_grad_norm_(list(theirs.values()), MAX_GRAD_NORM)
        ours.step()
        their_muon.step()
        for name, param in policy.named_parameters():
            rows.append(row(f"Muon step {step + 1}: {name}", param - start[name],
                            theirs[name].detach() - start[name]))  # fmt: skip
    return rows


def init_rows(models: ModuleType) -> list[tuple]:
    """Each fresh weight's std on both sides: (name, ours, theirs, 'intended' or 'match')."""
    policy, env = _our_puffernet()
    obs_size, actions = env.single_observation_space.shape[0], env.single_action_space.n
    env.close()
    theirs = {
        "encoder": models.DefaultEncoder(obs_size, HIDDEN).encoder.weight,
        **{f"core.layers.{i}.weight": layer.weight
           for i, layer in enumerate(models.MinGRU(HIDDEN, num_layers=LAYERS).layers)},
        "decoder.weight": models.DefaultDecoder([actions], HIDDEN).decoder.weight,
    }  # fmt: skip
    rows = []
    for name, param in policy.named_parameters():
        key = "encoder" if name.startswith("encoder.") else name
        ours_std, theirs_std = float(param.detach().std()), float(theirs[key].detach().std())
        close = abs(ours_std - theirs_std) <= 0.1 * theirs_std
        rows.append((f"init std: {name}", ours_std, theirs_std, "match" if close else "intended"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pufferlib4", required=True, metavar="DIR", type=Path,
                        help="a checkout of PufferLib 4.0 (its pufferlib/models.py, muon.py)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps compared")
    parser.add_argument(
        "--momentum-rule", default="sum", choices=("sum", "average"),
        help="our Muon's rule; 'average' (3.0's) is a deliberate difference the report must flag",
    )  # fmt: skip
    args = parser.parse_args()
    from puffer.cli.bench import header

    models, muon = load_pufferlib4(args.pufferlib4)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    print(header("torch"))
    print(f"\nPufferLib 4.0 from {args.pufferlib4}, seed {args.seed}")
    print(f"  {'component':48s} {'max |diff|':>11s} {'max |value|':>11s}  verdict")
    rows = core_rows(models, generator) + policy_rows(models, generator)
    rows += optimizer_rows(muon, generator, args.steps, args.momentum_rule)
    for name, diff, scale, verdict in rows:
        print(f"  {name:48s} {diff:11.3e} {scale:11.3e}  {verdict}")
    for name, ours_std, theirs_std, verdict in init_rows(models):
        print(f"  {name:48s} {'ours ' + format(ours_std, '.4f'):>11s} "
              f"{'its ' + format(theirs_std, '.4f'):>11s}  {verdict}")  # fmt: skip
    print("\nevery difference found, the same, kept (and why) or an option:")
    for key, status, why in DIFFERENCES:
        print(f"  {key} [{status}]: {why}")
    unintended = sum(verdict.startswith("DIFFERS") for *_, verdict in rows)
    print(f"\n{unintended} unintended difference(s)")
    sys.exit(1 if unintended else 0)


if __name__ == "__main__":
    main()
