"""Rollout storage: row alignment, segment bootstrap values and replayed recurrent state, for
synchronous and EnvPool-style async vecenvs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from puffer.core import APIUsageError, PufferEnv
from puffer.train import (
    Config,
    PolicyConfig,
    PuffeRL,
    Sizes,
    TrainConfig,
    VecConfig,
    make_policy,
    train,
)
from puffer.train.buffer import PER_STEP, ObservationWriter, RolloutBuffer
from puffer.train.run import make_vecenv
from puffer.vector import Serial

TERMINAL_EVERY, TRUNCATE_EVERY = 7, 11


class CounterEnv(PufferEnv):
    """obs = (g, agent id) with g an agent's step count; reward = the g the action saw.

    The step that takes g to g + 1 terminates when (g + 1) % 7 == 0, else truncates when
    (g + 1) % 11 == 0. Agent i starts at g = 3 * i so agents are out of phase.
    """

    def __init__(self, num_agents: int = 3, buf=None):
        self.num_agents = num_agents
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.single_action_space = spaces.Discrete(2)
        super().__init__(buf)

    def _reset(self, seed):
        self.g = 3 * np.arange(self.num_agents, dtype=np.float32)
        self.observations[:, 0] = self.g
        self.observations[:, 1] = np.arange(self.num_agents)
        self.rewards[:] = 0
        self.terminals[:] = self.truncations[:] = False
        return []

    def _step(self):
        self.rewards[:] = self.g
        self.g += 1
        self.terminals[:] = self.g % TERMINAL_EVERY == 0
        self.truncations[:] = (self.g % TRUNCATE_EVERY == 0) & ~self.terminals
        self.observations[:, 0] = self.g
        return [{"episode_return": 1.0}] if self.terminals.any() else []


def _trainer(vecenv, recurrent: str = "none", chunks: int = 2) -> PuffeRL:
    torch.manual_seed(0)
    horizon = 5
    config = TrainConfig(
        horizon=horizon,
        batch_size=vecenv.num_agents * horizon * chunks,
        minibatch_size=horizon,
        total_timesteps=10**6,
        reward_clip=0.0,  # the rewards are step counters, checked as stored
        device="cpu",
    )
    policy = make_policy(PolicyConfig(hidden_size=8, recurrent=recurrent), vecenv)
    return PuffeRL(config, vecenv, policy)


def _check_rows(trainer: PuffeRL, agents_per_env: int) -> None:
    buf, sizes = trainer.buffer, trainer.sizes
    s = sizes.segments
    g = buf.observations[:s, :, 0]
    agent = buf.observations[:s, :, 1]
    # Row t holds o_t and the reward that came back for a_t.
    torch.testing.assert_close(buf.rewards[:s], g)
    assert (buf.terminals[:s] == ((g + 1) % TERMINAL_EVERY == 0).float()).all()
    trunc = ((g + 1) % TRUNCATE_EVERY == 0) & ((g + 1) % TERMINAL_EVERY != 0)
    assert (buf.truncations[:s] == trunc.float()).all()
    # Steps are consecutive within a segment, and each segment belongs to one agent.
    assert (g[:, 1:] - g[:, :-1] == 1).all()
    assert (agent == agent[:, :1]).all()
    # Segment k * N + a belongs to agent a (row a % agents_per_env of its env).
    expected_agent = torch.arange(s) % sizes.num_agents % agents_per_env
    torch.testing.assert_close(agent[:, 0], expected_agent.float())
    # next_values: V of the observation after each segment's last row.
    after = torch.stack([g[:, -1] + 1, agent[:, -1]], dim=1)
    with torch.no_grad():
        state = trainer.policy.initial_state(s)
        _, value, _ = trainer.policy.forward_eval(after, state)
    if not trainer.policy.is_recurrent:
        torch.testing.assert_close(buf.next_values[:s], value)


def test_sync_rows_are_aligned_across_epochs() -> None:
    env = CounterEnv(3)
    trainer = _trainer(env)
    for _ in range(3):
        trainer.collect()
        _check_rows(trainer, 3)
        trainer.train()
    # Each iteration starts where the last one stopped: no env step is lost or repeated.
    first = trainer.buffer.observations[0, 0, 0]
    assert first == 2 * 2 * 5  # two iterations of 2 chunks of 5 steps for agent 0
    assert trainer.global_step == 3 * 30
    env.close()


def test_async_vecenv_rows_are_aligned() -> None:
    vec = Serial(lambda buf=None: CounterEnv(2, buf=buf), num_instances=4, instances_per_recv=2)
    trainer = _trainer(vec)
    for _ in range(2):
        trainer.collect()
        _check_rows(trainer, 2)
        trainer.train()
    vec.close()


def test_vec_config_asks_for_async_batches(tmp_path) -> None:
    config = Config(
        train=TrainConfig(
            total_timesteps=512, horizon=16, minibatch_size=64, data_dir=str(tmp_path)
        ),
        vec=VecConfig(
            backend="multiprocessing", num_instances=4, num_workers=4, instances_per_recv=2
        ),
    )
    vec = make_vecenv("gym-CartPole-v1", config)
    try:
        vec.async_reset(seed=0)
        assert len(vec.recv()[5]) == 2  # each recv() brings 2 of the 4 envs
    finally:
        vec.close()
    result = train("gym-CartPole-v1", config)
    # 8 iterations of 4 envs x 16 steps; async rows that filled their segments early keep
    # stepping (those steps count as taken) until the slowest row fills its own.
    assert result.iterations == 8 and result.global_step >= 512
    # VecConfig refuses async batches without a vectorizer when it is built
    with pytest.raises(
        APIUsageError, match=r"vec\.instances_per_recv is 2 with vec\.backend 'native'"
    ):
        VecConfig(backend="native", num_instances=1, instances_per_recv=2)


@pytest.mark.parametrize("recurrent", ["lstm", "mingru"])
@pytest.mark.parametrize("async_", [False, True], ids=["sync", "async"])
def test_training_replays_the_rollout_sequence(recurrent: str, async_: bool) -> None:
    """Stored segment-start states + cuts reproduce the rollout's log-probs and values."""
    if async_:
        vec = Serial(lambda buf=None: CounterEnv(2, buf=buf), num_instances=4, instances_per_recv=2)
    else:
        vec = CounterEnv(4)
    trainer = _trainer(vec, recurrent)
    trainer.collect()
    trainer.collect()
    buf, s = trainer.buffer, trainer.sizes.segments
    idx = torch.arange(s)
    with torch.no_grad():
        state = tuple(x[idx] for x in buf.states)
        params, value = trainer.policy.forward_train(buf.observations[idx], state, buf.starts(idx))
        logprob, _ = trainer.policy.head.logprob_entropy(params, buf.actions[idx])
    torch.testing.assert_close(value, buf.values[:s], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(logprob, buf.logprobs[:s], rtol=1e-4, atol=1e-5)
    vec.close()


def test_sizes_validate_with_numbers() -> None:
    with pytest.raises(APIUsageError, match=r"batch_size 100 is not a multiple of .* = 3 \* 8"):
        Sizes.derive(TrainConfig(batch_size=100, horizon=8), num_agents=3)
    with pytest.raises(APIUsageError, match="minibatch_size 12 is not a multiple of horizon 8"):
        Sizes.derive(TrainConfig(batch_size=48, horizon=8, minibatch_size=12), num_agents=3)
    sizes = Sizes.derive(TrainConfig(batch_size=96, horizon=8, minibatch_size=32), 3)
    assert (sizes.segments, sizes.chunks, sizes.minibatch_segments, sizes.minibatches) == (
        12,
        4,
        4,
        3,
    )


def test_replay_ratio_sets_minibatches_as_pufferlib4() -> None:
    # PufferLib 4.0's breakout: 4,096 agents x 64 steps, minibatch 65,536, ratio 1.4242 -> 5.
    train = TrainConfig(minibatch_size=65_536, replay_ratio=1.4242098997083206)
    assert Sizes.derive(train, num_agents=4096).minibatches == 5
    assert Sizes.derive(TrainConfig(minibatch_size=65_536, replay_ratio=0.1), 4096).minibatches == 1
    with pytest.raises(APIUsageError, match="both set the minibatches per iteration"):
        TrainConfig(replay_ratio=2.0, update_epochs=2)


@pytest.mark.parametrize("row", [(3,), (1024,)])  # staged; 4 KiB rows are written directly
def test_staged_observation_writes_equal_direct_writes(row: tuple[int, ...]) -> None:
    """Lockstep steps (slice rows) are staged four at a time; a step that breaks the run (other
    rows, a gap in t, tensor indices of async envs) writes what is staged first, so the buffer
    ends as if every step had been written directly, in order."""
    gen = torch.Generator().manual_seed(0)
    segments, horizon, n = 9, 10, 3
    direct = torch.zeros(segments, horizon, *row)
    staged = torch.zeros(segments, horizon, *row)
    writer = ObservationWriter(staged, group=4)
    assert writer.group == (4 if row == (3,) else 1)
    steps = [(slice(0, n), t) for t in range(horizon)]  # a chunk: 4 + 4 + a group cut at 2
    steps += [(slice(n, 2 * n), t) for t in range(6)]  # cut short by the async rows below,
    steps += [(torch.tensor([3, 4, 8]), torch.tensor([5, 5, 1]))]  # which overwrite staged t=5

    steps += [(slice(n, 2 * n), t) for t in (6, 7, 9)]  # 6 and 7 are not a group's start
    steps += [(slice(2 * n, 3 * n), t) for t in (4, 5, 6, 7, 8)]
    for index in steps:
        obs = torch.randn(n, *row, generator=gen)
        direct[index] = obs
        writer.store(index, obs)
    writer.flush()
    torch.testing.assert_close(staged, direct, rtol=0, atol=0)


def test_time_major_twin_hands_over_what_was_written() -> None:
    """The rollout writes steps into the twin (slices of a lockstep step, tensor indices of
    async envs); after `copy_steps_from` the buffer holds what direct writes would have left."""
    gen = torch.Generator().manual_seed(1)
    sizes = Sizes.derive(TrainConfig(horizon=4, batch_size=24, minibatch_size=4), 3)
    state = (torch.zeros(3, 5),)
    args = (sizes, (2,), torch.float32, (2,), torch.int64, state, torch.device("cpu"), 6)
    direct, buffer = RolloutBuffer.allocate(*args), RolloutBuffer.allocate(*args)
    twin = buffer.time_major_twin()
    assert twin.values.stride() == (1, sizes.segments + 1)  # one t of all segments: contiguous
    assert twin.observations is buffer.observations and twin.states is buffer.states
    steps = [(slice(0, 3), t) for t in range(4)] + [
        (torch.tensor([3, 5, 6]), torch.tensor([0, 2, 0]))
    ]
    for index in steps:
        for name in PER_STEP:
            shape = getattr(direct, name)[index].shape
            value = torch.randint(0, 2, shape, generator=gen).to(getattr(direct, name).dtype)
            getattr(direct, name)[index] = value
            getattr(twin, name)[index] = value
    buffer.copy_steps_from(twin)
    for name in PER_STEP:
        torch.testing.assert_close(getattr(buffer, name), getattr(direct, name), rtol=0, atol=0)
