"""Policies: shapes, heads against torch.distributions, recurrent training == rollout."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces

from puffer.core import APIUsageError, GymnasiumPufferEnv
from puffer.kernels import lstm_sequence
from puffer.kernels.testing import assert_relative_close
from puffer.train import PolicyConfig, make_policy
from puffer.train.config.sections import MLP_ACTIVATIONS
from puffer.train.policies import (
    IMPALA,
    CategoricalHead,
    GaussianHead,
    LSTMCore,
    MinGRUCore,
    MixedHead,
    MLPEncoder,
    NatureCNN,
    encoders,
    recurrent,
)
from puffer.train.policies.recurrent import mingru_sequence_reference


class _Spec:
    def __init__(self, obs: spaces.Box, act: spaces.Space):
        self.single_observation_space = obs
        self.single_action_space = act


@pytest.mark.parametrize(
    ("encoder", "obs"),
    [
        ("mlp", spaces.Box(-1, 1, (7,), np.float32)),
        ("nature_cnn", spaces.Box(0, 255, (84, 84, 4), np.uint8)),
        ("impala", spaces.Box(0, 255, (3, 64, 64), np.uint8)),
    ],
    ids=["mlp", "nature_cnn-hwc", "impala-chw"],
)
@pytest.mark.parametrize("recurrent", ["none", "lstm", "mingru"])
def test_policy_shapes(encoder: str, obs: spaces.Box, recurrent: str) -> None:
    torch.manual_seed(0)
    config = PolicyConfig(encoder=encoder, hidden_size=32, recurrent=recurrent, cnn_channels=8)
    policy = make_policy(config, _Spec(obs, spaces.Discrete(5)))
    rows = torch.as_tensor(np.stack([obs.sample() for _ in range(6)]))
    state = policy.initial_state(6)
    params, value, new_state = policy.forward_eval(rows, state)
    assert params.shape == (6, 5) and value.shape == (6,)
    assert [s.shape for s in new_state] == [s.shape for s in state]
    seq = rows.view(2, 3, *obs.shape)
    starts = torch.zeros(2, 3, dtype=torch.bool)
    params, value = policy.forward_train(seq, policy.initial_state(2), starts)
    assert params.shape == (2, 3, 5) and value.shape == (2, 3)
    # A feedforward policy has no state to cut: the trainer passes no starts.
    if recurrent == "none":
        same = policy.forward_train(seq, (), None)
        torch.testing.assert_close(same, (params, value), rtol=0, atol=0)
    else:
        with pytest.raises(APIUsageError, match="needs `starts`"):
            policy.forward_train(seq, policy.initial_state(2), None)


@pytest.mark.parametrize(
    ("encoder_cls", "shape"),
    [(NatureCNN, (4, 84, 84)), (NatureCNN, (84, 84, 3)), (IMPALA, (3, 64, 64))],
    ids=["nature-chw", "nature-hwc", "impala-chw"],
)
def test_cpu_image_encoders_train_channels_last_and_compute_the_same(encoder_cls, shape) -> None:
    torch.manual_seed(0)
    encoder = encoder_cls(shape, 32, 8)
    obs = torch.randint(0, 256, (5, *shape), dtype=torch.uint8)
    prepared = encoder.prepare(obs)
    assert prepared.is_contiguous(memory_format=torch.channels_last)
    if encoder.channels_first:
        # The rollout (no gradients) keeps channels first, which oneDNN infers faster.
        with torch.no_grad():
            assert encoder.prepare(obs).is_contiguous()
    plain = obs if encoder.channels_first else obs.permute(0, 3, 1, 2)
    torch.testing.assert_close(prepared, plain.float() / 255, rtol=1e-7, atol=0)
    # The same network on the plain (N, C, H, W) layout: values and gradients agree to float32
    # rounding (oneDNN sums in another order).
    reference = encoder_cls(shape, 32, 8)
    reference.load_state_dict(encoder.state_dict())
    reference.prepare = lambda o: (
        (o if reference.channels_first else o.permute(0, 3, 1, 2)).float().contiguous() / 255
    )
    out, expected = encoder(obs), reference(obs)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    out.square().sum().backward()
    expected.square().sum().backward()
    # A gradient element is a sum over the batch and the image, so its rounding error follows
    # the tensor's scale, not its own size: a near-zero element may differ by ~1e-6 (seen on a
    # 2-core AMD EPYC with one thread). A wrong layout would be off by the scale itself.
    for got, want in zip(encoder.parameters(), reference.parameters(), strict=True):
        assert got.grad.stride() == got.stride()  # Adam's fused step wants matching layouts
        assert_relative_close(got.grad, want.grad, tolerance=1e-4)


def test_unknown_policy_names_raise() -> None:
    spec = _Spec(spaces.Box(-1, 1, (3,)), spaces.Discrete(2))
    with pytest.raises(APIUsageError, match=r"PolicyConfig.encoder is 'resnet'"):
        make_policy(PolicyConfig(encoder="resnet"), spec)
    with pytest.raises(APIUsageError, match=r"PolicyConfig.recurrent is 'gru'"):
        make_policy(PolicyConfig(recurrent="gru"), spec)


def _orthogonal_at(weight: torch.Tensor, gain: float) -> bool:
    """Rows (or columns, whichever are fewer) orthonormal up to `gain`."""
    w = weight.detach().reshape(weight.shape[0], -1) / gain
    small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    return torch.allclose(small, torch.eye(small.shape[0]), atol=1e-4)


def test_pufferlib_init_is_its_lstm_wrappers() -> None:
    """policy.init = 'pufferlib': outside the core every weight orthogonal at gain 1 and every
    bias 0 (the action head too, at 0.01 otherwise); the LSTM at torch's uniform default."""
    spec = _Spec(spaces.Box(-1, 1, (6,)), spaces.Discrete(3))
    torch.manual_seed(0)
    ours = make_policy(PolicyConfig(hidden_size=16, recurrent="lstm"), spec)
    theirs = make_policy(PolicyConfig(hidden_size=16, recurrent="lstm", init="pufferlib"), spec)
    assert _orthogonal_at(ours.head.linear.weight, 0.01)
    assert _orthogonal_at(theirs.head.linear.weight, 1.0)
    for name, param in theirs.named_parameters():
        if name.startswith("core."):
            bound = 1 / 16**0.5  # torch's LSTM init: uniform in +-1/sqrt(hidden)
            assert param.abs().max() <= bound and param.abs().max() > bound / 2, name
            assert param.std() > 0.5 * bound / 3**0.5, name
        elif "bias" in name:
            assert not param.any(), name
        else:
            assert _orthogonal_at(param, 1.0), name
    assert _orthogonal_at(ours.core.lstm.weight_hh_l0, 1.0)  # ours: orthogonal, not uniform
    assert not _orthogonal_at(theirs.core.lstm.weight_hh_l0, 1.0)


