"""Predict, then check: every form a dive prints for an answer is read as that answer, each
question states the clock it assumes (the dive's), and a check names the questions left out."""

from __future__ import annotations

import re
from typing import Any

import pytest
import redis
from helpers import START

import emq_lab
from emq_lab import exercises
from emq_lab.exercises import questions

# Reading an answer is the same on every server; the dives' answers per backend are test_dive_predictions'.
pytestmark = pytest.mark.embedded_only


def test_a_boot_2_answer_in_any_printed_form_is_right(lab: emq_lab.Lab) -> None:
    for said in ("exists", ":exists", "{:ok, :exists}", "EXISTS", 0, "raw 0", emq_lab.Outcome.EXISTS):
        check = exercises.upsert.predict(lab=lab, boot_2_answers=said)
        assert check.passed, (said, str(check))
    wrong = exercises.upsert.predict(lab=lab, boot_2_answers=1)
    assert "you said registered, it is exists" in str(wrong)


def test_a_reason_that_would_give_away_another_answer_waits_and_the_truth_is_said_once(lab: emq_lab.Lab) -> None:
    wrong = exercises.upsert.predict(lab=lab, size_after_boot_2=998)
    waits = "(why, once you have answered boot_2_answers and registry_after_boot_2 too)"
    assert str(wrong).splitlines()[0] == f"size_after_boot_2: not quite - you said 998, it is 1 {waits}"
    right = exercises.upsert.predict(lab=lab, size_after_boot_2=1)
    assert str(right).splitlines()[0] == f"size_after_boot_2: right - 1 {waits}"
    told = exercises.upsert.predict(
        lab=lab, size_after_boot_2=998, boot_2_answers="exists", registry_after_boot_2="digest @ 09:15"
    )
    assert "size_after_boot_2: not quite - you said 998, it is 1: " in str(told) and "(why, once" not in str(told)


def test_counts_read_as_numbers_with_or_without_their_unit(lab: emq_lab.Lab) -> None:
    check = exercises.upsert.predict(lab=lab, size_after_boot_2="1 row", naive_rows_after_3_boots="3")
    assert check.passed, str(check)
    drift = exercises.cadence.predict(lab=lab, drift_after_4_cycles_min="+12 min")
    assert drift.passed, str(drift)


def test_times_without_a_leading_zero_or_on_one_line_are_right(lab: emq_lab.Lab) -> None:
    for said in (["9:00", "9:15", "9:30", "9:45"], ("09:00", "09:15", "09:30", "09:45"), "09:00 09:15 9:30, 9:45"):
        check = exercises.cadence.predict(lab=lab, next_runs=said)
        assert check.passed, (said, str(check))
    late = exercises.cadence.predict(lab=lab, finish_based_runs="9:00 9:15 9:30 9:45")
    assert "it is [09:00, 09:19, 09:38, 09:57]" in str(late)


def test_the_cancel_questions_run_on_the_dives_clock(lab: emq_lab.Lab) -> None:
    assert all("09:15" in field.ask for field in exercises.cancel.fields()[1:])
    for said in ("report @ 09:45", "registry: report @ 9:45", ("report", "09:45"), "report@09:45"):
        check = exercises.cancel.predict(lab=lab, registry_after_reregister=said)
        assert check.passed, (said, str(check))
    check = exercises.cancel.predict(lab=lab, advance_answers=0, advance_after_reregister=2)
    assert check.passed, str(check)


def test_a_check_names_the_questions_it_was_not_given(lab: emq_lab.Lab) -> None:
    check = exercises.upsert.predict(lab=lab, size_after_boot_2=1)
    assert (
        "not answered: boot_2_answers, registry_after_boot_2, naive_rows_after_3_boots, naive_jobs_by_09_30, "
        "upsert_boot_2_answers, upsert_registry_after_boot_2, period_after_redeploy_min, writes_on_boot_2_of_1000"
        in str(check)
    )
    full = exercises.cadence.predict(
        lab=lab,
        next_runs="09:00 09:15 09:30 09:45",
        finish_based_runs="09:00 09:19 09:38 09:57",
        drift_after_4_cycles_min=12,
        rows_after_4_ticks="1 row",
        jobs_after_4_ticks=4,
        rows_after_1000_runs=1,
        drift_with_10_min_runs_min=30,
        late_pump_drift_min=5,
        jobs_at_10_02=1,
        runs_after_outage="10:17 10:32 10:47",
        lane_that_keeps_up="grid",
    )
    assert full.passed and "not answered" not in str(full)


