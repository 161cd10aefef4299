"""The driver side of `test_ray_cluster.py`, run by it in a fresh interpreter.

Ray caches a process's own node IP: a pytest process that already ran a local Ray (the vector
and sweep tests do) resolves 127.0.0.1 to the default interface when it connects to a cluster,
and its actors on a loopback cluster then never start. A fresh process connects as a user's
script would. Usage: python ray_cluster_driver.py HOST:PORT
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import ray

from puffer.sweep import RayRunner, RunResult, parse_sweep_config, run_sweep
from puffer.vector import make
from puffer.vector.testing import DeterministicEnv, check_against_single_envs


@dataclass
class Cluster:
    address: str


def _noted_node(params: dict) -> RunResult:
    # Long enough that the two runs of a wave overlap and need both nodes' CPUs.
    time.sleep(1.0)
    return RunResult(score=params["x"], cost=1.0)


def main(cluster: Cluster) -> None:
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

    # The runner connects by address itself; the objective, defined in __main__, travels by
    # value.
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


if __name__ == "__main__":
    main(Cluster(sys.argv[1]))