def test_pufferlib_init_without_a_core_resets_only_the_encoder() -> None:
    spec = _Spec(spaces.Box(-1, 1, (6,)), spaces.Discrete(3))
    policy = make_policy(PolicyConfig(hidden_size=16, init="pufferlib"), spec)
    encoder = next(p for n, p in policy.encoder.named_parameters() if n.endswith("weight"))
    assert encoder.abs().max() <= 1 / 6**0.5  # nn.Linear's default: uniform in +-1/sqrt(fan_in)
    assert not _orthogonal_at(encoder, 2**0.5)
    assert _orthogonal_at(policy.head.linear.weight, 0.01)
    with pytest.raises(APIUsageError, match=r"PolicyConfig.init is 'xavier'"):
        PolicyConfig(init="xavier")


def test_encoder_named_by_import_path() -> None:
    # A family's own encoder is "module:factory" (puffer-envs' NetHack tests train with one);
    # one that does not import, or a name of another form, is refused with the fix.
    spec = _Spec(spaces.Box(-1, 1, (3,)), spaces.Discrete(2))
    with pytest.raises(APIUsageError, match=r"'no_such_module:Net', which does not import"):
        make_policy(PolicyConfig(encoder="no_such_module:Net"), spec)
    with pytest.raises(APIUsageError, match=r"module:factory"):
        PolicyConfig(encoder="not a path")