def test_every_question_states_a_time_of_day() -> None:
    for dive in (exercises.upsert, exercises.cadence, exercises.cancel):
        for field in dive.fields():
            assert re.search(r"\b\d{2}:\d{2}\b", field.ask), field


def test_answers_that_are_not_an_answer_are_a_line_of_the_verdict() -> None:
    check = exercises.predict.upsert.predict(boot_2_answers=7, size_after_boot_2="1 banana")
    assert not check.passed
    lines = str(check).splitlines()
    assert lines[0].startswith("boot_2_answers: could not read 7 as an outcome (7 is not a reply"), lines[0]
    assert lines[1].startswith("size_after_boot_2: could not read '1 banana' as a count ("), lines[1]
    assert "; try 7, or " in lines[1]
    nine = str(exercises.predict.cadence.predict(next_runs=["nine"]))
    assert nine.startswith("next_runs: could not read ['nine'] as times of day ('nine' is not one time); try")
    nope = str(exercises.predict.upsert.predict(nope=1))
    assert nope.startswith("nope is not a question of this dive; ask one of size_after_boot_2"), nope


def test_the_exists_sweep_is_a_question_of_dive_3(lab: emq_lab.Lab) -> None:
    check = exercises.cancel.predict(lab=lab, advance_on_dangling_member="{:ok, :absent}", rows_after_sweep=0)
    assert check.passed, str(check)
    wrong = exercises.cancel.predict(lab=lab, advance_on_dangling_member="advanced", rows_after_sweep=1)
    assert "you said advanced, it is absent" in str(wrong) and "you said 1, it is 0" in str(wrong)


def test_the_forms_the_headers_and_checkers_print_are_right_in_any_case(lab: emq_lab.Lab) -> None:
    for said in ("Outcome.EXISTS", "outcome.exists", "Exists"):
        check = exercises.upsert.predict(lab=lab, boot_2_answers=said)
        assert check.passed, (said, str(check))
    assert "you said registered, it is exists" in str(
        exercises.upsert.predict(lab=lab, boot_2_answers="Outcome.REGISTERED")
    )
    check = exercises.cancel.predict(
        lab=lab, advance_answers="Outcome.ABSENT", advance_after_reregister="Outcome.MOVED"
    )
    assert check.passed, str(check)
    for said in ("registry = report @ 09:45", "Report @ 09:45", "REGISTRY: report @ 9:45"):
        check = exercises.cancel.predict(lab=lab, registry_after_reregister=said)
        assert check.passed, (said, str(check))
    wrong = exercises.cancel.predict(lab=lab, registry_after_reregister="registry = report @ 09:30")
    assert "you said report @ 09:30, it is report @ 09:45" in str(wrong)


def test_bare_minutes_are_read_on_the_questions_clock(lab: emq_lab.Lab) -> None:
    for said in (":00, :15, :30, :45", ":00/:15/:30/:45", [":00", ":15", ":30", ":45"]):
        check = exercises.cadence.predict(lab=lab, next_runs=said)
        assert check.passed, (said, str(check))
    late = exercises.cadence.predict(lab=lab, finish_based_runs=":00, :15, :30, :45")
    assert "you said [09:00, 09:15, 09:30, 09:45], it is [09:00, 09:19, 09:38, 09:57]" in str(late)
    assert exercises.cancel.predict(lab=lab, registry_after_reregister="report @ :45").passed


def test_a_number_with_its_label_or_unit_is_read_and_two_numbers_are_refused(lab: emq_lab.Lab) -> None:
    check = exercises.upsert.predict(lab=lab, size_after_boot_2="size 1", period_after_redeploy_min="every 15 min")
    assert check.passed, str(check)
    wrong = exercises.upsert.predict(lab=lab, period_after_redeploy_min="every 30 min")
    assert "you said 30, it is 15" in str(wrong)
    for said in ("1 or 2", "1 2", "1 banana"):
        line = str(exercises.predict.upsert.predict(size_after_boot_2=said)).splitlines()[0]
        assert line.startswith(f"size_after_boot_2: could not read {said!r} as a count"), line


