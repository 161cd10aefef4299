"""`puffer.vector.gym.VectorEnv` passes as a Gymnasium VectorEnv, down to a CleanRL-style PPO."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from puffer.core import APIUsageError
from puffer.vector import make
from puffer.vector.gym import VectorEnv
from puffer.vector.testing import DeterministicEnv

torch = pytest.importorskip("torch")
nn = torch.nn


def test_vector_gym_spaces_and_metadata() -> None:
    envs = VectorEnv(make(DeterministicEnv, 3, env_kwargs={"num_agents": 2}))
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    assert envs.num_envs == 6
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.single_action_space == gymnasium.spaces.Discrete(5)
    assert envs.action_space.shape == (6,) and envs.observation_space.shape == (6, 4)
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (6, 4) and infos == {} and envs.episodes == []
    obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
    assert rewards.dtype == np.float32 and terminations.dtype == truncations.dtype == bool
    assert not np.shares_memory(obs, envs.vec.buf.observations)  # copy=True by default
    envs.close()
    envs.close()
    assert envs.vec.closed


def test_vector_gym_refuses_partial_batches() -> None:
    vec = make(DeterministicEnv, 4, num_workers=4, instances_per_recv=2)
    with pytest.raises(
        APIUsageError,
        match=r"instances_per_recv=2 < num_instances=4; make it synchronous: leave .*instances_per_rec",
    ):
        VectorEnv(vec)
    vec.close()


def layer_init(layer: nn.Linear, std: float = np.sqrt(2)) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer


class Agent(nn.Module):
    def __init__(self, envs: gymnasium.vector.VectorEnv):
        super().__init__()
        obs_dim = int(np.prod(envs.single_observation_space.shape))
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 32)), nn.Tanh(), layer_init(nn.Linear(32, 1), std=1.0)
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 32)),
            nn.Tanh(),
            layer_init(nn.Linear(32, envs.single_action_space.n), 0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        probs = torch.distributions.Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
def test_vector_gym_cleanrl_style_ppo_update(backend) -> None:
    torch.manual_seed(0)
    envs = VectorEnv(make("gym-CartPole-v1", 4, backend=backend, num_workers=2))
    agent = Agent(envs)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    num_steps, gamma, gae_lambda, clip_coef = 32, 0.99, 0.95, 0.2
    n = envs.num_envs
    obs = torch.zeros((num_steps, n, *envs.single_observation_space.shape))
    actions, logprobs, rewards, dones, values = (torch.zeros((num_steps, n)) for _ in range(5))
    next_obs, _ = envs.reset(seed=1)
    next_obs, next_done = torch.tensor(next_obs), torch.zeros(n)
    episodes = []
    before = [p.detach().clone() for p in agent.parameters()]
    for _iteration in range(3):
        for step in range(num_steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            next_obs, reward, terminations, truncations, infos = envs.step(action.numpy())
            rewards[step] = torch.tensor(reward)
            next_obs = torch.tensor(next_obs)
            next_done = torch.tensor(np.logical_or(terminations, truncations), dtype=torch.float32)
            episodes.extend(envs.episodes)
            if "final_info" in infos:
                lengths = infos["final_info"]["episode_length"][infos["_final_info"]]
                assert (lengths >= 1).all()
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages, lastgaelam = torch.zeros_like(rewards), 0
            for t in reversed(range(num_steps)):
                nextnonterminal = 1.0 - (next_done if t == num_steps - 1 else dones[t + 1])
                nextvalues = next_value if t == num_steps - 1 else values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values
        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        _, newlogprob, entropy, newvalue = agent.get_action_and_value(
            b_obs, actions.reshape(-1).long()
        )
        ratio = (newlogprob - logprobs.reshape(-1)).exp()
        b_adv = advantages.reshape(-1)
        b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
        pg_loss = torch.max(
            -b_adv * ratio, -b_adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
        ).mean()
        v_loss = 0.5 * ((newvalue.view(-1) - returns.reshape(-1)) ** 2).mean()
        loss = pg_loss - 0.01 * entropy.mean() + 0.5 * v_loss
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        optimizer.step()
        assert torch.isfinite(loss)
    envs.close()
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.parameters(), strict=True))
    assert episodes and all(e["episode_length"] >= 1 for e in episodes)