def test_categorical_head_matches_torch_distributions() -> None:
    torch.manual_seed(0)
    head = CategoricalHead(8, [3, 5, 2])
    params = torch.randn(4, 10)
    action, logprob = head.sample(params)
    assert action.shape == (4, 3) and action.dtype == torch.int64
    expected_lp, expected_ent = 0.0, 0.0
    for i, logits in enumerate(params.split([3, 5, 2], dim=-1)):
        dist = torch.distributions.Categorical(logits=logits)
        expected_lp = expected_lp + dist.log_prob(action[:, i])
        expected_ent = expected_ent + dist.entropy()
    torch.testing.assert_close(logprob, expected_lp)
    torch.testing.assert_close(head.logprob_entropy(params, action), (expected_lp, expected_ent))


@pytest.mark.parametrize("nvec", [[6], [3, 5, 2]])
def test_categorical_sampling_draws_each_choice_at_its_probability(nvec: list[int]) -> None:
    """Over 100,000 draws of one row, each choice's frequency is within 4.5 standard errors of
    its softmax probability over the legal choices, and no masked choice is ever drawn."""
    torch.manual_seed(3)
    head = CategoricalHead(8, nvec)
    draws = 100_000
    params = (2 * torch.randn(1, sum(nvec))).expand(draws, -1)
    mask = torch.rand(1, sum(nvec)) < 0.6
    mask[:, np.cumsum([0, *nvec[:-1]])] = True  # a legal choice in every branch
    for action_mask in (None, mask.expand(draws, -1)):
        action, logprob = head.sample(params, action_mask)
        expected = torch.softmax(head.logit_grid(params[:1], action_mask), dim=-1)[0]
        for branch, n in enumerate(nvec):
            counts = torch.bincount(action[:, branch], minlength=n).double()
            p = expected[branch, :n].double()
            tolerance = 4.5 * (p * (1 - p) / draws).sqrt() + 1e-9
            assert ((counts / draws - p).abs() <= tolerance).all(), (counts / draws, p)
            if action_mask is not None:
                assert counts[~mask[0, sum(nvec[:branch]) : sum(nvec[: branch + 1])]].sum() == 0
        torch.testing.assert_close(logprob, head.logprob_entropy(params, action, action_mask)[0])


def test_gaussian_and_mixed_heads_match_torch_distributions() -> None:
    torch.manual_seed(0)
    head = GaussianHead(8, 2)
    with torch.no_grad():
        head.log_std.fill_(-0.5)
    mean = torch.randn(5, 2)
    action, logprob = head.sample(mean)
    dist = torch.distributions.Normal(mean, torch.full_like(mean, -0.5).exp())
    torch.testing.assert_close(logprob, dist.log_prob(action).sum(-1))
    torch.testing.assert_close(
        head.logprob_entropy(mean, action), (logprob, dist.entropy().sum(-1))
    )

    mixed = MixedHead(8, [("discrete", 3), ("continuous", 2)])
    params = mixed(torch.randn(5, 8))
    action, logprob = mixed.sample(params)
    assert action.shape == (5, 3) and action.dtype == torch.float32
    assert set(action[:, 0].tolist()) <= {0.0, 1.0, 2.0}
    torch.testing.assert_close(mixed.logprob_entropy(params, action)[0], logprob)


