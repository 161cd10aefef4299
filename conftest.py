"""Suite-wide pytest hooks (the root conftest: pytest loads it for every test path)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the modules that hold `slow` tests first.

    The suite runs on two xdist workers with `--dist loadscope`, which hands out whole modules
    in collection order. The slow ones (extension builds of a minute or more each) started last
    would leave one worker idle while the other finishes them; started first, the many short
    modules fill in beside them.
    """
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: the rest keep their order
