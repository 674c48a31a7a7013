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