@pytest.mark.parametrize(
    "act",
    [spaces.Discrete(3), spaces.MultiDiscrete([2, 4]), spaces.Box(-1, 1, (2,), np.float32)],
    ids=["discrete", "multidiscrete", "box"],
)
def test_head_and_value_share_one_product(act: spaces.Space) -> None:
    """Params and value from the one (H, P + 1) product equal the head's and the value
    layer's own outputs, forward and backward, for rollout rows and training segments."""
    torch.manual_seed(3)
    policy = make_policy(PolicyConfig(hidden_size=8), _Spec(spaces.Box(-1, 1, (5,)), act))
    assert policy.head.params_layer is not None
    obs = torch.randn(4, 6, 5)
    params, value = policy.forward_train(obs, (), torch.zeros(4, 6, dtype=torch.bool))
    hidden = policy.encoder(obs.view(24, 5)).view(4, 6, 8)
    torch.testing.assert_close(params, policy.head(hidden))
    torch.testing.assert_close(value, policy.value(hidden).squeeze(-1))
    layers = (policy.head.params_layer, policy.value)
    weights = [p for layer in layers for p in (layer.weight, layer.bias)]
    fused = torch.autograd.grad(params.square().sum() + value.sum(), weights)
    separate_loss = policy.head(hidden).square().sum() + policy.value(hidden).sum()
    separate = torch.autograd.grad(separate_loss, weights)
    for got, want in zip(fused, separate, strict=True):
        torch.testing.assert_close(got, want)
    step_params, step_value, _ = policy.forward_eval(obs[:, 0], ())
    torch.testing.assert_close(step_params, params[:, 0])
    torch.testing.assert_close(step_value, value[:, 0])


def test_separate_critic_reads_its_own_network_and_shares_the_statistics() -> None:
    """policy.critic = 'separate': the value comes from a second encoder, so the value loss
    moves none of the actor's weights and the policy loss none of the critic's; both see
    observations through one set of running statistics; rollout rows equal training rows."""
    torch.manual_seed(4)
    spec = _Spec(spaces.Box(-5, 5, (5,)), spaces.Box(-1, 1, (2,), np.float32))
    config = PolicyConfig(hidden_size=8, num_layers=1, normalize_obs=True, critic="separate")
    policy = make_policy(config, spec)
    assert policy.critic is not None and policy.critic.normalizer is policy.encoder.normalizer
    obs = 3 * torch.randn(4, 6, 5) + 1
    policy.observe(obs.view(24, 5), torch.ones(24))
    params, value = policy.forward_train(obs, (), None)
    assert params.shape == (4, 6, 2) and value.shape == (4, 6)
    torch.testing.assert_close(value, policy.value(policy.critic(obs.view(24, 5))).view(4, 6))
    torch.testing.assert_close(params, policy.head(policy.encoder(obs.view(24, 5))).view(4, 6, 2))
    step_params, step_value, _ = policy.forward_eval(obs[:, 0], ())
    torch.testing.assert_close(step_params, params[:, 0])
    torch.testing.assert_close(step_value, value[:, 0])
    actor = [*policy.encoder.parameters(), *policy.head.mean.parameters()]
    critic = [*policy.critic.parameters(), *policy.value.parameters()]
    for loss, moved, still in ((value.sum(), critic, actor), (params.sum(), actor, critic)):
        grads = torch.autograd.grad(loss, moved + still, allow_unused=True, retain_graph=True)
        assert all(g is not None and g.abs().sum() > 0 for g in grads[: len(moved)])
        assert all(g is None or not g.any() for g in grads[len(moved) :])
    # The checkpointed statistics come back once into the one shared normalizer.
    again = make_policy(config, spec)
    again.load_state_dict(policy.state_dict())
    assert again.critic.normalizer is again.encoder.normalizer
    torch.testing.assert_close(again.forward_train(obs, (), None), (params, value))


def test_separate_critic_is_refused_with_a_recurrent_core() -> None:
    spec = _Spec(spaces.Box(-1, 1, (3,)), spaces.Discrete(2))
    with pytest.raises(APIUsageError, match=r"critic is 'separate' with policy.recurrent 'lstm'"):
        make_policy(PolicyConfig(recurrent="lstm", critic="separate"), spec)
    with pytest.raises(APIUsageError, match=r"PolicyConfig.critic is 'both'"):
        PolicyConfig(critic="both")


