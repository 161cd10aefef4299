"""`vec.num_buffers`: a native env's agents in K buffers (`EnvBuffers`), each stepped on a thread
of its own while the trainer runs the next buffer's forward; the rollout rows stay those of one
env stepping every agent."""

from __future__ import annotations

import doctest
import threading

import numpy as np
import pytest
import torch
from gymnasium import spaces

from puffer.core import APIUsageError, PufferEnv, Vectorization, env_creator
from puffer.train import (
    Config,
    PolicyConfig,
    PuffeRL,
    TrainConfig,
    VecConfig,
    env_buffers,
    make_policy,
)
from puffer.train.config import ConfigError
from puffer.train.env_buffers import EnvBuffers
from puffer.train.limits import check_limits
from puffer.train.run import make_vecenv

AGENTS_PER_INSTANCE = 2
# What the env and the sampled actions make: equal bit for bit.
EXACT = ("observations", "actions", "rewards", "terminals", "truncations", "masks")
# What the policy computes: a float GEMM over 4 rows rounds apart from one over 8 (by an ulp
# or two), so values, log-probs, states and the trained weights agree to float rounding.
ROUNDED = ("logprobs", "values", "next_values")


class InstanceEnv(PufferEnv):
    """`num_envs` instances of two agents; instance j of a reset with `seed` behaves the same
    whichever env object holds it: its episodes last 2 + (seed + j) % 5 steps, odd lengths
    truncated, even ones terminal. A row's state follows its own actions."""

    vectorization = Vectorization.NATIVE

    def __init__(self, num_envs: int = 1, buf=None, gate: threading.Event | None = None):
        self.num_agents = num_envs * AGENTS_PER_INSTANCE
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (3,), np.float32)
        self.single_action_space = spaces.Discrete(3)
        self.gate = gate  # a step waits for it (the overlap test), when given
        self.step_threads: set[int] = set()
        super().__init__(buf)

    def _reset(self, seed):
        instance = np.arange(self.num_agents) // AGENTS_PER_INSTANCE
        self.length = 2 + (int(seed) + instance) % 5
        self.t = np.zeros(self.num_agents, np.int64)
        self.state = np.zeros(self.num_agents, np.float32)
        self._write()
        return []

    def _step(self):
        self.step_threads.add(threading.get_ident())
        if self.gate is not None and not self.gate.wait(timeout=30):
            raise TimeoutError("InstanceEnv: the gate was never opened")
        self.state = np.float32(0.8) * self.state + (self.actions - 1).astype(np.float32)
        self.t += 1
        self.rewards[:] = np.tanh(self.state)
        done = self.t >= self.length
        self.terminals[:] = done & (self.length % 2 == 0)
        self.truncations[:] = done & (self.length % 2 == 1)
        self.t[done] = 0
        self.state[done] = 0.0
        self._write()
        return [{"episode_length": float(n)} for n in self.length[done]]

    def _write(self) -> None:
        self.observations[:] = np.stack([self.state, self.t, self.length], axis=1)


def _config(recurrent: str = "lstm", device: str = "cpu") -> Config:
    return Config(
        train=TrainConfig(horizon=4, minibatch_size=32, total_timesteps=256, device=device, seed=3),
        policy=PolicyConfig(hidden_size=8, recurrent=recurrent),
    )


def _rollout_rows(env, config: Config, iterations: int = 3) -> list[dict[str, torch.Tensor]]:
    """Each iteration's rollout buffer (and the policy after its update)."""
    torch.manual_seed(0)
    trainer = PuffeRL(config, env, make_policy(config.policy, env))
    rows = []
    for _ in range(iterations):
        trainer.collect()
        buffer = trainer.buffer
        rows.append({name: getattr(buffer, name).clone() for name in EXACT + ROUNDED})
        rows[-1].update({f"state{i}": s.clone() for i, s in enumerate(buffer.states)})
        trainer.train()
        rows[-1].update({n: p.detach().clone() for n, p in trainer.policy.named_parameters()})
    env.close()
    return rows


@pytest.mark.parametrize("recurrent", ["lstm", "none"])
def test_two_buffers_fill_the_rollout_rows_one_env_does(recurrent: str) -> None:
    """Each buffer draws its actions' uniforms in agent order, right after the buffer before
    it, so torch's one CPU generator gives every row the number a lockstep step of all agents
    gives it: the same actions, so the same env rows. (CUDA's generator draws per launch, so
    there the actions differ.) Iterations 2 and 3 act on the joined held replies of both
    buffers with the updated policy, as one env's held reply."""
    config = _config(recurrent)
    whole = _rollout_rows(InstanceEnv(num_envs=4), config)
    split = _rollout_rows(EnvBuffers(InstanceEnv, 2, {"num_envs": 4}, "instance"), config)
    for iteration, (a, b) in enumerate(zip(whole, split, strict=True)):
        for name in a:
            where = f"iteration {iteration}: {name}"
            if name in EXACT:
                assert torch.equal(a[name], b[name]), f"{where} differs"
            else:
                torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-5, msg=where)


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
        ),
    ],
)
def test_the_held_replies_are_every_buffers_own(device: str) -> None:
    """Held buffers do not step, so their env arrays still hold what was held; on CUDA each
    buffer's reply goes through pinned memory of its own, which the next buffer's copy must
    not overwrite while the held one's is in flight."""
    env = EnvBuffers(InstanceEnv, 4, {"num_envs": 8}, "instance")
    config = _config(device=device)
    trainer = PuffeRL(config, env, make_policy(config.policy, env))
    for _ in range(2):
        trainer.collect()
        held = trainer.rollout.held
        assert held is not None and held.ids.tolist() == list(range(16))
        expected = np.concatenate([e.observations for e in env.envs])
        np.testing.assert_array_equal(held.obs.cpu().numpy(), expected)
        trainer.train()
    # One buffer's reply is a full one: on CUDA its forward is replayed from a graph.
    assert trainer.rollout.full_reply == 4
    if device == "cuda":
        assert trainer.rollout.graph_status == "captured"
    env.close()


