"""The claims the dives settle on screen: the naive append fires twice, an outage fires once,
the register is atomic under concurrent boots, and the helpers the notebooks call
(one-call setup, the script view with its KEYS/ARGV table, dates past the first day)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import MIN, shown

import emq_lab
from emq_lab import dives
from emq_lab.clock import hhmm, moment
from emq_lab.dives import cadence, storm, upsert
from emq_lab.dives.upsert import Strategy
from emq_lab.plots.course import beside
from emq_lab.plots.fired import fired_figure, fired_marks
from emq_lab.plots.header import header
from emq_lab.plots.source import ScriptView, lua_html
from emq_lab.schedule import next_on_grid
from emq_lab.scripts import FILES, source


def test_the_naive_rows_each_fire_so_one_schedule_runs_twice(lab: emq_lab.Lab, queue: str) -> None:
    fired = upsert.fire_after_boots(lab, queue, 2)
    assert {s: fired.count(s) for s in Strategy} == {Strategy.GUARD: 1, Strategy.NAIVE: 2, Strategy.UPSERT: 1}
    naive = fired.occurrences[Strategy.NAIVE]
    assert [hhmm(o.fired_at_ms) for o in naive] == ["09:15", "09:20"]
    assert len({o.job_id for o in naive}) == 2 and all(o.name.startswith("digest:") for o in naive)
    assert [hhmm(o.fired_at_ms) for o in fired.occurrences[Strategy.UPSERT]] == ["09:20"]
    assert lab.keys(queue) == [] and lab.clock.now_ms() == lab.clock.start_ms  # type: ignore[attr-defined]
    marks = fired_marks(fired)
    assert marks[1] == "naive append   jobs at 09:15 JOB-000001, 09:20 JOB-000002"
    assert list(fired_figure(fired).data[0].y).count("naive append") == 2


def test_three_boots_of_the_naive_append_fire_three_times_a_cycle(lab: emq_lab.Lab, queue: str) -> None:
    assert upsert.fire_after_boots(lab, queue, 3).count("naive") == 3


def test_a_naive_row_carries_its_own_record_and_lights_its_write(lab: emq_lab.Lab, queue: str) -> None:
    service = upsert.Service(lab, queue, strategy="naive")
    boot = service.boot()
    row = f"digest:{boot.at_ms + 15 * MIN}"
    assert lab.repeat(queue).record(row) == {"every_ms": str(15 * MIN), "template": service.schedule.template}
    assert any("HSET', registry" in line for line in boot.lit_text)
    service.reset()
    assert lab.keys(queue) == []


@pytest.mark.parametrize("measure", ["start-to-start", "fixed grid"])
def test_an_outage_fires_once_on_return_and_says_where_the_cadence_lands(lab: emq_lab.Lab, measure: str) -> None:
    out = cadence.outage(lab, measure, down_for_ms=40 * MIN, runs_after=2)
    assert hhmm(out.down_ms) == "09:22" and hhmm(out.back_ms) == "10:02"
    assert [hhmm(r.release_ms) for r in out.before] == ["09:00", "09:15"]
    assert len(out.on_return) == 1 and hhmm(out.on_return[0].slot_ms) == "09:30"
    assert out.missed == 3  # 09:30, 09:45, 10:00 passed while the pump was down
    expected = ["10:17", "10:32"] if measure == "start-to-start" else ["10:15", "10:30"]
    assert [hhmm(r.release_ms) for r in out.after] == expected
    assert lab.jobs(out_queue(measure)).count() == 5
    lab.reset(out_queue(measure))


def out_queue(measure: str) -> str:
    return cadence.lane_queue(measure, "outage")


def test_an_outage_refuses_start_to_finish_and_bad_windows(lab: emq_lab.Lab) -> None:
    with pytest.raises(ValueError, match="measure"):
        cadence.outage(lab, "start-to-finish")
    with pytest.raises(ValueError, match="down_for_ms"):
        cadence.outage(lab, down_for_ms=0)


def test_concurrent_boots_of_the_same_names_leave_one_row_each(lab: emq_lab.Lab, queue: str) -> None:
    result = storm.stampede(lab, queue, boots=4, names=120)
    assert (result.registered, result.exists, result.won_twice) == (120, 360, 0)
    assert result.registry_rows == result.record_count == 120
    assert "one each: yes" in str(result)
    lab.reset(queue)


def test_a_register_split_into_commands_tells_both_boots_they_won(lab: emq_lab.Lab, queue: str) -> None:
    lines = storm.split_register(lab, queue)
    assert sum("-> 0" in line for line in lines) == 2 and sum("thinks it registered" in line for line in lines) == 2
    assert lab.repeat(queue).record("digest")["every_ms"] == str(30 * MIN)
    lab.reset(queue)


def test_setup_empties_a_dives_queues_and_nothing_else(lab: emq_lab.Lab, queue: str) -> None:
    for q in (*dives.QUEUES["cancel"], queue):
        lab.repeat(q).register("report", MIN, "t")
    done = dives.setup(lab, "cancel")
    assert all(lab.keys(q) == [] for q in dives.QUEUES["cancel"])
    assert lab.repeat(queue).count() == 1
    assert repr(done) == f"cancel dive ready: {len(dives.QUEUES['cancel'])} queues emptied, clock at 09:00"
    with pytest.raises(ValueError, match="dive"):
        dives.setup(lab, "nope")


@pytest.mark.parametrize("name", sorted(FILES.values()))
def test_every_header_names_the_keys_the_body_uses(name: str) -> None:
    head = header(name)
    body = "\n".join(line for line in source(name).splitlines() if not line.startswith("--"))
    for kind, named in (("KEYS", head.keys), ("ARGV", head.argv)):
        used = set(re.findall(kind + r"\[([^\]']+)\]", body))  # KEYS[2], and a batch's KEYS[1 + i]
        in_order = sorted(used, key=lambda index: (int(re.findall(r"\d+", index)[0]), len(index)))
        assert [s.slot for s in named] == [f"{kind}[{index}]" for index in in_order], kind
    assert head.purpose.startswith(name.rpartition("/")[2] + ":") and head.returns


def test_a_header_line_the_view_cannot_read_is_refused_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    from emq_lab.plots import header as module

    lua = "-- x: a script\n--\n-- KEYS[1]  registry  the ZSET\n-- ARGV[1 + i]\nreturn 1\n"
    monkeypatch.setattr(module, "source", lambda name: lua)
    with pytest.raises(ValueError, match=r"x\.lua's header line 'ARGV\[1 \+ i\]'"):
        module.header("x")


def test_the_script_view_shows_every_line_and_the_table() -> None:
    view = ScriptView("advance")
    rendered = shown(view)["text/html"]
    assert rendered.count("ZSCORE") >= 1 and "KEYS[2]" in rendered and "read_ms" in rendered
    assert re.sub(r"<[^>]+>", "", lua_html(view.text)).count("\n") >= len(view.text.splitlines())
    assert repr(view).splitlines()[1].split()[:2] == ["KEYS[1]", "registry"]


def test_a_time_on_a_later_day_carries_its_date() -> None:
    start = emq_lab.SimClock("2026-01-05T09:00:00Z").start_ms
    assert moment(start + 15 * MIN, day_ms=start) == "09:15"
    assert moment(start + 24 * 60 * MIN + 15 * MIN, day_ms=start) == "2026-01-06 09:15"


# Worked through BullMQ 6's getJobSchedulerEveryNextMillis.lua by hand (every 15 min; prev, now ->
# next): on time the slot after prev; behind, floor(now / every) * every + offset, one period more
# when that is not after now.
BULLMQ_EVERY = [
    ("09:05", "09:20", 5, "09:20"),  # on time: prev + every, even when it is exactly now
    ("09:05", "09:32", 5, "09:35"),  # 09:20 missed: 09:30 + 5 min is after now (the formula before gave 09:50)
    ("09:05", "09:40", 5, "09:50"),  # 09:30 + 5 min is behind now: one period more
    ("09:05", "09:35", 5, "09:50"),  # now on a slot of the grid: the next one, not now
    ("09:00", "09:32", 0, "09:45"),  # no offset: 09:30 is behind now, so 09:45
    ("09:05", "09:32", 0, "09:45"),  # a stored offset of 0 (a period changed on deploy day) puts it on :00/:15
]


@pytest.mark.parametrize(("prev", "now", "offset_min", "expected"), BULLMQ_EVERY)
def test_bullmqs_every_matches_its_script_worked_by_hand(prev: str, now: str, offset_min: int, expected: str) -> None:
    day = emq_lab.SimClock("2026-01-05T00:00:00Z").start_ms
    at = {t: day + int(t[:2]) * 60 * MIN + int(t[3:]) * MIN for t in (prev, now)}
    found = cadence.next_bullmq_every(at[prev], 15 * MIN, at[now], offset_ms=offset_min * MIN)
    assert hhmm(found) == expected


def test_the_grid_agrees_with_bullmqs_every_whatever_the_first_runs_offset() -> None:
    start = emq_lab.SimClock("2026-01-05T09:00:00Z").start_ms
    for every in (15 * MIN, 7 * MIN, 2 * MIN + 30_000):
        for shift in range(0, every, every // 5):
            first = start + shift
            for late in range(0, 5 * every, 61_000):
                now = first + every + late
                assert next_on_grid(first, every, now) == cadence.next_bullmq_every(first, every, now), (
                    every,
                    shift,
                    late,
                )


def test_without_the_compare_the_re_registrations_first_run_is_overwritten(lab: emq_lab.Lab, queue: str) -> None:
    from emq_lab.dives import race

    lines = race.without_compare_and_set(lab, queue)
    assert "{:ok, :advanced}" in lines[2] and lines[3] == "registry: report @ 09:15; record: every 60 min"
    guarded = race.Race(lab, queue)
    guarded.play("re-register")
    assert guarded.advance_outcome is emq_lab.Outcome.MOVED
    assert [(n, hhmm(ms)) for n, ms in lab.repeat(queue).entries()] == [("report", "09:30")]
    lab.reset(queue)


def test_deploy_day_guard_keeps_the_old_period_and_upsert_takes_the_new(lab: emq_lab.Lab, queue: str) -> None:
    guard, upsert_line = upsert.deploy_day(lab, queue)
    assert guard.endswith("{:ok, :exists}; the registry keeps every 15 min, next run 09:15")
    assert upsert_line.endswith("{:ok, :updated}; the registry keeps every 30 min, next run 09:35")
    assert lab.keys(queue) == []


# -- the claims table: notebooks/CLAIMS.md maps each course claim to the cell that shows it ----

CLAIMS = Path(__file__).resolve().parent.parent / "notebooks" / "CLAIMS.md"
ROW = re.compile(r"^\| *(\d+) *\|")


def claim_rows() -> list[tuple[str, str, str, str]]:
    """(number, notebook, cell id, fact) for each row of the table."""
    rows = []
    for line in CLAIMS.read_text(encoding="utf-8").splitlines():
        if ROW.match(line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            where, fact = cells[3].strip("`"), cells[4].strip("`").replace("\\|", "|")
            notebook, cell = where.split("#")
            rows.append((cells[0], notebook, cell, fact))
    return rows


def cell_text(cell: dict[str, Any]) -> str:
    """A cell's source and the text of its stored outputs (streams, text/plain, text/html)."""
    parts = ["".join(cell["source"])]
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        for kind in ("text/plain", "text/html"):
            parts.append("".join(output.get("data", {}).get(kind, "")))
    return "\n".join(parts)