def test_the_sections_predictions_have_questions_of_their_own(lab: emq_lab.Lab) -> None:
    check = exercises.cadence.predict(lab=lab, rows_after_4_ticks=1, jobs_after_4_ticks="4 jobs")
    assert check.passed, str(check)
    wrong = exercises.cadence.predict(lab=lab, rows_after_4_ticks=4, jobs_after_4_ticks=1)
    assert "you said 4, it is 1" in str(wrong) and "you said 1, it is 4" in str(wrong)
    storm = exercises.upsert.predict(lab=lab, writes_on_boot_2_of_1000=0)
    assert storm.passed, str(storm)
    assert "you said 3000, it is 0" in str(exercises.upsert.predict(lab=lab, writes_on_boot_2_of_1000=3000))


def test_the_crash_prediction_counts_the_duplicate_of_a_fresh_id_pump(lab: emq_lab.Lab) -> None:
    check = exercises.cancel.predict(lab=lab, jobs_in_slot_after_crash="2 jobs")
    assert check.passed, str(check)
    assert "you said 1, it is 2" in str(exercises.cancel.predict(lab=lab, jobs_in_slot_after_crash=1))


def test_the_upserts_prompt_has_questions_on_the_guard_and_the_upsert(lab: emq_lab.Lab) -> None:
    check = exercises.upsert.predict(
        lab=lab,
        registry_after_boot_2="digest @ 9:15",
        naive_jobs_by_09_30="2 jobs",
        upsert_boot_2_answers="{:ok, :updated}",
        upsert_registry_after_boot_2="registry: digest @ 09:20",
    )
    assert check.passed, str(check)
    assert exercises.upsert.predict(lab=lab, upsert_boot_2_answers=0).passed  # "raw 0", as the panel prints it
    wrong = exercises.upsert.predict(
        lab=lab, upsert_boot_2_answers="exists", upsert_registry_after_boot_2="digest @ 09:15"
    )
    assert "you said exists, it is updated" in str(wrong) and "you said digest @ 09:15, it is digest @ 09:20" in str(
        wrong
    )


def test_the_cadence_sections_beyond_the_first_verdict_have_questions(lab: emq_lab.Lab) -> None:
    check = exercises.cadence.predict(
        lab=lab,
        drift_with_10_min_runs_min="+30 min",
        late_pump_drift_min=5,
        jobs_at_10_02="1 job",
        runs_after_outage="10:17 10:32 10:47",
        lane_that_keeps_up="Fixed grid",
    )
    assert check.passed, str(check)
    for said in ("grid", "fixed-grid", "FIXED GRID"):
        assert exercises.cadence.predict(lab=lab, lane_that_keeps_up=said).passed, said
    wrong = exercises.cadence.predict(lab=lab, jobs_at_10_02=3, lane_that_keeps_up="start-to-start")
    assert "you said 3, it is 1" in str(wrong) and "you said start-to-start, it is fixed grid" in str(wrong)
    refused = str(exercises.predict.cadence.predict(lane_that_keeps_up="the fast one"))
    assert refused.startswith("lane_that_keeps_up: could not read 'the fast one' as a lane (it names no lane); try")


def test_a_thousand_runs_leave_one_row(lab: emq_lab.Lab) -> None:
    assert exercises.cadence.predict(lab=lab, rows_after_1000_runs="1 row").passed
    assert "you said 1000, it is 1" in str(exercises.cadence.predict(lab=lab, rows_after_1000_runs=1_000))


def test_the_cancel_and_every_order_prompts_have_questions(lab: emq_lab.Lab) -> None:
    check = exercises.cancel.predict(lab=lab, occurrences_in_a_day_after_cancel=0, orders_refused_of_24="20")
    assert check.passed, str(check)
    assert exercises.cancel.predict(lab=lab, registry_without_compare="report @ 9:30").passed
    assert "it is report @ 09:30" in str(exercises.cancel.predict(lab=lab, registry_without_compare="report @ 09:45"))
    wrong = exercises.cancel.predict(lab=lab, occurrences_in_a_day_after_cancel=96, orders_refused_of_24=0)
    assert "you said 96, it is 0" in str(wrong) and "you said 0, it is 20" in str(wrong)


