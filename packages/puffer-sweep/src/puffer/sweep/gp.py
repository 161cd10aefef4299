"""A small exact Gaussian process (gpytorch) refit with a few warm-started Adam steps.

Protein keeps one of these for the score and one for the log-cost. Targets are standardized
before each fit; kernel hyperparameters carry over from the previous fit, so a handful of Adam
steps per suggestion is enough once the first fit has converged.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import torch

from puffer.sweep.errors import SweepError

# gpytorch's import scripts functions with torch.jit.script, which torch >= 2.9 flags with a
# FutureWarning; silence it here only, so a strict warning filter in the caller does not fail.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    import gpytorch

__all__ = ["GP"]


class _ExactGP(gpytorch.models.ExactGP):
    def __init__(
        self, x: torch.Tensor, y: torch.Tensor, likelihood: gpytorch.likelihoods.Likelihood
    ) -> None:
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        kernel = gpytorch.kernels.MaternKernel(
            nu=2.5,
            ard_num_dims=x.shape[-1],
            lengthscale_constraint=gpytorch.constraints.Interval(0.02, 20.0),
        )
        self.covar_module = gpytorch.kernels.ScaleKernel(kernel)

    def forward(self, x: torch.Tensor) -> gpytorch.distributions.MultivariateNormal:
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Runs torch on one thread, then restores the caller's setting. Matrices of a few hundred
    rows gain nothing from more threads, and on a loaded machine OpenMP's synchronization makes
    a fit several times slower."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _adam(
    params: list[torch.Tensor], loss_fn: Callable[[], torch.Tensor], steps: int, lr: float
) -> None:
    """Plain Adam (betas 0.9, 0.999). Written out because the first step of torch.optim imports
    torch._dynamo, which costs 10-40 s on a machine that does not cache bytecode; these few
    scalar hyperparameters need nothing more."""
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        for p in params:
            p.grad = None
        loss_fn().backward()
        with torch.no_grad():
            for p, m_i, v_i in zip(params, m, v, strict=True):
                m_i.mul_(0.9).add_(p.grad, alpha=0.1)
                v_i.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                step = lr * m_i / (1 - 0.9**t) / ((v_i / (1 - 0.999**t)).sqrt() + 1e-8)
                p.sub_(step)


class GP:
    """Exact GP regression on points of [-1, 1]^d.

    Args:
        dim: Number of input dimensions d.
        first_steps: Adam steps of the first fit.
        steps: Adam steps of every later fit (warm-started from the previous hyperparameters).
        lr: Adam learning rate.

    Example:
        >>> gp = GP(dim=1, first_steps=30)
        >>> x = np.linspace(-1, 1, 8)[:, None]
        >>> gp.fit(x, np.sin(3 * x[:, 0]))
        >>> mean, std = gp.predict(np.array([[0.0]]))
        >>> mean.shape, std.shape
        ((1,), (1,))
    """

    def __init__(self, dim: int, first_steps: int = 60, steps: int = 15, lr: float = 0.05) -> None:
        self.dim = dim
        self.first_steps = first_steps
        self.steps = steps
        self.lr = lr
        self._model: _ExactGP | None = None
        self._likelihood: gpytorch.likelihoods.GaussianLikelihood | None = None
        self._y_mean = 0.0
        self._y_std = 1.0

    def fit(self, x: np.ndarray, y: np.ndarray, tune: np.ndarray | None = None) -> None:
        """Fits to x (n, d) float64 and y (n,) float64.

        Kernel hyperparameters take a few Adam steps on the marginal likelihood of the rows
        ``tune`` (int indices; None for all), then the posterior conditions on every row. Tuning
        on a subset bounds the cost of the steps (cubic in the rows) while predictions still use
        all the data. Blocks for the fit: tens of milliseconds for a hundred rows.
        """
        with _one_thread():
            self._fit(x, y, np.arange(len(y)) if tune is None else tune)

    def _fit(self, x: np.ndarray, y: np.ndarray, tune: np.ndarray) -> None:
        self._y_mean = float(y.mean())
        self._y_std = float(y.std()) or 1.0
        tx = torch.as_tensor(x, dtype=torch.float64)
        ty = torch.as_tensor((y - self._y_mean) / self._y_std, dtype=torch.float64)
        sub = torch.as_tensor(tune, dtype=torch.int64)
        steps = self.steps
        if self._model is None:
            self._likelihood = gpytorch.likelihoods.GaussianLikelihood(
                noise_constraint=gpytorch.constraints.GreaterThan(1e-5)
            ).double()
            self._model = _ExactGP(tx[sub], ty[sub], self._likelihood).double()
            steps = self.first_steps
        else:
            self._model.set_train_data(tx[sub], ty[sub], strict=False)
        model, likelihood = self._model, self._likelihood
        model.train()
        likelihood.train()
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
        params = [p for p in model.parameters() if p.requires_grad]
        _adam(params, lambda: -mll(model(tx[sub]), ty[sub]), steps, self.lr)
        model.set_train_data(tx, ty, strict=False)

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation of the latent function at x (m, d); both (m,)
        float64 in the units of the fitted y."""
        if self._model is None or self._likelihood is None:
            raise SweepError("GP.predict called before GP.fit; fit it on observations first")
        self._model.eval()
        self._likelihood.eval()
        with _one_thread(), torch.no_grad(), gpytorch.settings.fast_pred_var():
            post = self._model(torch.as_tensor(x, dtype=torch.float64))
            mean = post.mean.numpy() * self._y_std + self._y_mean
            std = post.variance.clamp_min(0.0).sqrt().numpy() * self._y_std
        return mean, std
