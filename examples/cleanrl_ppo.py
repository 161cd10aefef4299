"""PPO in CleanRL's single-file style (after cleanrl/ppo.py), on puffer-vector's Gymnasium VectorEnv.

The only puffer lines are the env construction: `VectorEnv(make(...))` is a Gymnasium
`VectorEnv` with SAME_STEP autoreset, so a truncated episode's last observation arrives in
`infos["final_obs"]` and is bootstrapped from, as gymnasium 1.x code does. Episode returns
come from `infos["final_info"]["episode_return"]` (rows masked by `infos["_final_info"]`).

    uv run python examples/cleanrl_ppo.py                          # CartPole-v1, 200k steps
    uv run python examples/cleanrl_ppo.py --total-timesteps 50000 --backend serial
"""

from __future__ import annotations

import argparse
import time
from collections import deque

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from puffer.vector import make
from puffer.vector.gym import VectorEnv


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-id", default="CartPole-v1", help="a Gymnasium id (Discrete actions)")
    parser.add_argument("--backend", default="multiprocessing")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--total-timesteps", type=int, default=200_000)
    parser.add_argument("--learning-rate", type=float, default=2.5e-3)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--update-epochs", type=int, default=4)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim: int, num_actions: int):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, num_actions), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main(argv: list[str] | None = None) -> float:
    """Train; returns the mean return of the last 20 finished episodes."""
    args = parse_args(argv)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = args.total_timesteps // batch_size
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    envs = VectorEnv(make(f"gym-{args.env_id}", args.num_envs, backend=args.backend))
    agent = Agent(int(np.prod(envs.single_observation_space.shape)), envs.single_action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, *envs.single_observation_space.shape))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    returns_seen: deque[float] = deque(maxlen=20)
    global_step, start = 0, time.time()
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs)
    next_done = torch.zeros(args.num_envs)
    for iteration in range(1, num_iterations + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * (
            args.learning_rate
        )
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            next_obs, reward, terminations, truncations, infos = envs.step(
                action.numpy().astype(np.int32)
            )
            reward = torch.as_tensor(reward)
            # Truncated, not terminal: bootstrap from V(final observation) (SAME_STEP autoreset).
            if "final_obs" in infos:
                for row in np.flatnonzero(truncations & ~terminations):
                    final = torch.as_tensor(infos["final_obs"][row])
                    with torch.no_grad():
                        reward[row] += args.gamma * agent.get_value(final).item()
            rewards[step] = reward
            next_obs = torch.as_tensor(next_obs)
            next_done = torch.as_tensor(terminations | truncations, dtype=torch.float32)
            if "final_info" in infos:
                ended = infos["_final_info"]
                returns_seen.extend(infos["final_info"]["episode_return"][ended])

        with torch.no_grad():  # GAE
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns, b_values = (
            advantages.reshape(-1),
            returns.reshape(-1),
            values.reshape(-1),
        )
        b_inds = np.arange(batch_size)
        for _ in range(args.update_epochs):
            rng.shuffle(b_inds)
            for begin in range(0, batch_size, minibatch_size):
                mb = b_inds[begin : begin + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb], b_actions[mb]
                )
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio,
                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef),
                ).mean()
                v_clipped = b_values[mb] + torch.clamp(
                    newvalue.view(-1) - b_values[mb], -args.clip_coef, args.clip_coef
                )
                v_loss = (
                    0.5
                    * torch.max(
                        (newvalue.view(-1) - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2
                    ).mean()
                )
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        mean_return = float(np.mean(returns_seen)) if returns_seen else float("nan")
        print(
            f"step {global_step:>8}  mean return (last 20) {mean_return:7.1f}  "
            f"SPS {int(global_step / (time.time() - start))}"
        )
    envs.close()
    return float(np.mean(returns_seen))


if __name__ == "__main__":
    main()