@pytest.mark.parametrize("activation, unit", [("tanh", torch.tanh), ("relu", torch.relu)])
def test_activation_is_applied_at_each_layer_of_both_networks(activation: str, unit) -> None:
    """policy.activation = 'tanh' or 'relu': the MLP encoders (actor and critic) compute
    unit(W x + b) at each layer; tanh keeps hidden units in [-1, 1] however large the inputs.
    The parameters (and so checkpoints) are those of the GELU network."""
    torch.manual_seed(5)
    spec = _Spec(spaces.Box(-5, 5, (6,)), spaces.Box(-1, 1, (2,), np.float32))
    config = PolicyConfig(hidden_size=8, num_layers=1, critic="separate", activation=activation)
    policy = make_policy(config, spec)
    obs = 50 * torch.randn(32, 6)
    for encoder in (policy.encoder, policy.critic):
        first, second = encoder.input, encoder.hidden[0]
        expected = unit(second(unit(first(obs))))
        torch.testing.assert_close(encoder(obs), expected)
        assert (encoder(obs).abs().max() <= 1) == (activation == "tanh")
    gelu = make_policy(PolicyConfig(hidden_size=8, num_layers=1, critic="separate"), spec)
    assert gelu.state_dict().keys() == policy.state_dict().keys()
    assert gelu.encoder(obs).abs().max() > 1  # the default is unbounded


@pytest.mark.parametrize("log_std_init", [0.0, -2.0, 0.5])
def test_gaussian_log_std_starts_at_log_std_init_and_samples_with_that_spread(
    log_std_init: float,
) -> None:
    """policy.log_std_init: every Gaussian dimension's log std starts there (a plain Box head and
    a mixed head's continuous part alike) and 20,000 draws spread with std exp(log_std_init)."""
    torch.manual_seed(7)
    spec = _Spec(spaces.Box(-1, 1, (4,)), spaces.Box(-1, 1, (3,), np.float32))
    policy = make_policy(PolicyConfig(hidden_size=8, log_std_init=log_std_init), spec)
    torch.testing.assert_close(policy.head.log_std.detach(), torch.full((3,), log_std_init))
    params = torch.zeros(20_000, 3)
    with torch.no_grad():
        action, _ = policy.head.sample(params)
    expected = torch.full((3,), math.exp(log_std_init))
    torch.testing.assert_close(action.std(0), expected, rtol=0.03, atol=0)
    mixed = MixedHead(8, [("discrete", 3), ("continuous", 2)], log_std_init)
    torch.testing.assert_close(mixed.parts[1].log_std.detach(), torch.full((2,), log_std_init))


def test_activation_is_refused_off_the_mlp_encoder_and_unknown_names_raise() -> None:
    spec = _Spec(spaces.Box(0, 255, (84, 84, 4), np.uint8), spaces.Discrete(2))
    with pytest.raises(APIUsageError, match=r"activation is 'tanh' with policy.encoder 'nature"):
        make_policy(PolicyConfig(encoder="nature_cnn", activation="tanh"), spec)
    with pytest.raises(APIUsageError, match=r"PolicyConfig.activation is 'elu'"):
        PolicyConfig(activation="elu")
    with pytest.raises(ValueError, match=r"activation is 'elu'; use one of \['gelu', 'relu', "):
        MLPEncoder((3,), 8, 0, activation="elu")
    # The config accepts exactly the names the encoder builds.
    assert set(encoders._ACTIVATIONS) == set(MLP_ACTIVATIONS)