def test_numbers_grouped_by_thousands_as_the_dive_prints_them_are_numbers(lab: emq_lab.Lab) -> None:
    # Every count of the dives is read alike: one check takes each spelling (the boot storm, which
    # writes 1,000 names, runs once; test_the_sections_predictions_have_questions_of_their_own
    # shows its right answer passing).
    wrong = exercises.upsert.predict(
        lab=lab,
        writes_on_boot_2_of_1000="3,000 server writes",
        size_after_boot_2="3,000",
        naive_rows_after_3_boots="+3,000",
    )
    lines = {line.split(":")[0]: line for line in str(wrong).splitlines()}
    for key in ("writes_on_boot_2_of_1000", "size_after_boot_2", "naive_rows_after_3_boots"):
        assert "you said 3000, it is " in lines[key], (key, str(wrong))
    assert "you said 3000, it is 0" in lines["writes_on_boot_2_of_1000"]
    assert "you said 1000, it is 1" in str(exercises.cadence.predict(lab=lab, rows_after_4_ticks="1,000"))
    for said in ("1, 000", "3,00", "1,2"):
        line = str(exercises.predict.upsert.predict(writes_on_boot_2_of_1000=said)).splitlines()[0]
        assert line.startswith(f"writes_on_boot_2_of_1000: could not read {said!r} as a count"), line


def test_a_wrong_row_says_what_differs_and_a_bare_time_is_the_dives_name(lab: emq_lab.Lab) -> None:
    for said in ("09:15", "9:15", "registry: 09:15"):
        check = exercises.upsert.predict(lab=lab, registry_after_boot_2=said)
        assert check.passed, (said, str(check))
    later = str(exercises.upsert.predict(lab=lab, registry_after_boot_2="09:20"))
    assert "you said digest @ 09:20, it is digest @ 09:15 (the time differs)" in later
    other = str(exercises.upsert.predict(lab=lab, upsert_registry_after_boot_2="report @ 09:20"))
    assert "you said report @ 09:20, it is digest @ 09:20 (the name differs)" in other


def test_a_row_that_is_not_a_row_is_a_line_with_an_example_in_the_dives_own_name() -> None:
    line = str(exercises.predict.upsert.predict(registry_after_boot_2="digest")).splitlines()[0]
    assert line == (
        "registry_after_boot_2: could not read 'digest' as registry rows (it names no row and time);"
        ' try "digest @ 09:45"'
    )
    line = str(exercises.predict.cancel.predict(registry_after_reregister=945)).splitlines()[0]
    assert line.startswith("registry_after_reregister: could not read 945 as registry rows") and '"report @' in line


def test_the_advance_after_a_cancel_removes_nothing_and_says_so(lab: emq_lab.Lab) -> None:
    said = str(exercises.cancel.predict(lab=lab, advance_answers="absent")).splitlines()[0]
    assert said.startswith("advance_answers: right") and "nothing left to remove" in said, said
    assert "sweep" not in said, said


# -- every form the dives print, collected from the code that prints it ----------------------------


def _after(text: str, label: str) -> str:
    """The line of ``text`` that starts with ``label`` (after any indent)."""
    return next(line for line in text.splitlines() if line.strip().startswith(label))


def _part(line: str, label: str, sep: str = " | ") -> str:
    """The part of a ``sep``-separated line that starts with ``label``."""
    return next(part.strip() for part in line.split(sep) if part.strip().startswith(label))


