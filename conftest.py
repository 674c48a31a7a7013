"""Root conftest: how nbval compares the notebooks' stored outputs."""

from __future__ import annotations

import pytest

# plotly's figure JSON changes with the plotly version (template, defaults), so it is not
# compared; every figure cell is paired with a printed readout of the marks it draws, and
# those printed marks are compared instead.
SKIPPED_MIME = ("application/vnd.plotly.v1+json",)


def pytest_collectstart(collector: pytest.Collector) -> None:
    skip = getattr(collector, "skip_compare", None)
    if skip is not None:
        collector.skip_compare = (*skip, *SKIPPED_MIME)


# nbval waits 5 s for a cell's outputs after its reply, then stops the kernel ("Kernel died"
# for every later cell). Four learners' kernels on a shared two-core machine can take longer:
# wait up to a minute instead (a cell that never answers still fails on the cell timeout).
OUTPUT_TIMEOUT_S = 60


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if hasattr(item, "output_timeout"):
            item.output_timeout = OUTPUT_TIMEOUT_S  # type: ignore[attr-defined]