def test_structured_observations_and_mixed_actions_through_layouts() -> None:
    obs_space = spaces.Dict(
        {"pos": spaces.Box(-1, 1, (3,), np.float32), "cell": spaces.Discrete(4)}
    )
    act_space = spaces.Dict(
        {"move": spaces.Discrete(3), "force": spaces.Box(-1, 1, (2,), np.float32)}
    )

    import gymnasium

    class Toy(gymnasium.Env):
        observation_space, action_space = obs_space, act_space

        def reset(self, seed=None, options=None):
            return self.observation_space.sample(), {}

        def step(self, action):
            return self.observation_space.sample(), 0.0, False, False, {}

    env = GymnasiumPufferEnv(Toy)
    policy = make_policy(PolicyConfig(hidden_size=16), env)
    obs, _ = env.reset(seed=0)
    with torch.no_grad():
        params, _, _ = policy.forward_eval(torch.from_numpy(obs), ())
        action, _ = policy.head.sample(params)
    assert isinstance(policy.head, MixedHead)
    space = env.single_action_space
    assert action.shape == (1, *space.shape)
    # Gaussian draws are unbounded; the trainer clips them to the space, as here.
    env.step(np.clip(action.numpy(), space.low, space.high))
    env.close()


def _starts(batch: int, steps: int, p: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(batch, steps, generator=g) < p


def _step_loop(core: LSTMCore | MinGRUCore, x: torch.Tensor, state, starts: torch.Tensor):
    """`core.sequence` as the rollout computes it: `core.step` in a time loop, cut at starts."""
    keep = (~starts).to(x.dtype)
    outputs = []
    for t in range(x.shape[1]):
        if t > 0:
            state = tuple(s * keep[:, t].view(-1, *([1] * (s.dim() - 1))) for s in state)
        out, state = core.step(x[:, t], state)
        outputs.append(out)
    return torch.stack(outputs, 1)


@pytest.mark.parametrize("core_cls", [LSTMCore, MinGRUCore], ids=["lstm", "mingru"])
@pytest.mark.parametrize("p_start", [0.0, 0.2])
def test_recurrent_sequence_equals_step_loop_with_cuts(core_cls, p_start: float) -> None:
    torch.manual_seed(0)
    core = core_cls(16) if core_cls is LSTMCore else MinGRUCore(16, num_layers=2)
    x = torch.randn(5, 9, 16)
    state = tuple(s.uniform_(0.1, 1.0) for s in core.initial_state(5, torch.device("cpu")))
    starts = _starts(5, 9, p_start, seed=1)
    y = core.sequence(x, state, starts)
    torch.testing.assert_close(y, _step_loop(core, x, state, starts), rtol=1e-4, atol=1e-5)
    if core_cls is MinGRUCore:
        torch.testing.assert_close(
            y, mingru_sequence_reference(core, x, state, starts), rtol=1e-4, atol=1e-5
        )


def test_mingru_scan_gradients_are_finite_across_cuts() -> None:
    torch.manual_seed(0)
    core = MinGRUCore(8)
    x = torch.randn(3, 16, 8, requires_grad=True)
    starts = _starts(3, 16, 0.3, seed=2)
    core.sequence(x, core.initial_state(3, torch.device("cpu")), starts).square().sum().backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in core.parameters())


@pytest.mark.parametrize("core_cls", [LSTMCore, MinGRUCore], ids=["lstm", "mingru"])
def test_recurrent_sequence_gradients_equal_step_loop(core_cls) -> None:
    # float64, so the kernels' sums and the loop's agree to ~1e-15: resets at t = 0 (ignored),
    # two in one segment, one at the last step, and random ones elsewhere.
    torch.manual_seed(0)
    core = (core_cls(16) if core_cls is LSTMCore else MinGRUCore(16, num_layers=2)).double()
    x = torch.randn(6, 12, 16, dtype=torch.float64, requires_grad=True)
    state = tuple(
        s.double().uniform_(0.1, 1.0).requires_grad_()
        for s in core.initial_state(6, torch.device("cpu"))
    )
    starts = _starts(6, 12, 0.15, seed=3)
    starts[0, 0] = starts[1, 3] = starts[1, 7] = starts[2, 11] = True
    inputs = (x, *state, *core.parameters())
    y = core.sequence(x, state, starts)
    expected = _step_loop(core, x, state, starts)
    grad_y = torch.randn_like(y)
    grads = torch.autograd.grad(y, inputs, grad_y)
    expected_grads = torch.autograd.grad(expected, inputs, grad_y)
    torch.testing.assert_close(y, expected, rtol=1e-10, atol=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("bits", "kernel_calls"), [(512, 1), (256, 0)])
