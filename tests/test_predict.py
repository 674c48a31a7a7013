"""Predict, then check: every form a dive prints for an answer is read as that answer, each
question states the clock it assumes (the dive's), and a check names the questions left out."""

from __future__ import annotations

import re

import pytest

import emq_lab
from emq_lab import exercises


def test_a_boot_2_answer_in_any_printed_form_is_right(lab: emq_lab.Lab) -> None:
    for said in ("exists", ":exists", "{:ok, :exists}", "EXISTS", 0, "raw 0", emq_lab.Outcome.EXISTS):
        check = exercises.upsert.predict(lab=lab, boot_2_answers=said)
        assert check.passed, (said, str(check))
    wrong = exercises.upsert.predict(lab=lab, boot_2_answers=1)
    assert "you said registered, it is exists" in str(wrong)


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
    assert "09:15" in exercises.cancel.questions()
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
        for line in dive.questions().splitlines():
            assert re.search(r"\b\d{2}:\d{2}\b", line), line


def test_answers_that_are_not_an_answer_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="boot_2_answers: 7 is not a reply"):
        exercises.upsert.predict(boot_2_answers=7)
    with pytest.raises(ValueError, match='next_runs: expected "HH:MM" times'):
        exercises.cadence.predict(next_runs=["nine"])
    with pytest.raises(ValueError, match="size_after_boot_2: expected one whole number"):
        exercises.upsert.predict(size_after_boot_2="one")


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
        with pytest.raises(ValueError, match="size_after_boot_2: expected one whole number"):
            exercises.upsert.predict(size_after_boot_2=said)


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
    with pytest.raises(ValueError, match="lane_that_keeps_up: expected a lane"):
        exercises.cadence.predict(lane_that_keeps_up="the fast one")


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
    assert exercises.upsert.predict(lab=lab, writes_on_boot_2_of_1000="0 server writes").passed
    for said in ("3,000", "3,000 server writes", "+3,000"):
        wrong = exercises.upsert.predict(lab=lab, writes_on_boot_2_of_1000=said)
        assert "you said 3000, it is 0" in str(wrong), (said, str(wrong))
    assert "you said 1000, it is 1" in str(exercises.cadence.predict(lab=lab, rows_after_1000_runs="1,000"))
    for said in ("1, 000", "3,00", "1,2"):
        with pytest.raises(ValueError, match="writes_on_boot_2_of_1000: expected one whole number"):
            exercises.upsert.predict(writes_on_boot_2_of_1000=said)


def test_a_wrong_row_says_what_differs_and_a_bare_time_is_the_dives_name(lab: emq_lab.Lab) -> None:
    for said in ("09:15", "9:15", "registry: 09:15"):
        check = exercises.upsert.predict(lab=lab, registry_after_boot_2=said)
        assert check.passed, (said, str(check))
    later = str(exercises.upsert.predict(lab=lab, registry_after_boot_2="09:20"))
    assert "you said digest @ 09:20, it is digest @ 09:15 (the time differs)" in later
    other = str(exercises.upsert.predict(lab=lab, upsert_registry_after_boot_2="report @ 09:20"))
    assert "you said report @ 09:20, it is digest @ 09:20 (the name differs)" in other


def test_a_row_that_is_not_a_row_is_refused_with_the_dives_own_name() -> None:
    with pytest.raises(ValueError, match='registry_after_boot_2: expected a name and its next run, such as "digest @'):
        exercises.upsert.predict(registry_after_boot_2="digest")
    with pytest.raises(ValueError, match='registry_after_reregister: expected text such as "report @'):
        exercises.cancel.predict(registry_after_reregister=945)


def test_the_advance_after_a_cancel_removes_nothing_and_says_so(lab: emq_lab.Lab) -> None:
    said = str(exercises.cancel.predict(lab=lab, advance_answers="absent")).splitlines()[0]
    assert said.startswith("advance_answers: right") and "nothing left to remove" in said, said
    assert "sweep" not in said, said
