"""Optimizers: Muon on every parameter, as PufferLib 3.0 runs it, or Adam.

`train.optimizer = "muon"` is the update PufferLib 3.0's tuned configs were found with
(heavyball 2.2.1's `ForeachMuon`, which its trainer builds over all parameters): a Nesterov
average of the gradient, orthogonalized for matrices, taken at the learning rate as it is.
Until the learning-parity work our Muon followed `torch.optim.Muon` for hidden matrices and
AdamW for the rest, with steps rescaled to AdamW's size (`match_rms_adamw`); at PufferLib's
breakout config that trainer collapsed after 14M steps where PufferLib's went on to 450
(docs/results/train.md, "Parity with PufferLib 3.0").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from puffer.core import APIUsageError
from puffer.train.config import TrainConfig
from puffer.train.config.sections import MUON_MOMENTUM_RULES
from puffer.train.flat import FlatParameters

__all__ = [
    "NS_SCHEDULE",
    "FlatAdam",
    "FlatMuon",
    "FlatOptimizer",
    "NewtonSchulz",
    "PufferMuon",
    "make_optimizer",
    "newton_schulz",
]

# heavyball's Newton-Schulz iteration: five steps of X <- a X + (b A + c A^2) X with A = X X^T,
# each step its own quintic (a, b, c), which drive the singular values towards 1 faster than
# one fixed quintic.
NS_SCHEDULE = (
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
)

# Matrices up to this many elements share one zero-padded batch: at these sizes a product's
# per-call cost outweighs its arithmetic. Larger ones batch only with matrices of their own shape,
# where padding would add arithmetic.
_SMALL = 1 << 16


class NewtonSchulz:
    """`newton_schulz` for a fixed list of matrix shapes, its batches allocated once.

    Each matrix is oriented wide (transposed when it has more rows than columns) and divided by
    its Frobenius norm (at least `eps`), then iterated by `schedule`. Zero rows and columns
    stay zero through the iteration (X X^T gains zero rows and columns, so the product keeps
    them zero), so small matrices of different shapes share one zero-padded (k, rows, cols)
    batch, and larger ones of one shape another: each step's products run once per batch
    instead of once per matrix. Every product writes into the batch's own buffers, so a call
    allocates no tensor memory (the flat optimizers' steps rely on it).

    Args:
        shapes: the (rows, cols) of the matrices each call takes, in order.
        dtype: what the iteration computes in: float32, or float64 (to tell an
            implementation's difference from float32 rounding, which the iteration magnifies
            in a matrix's near-null directions).
        device: where the buffers live.
        eps: floor of the Frobenius norm.
        schedule: the (a, b, c) of each step.
    """

    def __init__(
        self,
        shapes: Sequence[tuple[int, int]],
        dtype: torch.dtype,
        device: torch.device,
        eps: float = 1e-7,
        schedule: tuple[tuple[float, float, float], ...] = NS_SCHEDULE,
    ):
        self.shapes = [tuple(s) for s in shapes]
        self.tall = [rows > cols for rows, cols in self.shapes]
        wide = [
            (c, r) if tall else (r, c) for (r, c), tall in zip(self.shapes, self.tall, strict=True)
        ]
        self.eps, self.schedule = eps, schedule
        self.batches = []
        for batch in _padding_batches(wide):
            rows = max(wide[i][0] for i in batch)
            cols = max(wide[i][1] for i in batch)

            buffers = [
                torch.zeros((len(batch), *shape), dtype=dtype, device=device)
                for shape in ((rows, cols), (rows, cols), (rows, rows), (rows, rows), (1, 1))
            ]
            # x, its spare (the iteration alternates them), X X^T, b A + c A^2, the norms
            self.batches.append((batch, *buffers))
        self.outputs: list[Tensor | None] = [None] * len(self.shapes)

    def __call__(self, matrices: Sequence[Tensor]) -> list[Tensor]:
        """Orthogonalize `matrices` (U S V^T -> about U V^T), shaped as `shapes` (or, for a
        conv kernel of any layout, (shape[0], rest) as one).

        Returns:
            one (rows, cols) matrix per input, views of this object's buffers: valid until the
            next call.
        """
        shapes = [_as_matrix(m.shape) for m in matrices]
        if shapes != self.shapes:
            raise APIUsageError(
                f"NewtonSchulz: matrices of shapes {shapes}, built for {self.shapes}; build one "
                "for these shapes"
            )
        for batch, x, spare, gram, poly, norms in self.batches:
            x.zero_()
            for k, i in enumerate(batch):
                rows, cols = self.shapes[i]
                # The transpose is on the destination side: a copy from a transposed source
                # goes through a scratch block that copy_ allocates.
                dest = x[k, :cols, :rows].T if self.tall[i] else x[k, :rows, :cols]
                dest.view(matrices[i].shape).copy_(matrices[i])
            torch.linalg.vector_norm(x, dim=(1, 2), keepdim=True, out=norms)
            x.div_(norms.clamp_(min=self.eps))
            for a, b, c in self.schedule:
                torch.bmm(x, x.transpose(1, 2), out=gram)
                torch.baddbmm(gram, gram, gram, beta=b, alpha=c, out=poly)
                torch.baddbmm(x, poly, x, beta=a, out=spare)
                x, spare = spare, x
            for k, i in enumerate(batch):
                rows, cols = self.shapes[i]
                if self.tall[i]:
                    self.outputs[i] = x[k, :cols, :rows].T
                else:
                    self.outputs[i] = x[k, :rows, :cols]
        return self.outputs  # type: ignore[return-value]


def _as_matrix(shape: Sequence[int]) -> tuple[int, int]:
    """(rows, cols) of a tensor of `shape` viewed as a matrix: (shape[0], the rest)."""
    return shape[0], math.prod(shape[1:])


def newton_schulz(
    matrices: list[Tensor],
    schedule: tuple[tuple[float, float, float], ...] = NS_SCHEDULE,
    eps: float = 1e-7,
) -> list[Tensor]:
    """Orthogonalize 2-D matrices (U S V^T -> about U V^T), batched, as `NewtonSchulz` does,
    in float32, or in float64 when every matrix is float64.

    Returns:
        one matrix per input, of the input's shape, float32 (float64 for float64 input).
    """
    dtype = torch.float32
    if all(m.dtype == torch.float64 for m in matrices):
        dtype = torch.float64
    shapes = [_as_matrix(m.shape) for m in matrices]
    return NewtonSchulz(shapes, dtype, matrices[0].device, eps, schedule)(matrices)


def _padding_batches(wide: list[tuple[int, int]]) -> list[list[int]]:
    """Indices of the (rows, cols) shapes `wide` in batches: every matrix of at most `_SMALL`
    elements in one, each larger shape in its own."""
    batches: dict[object, list[int]] = {}
    for i, (rows, cols) in enumerate(wide):
        key = "small" if rows * cols <= _SMALL else (rows, cols)
        batches.setdefault(key, []).append(i)
    return list(batches.values())


@dataclass
class _MuonTensors:
    """What one Muon step reads and writes: per parameter (`PufferMuon`) or one flat buffer
    each (`FlatMuon`).

    Attributes:
        params, grads, momenta, updates: matching lists (the update u is written into
            `updates`).
        matrices: the updates of the matrix parameters, the Newton-Schulz inputs (a conv
            kernel taken as (out_channels, rest)); each matrix's orthogonalized step is
            written back into it.
        scales: each matrix's sqrt(max(1, rows / cols)), 0-d tensors of the updates' dtype.
        orthogonalize: the Newton-Schulz iteration for `matrices`' shapes.
        factor: a 0-d scratch of the updates' dtype for the step's multipliers (beta, the
            weight decay's 1 - lr * decay).

    Multipliers are tensors because a Python number multiplying a tensor becomes a tensor of
    its own for each call (an allocation, on the CPU); a float32 tensor holds the number
    rounded as that conversion rounds it, so the products are the same.
    """

    params: list[Tensor]
    grads: list[Tensor]
    momenta: list[Tensor]
    updates: list[Tensor]
    matrices: list[Tensor]
    scales: list[Tensor]
    orthogonalize: NewtonSchulz | None
    factor: Tensor


def _matrix_views(params: Sequence[Tensor], updates: Sequence[Tensor]) -> tuple[list, list]:
    """The updates of the matrix parameters and their scales sqrt(max(1, rows / cols))."""
    matrices, scales = [], []
    for param, update in zip(params, updates, strict=True):
        if param.ndim >= 2:
            rows, cols = _as_matrix(update.shape)
            matrices.append(update)
            scale = math.sqrt(max(1.0, rows / cols))
            scales.append(torch.tensor(scale, dtype=update.dtype, device=update.device))
    return matrices, scales


def _muon_step(t: _MuonTensors, group: dict) -> None:
    """PufferMuon's rule (its docstring) over `t`, in `torch._foreach_*` form: a few kernels
    per list, one each for a flat buffer.

    u = g + m is computed as u <- m, then u += g, and g + beta m as u <- m, u *= beta, u += g:
    float addition commutes, so these round exactly as g + m and g + beta * m do.

    `group["lr"]` may be a 0-d tensor on the parameters' device (a captured update graph,
    `puffer.train.update_graph`, reads its learning rate from one): then p <- p + u * (-lr),
    where a number gives p <- p - lr * u in one pass.
    """
    beta = group["momentum"]
    if group["momentum_rule"] == "sum":
        t.factor.fill_(beta)
        torch._foreach_mul_(t.momenta, t.factor)
        torch._foreach_add_(t.momenta, t.grads)
        torch._foreach_copy_(t.updates, t.momenta)
        torch._foreach_mul_(t.updates, t.factor)
    else:
        torch._foreach_lerp_(t.momenta, t.grads, 1 - beta)
        torch._foreach_copy_(t.updates, t.momenta)
    torch._foreach_add_(t.updates, t.grads)
    if t.orthogonalize is not None:
        ortho = t.orthogonalize(t.matrices)
        for target, u, scale in zip(t.matrices, ortho, t.scales, strict=True):
            torch.mul(u.view(target.shape), scale, out=target)
    lr = group["lr"]
    if isinstance(lr, Tensor):
        if group["weight_decay"]:
            torch.mul(lr, -group["weight_decay"], out=t.factor).add_(1.0)
            torch._foreach_mul_(t.params, t.factor)
        torch.neg(lr, out=t.factor)
        torch._foreach_mul_(t.updates, t.factor)
        torch._foreach_add_(t.params, t.updates)
        return
    if group["weight_decay"]:
        t.factor.fill_(1 - lr * group["weight_decay"])
        torch._foreach_mul_(t.params, t.factor)
    torch._foreach_add_(t.params, t.updates, alpha=-lr)


class PufferMuon(torch.optim.Optimizer):
    """Muon on every parameter, the update of PufferLib 3.0's trainer (heavyball's ForeachMuon).

    For each parameter p with gradient g, momentum m (zero at first) and learning rate lr::

        m <- beta * m + (1 - beta) * g        (an average of gradients)
        u  = g + m                            (Nesterov: the gradient ahead of the average)

    or, with `momentum_rule="sum"` (PufferLib 4.0's Muon)::

        m <- beta * m + g                     (a sum of gradients)
        u  = g + beta * m

    and then, either way::

        u <- newton_schulz(u) * sqrt(max(1, rows / cols))   for matrices (a conv kernel is
                                              viewed as (out_channels, rest)); vectors keep u
        p <- p * (1 - lr * weight_decay) - lr * u

    A matrix's step thus has unit spectral scale whatever its gradient's size, and a vector's
    (biases, log-std) is its averaged gradient times lr, as plain momentum SGD.

    This class steps any parameters, one tensor at a time, skipping those without a gradient,
    whatever becomes of them between steps (the parity harness converts its model to float64
    under it); the trainer's `FlatMuon` is the same rule over flat buffers.

    Args:
        params: parameters or parameter groups.
        lr: learning rate, applied as it is.
        momentum: beta, the average's weight on the past.
        weight_decay: decoupled weight decay (0 in PufferLib's trainer).
        eps: floor of the Frobenius norm a matrix is divided by before the iteration.
        momentum_rule: "average" (3.0's) or "sum" (4.0's), as above.
    """

    def __init__(
        self,
        params,
        lr: float,
        momentum: float = 0.95,
        weight_decay: float = 0.0,
        eps: float = 1e-7,
        momentum_rule: str = "average",
    ):
        if momentum_rule not in MUON_MOMENTUM_RULES:
            raise APIUsageError(
                f"PufferMuon: momentum_rule is {momentum_rule!r}; use one of {MUON_MOMENTUM_RULES}"
            )
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "weight_decay": weight_decay,
            "eps": eps,
            "momentum_rule": momentum_rule,
        }
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            self._check_group(group)
            if any(p.grad is not None for p in group["params"]):
                _muon_step(self._tensors(group), group)
        return loss

    def _check_group(self, group: dict) -> None:
        for param in group["params"]:
            if param.grad is not None and (param.grad.is_sparse or torch.is_complex(param)):
                raise APIUsageError(f"{type(self).__name__} takes dense real gradients")

    def _tensors(self, group: dict) -> _MuonTensors:
        """The group's parameters that have gradients (at least one), their momenta (created
        at zero) and fresh update tensors."""
        params = [p for p in group["params"] if p.grad is not None]
        for param in params:
            if "momentum_buffer" not in self.state[param]:
                self.state[param]["momentum_buffer"] = torch.zeros_like(param)
        updates = [torch.empty_like(p.grad) for p in params]
        matrices, scales = _matrix_views(params, updates)
        orthogonalize = None
        if matrices:
            dtype = torch.float32
            if all(m.dtype == torch.float64 for m in matrices):
                dtype = torch.float64
            shapes = [_as_matrix(m.shape) for m in matrices]
            orthogonalize = NewtonSchulz(shapes, dtype, params[0].device, group["eps"])
        momenta = [self.state[p]["momentum_buffer"] for p in params]
        grads = [p.grad for p in params]
        factor = torch.zeros((), dtype=params[0].dtype, device=params[0].device)
        return _MuonTensors(
            params, grads, momenta, updates, matrices, scales, orthogonalize, factor
        )


def _closure_loss(closure) -> Tensor | None:
    """The loss `closure` (torch's optimizer protocol) recomputes with gradients, or None."""
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()


def _take(view: Tensor, state: dict, key: str) -> Tensor:
    """`view` holding `state[key]` (a loaded value), or zeros where there is none; returns it."""
    loaded = state.get(key)
    if loaded is None:
        view.zero_()
    elif loaded is not view:
        view.copy_(loaded)
    return view


class _Flat:
    """What `FlatMuon` and `FlatAdam` add to their optimizer: one parameter group held in
    `FlatParameters`, its state in flat buffers of the same layout (each parameter's state
    entries are views of them, so `state_dict()` keeps the per-tensor optimizer's format and
    loads its checkpoints), gradients zeroed and clipped over the whole buffer.

    After the first step nothing in `zero_grad`, `clip_grad_norm_` or `step` allocates tensor
    memory: every buffer, workspace included, is allocated by then.
    """

    flat: FlatParameters
    state: dict
    param_groups: list[dict]

    def _flatten(self) -> None:
        """Take the (single) parameter group into flat buffers; call after the optimizer's
        own __init__."""
        if len(self.param_groups) != 1:
            raise APIUsageError(
                f"{type(self).__name__}: {len(self.param_groups)} parameter groups; it steps one "
                "flat buffer: pass the parameters as one list"
            )
        self.flat = FlatParameters(self.param_groups[0]["params"])
        # 0-d buffers of the clip (`clip_grad_norm_`): tensors, not Python numbers, so that
        # nothing is converted (allocated) per call.
        self._norm, self._coef = self.flat.data.new_zeros(()), self.flat.data.new_zeros(())
        self._clip_eps, self._max_norm = (
            self.flat.data.new_full((), 1e-6),
            self.flat.data.new_zeros(()),
        )

    def _bind_state(self) -> None:
        """Point every parameter's state at its views of the flat state buffers, keeping
        values already there (a loaded checkpoint's)."""
        raise NotImplementedError

    def _flat_step(self) -> None:
        """The update over the flat buffers."""
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure=None):
        """One update of every parameter (after checking they still live in the buffers)."""
        loss = _closure_loss(closure)
        self.flat.check_bound(type(self).__name__)
        self._flat_step()
        return loss

    def zero_grad(self, set_to_none: bool = False) -> None:
        """Zero the flat gradient buffer in place (one fill)."""
        if set_to_none:
            raise APIUsageError(
                f"{type(self).__name__}.zero_grad(set_to_none=True): the gradients are views of "
                "one flat buffer and must stay so; call zero_grad() to zero it"
            )
        self.flat.grad.zero_()

    def clip_grad_norm_(self, max_norm: float) -> Tensor:
        """`torch.nn.utils.clip_grad_norm_`'s rule over the flat gradient: g *= min(1,
        max_norm / (|g| + 1e-6)), |g| one reduction over the buffer (torch's takes each
        tensor's norm, then their norm: the same value up to float rounding).

        Returns:
            the 0-d norm before clipping, this optimizer's buffer (overwritten by the next call).
        """
        torch.linalg.vector_norm(self.flat.grad, out=self._norm)
        # As torch's max_norm / (norm + 1e-6), which it computes as (norm + 1e-6)^-1 * max_norm.
        torch.add(self._norm, self._clip_eps, out=self._coef)
        self._coef.reciprocal_().mul_(self._max_norm.fill_(max_norm)).clamp_(max=1.0)
        self.flat.grad.mul_(self._coef)
        return self._norm

    def load_state_dict(self, state_dict: dict) -> None:
        """The optimizer's own load, then its state copied into the flat buffers."""
        super().load_state_dict(state_dict)  # type: ignore[misc]
        self._bind_state()


class FlatMuon(_Flat, PufferMuon):
    """`PufferMuon` over `FlatParameters`: one lerp (or multiply-add), one copy and one add
    over the whole momentum and update buffers, Newton-Schulz into its own batches, one add
    into the parameter buffer.

    Every parameter of the group is stepped, each step: its gradient is its view of the flat
    gradient buffer (zero where backward reached nothing). `PufferMuon`'s arguments; the
    parameters must be one dtype on one device (`FlatParameters`).
    """

    def __init__(self, params, **kwargs):
        super().__init__(params, **kwargs)
        self._flatten()
        group = self.param_groups[0]
        self._check_group(group)
        self.momentum = self.flat.new_zeros()
        update = self.flat.new_zeros()
        updates = self.flat.views(update)
        matrices, scales = _matrix_views(self.flat.params, updates)
        orthogonalize = None
        if matrices:
            dtype = torch.float64 if update.dtype == torch.float64 else torch.float32
            shapes = [_as_matrix(m.shape) for m in matrices]
            orthogonalize = NewtonSchulz(shapes, dtype, update.device, group["eps"])
        self._muon = _MuonTensors(
            [self.flat.data],
            [self.flat.grad],
            [self.momentum],
            [update],
            matrices,
            scales,
            orthogonalize,
            update.new_zeros(()),
        )
        self._bind_state()

    def _bind_state(self) -> None:
        for param, view in zip(self.flat.params, self.flat.views(self.momentum), strict=True):
            self.state[param]["momentum_buffer"] = _take(view, self.state[param], "momentum_buffer")

    def _flat_step(self) -> None:
        _muon_step(self._muon, self.param_groups[0])


class FlatAdam(_Flat, torch.optim.Adam):
    """torch's fused Adam over `FlatParameters`: one fused kernel call over the whole
    parameter, gradient and moment buffers.

    Every parameter of the group is stepped, each step, on one shared step count. The step is
    torch's `fused=True` path (`torch.optim.adam._fused_adam`) with the count's increment by a
    tensor, not the number 1 (an allocation per step on the CPU): the same values, bit for
    bit. torch.optim.Adam's arguments, fused only, without amsgrad, maximize or
    differentiable; the parameters must be one dtype on one device.
    """

    def __init__(self, params, **kwargs):
        refused = [key for key in ("amsgrad", "maximize", "differentiable") if kwargs.get(key)]
        if refused or not kwargs.get("fused"):
            raise APIUsageError(
                f"FlatAdam: takes fused=True without amsgrad, maximize or differentiable (got "
                f"{kwargs}); use torch.optim.Adam for the others"
            )
        super().__init__(params, **kwargs)
        self._flatten()
        self.exp_avg, self.exp_avg_sq = self.flat.new_zeros(), self.flat.new_zeros()
        # One count for all, on the parameters' device (as fused Adam keeps it), and its
        # increment.
        self.step_count = self.flat.data.new_zeros((), dtype=torch.float32)
        self._one = self.flat.data.new_ones((), dtype=torch.float32)
        self._bind_state()

    def _bind_state(self) -> None:
        steps = set()
        moments = zip(self.flat.views(self.exp_avg), self.flat.views(self.exp_avg_sq), strict=True)
        for param, (exp_avg, exp_avg_sq) in zip(self.flat.params, moments, strict=True):
            state = self.state[param]
            _take(exp_avg, state, "exp_avg")
            _take(exp_avg_sq, state, "exp_avg_sq")
            steps.add(float(state["step"]) if "step" in state else 0.0)
            self.state[param] = {
                "step": self.step_count,
                "exp_avg": exp_avg,
                "exp_avg_sq": exp_avg_sq,
            }
        if len(steps) != 1:
            raise APIUsageError(
                f"FlatAdam: the parameters' step counts differ ({sorted(steps)}); a flat Adam "
                "steps every parameter together: load a state where all took the same steps"
            )
        self.step_count.fill_(steps.pop())

    def _flat_step(self) -> None:
        group = self.param_groups[0]
        beta1, beta2 = group["betas"]
        self.step_count.add_(self._one)
        fused = torch._fused_adamw_ if group["decoupled_weight_decay"] else torch._fused_adam_
        fused(
            [self.flat.data],
            [self.flat.grad],
            [self.exp_avg],
            [self.exp_avg_sq],
            [],
            [self.step_count],
            amsgrad=False,
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=False,
            grad_scale=None,
            found_inf=None,
        )


FlatOptimizer = FlatMuon | FlatAdam


def make_optimizer(model: nn.Module, config: TrainConfig) -> FlatOptimizer:
    """The optimizer `config.optimizer` names, at `config.learning_rate`, over `model`'s
    trainable parameters re-pointed into flat buffers (`FlatParameters`).

    'muon' is `FlatMuon` with momentum `config.muon_momentum`; 'adam' is `FlatAdam`, torch's
    fused Adam with `adam_beta1`, `adam_beta2` and `adam_eps`. Both decay weights by
    `config.weight_decay`, decoupled from the gradient (AdamW's rule for Adam).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    if config.optimizer == "adam":
        return FlatAdam(
            params,
            lr=config.learning_rate,
            betas=(config.adam_beta1, config.adam_beta2),
            eps=config.adam_eps,
            weight_decay=config.weight_decay,
            decoupled_weight_decay=True,
            fused=True,
        )
    if config.optimizer != "muon":
        raise APIUsageError(f"train.optimizer is {config.optimizer!r}; use 'muon' or 'adam'")
    return FlatMuon(
        params,
        lr=config.learning_rate,
        momentum=config.muon_momentum,
        weight_decay=config.weight_decay,
        momentum_rule=config.muon_momentum_rule,
    )