def printed_forms() -> dict[str, dict[str, list[Any]]]:
    """For each dive and question, its answer as the dives print it: each form is cut from the text
    the dive's own code prints (panels, readouts, verdict lines), run on an embedded lab of its own,
    and the hand-written forms are only those the pages and a learner write (units, words)."""
    from emq_lab.clock import hhmmss
    from emq_lab.dives import cadence, crash, race
    from emq_lab.dives import storm as storm_dive
    from emq_lab.dives import upsert as upsert_dive
    from emq_lab.plots.fired import fired_marks
    from emq_lab.schedule import MINUTE_MS, Measure
    from emq_lab.widgets import BootPanel, CancelPanel

    lab = emq_lab.connect(clock=emq_lab.SimClock(START))
    forms: dict[str, dict[str, list[Any]]] = {"upsert": {}, "cadence": {}, "cancel": {}}
    up, cad, can = forms["upsert"], forms["cadence"], forms["cancel"]

    guard = BootPanel(lab, "forms-guard")
    guard.boot(1)
    guard.boot(2)
    shown = guard.readout
    row = _after(shown, "digest")  # "  digest  next 09:15 (1767604500000)"
    up["size_after_boot_2"] = [_after(shown, "registry"), "size still 1", "1 entry", "one", "1 row", 1]
    verdict = _after(shown, "verdict").removeprefix("verdict").strip()
    up["boot_2_answers"] = [
        _after(shown, "outcome"), verdict, verdict.split(", ")[0], verdict.split(", ")[1],
        ":ok :exists", "{:ok, :exists}", "ok exists", "{ok, exists}", ":exists", "Outcome.EXISTS", "raw 0", 0,
    ]  # fmt: skip
    stamp = re.search(r"\((\d+)\)", row)[1]  # type: ignore[index]
    clock = re.search(r"\d\d:\d\d", row)[0]  # type: ignore[index]
    up["registry_after_boot_2"] = [
        row, row.strip().replace("  next", " @"), f"digest @ {clock}:00", f"digest @ {clock} ({stamp})", clock,
    ]  # fmt: skip
    naive = BootPanel(lab, "forms-naive", strategy="naive")
    naive.boot(3)
    up["naive_rows_after_3_boots"] = [_after(naive.readout, "registry"), "3 rows", "three", "3 entries"]
    marks = upsert_dive.fire_after_boots(lab, "forms-fire", 2)
    naive_jobs = next(line for line in fired_marks(marks) if line.startswith("naive"))
    up["naive_jobs_by_09_30"] = [naive_jobs.split("jobs at ", 1)[1], "2 jobs", "two", "twice"]
    upserter = BootPanel(lab, "forms-upsert", strategy="upsert")
    upserter.boot(1)
    upserter.boot(2)
    moved = upserter.readout
    up["upsert_boot_2_answers"] = [
        _after(moved, "outcome"), _after(moved, "verdict"), "{:ok, :updated}", ":ok :updated", "updated", 0,
    ]  # fmt: skip
    up["upsert_registry_after_boot_2"] = [_after(moved, "digest"), _after(moved, "digest").strip().split(" (")[0]]
    guard_line = upsert_dive.deploy_day(lab, "forms-deploy")[0]
    kept = re.search(r"keeps (every \d+ min)", guard_line)[1]  # type: ignore[index]
    up["period_after_redeploy_min"] = [
        kept, kept.removeprefix("every "), _after(shown, "record").split()[2], "900000", 900_000, "15m", "15 minutes",
    ]  # fmt: skip
    storm = str(storm_dive.boot_storm(lab, "forms-storm", names=1_000))
    up["writes_on_boot_2_of_1000"] = [_after(storm, "boot #2").split("->")[1].strip(), "none", "zero", "0 writes"]

    rep, pump = lab.repeat("forms-live"), lab.pump("forms-live")
    rep.register("report", 15 * MINUTE_MS, "{}")
    pump.tick()
    for _ in range(3):
        lab.clock.advance(minutes=15)  # type: ignore[attr-defined]
        pump.tick()
    state = cadence.state_line(lab, "forms-live")
    cad["rows_after_4_ticks"] = ["1 entry", "one row", "1"]
    cad["jobs_after_4_ticks"] = [_part(state, "jobs:"), "4 jobs", "four"]
    ff = cadence.fast_forward(lab, "forms-ff", occurrences=1_000).readout
    cad["rows_after_1000_runs"] = [_part(ff, "registry rows", "; "), "1 entry", "a single row"]
    on_time = cadence.trace(lab, every_ms=15 * MINUTE_MS, run_ms=4 * MINUTE_MS, cycles=4).readout
    s2s, s2f = _after(on_time, "start-to-start"), _after(on_time, "start-to-finish")
    grid = " ".join(re.findall(r"\d\d:\d\d", s2s))
    cad["next_runs"] = [
        s2s, s2s.split("|")[0].removeprefix("start-to-start"), grid.replace("09:", "9:"), ":00 :15 :30 :45",
        "on :00 :15 :30 :45", [hhmmss(ms) for ms in cadence.trace(lab, every_ms=15 * MINUTE_MS, run_ms=4 * MINUTE_MS,
                                                                   cycles=4).lane(Measure.START_TO_START).releases],
    ]  # fmt: skip
    cad["finish_based_runs"] = [s2f, s2f.split("|")[0].removeprefix("start-to-finish").split()]
    cad["drift_after_4_cycles_min"] = [_part(s2f, "drift"), s2f.split(": ")[-1], "12m", 720_000]
    slow = cadence.trace(lab, every_ms=15 * MINUTE_MS, run_ms=10 * MINUTE_MS, cycles=4).readout
    cad["drift_with_10_min_runs_min"] = [
        _part(_after(slow, "start-to-finish"), "drift"),
        "30 min",
        "30m",
    ]
    late = cadence.trace(lab, every_ms=15 * MINUTE_MS, run_ms=4 * MINUTE_MS, cycles=6, tick_ms=2 * MINUTE_MS).readout
    cad["late_pump_drift_min"] = [_part(_after(late, "start-to-start"), "drift"), "5m", "5 min", "five"]
    outage = str(cadence.outages(lab)[0])
    cad["jobs_at_10_02"] = [_part(outage, "back at"), "1 job", "one", "a single job"]
    then = _part(outage, "then")
    cad["runs_after_outage"] = [then, then.split(" (")[0], re.search(r"\((.*)\)", then)[1], ":17 :32 :47"]  # type: ignore[index]
    lanes = cadence.trace(lab, every_ms=2 * MINUTE_MS, run_ms=0, cycles=6, tick_ms=90_000).readout
    cad["lane_that_keeps_up"] = [
        _after(lanes, "fixed").split("  ")[0],
        "the grid",
        "grid",
        "Fixed-grid",
        "the grid lane",
    ]

    lab.close()
    lab = emq_lab.connect(clock=emq_lab.SimClock(START.replace("09:00", "09:15")))  # the race's clock, as in 03
    day = race.Race(lab, "forms-race")
    day.play("after-read")
    after_read = day.verdict()
    can["occurrences_if_cancel_after_read"] = [
        after_read.split(", ")[0], _after(day.text(), "occurrences fired"), "one", "1 occurrence",
    ]  # fmt: skip
    panel = CancelPanel(lab, "forms-panel")
    panel.play("after-enqueue")
    can["advance_answers"] = [
        panel.race.verdict(), _after(panel.readout, "advance outcome"), _after(panel.readout, "pump advances"),
        "{:ok, :absent}", ":ok :absent", "absent", "returns 0", "EXISTS = 0", 0,
    ]  # fmt: skip
    panel.play("re-register")
    can["advance_after_reregister"] = [_after(panel.readout, "advance outcome"), ":ok :moved", "moved", 2]
    can["registry_after_reregister"] = [_after(panel.readout, "registry"), "report @ 09:45:00", "report next 09:45"]
    without = race.without_compare_and_set(lab, "forms-without")
    can["registry_without_compare"] = [without[3], without[3].split(";")[0], "report @ :30"]
    orphans = lab.repeat("forms-orphan")
    orphans.register("stale", 15 * MINUTE_MS, "{}")
    race.drop_record(lab, "forms-orphan", "stale")
    sweep = lab.pump("forms-orphan").begin().run()
    can["advance_on_dangling_member"] = [dict(sweep.advanced)["stale"].tuple, "ok absent", "EXISTS = 0, returns 0"]
    can["rows_after_sweep"] = ["none", "zero", "0 rows", "no rows", "0 entries"]
    can["occurrences_in_a_day_after_cancel"] = ["none", "zero", "0 occurrences", "no occurrences"]
    orders = str(race.every_order(race.Race(lab, "forms-orders")))
    can["orders_refused_of_24"] = [_after(orders, "refused"), "20 orders", "twenty", "20 refused"]
    crashed = str(crash.replay_crash(lab, "forms-crash", slot_keyed=False))
    can["jobs_in_slot_after_crash"] = [_after(crashed, "jobs for the"), "2 jobs", "two", "twice"]
    lab.close()
    return forms


