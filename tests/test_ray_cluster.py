"""A real 2-node Ray cluster on localhost: vectorizer actors and sweep runs land on both nodes.

The cluster is started with the `ray` CLI exactly as on real machines (`ray start --head`, then
`ray start --address` for the second node with its own custom resource), one CPU and a 100 MB
object store per node, and connected to by address. Each node has one CPU, so two one-CPU
actors (or runs) at once must go to different nodes. Each `ray start` runs in a session of its
own; teardown kills every process in those sessions (or naming the cluster's temp dir), so it
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
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Under `uv run`, Ray would start each worker through `uv run` too (tens of seconds each).
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
ray = pytest.importorskip("ray")

# Starts a Ray cluster of real processes: about a minute on 2 cores, so scheduled first.
pytestmark = pytest.mark.slow


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


@dataclass
class Cluster:
    address: str
    temp_dir: str
    sessions: list[int] = field(default_factory=list)


def _cluster_pids(cluster: Cluster) -> list[int]:
    """Processes of this cluster: those in the sessions of its `ray start` calls (each runs in
    a new session, and the daemons it starts stay there, including the ones whose command line
    names neither the temp dir nor the address: the Ray client server binds the machine's own
    IP, the dashboard and runtime-env agents retitle themselves `ray::...`), and any other whose
    command line names the temp dir."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or (pid := int(entry.name)) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # dead, waiting for init to reap it
            if os.getsid(pid) in cluster.sessions or (
                cluster.temp_dir.encode() in (entry / "cmdline").read_bytes()
            ):
                pids.append(pid)
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


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if not Path(RAY).exists():
        pytest.skip("the ray CLI is not installed (the [ray] extra)")
    shm_before = _ray_shm()
    # A short path: Ray's unix sockets live under it and socket paths are limited to 107 bytes.
    temp_dir = tempfile.mkdtemp(prefix="rc-", dir="/tmp")
    port, client_server_port = _free_ports(2)
    address = f"127.0.0.1:{port}"
    cluster = Cluster(address, temp_dir)
    try:
        for args in (
            [
                "--head",
                f"--port={port}",
                f"--ray-client-server-port={client_server_port}",
                "--include-dashboard=false",
                f"--temp-dir={temp_dir}",
                *_node_flags("node_a"),
            ],
            [f"--address={address}", *_node_flags("node_b")],
        ):
            started = subprocess.Popen(
                [RAY, "start", *args],
                env=ENV,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            cluster.sessions.append(started.pid)  # the session leader's pid is the session id
            _, stderr = started.communicate(timeout=START_TIMEOUT_SECONDS)
            # Ray waits a fixed 30 s for a node to come up; a heavily loaded machine can miss it.
            assert started.returncode == 0, f"ray start {args[0]} failed:\n{stderr[-3000:]}"
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _kill(_cluster_pids(cluster), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _cluster_pids(cluster) and time.monotonic() < deadline:
            time.sleep(0.2)
        _kill(_cluster_pids(cluster), signal.SIGKILL)
        time.sleep(0.5)
        leftover = _cluster_pids(cluster)
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
