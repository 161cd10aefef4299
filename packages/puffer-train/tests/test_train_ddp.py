"""torchrun with two CPU processes (gloo): parameters stay identical across ranks."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import torch

SCRIPT = textwrap.dedent(
    """
    import sys
    import torch
    import torch.distributed as dist
    from puffer.train import Config, PolicyConfig, TrainConfig, VecConfig, train

    out = sys.argv[1]
    config = Config(
        train=TrainConfig(total_timesteps=1024, horizon=16, batch_size=128, minibatch_size=64,
                          update_epochs=2, device="cpu", data_dir=out, run_id="ddp",
                          checkpoint_interval=0),
        policy=PolicyConfig(hidden_size=16),
        vec=VecConfig(backend="serial", num_instances=8),
    )
    result = train("gym-CartPole-v1", config)
    rank = dist.get_rank()
    torch.save([p.detach() for p in result.policy.parameters()], f"{out}/params_{rank}.pt")
    with open(f"{out}/steps_{rank}.txt", "w") as f:
        f.write(str(result.global_step))
    # Both ranks done before teardown: gloo aborts (SIGABRT) a rank whose peer tears down its
    # connections while it is still closing its own.
    dist.barrier()
    dist.destroy_process_group()
    """
)


def test_torchrun_two_ranks_keep_parameters_identical(tmp_path: Path) -> None:
    script = tmp_path / "ddp_train.py"
    script.write_text(SCRIPT)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        str(script),
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rank0 = torch.load(tmp_path / "params_0.pt", weights_only=True)
    rank1 = torch.load(tmp_path / "params_1.pt", weights_only=True)
    for a, b in zip(rank0, rank1, strict=True):
        assert torch.equal(a, b)
    # total_timesteps counts both ranks: 4 epochs of 2 ranks x 128 steps.
    assert (tmp_path / "steps_0.txt").read_text() == "1024"
    assert (tmp_path / "steps_1.txt").read_text() == "1024"
