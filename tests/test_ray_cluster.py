"""A real 2-node Ray cluster on localhost: vectorizer actors and sweep runs land on both nodes.

The cluster is started with the `ray` CLI exactly as on real machines (`ray start --head`, then
`ray start --address` for the second node with its own custom resource), one CPU and a 100 MB
object store per node, and connected to by address. Each node has one CPU, so two one-CPU
actors (or runs) at once must go to different nodes. Teardown kills every process whose command
line names this cluster's temp dir (all Ray processes of this cluster do, and no other), so it
never touches another Ray on the machine the way `ray stop --force` would; it runs even when
the test fails, and the test then asserts nothing of the cluster is left.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# Under `uv run`, Ray would start each worker through `uv run` too (tens of seconds each).
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
ray = pytest.importorskip("ray")


RAY = str(Path(sys.executable).with_name("ray"))
ENV = {
    **os.environ,
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
    "RAY_AUTH_MODE": "disabled",
}
START_TIMEOUT_SECONDS = 180


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _node_flags(resource: str) -> list[str]:
    """Flags of one small node; every port explicit so that two nodes share one host."""
    metrics, listen, grpc, runtime_env, node_manager, object_manager = _free_ports(6)
    return [
        "--node-ip-address=127.0.0.1",
        "--num-cpus=1",
        f'--resources={{"{resource}": 1}}',
        "--object-store-memory=100000000",
        f"--metrics-export-port={metrics}",
        f"--dashboard-agent-listen-port={listen}",
        f"--dashboard-agent-grpc-port={grpc}",
        f"--runtime-env-agent-port={runtime_env}",
        f"--node-manager-port={node_manager}",
        f"--object-manager-port={object_manager}",
        "--disable-usage-stats",
    ]


def _cluster_pids(temp_dir: str) -> list[int]:
    """Processes of this cluster: their command lines name its temp dir."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if temp_dir.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            pass  # exited meanwhile
    return pids


def _kill(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _ray_shm() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if "plasma" in n or "ray" in n.lower()}


@dataclass
class Cluster:
    address: str
    temp_dir: str


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if not Path(RAY).exists():
        pytest.skip("the ray CLI is not installed (the [ray] extra)")
    shm_before = _ray_shm()
    # A short path: Ray's unix sockets live under it and socket paths are limited to 107 bytes.
    temp_dir = tempfile.mkdtemp(prefix="rc-", dir="/tmp")
    (port,) = _free_ports(1)
    address = f"127.0.0.1:{port}"
    try:
        for args in (
            [
                "--head",
                f"--port={port}",
                "--include-dashboard=false",
                f"--temp-dir={temp_dir}",
                *_node_flags("node_a"),
            ],
            [f"--address={address}", *_node_flags("node_b")],
        ):
            started = subprocess.run(
                [RAY, "start", *args],
                env=ENV,
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT_SECONDS,
                start_new_session=True,
            )
            # Ray waits a fixed 30 s for a node to come up; a heavily loaded machine can miss it.
            assert started.returncode == 0, f"ray start {args[0]} failed:\n{started.stderr[-3000:]}"
        yield Cluster(address, temp_dir)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _kill(_cluster_pids(temp_dir), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _cluster_pids(temp_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        _kill(_cluster_pids(temp_dir), signal.SIGKILL)
        time.sleep(0.5)
        leftover = _cluster_pids(temp_dir)
        subprocess.run(["rm", "-rf", temp_dir], check=False)
        assert not leftover, f"processes of the Ray cluster left behind: {leftover}"
        assert not _ray_shm() - shm_before, f"/dev/shm objects left: {_ray_shm() - shm_before}"


def test_ray_cluster_two_nodes_vectorizer_and_sweep(cluster: Cluster) -> None:
    """Vectorizer workers land on both nodes and step exactly; sweep runs land on both nodes
    (tests/ray_cluster_driver.py, in a fresh interpreter: see its docstring)."""
    driver = Path(__file__).with_name("ray_cluster_driver.py")
    result = subprocess.run(
        [sys.executable, str(driver), cluster.address],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_SECONDS,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
