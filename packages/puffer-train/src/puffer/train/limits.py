"""Upper bounds on the sizes a config asks for, checked before anything is allocated.

The typed sections check that a size is positive; a size can also be too large to be anything
but a typo or an attack (`--env.num-envs 1e9` reaches the C binding as a billion envs, which
dies in `std::bad_alloc`; `--policy.hidden-size 1e8` builds for minutes before a 100 GB
allocation fails). Each bound here is far past what any run on one machine uses and short of
what exhausts it, and the message names the key, the value and the bound.
"""

from __future__ import annotations

from puffer.train.config import Config, ConfigError
from puffer.train.config.keys import flag

__all__ = ["LIMITS", "check_limits"]

# (section, key) -> (bound, why it is enough).
LIMITS: dict[tuple[str, str], tuple[int, str]] = {
    ("env", "num_envs"): (1 << 20, "agents or instances in one env"),
    ("vec", "num_instances"): (1 << 14, "env objects one vectorizer makes"),
    ("vec", "num_buffers"): (1 << 8, "env buffers, each an env object with a thread"),
    ("policy", "hidden_size"): (1 << 16, "units per layer"),
    ("policy", "num_layers"): (1 << 10, "layers"),
    ("train", "horizon"): (1 << 20, "steps per segment"),
    ("train", "batch_size"): (1 << 32, "agent steps per iteration"),
    ("train", "minibatch_size"): (1 << 32, "agent steps per minibatch"),
    # Steps are counted in int64 and shown as floats: past 2**53 a float drops steps.
    ("train", "total_timesteps"): (1 << 53, "agent steps in one run"),
    # torch.manual_seed takes an int64.
    ("train", "seed"): ((1 << 63) - 1, "a seed torch accepts"),
}


def check_limits(config: Config) -> None:
    """Raise `ConfigError` for the first size in `config` past its bound in `LIMITS`.

    Example:
        >>> from puffer.train import Config, PolicyConfig
        >>> try:
        ...     check_limits(Config(policy=PolicyConfig(hidden_size=10**8)))
        ... except ConfigError as error:
        ...     print(str(error)[:59])
        --policy.hidden-size is 100000000, past the bound of 65,536
    """
    for (section, key), (bound, what) in LIMITS.items():
        values = config.env_kwargs() if section == "env" else vars(getattr(config, section))
        value = values.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > bound:
            raise ConfigError(
                f"{flag((section, key))} is {value}, past the bound of {bound:,} {what} puffer "
                "accepts (a size that large exhausts memory or overflows before the first "
                "step); lower it"
            )