FORMS = printed_forms()


@pytest.mark.parametrize("dive", FORMS)
def test_every_form_the_dives_print_is_read_as_its_answer(dive: str) -> None:
    predictions = getattr(exercises.predict, dive)
    forms = FORMS[dive]
    assert set(forms) == {f.key for f in predictions.fields()}, "every question has the forms the dives print"
    for i in range(max(len(f) for f in forms.values())):
        said = {key: values[i] for key, values in forms.items() if i < len(values)}
        check = predictions.predict(**said)
        wrong = [line for line in str(check).splitlines() if line.split(":", 1)[0] in said and ": right" not in line]
        assert not wrong, "\n".join(f"{line}\n    (given {said[line.split(':', 1)[0]]!r})" for line in wrong)


def test_an_unreadable_answer_is_one_line_and_the_others_are_still_checked() -> None:
    check = exercises.predict.upsert.predict(size_after_boot_2="1 entry", naive_rows_after_3_boots="lots")
    lines = str(check).splitlines()
    assert not check.passed and lines[0].startswith("size_after_boot_2: right")
    assert lines[1] == (
        "naive_rows_after_3_boots: could not read 'lots' as a count ('lots' is not a unit or label this"
        ' question knows); try 7, or "7 rows"'
    )


def test_milliseconds_for_minutes_are_read_with_a_note() -> None:
    line = str(exercises.predict.upsert.predict(period_after_redeploy_min=900_000)).splitlines()[0]
    assert line.startswith(
        "period_after_redeploy_min: right (read 900,000 as milliseconds, 15 min; the question wants minutes) -"
    )
    wrong = str(exercises.predict.upsert.predict(period_after_redeploy_min="1800000 ms")).splitlines()[0]
    assert "you said 30 (read 1,800,000 as milliseconds, 30 min; the question wants minutes), it is 15" in wrong
    assert "in minutes" in next(f.ask for f in exercises.upsert.fields() if f.key == "period_after_redeploy_min")