def test_one_buffer_is_the_native_env_itself() -> None:
    """`vec.num_buffers` 1 (the default) builds what it built before: the env, unwrapped."""
    config = Config(env={"num_envs": 4})
    assert config.vec.num_buffers == 1
    env = make_vecenv("breakout", config)
    assert type(env).__name__ == "Breakout"
    env.close()


def test_an_ocean_env_in_buffers_steps_off_the_main_thread_and_trains() -> None:
    config = Config(
        train=TrainConfig(horizon=8, minibatch_size=64, total_timesteps=128, device="cpu"),
        policy=PolicyConfig(hidden_size=8),
        vec=VecConfig(num_buffers=2),
        env={"num_envs": 8},
    )
    env = make_vecenv("breakout", config)
    assert isinstance(env, EnvBuffers) and env.num_agents == 8
    assert [e.num_envs for e in env.envs] == [4, 4]
    trainer = PuffeRL(config, env, make_policy(config.policy, env))
    trainer.collect()
    trainer.train()
    assert trainer.global_step == 64
    assert torch.isfinite(trainer.buffer.values).all()
    env.close()


def test_a_buffer_steps_while_the_next_one_is_received() -> None:
    """Buffer 0's step cannot finish until the test has received buffer 1 (its gate opens
    then): a step run inside send() would stop the test at send(), never reaching the gate."""
    gate = threading.Event()
    env = EnvBuffers(InstanceEnv, 2, {"num_envs": 2, "gate": gate}, "instance")
    env.async_reset(seed=0)
    env.recv()
    env.send(np.zeros(2, np.int64))  # buffer 0 now steps, waiting for the gate
    ids = env.recv()[5]  # buffer 1's reset: ready although buffer 0 is still stepping
    assert ids.tolist() == [2, 3]
    gate.set()
    env.send(np.zeros(2, np.int64))
    assert env.recv()[5].tolist() == [0, 1]
    assert threading.get_ident() not in env.envs[0].step_threads
    env.close()


def test_a_refused_action_surfaces_at_that_buffers_recv() -> None:
    env = EnvBuffers(InstanceEnv, 2, {"num_envs": 2}, "instance")
    env.async_reset(seed=0)
    env.recv()
    env.send(np.array([0, 7]))  # Discrete(3): 7 is out of range
    env.recv()
    env.send(np.zeros(2, np.int64))
    with pytest.raises(APIUsageError, match="7"):
        env.recv()
    env.close()


def test_recv_of_a_buffer_that_waits_for_actions_is_refused() -> None:
    env = EnvBuffers(InstanceEnv, 2, {"num_envs": 2}, "instance")
    env.async_reset(seed=0)
    env.recv()
    env.recv()
    with pytest.raises(APIUsageError, match="buffer 0 waits for its actions; send"):
        env.recv()
    with pytest.raises(APIUsageError, match="got 2 action rows, but 2 buffers wait for 4"):
        env.send(np.zeros(2, np.int64))
    env.close()


def test_buffers_that_do_not_divide_the_envs_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"vec.num_buffers is 3 but env.num_envs is 4 .*"):
        EnvBuffers(InstanceEnv, 3, {"num_envs": 4}, "instance")
    config = Config(vec=VecConfig(num_buffers=3), env={"num_envs": 4})
    with pytest.raises(ConfigError, match=r"set env\.num_envs to a multiple of 3"):
        make_vecenv("breakout", config)


def test_buffers_with_a_vectorizer_backend_are_refused_with_its_own_knob() -> None:
    with pytest.raises(ConfigError, match=r"vec.num_buffers is 2 with vec.backend 'serial'.*"):
        VecConfig(backend="serial", num_instances=4, num_buffers=2)
    with pytest.raises(ConfigError, match=r"instances_per_recv to num_instances / 2"):
        VecConfig(backend="multiprocessing", num_instances=4, num_buffers=2)
    with pytest.raises(ConfigError, match="num_buffers"):
        VecConfig(num_buffers=0)
    # A thread and an env object each: a count past any machine's cores is a typo.
    with pytest.raises(ConfigError, match=r"--vec\.num-buffers is 1000, past the bound of 256"):
        check_limits(Config(vec=VecConfig(num_buffers=1000)))


def test_a_saved_state_that_does_not_fit_is_refused() -> None:
    env = EnvBuffers(env_creator("cartpole"), 2, {"num_envs": 4}, "cartpole")
    env.async_reset(seed=0)
    env.recv()
    with pytest.raises(APIUsageError, match="while buffer 1 steps; save between iterations"):
        env.save_state()
    env.recv()
    state = env.save_state()
    sizes = state[:16].view("<i8")
    assert sizes.sum() == state.size - 16
    bad = state.copy()
    bad[:8] = np.array([2**62], "<i8").view(np.uint8)  # a size past the array
    for wrong in (bad, state[:-1], state[:10], state.astype(np.int16)):
        with pytest.raises(APIUsageError, match="needs the 1-D uint8 array save_state"):
            env.load_state(wrong)
    env.load_state(state)
    env.send(np.zeros(4, np.int32))  # every buffer waits for its actions after a load
    env.close()
    python_env = EnvBuffers(InstanceEnv, 2, {"num_envs": 2})
    assert not hasattr(python_env, "save_state")  # its envs have none
    python_env.close()


def test_docstring_example_runs() -> None:
    result = doctest.testmod(env_buffers)
    assert result.attempted > 0 and result.failed == 0