def test_lstm_without_resets_runs_the_faster_path(monkeypatch, bits: int, kernel_calls: int):
    # No episode boundary inside: nn.LSTM is faster than the kernel at 256 bits, slower at 512.
    calls = []

    def counted(*args):
        calls.append(1)
        return lstm_sequence(*args)

    monkeypatch.setattr(recurrent, "cpu_vector_bits", lambda: bits)
    monkeypatch.setattr(recurrent, "lstm_sequence", counted)
    core = LSTMCore(8)
    x = torch.randn(3, 5, 8)
    quiet = torch.zeros(3, 5, dtype=torch.bool)
    y = core.sequence(x, core.initial_state(3, torch.device("cpu")), quiet)
    assert len(calls) == kernel_calls
    torch.testing.assert_close(y, core.lstm(x)[0], rtol=1e-5, atol=1e-6)


# ---- PufferNet (PufferLib 4.0's policy) ---------------------------------------------------


def _puffernet(hidden: int = 16, layers: int = 2, obs_dim: int = 7, actions: int = 5):
    config = PolicyConfig(
        network="puffernet", recurrent="mingru", hidden_size=hidden, mingru_layers=layers
    )
    obs = spaces.Box(-1, 1, (obs_dim,), np.float32)
    return make_policy(config, _Spec(obs, spaces.Discrete(actions)))


def test_puffernet_is_bias_free_with_pufferlib4_shapes_and_init() -> None:
    torch.manual_seed(0)
    policy = _puffernet(hidden=64, layers=2, obs_dim=118, actions=3)
    shapes = {name: tuple(p.shape) for name, p in policy.named_parameters()}
    # PufferLib 4.0's breakout net: encoder (64, 118), two (192, 64) layers, decoder (3 + 1, 64).
    assert shapes == {
        "encoder.input.weight": (64, 118),
        "core.layers.0.weight": (192, 64),
        "core.layers.1.weight": (192, 64),
        "decoder.weight": (4, 64),
    }
    assert sum(p.numel() for p in policy.parameters()) == 32_384
    # Uniform in +-gain / sqrt(fan_in): gain sqrt(2) for the encoder, 1 elsewhere.
    for name, gain in [("encoder.input.weight", math.sqrt(2)), ("core.layers.0.weight", 1.0)]:
        weight = dict(policy.named_parameters())[name]
        bound = gain / math.sqrt(weight.shape[1])
        assert weight.abs().max() <= bound
        assert weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.05)
    decoder = policy.decoder.weight
    assert decoder.abs().max() <= 1 / 8 and decoder.abs().max() > 1 / 16  # not the 0.01 init
    assert policy.head.params_layer is None and not hasattr(policy, "value")


def test_puffernet_is_the_equations_of_its_docstring() -> None:
    # One rollout step written out from the module docstring, against the policy's.
    torch.manual_seed(1)
    policy = _puffernet(hidden=8, layers=2)
    obs = torch.randn(4, 7)
    (h_prev,) = tuple(s.uniform_(0.1, 1.0) for s in policy.initial_state(4))
    x = obs @ policy.encoder.input.weight.T
    new_h = []
    for i, layer in enumerate(policy.core.layers):
        h_tilde, g, p = (x @ layer.weight.T).chunk(3, dim=-1)
        phi = torch.where(h_tilde >= 0, h_tilde + 0.5, torch.sigmoid(h_tilde))
        h = (1 - torch.sigmoid(g)) * h_prev[:, i] + torch.sigmoid(g) * phi
        x = torch.sigmoid(p) * h + (1 - torch.sigmoid(p)) * x
        new_h.append(h)
    decoded = x @ policy.decoder.weight.T
    logits, value, (state,) = policy.forward_eval(obs, (h_prev,))
    torch.testing.assert_close(logits, decoded[:, :-1])
    torch.testing.assert_close(value, decoded[:, -1])
    torch.testing.assert_close(state, torch.stack(new_h, dim=1))