def test_the_questions_say_their_bounds_and_where_the_first_run_is() -> None:
    asks = {f.key: f.ask for dive in (exercises.upsert, exercises.cadence) for f in dive.fields()}
    assert "a job at 09:30 itself not counted" in asks["naive_jobs_by_09_30"]
    assert "first run due at 09:00" in asks["jobs_after_4_ticks"]
    assert "10:02 not included" in asks["runs_after_outage"]


def test_the_fields_name_each_questions_kind_of_answer_with_an_example_that_is_not_its_answer() -> None:
    for dive in (exercises.predict.upsert, exercises.predict.cadence, exercises.predict.cancel):
        fields = dive.fields()
        for field in fields:
            assert field.unit and field.example, field
            example = field.example.split(", or ")[0].split(" or ")[0].split('", ')[0].strip('"')
            answer: dict[str, Any] = {field.key: example}
            check = dive.predict(**answer)
            assert "could not read" not in str(check), (field.key, str(check))
            assert not check.passed, f"{field.key}: its example {example!r} is its answer"


def test_a_fault_while_checking_is_a_line_and_the_other_answers_are_still_checked() -> None:
    from emq_lab.exercises.predict import Predictions
    from emq_lab.exercises.questions import CANCEL, Question

    def crashed(lab: emq_lab.Lab) -> int:  # as the sandbox answers a script it stopped at its limit
        raise redis.exceptions.ResponseError("Error running script: @user_script:?: user_script:51: emq-lab stop")

    faulty = Question("faulty", "at 09:00, a question whose run fails", crashed, CANCEL[0].kind, CANCEL[0].why)
    dive = Predictions("cancel", (faulty, CANCEL[0]))
    check = dive.predict(faulty=0, occurrences_in_a_day_after_cancel=0)
    first, second = str(check).splitlines()[:2]
    assert not check.passed and first.startswith("faulty: not checked - the sandbox failed (") and "again" in first
    assert second.startswith("occurrences_in_a_day_after_cancel: right")


def _line(check: Any, key: str) -> str:
    return next(line for line in str(check).splitlines() if line.startswith(f"{key}:") or line.startswith(f"{key} "))


def test_a_negation_an_afternoon_or_a_clashing_ms_is_never_read_as_right() -> None:
    upsert = exercises.upsert.predict(
        boot_2_answers="not exists", registry_after_boot_2="digest @ 09:15 (1767604800000)"
    )
    assert "could not read 'not exists'" in _line(upsert, "boot_2_answers")
    assert "09:15 and, in brackets, 09:20" in _line(upsert, "registry_after_boot_2")
    assert "could not read 'not absent'" in str(exercises.cancel.predict(advance_answers="not absent"))
    evening = exercises.cadence.predict(
        next_runs="9:00pm 9:15pm 9:30pm 9:45pm", runs_after_outage="10:17am 10:32am 10:47am"
    )
    assert "you said [21:00, 21:15, 21:30, 21:45]" in _line(evening, "next_runs")
    assert _line(evening, "runs_after_outage").startswith("runs_after_outage: right")


