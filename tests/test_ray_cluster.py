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

from puffer.sweep import RayRunner, RunResult, parse_sweep_config, run_sweep  # noqa: E402
from puffer.vector import make  # noqa: E402
from puffer.vector.testing import DeterministicEnv, check_against_single_envs  # noqa: E402

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


def _noted_node(params: dict) -> RunResult:
    # Long enough that the two runs of a wave overlap and need both nodes' CPUs.
    time.sleep(1.0)
    return RunResult(score=params["x"], cost=1.0)


def test_ray_cluster_two_nodes_vectorizer_and_sweep(cluster: Cluster) -> None:
    vec = make(
        DeterministicEnv,
        4,
        backend="ray",
        num_workers=2,
        ray_address=cluster.address,
        spread=True,
    )
    with vec:
        nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        assert len(nodes) == 2
        assert set(vec.node_ids) == nodes
        check_against_single_envs(vec, steps=50, seed=1)
    ray.shutdown()

    # The runner connects by address itself; the objective travels by value (this test module
    # is not importable on the nodes).
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    config = parse_sweep_config(
        {"method": "random", "max_runs": 4, "x": {"distribution": "linear", "min": 0, "max": 1}}
    )
    with RayRunner(slots=2, num_cpus=1, spread=True, address=cluster.address) as runner:
        by_resource = {}
        for resource in ("node_a", "node_b"):
            # A run that needs a node's own resource can only go there.
            ref = ray.remote(resources={resource: 1}, num_cpus=0)(
                lambda: ray.get_runtime_context().get_node_id()
            ).remote()
            by_resource[resource] = ray.get(ref)
        summary = run_sweep(_noted_node, config, runner=runner)
    assert summary.num_failed == 0
    assert {run.info["ray_node_id"] for run in summary.runs} == set(by_resource.values())
    assert not ray.is_initialized()  # the runner disconnected on close
