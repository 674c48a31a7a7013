"""Each exercise check records its result in the learner's own namespace, and the instructor's
overview reads it back: passed, failed or not tried, and when."""

from __future__ import annotations

import itertools

import emq_classroom as classroom
import emq_lab
from emq_lab import exercises, keys, progress

_runs = itertools.count(1)


def test_checks_record_their_results_in_the_learners_namespace() -> None:
    ns = f"prog{next(_runs)}"
    mine = emq_lab.connect("embedded", clock=emq_lab.SimClock(), namespace=ns)
    try:
        assert exercises.register(exercises.solution("register"), mine).passed
        assert not exercises.register(exercises.buggy("register"), lab=mine).passed
        assert not exercises.upsert.predict(lab=mine, size_after_boot_2=7).passed
        stored = mine.client.hgetall(keys.progress(ns))
        assert set(stored) == {"register", "upsert.predict"}
        assert stored["register"].startswith("failed ") and stored["upsert.predict"].startswith("failed ")
        row = classroom.overview(mine.client, prefix=ns).learners[0]
        states = {name: state for name, state, _ in row.exercises()}
        assert states["register"] == "failed" and states["upsert.predict"] == "failed"
        assert states["advance"] == "not tried" and row.started and row.queues == ()
        assert keys.split_namespaced(keys.progress(ns)) is None  # never read as a queue
        assert keys.progress(ns).startswith(keys.namespace_pattern(ns).rstrip("*"))  # inside the learner's ACL pattern
    finally:
        mine.client.delete(keys.progress(ns))
        mine.close()


def test_a_progress_field_that_is_not_a_result_is_reported_not_believed() -> None:
    attempts, problems = progress.parse({"register": "passed 1767603600000", "advance": "yes!", "x": "failed soon"})
    assert list(attempts) == ["register"] and attempts["register"].passed
    assert len(problems) == 2 and "'advance'" in problems[0]