RIGHT_IN_OWN_WORDS = {
    "upsert": {
        "boot_2_answers": ["already registered", "not registered again", "writes nothing"],
        "upsert_boot_2_answers": ["rewritten", "replaced", "update", "upserted", "it rewrites the row"],
        "registry_after_boot_2": [
            "digest 09:15", "digest 9:15", "digest: 09:15", "digest=09:15", "digest -> 09:15", "digest, 09:15",
            "digest @ quarter past nine", "digest @ 09.15", "digest @ 9:15am",
        ],
        "upsert_registry_after_boot_2": ["digest @ twenty past nine", "digest 9h20"],
        "size_after_boot_2": ["1.0"],
        "period_after_redeploy_min": ["15.0", "0.25 h", "900 000 ms", "a quarter of an hour"],
        "writes_on_boot_2_of_1000": ["boot #2:       0 registered   1,000 exists  ->       0 server writes"],
    },
    "cadence": {
        "next_runs": ["9, 9:15, 9:30, 9:45", "09.00 09.15 09.30 09.45"],
        "drift_with_10_min_runs_min": ["half an hour"],
        "late_pump_drift_min": ["300 000 ms"],
        "lane_that_keeps_up": ["grid (BullMQ)", "the fixed grid (BullMQ's every)", "BullMQ's every"],
    },
    "cancel": {
        "advance_after_reregister": ["nothing written"],
        "registry_after_reregister": ["report: 09:45", "report @ quarter to ten"],
        "registry_without_compare": ["report @ half past nine"],
        "orders_refused_of_24": ["20 of 24", "20/24"],
        "occurrences_if_cancel_after_read": ["one last occurrence", "yes, one"],
        "occurrences_in_a_day_after_cancel": ["nothing fires", "never", "not one"],
    },
}  # fmt: skip


@pytest.mark.parametrize("dive", RIGHT_IN_OWN_WORDS)
def test_right_answers_in_a_learners_own_words_are_right(dive: str) -> None:
    questions = getattr(exercises, dive)
    wrong = []
    for key, saids in RIGHT_IN_OWN_WORDS[dive].items():
        for said in saids:
            line = _line(questions.predict(**{key: said}), key)
            if not line.startswith(f"{key}: right"):
                wrong.append(line)
    assert not wrong, "\n".join(wrong)


def test_a_readable_wrong_answer_is_not_quite_and_an_outcome_hint_lists_the_choices() -> None:
    assert "not quite - you said 0.2" in str(exercises.cadence.predict(drift_after_4_cycles_min="12 s"))
    unread = str(exercises.upsert.predict(upsert_boot_2_answers="unchanged"))
    assert '"registered" (1) or "updated" (0)' in unread


def test_a_reason_waits_until_the_questions_it_answers_are_answered() -> None:
    alone = str(exercises.upsert.predict(size_after_boot_2=1))
    assert "EXISTS" not in alone and "writes nothing" not in alone and "09:15" not in alone
    assert "once you have answered boot_2_answers and registry_after_boot_2" in alone
    together = exercises.upsert.predict(size_after_boot_2=1, boot_2_answers="exists", registry_after_boot_2="09:15")
    assert "writes nothing" in _line(together, "size_after_boot_2")
    for dive, key, other, leak in (
        ("cancel", "advance_on_dangling_member", "rows_after_sweep", "sweeps the member"),
        ("cancel", "advance_after_reregister", "registry_after_reregister", "new first run"),
        ("cadence", "drift_after_4_cycles_min", "finish_based_runs", "adds the 4-minute run"),
    ):
        line = _line(getattr(exercises, dive).predict(**{key: 0}), key)
        assert leak not in line and other in line, line


def test_a_misspelled_keyword_is_a_line_and_the_others_are_checked(lab: emq_lab.Lab) -> None:
    check = exercises.upsert.predict(lab, size_after_boot2=1, boot_2_answers="exists")
    assert "size_after_boot2 is not a question; did you mean size_after_boot_2?" in str(check)
    assert _line(check, "boot_2_answers").startswith("boot_2_answers: right")
    assert not check.passed
    with pytest.raises(TypeError, match="by name"):
        exercises.upsert.predict(1)


def test_the_questions_state_the_terms_their_answers_need() -> None:
    asks = {q.key: q.ask for q in (*questions.UPSERT, *questions.CADENCE, *questions.CANCEL)}
    for key in ("registry_after_boot_2", "upsert_registry_after_boot_2"):
        assert "every 15 min" in asks[key] and "first run one period after its boot" in asks[key], asks[key]
    assert "old period 15 min" in asks["registry_without_compare"]
    assert asks["jobs_at_10_02"].startswith("start-to-start")
    assert "its mark (its slot on the 15-minute grid" in asks["drift_with_10_min_runs_min"]


def test_digits_other_than_0_to_9_are_not_read() -> None:
    said = str(exercises.upsert.predict(size_after_boot_2="\u0661"))  # ARABIC-INDIC DIGIT ONE
    assert "could not read" in said and "write its digits as 0-9" in said and "right" not in said.split(":")[1]