def test_puffernet_training_equals_rollout_values_and_gradients_with_resets() -> None:
    # The scan kernel's training pass against the rollout's step in a time loop, with episode
    # starts inside segments (two in one, one at the last step). float32: the encoder casts
    # observations to float32 (the float64 core-only check is above).
    torch.manual_seed(2)
    policy = _puffernet(hidden=16, layers=2)
    obs = torch.randn(5, 11, 7)
    state = tuple(s.uniform_(0.1, 1.0).requires_grad_() for s in policy.initial_state(5))
    starts = _starts(5, 11, 0.2, seed=4)
    starts[1, 3] = starts[1, 8] = starts[2, 10] = True
    params, value = policy.forward_train(obs, state, starts)
    keep = (~starts).float()
    looped_params, looped_values, s = [], [], state
    for t in range(obs.shape[1]):
        if t > 0:
            s = tuple(x * keep[:, t].view(-1, 1, 1) for x in s)
        p, v, s = policy.forward_eval(obs[:, t], s)
        looped_params.append(p)
        looped_values.append(v)
    looped = (torch.stack(looped_params, 1), torch.stack(looped_values, 1))
    torch.testing.assert_close(params, looped[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(value, looped[1], rtol=1e-5, atol=1e-6)
    inputs = (*state, *policy.parameters())
    grad_p, grad_v = torch.randn_like(params), torch.randn_like(value)
    grads = torch.autograd.grad((params, value), inputs, (grad_p, grad_v))
    expected = torch.autograd.grad(looped, inputs, (grad_p, grad_v))
    for got, want in zip(grads, expected, strict=True):
        assert_relative_close(got, want, 1e-4)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("recurrent", "lstm"),
        ("encoder", "nature_cnn"),
        ("num_layers", 1),
        ("critic", "separate"),
        ("init", "pufferlib"),
        ("activation", "tanh"),
    ],
)
def test_puffernet_refuses_keys_it_would_ignore(key: str, value: object) -> None:
    settings = {"network": "puffernet", "recurrent": "mingru", key: value}
    with pytest.raises(APIUsageError, match=rf"network is 'puffernet' with policy\.{key}"):
        PolicyConfig(**settings)


def test_puffernet_continuous_actions_keep_a_learned_log_std() -> None:
    config = PolicyConfig(network="puffernet", recurrent="mingru", hidden_size=8, log_std_init=-1)
    policy = make_policy(config, _Spec(spaces.Box(-1, 1, (3,)), spaces.Box(-1, 1, (2,))))
    assert policy.decoder.weight.shape == (3, 8) and policy.head.params_layer is None
    torch.testing.assert_close(policy.head.log_std.detach(), torch.full((2,), -1.0))
    params, value, _ = policy.forward_eval(torch.zeros(4, 3), policy.initial_state(4))
    assert params.shape == (4, 2) and value.shape == (4,)


def test_puffernet_refuses_a_mixed_action_head() -> None:
    class Mixed(_Spec):
        class action_layout:
            leaves = (spaces.Discrete(3), spaces.Box(-1, 1, (2,)))

    config = PolicyConfig(network="puffernet", recurrent="mingru", hidden_size=8)
    env = Mixed(spaces.Box(-1, 1, (3,)), spaces.Box(-1, 1, (3,)))
    with pytest.raises(APIUsageError, match="MixedHead computes its params in more than one"):
        make_policy(config, env)
