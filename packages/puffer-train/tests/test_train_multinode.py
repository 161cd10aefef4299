"""torchrun across 2 "nodes" x 1 rank on localhost, joined by a c10d rendezvous (gloo, CPU).

Each node is its own `torchrun --nnodes 2 --node-rank R` process, as on two machines, with its
own data dir: parameters must end equal on both ranks, and only rank 0 writes checkpoints.
"""

from __future__ import annotations

import os
import socket
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

    out, data_dir = sys.argv[1], sys.argv[2]
    config = Config(
        train=TrainConfig(total_timesteps=1024, horizon=16, batch_size=128, minibatch_size=64,
                          update_epochs=2, device="cpu", data_dir=data_dir, run_id="multinode",
                          checkpoint_interval=1),
        policy=PolicyConfig(hidden_size=16),
        vec=VecConfig(backend="serial", num_instances=8),
    )
    result = train("gym-CartPole-v1", config)
    rank = dist.get_rank()
    torch.save([p.detach() for p in result.policy.parameters()], f"{out}/params_{rank}.pt")
    dist.barrier()  # gloo aborts a rank whose peer tears down first
    dist.destroy_process_group()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes_naming(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def test_torchrun_two_nodes_c10d_rendezvous(tmp_path: Path) -> None:
    script = tmp_path / "multinode_train.py"
    script.write_text(SCRIPT)
    endpoint = f"127.0.0.1:{_free_port()}"
    nodes = []
    for node_rank in (0, 1):
        data_dir = tmp_path / f"node{node_rank}"
        command = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nnodes=2",
            f"--node-rank={node_rank}",
            "--nproc-per-node=1",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={endpoint}",
            "--rdzv-id=puffer-multinode-test",
            str(script),
            str(tmp_path),
            str(data_dir),
        ]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        nodes.append(
            subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
            )
        )
    try:
        outputs = [node.communicate(timeout=280)[0] for node in nodes]
    finally:
        for node in nodes:
            if node.poll() is None:
                node.kill()
                node.wait()
    for node, output in zip(nodes, outputs, strict=True):
        assert node.returncode == 0, output[-3000:]
    rank0 = torch.load(tmp_path / "params_0.pt", weights_only=True)
    rank1 = torch.load(tmp_path / "params_1.pt", weights_only=True)
    for a, b in zip(rank0, rank1, strict=True):
        assert torch.equal(a, b)
    # Checkpoints come from rank 0 only, so exactly one of the two nodes has any.
    written = [sorted((tmp_path / f"node{r}").rglob("checkpoint*.pt")) for r in (0, 1)]
    assert sum(1 for files in written if files) == 1, written
    assert not _processes_naming(str(script)), "torchrun or a rank outlived the test"