def test_the_claims_table_is_numbered_and_covers_every_dive() -> None:
    rows = claim_rows()
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    assert {r[1] for r in rows} >= {"00-start", "01-upsert", "02-cadence", "03-cancel"}


@pytest.mark.parametrize("row", claim_rows(), ids=lambda r: f"claim-{r[0]}")
def test_each_claim_names_a_cell_that_holds_its_fact(row: tuple[str, str, str, str]) -> None:
    number, notebook, cell_id, fact = row
    path = CLAIMS.parent / f"{notebook}.ipynb"
    assert path.is_file(), f"claim {number}: no notebook {notebook}"
    cells = {cell.get("id"): cell for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]}
    assert cell_id in cells, f"claim {number}: {notebook} has no cell {cell_id}"
    assert fact in cell_text(cells[cell_id]), f"claim {number}: {notebook}#{cell_id} no longer says {fact!r}"


# -- the course's scripts beside this lab's (plots/course.py) ---------------------------------


@pytest.mark.parametrize("name", ["register", "advance", "contrast/upsert"])
def test_each_page_script_sits_beside_lines_of_ours_that_make_the_same_calls(name: str) -> None:
    shown = beside(name)
    ours = shown.excerpt()
    start, end = shown.line_numbers()
    assert source(name).splitlines()[start - 1 : end] == ours.splitlines()
    calls = re.findall(r"\b(EXISTS|HSET|ZADD|ZREM|ZSCORE)\b", shown.course)
    mine = re.findall(r"'(EXISTS|HSET|ZADD|ZREM|ZSCORE)'", ours)
    # the page's calls, each in ours, in the page's order (ours may add calls, e.g. the compare)
    assert list(dict.fromkeys(c for c in mine if c in calls)) == list(dict.fromkeys(calls))
    assert "line" in repr(shown) and "what differs, and why:" in repr(shown)
    assert f"{start} to {end}" in shown.line_range() or start == end


