"""Bad input raises a ValueError naming the field, and nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers import snapshot

import emq_lab
from emq_lab.validate import MAX_EVERY_MS, MAX_TEMPLATE_BYTES

pytestmark = pytest.mark.embedded_only  # the logic is the package's; the backend tests cover the servers

GOOD: dict[str, Any] = {"name": "ok", "every_ms": 1000, "template": "t", "first_in_ms": 0}

BAD_REGISTRATIONS = [
    ("name", ""),
    ("name", "x" * 201),
    ("name", 42),
    ("name", None),
    ("name", b"bytes"),
    ("name", "a{b"),
    ("name", "a}b"),
    ("name", "star*"),
    ("name", "what?"),
    ("name", "[x]"),
    ("name", "\ud800"),
    ("every_ms", 0),
    ("every_ms", -5),
    ("every_ms", 1.5),
    ("every_ms", 1000.0),
    ("every_ms", True),
    ("every_ms", "1000"),
    ("every_ms", MAX_EVERY_MS + 1),
    ("template", None),
    ("template", b"{}"),
    ("template", "x" * (MAX_TEMPLATE_BYTES + 1)),
    ("template", "é" * (MAX_TEMPLATE_BYTES // 2 + 1)),
    ("template", "\udcff"),
    ("first_in_ms", -1),
    ("first_in_ms", 0.5),
    ("first_in_ms", False),
]


@pytest.mark.parametrize(("field", "value"), BAD_REGISTRATIONS)
def test_bad_registration_is_refused_before_any_write(lab: emq_lab.Lab, queue: str, field: str, value: object) -> None:
    rep = lab.repeat(queue)
    rep.register("existing", 1000, "t")
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match=f"^{field}:"):
        rep.register(**{**GOOD, field: value})
    assert snapshot(lab, queue) == before


def test_limits_themselves_are_accepted(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    template = "é" * (MAX_TEMPLATE_BYTES // 2)
    name = "n" * 200
    assert rep.register(name, MAX_EVERY_MS, template, first_in_ms=0) == "registered"
    assert rep.record(name) == {"every_ms": str(MAX_EVERY_MS), "template": template}
    assert rep.register("odd: names\nwith\x00bytes ok", 1, "") == "registered"
    assert rep.record("odd: names\nwith\x00bytes ok") == {"every_ms": "1", "template": ""}


BAD_CALLS: list[tuple[str, Callable[[emq_lab.Lab, str], object]]] = [
    ("queue", lambda lab, q: lab.repeat("bad{queue}")),
    ("queue", lambda lab, q: lab.repeat("")),
    ("queue", lambda lab, q: lab.pump("a*")),
    ("queue", lambda lab, q: lab.jobs(7)),  # type: ignore[arg-type]
    ("queue", lambda lab, q: lab.reset("x?")),
    ("name", lambda lab, q: lab.repeat(q).cancel("")),
    ("name", lambda lab, q: lab.repeat(q).advance("a]", 1000)),
    ("every_ms", lambda lab, q: lab.repeat(q).advance("existing", 0)),
    ("limit", lambda lab, q: lab.repeat(q).due(limit=0)),
    ("limit", lambda lab, q: lab.jobs(q).browse(limit=-1)),
    ("batch", lambda lab, q: lab.pump(q, batch=0)),
    ("until_ms", lambda lab, q: lab.pump(q).run(until_ms="10:00", step_ms=1000)),  # type: ignore[arg-type]
    ("step_ms", lambda lab, q: lab.pump(q).run(until_ms=0, step_ms=0)),
    ("slot_keyed", lambda lab, q: lab.pump(q, slot_keyed=10**5000)),  # type: ignore[arg-type]
    ("slot_keyed", lambda lab, q: lab.pump(q, slot_keyed="yes" * 50_000)),  # type: ignore[arg-type]
    (r"items\[0\]", lambda lab, q: lab.repeat(q).register_many([10**5000])),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("field", "call"), BAD_CALLS)
def test_bad_arguments_elsewhere_are_refused(
    lab: emq_lab.Lab, queue: str, field: str, call: Callable[[emq_lab.Lab, str], object]
) -> None:
    lab.repeat(queue).register("existing", 1000, "t")
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match=f"^{field}:"):
        call(lab, queue)
    assert snapshot(lab, queue) == before