def test_beside_refuses_a_script_the_pages_do_not_print() -> None:
    with pytest.raises(ValueError, match="name: the course pages print no script for 'cancel'"):
        beside("cancel")


# -- dive 3's exercise: the learner writes the sweep; the compare-and-set is the stretch --------------

SWEEP_HERE = "-- your code here: the sweep (and, as a stretch, the compare-and-set)\n"


def test_the_skeleton_writes_always_and_the_split_cancel_asks_for_the_sweep() -> None:
    from emq_lab import exercises

    skeleton = exercises.skeleton("advance")
    assert SWEEP_HERE in skeleton and "EXISTS" not in skeleton
    assert "it resurrected the cancelled report" in str(exercises.advance(skeleton))
    guard_only = skeleton.replace(SWEEP_HERE, "if redis.call('EXISTS', record) == 0 then\n  return 0\nend\n")
    told = str(exercises.advance(guard_only))
    assert told.startswith("advance: FAILED in the order pump reads due -> cancel's DEL -> pump enqueues"), told
    assert "the cancel's DEL took report's record and its ZREM has not come yet" in told
    assert "    after:    registry = report @ 09:00; records: (none)" in told  # the member the sweep must remove


def test_the_sweep_passes_its_orders_and_the_stretch_is_the_compare_and_set() -> None:
    from emq_lab import exercises

    sweep = "if redis.call('EXISTS', record) == 0 then\n  redis.call('ZREM', registry, name)\n  return 0\nend\n"
    mine = exercises.skeleton("advance").replace(SWEEP_HERE, sweep)
    told = exercises.advance(mine)
    assert not told.passed
    first, second = str(told).splitlines()[:2]
    assert first.startswith("advance: the sweep passes all 10 of its orders") and "the stretch" in first
    assert (
        second.startswith("advance: FAILED in the order pump reads due -> cancel lands") and "registered anew" in second
    )
    cas = (
        "local score = redis.call('ZSCORE', registry, name)\n"
        "if not score or tonumber(score) ~= tonumber(read_ms)"
        " or redis.call('HGET', record, 'every_ms') ~= read_every then\n  return 2\nend\n"
    )
    told = exercises.advance(mine.replace(sweep, sweep + cas))  # compares with "" too: rep.advance sends it
    assert not told.passed and 'sends ARGV[3] (read_ms) and ARGV[4] (read_every) as "": no check' in str(told)
    checked = (
        "local score = redis.call('ZSCORE', registry, name)\n"
        "if read_ms ~= '' and (not score or tonumber(score) ~= tonumber(read_ms)) then\n  return 2\nend\n"
        "if read_every ~= '' and redis.call('HGET', record, 'every_ms') ~= read_every then\n  return 2\nend\n"
    )
    assert exercises.advance(mine.replace(sweep, sweep + checked)).passed


def test_the_course_advance_is_not_handed_out_as_the_buggy_one() -> None:
    from emq_lab import exercises
    from emq_lab.plots.course import beside

    page = beside("advance").course
    assert page.splitlines()[0].strip() not in exercises.buggy("advance")  # type: ignore[operator]
    assert "course page" not in exercises.buggy("advance") and "@advance" not in exercises.buggy("advance")  # type: ignore[operator]
    notebook = json.loads((CLAIMS.parent / "03-cancel.ipynb").read_text(encoding="utf-8"))
    code = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert 'buggy("advance")' not in code and 'skeleton("advance")' in code
