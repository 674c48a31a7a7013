"""BootPanel and BootCounter, driven through their twins (and their buttons), on both backends."""

from __future__ import annotations

import re

import pytest
from helpers import MIN, shown

import emq_lab
from emq_lab.dives.upsert import Strategy
from emq_lab.keys import QueueKeys
from emq_lab.scripts import source
from emq_lab.widgets.boot import BootCounter, BootPanel, line_span

pytestmark = pytest.mark.embedded_only  # the logic is the package's; the backend tests cover the servers

SIZES = {"guard": [1, 1, 1, 1, 1], "naive": [1, 2, 3, 4, 5], "upsert": [1, 1, 1, 1, 1]}
OUTCOMES = {
    "guard": ["{:ok, :registered}"] + ["{:ok, :exists}"] * 4,
    "naive": ["{:ok, :registered}"] * 5,
    "upsert": ["{:ok, :registered}"] + ["{:ok, :updated}"] * 4,
}


def lit_in_view(panel: BootPanel) -> list[str]:
    """The script lines the panel's HTML highlights, as the reader sees them."""
    lit = re.findall(r'<div style="background:[^"]*">\s*\d+\s+(.*?)</div>', panel.html("emq-script"))
    return [line.replace("&#x27;", "'").replace("&gt;", ">").replace("&lt;", "<").strip() for line in lit]


def readout_field(panel: BootPanel, label: str) -> str:
    for line in panel.readout.splitlines():
        if line.startswith(label):
            return line[len(label) :].strip()
    raise AssertionError(f"no {label!r} line in:\n{panel.readout}")


@pytest.mark.parametrize("strategy", ["guard", "naive", "upsert"])
def test_each_strategy_boots_one_to_five(lab: emq_lab.Lab, queue: str, strategy: str) -> None:
    panel = BootPanel(lab, queue)
    panel.use(strategy)
    for n in range(1, 6):
        panel.boot(n)
        size = int(lab.client.zcard(QueueKeys(queue).registry))
        assert size == SIZES[strategy][n - 1]
        assert readout_field(panel, "registry").endswith(f"size {size}")
        assert readout_field(panel, "outcome").startswith(OUTCOMES[strategy][n - 1])
        assert readout_field(panel, "boot").startswith(f"#{n} of {n}")
        assert lit_in_view(panel) == list(panel.selected.lit_text)  # type: ignore[union-attr]


def test_guard_boot_one_then_two_shows_what_ran(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.boot(1)
    assert lit_in_view(panel) == [
        "if redis.call('EXISTS', record) == 1 then",
        "redis.call('HSET', record, 'every_ms', every_ms, 'template', template)",
        "redis.call('ZADD', registry, first_ms, name)",
        "return 1",
    ]
    assert "{:ok, :registered}  raw 1" in panel.readout
    panel.boot(2)
    assert lit_in_view(panel) == ["if redis.call('EXISTS', record) == 1 then", "return 0"]
    assert "{:ok, :exists}  raw 0" in panel.readout
    assert "EXISTS = 1, script returns 0, {:ok, :exists}, registry size still 1" in panel.readout
    assert "{:ok, :exists}" in panel.html() and "size <b>1</b>" in panel.html()


def test_selecting_a_past_boot_lights_its_call_again(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.boot(2)
    panel.select(1)
    assert readout_field(panel, "boot").startswith("#1 of 2")
    assert "return 1" in lit_in_view(panel) and "return 0" not in lit_in_view(panel)
    panel.click("#2")  # a click on the selector does the same as the twin
    assert lit_in_view(panel)[-1] == "return 0"
    assert len(panel.history) == 2  # selecting runs nothing
    with pytest.raises(ValueError, match="boots 1 to 2"):
        panel.select(3)


def test_buttons_do_what_the_twins_do(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.click("Boot #2")  # boot #2 on a fresh service runs #1 first
    assert [b.tuple for b in panel.history] == ["{:ok, :registered}", "{:ok, :exists}"]
    assert panel.selected is panel.history[1]
    panel.click("Boot #1")  # boot #1 already ran: it is only selected
    assert len(panel.history) == 2 and panel.selected is panel.history[0]
    panel.click("Reset")
    assert lab.keys(queue) == [] and panel.history == []
    assert "no boot yet" in panel.readout and "size 0" in panel.readout
    panel.click("naive append")
    panel.boot(2)
    assert int(lab.client.zcard(QueueKeys(queue).registry)) == 2


def test_use_starts_over_and_names_the_script(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue, strategy="naive")
    panel.boot(3)
    panel.use("naive")  # the same strategy again still starts over
    assert lab.keys(queue) == [] and panel.history == []
    panel.use("upsert")
    assert readout_field(panel, "strategy") == "ZSCORE upsert (contrast/upsert.lua)"
    assert panel.html("emq-script").count("<div style=") == len(source("contrast/upsert").splitlines()) + 1
    with pytest.raises(ValueError):
        panel.use("append-only")


def test_naive_and_upsert_show_the_pending_occurrences(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue, strategy="naive")
    panel.boot(2)
    assert readout_field(panel, "pending").endswith("· 2")
    panel.use("upsert")
    first = panel.boot(1)
    second = panel.boot(2)
    assert readout_field(panel, "pending").endswith("· 1")
    assert f"repeat:digest:{second.at_ms + 15 * MIN}" in panel.readout
    assert f"ZREM repeat:digest:{first.at_ms + 15 * MIN}" in panel.readout
    assert "ZREM" in " ".join(lit_in_view(panel))


def test_deploy_day_period(lab: emq_lab.Lab, queue: str) -> None:
    record = QueueKeys(queue).record("digest")
    panel = BootPanel(lab, queue)
    panel.boot(1)
    panel.boot(2, minutes=30)
    assert lab.client.hget(record, "every_ms") == str(15 * MIN)
    panel.use("upsert")
    panel.boot(1)
    panel.set_period(30)  # the dropdown
    panel.boot(2)
    assert lab.client.hget(record, "every_ms") == str(30 * MIN)
    assert "every 30 min" in readout_field(panel, "boot")
    with pytest.raises(ValueError, match="minutes"):
        panel.set_period(7)


def test_text_plain_is_the_readout(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.boot(2)
    assert shown(panel)["text/plain"] == panel.readout
    assert "object at 0x" not in panel.readout


def test_counter_slider_compares_strategies(lab: emq_lab.Lab, queue: str) -> None:
    start = lab.clock.now_ms()
    counter = BootCounter(lab, queue, boots=2)
    counter.set(boots=9)
    lines = counter.readout.splitlines()
    assert lines[0] == "after 9 boots:"
    table = [re.split(r"\s{2,}", line.strip()) for line in lines[1:]]
    assert table == [
        ["EXISTS guard", "1 row", "0 pending"],
        ["naive append", "9 rows", "9 pending"],
        ["ZSCORE upsert", "1 row", "1 pending"],
    ]
    assert "<td style='padding:0 8px'><code>9</code></td>" in counter.html()
    counter.control("boots").value = 1  # a drag of the slider
    assert "1 row " in counter.readout and "rows" not in counter.readout
    assert lab.keys(queue) == [] and lab.clock.now_ms() == start
    with pytest.raises(ValueError, match="boots"):
        counter.set(boots=21)


def test_each_strategy_is_a_click_on_its_label(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    for strategy in [*Strategy][::-1]:
        panel.click(strategy.label)
        assert panel.service.strategy is strategy
        assert readout_field(panel, "strategy") == f"{strategy.label} ({strategy.script}.lua)"


def test_the_history_row_hides_when_there_is_no_boot(lab: emq_lab.Lab, queue: str) -> None:
    # ipywidgets' ToggleButtons view keeps stale buttons when its options empty; hiding the row
    # keeps a learner from clicking a boot that no longer exists.
    panel = BootPanel(lab, queue)
    history = panel.control("boots")
    assert history.layout.display == "none"
    panel.boot(2)
    assert history.layout.display == ""
    panel.reset()
    assert history.layout.display == "none"
    panel.boot(1)
    panel.use("naive")
    assert history.layout.display == "none"


def test_a_new_panel_starts_from_an_empty_queue_and_says_so(lab: emq_lab.Lab, queue: str) -> None:
    first = BootPanel(lab, queue)
    first.boot(2)
    again = BootPanel(lab, queue)  # the cell re-run
    assert again.note == f"a fresh start: this panel emptied queue {queue} (registry size 0)"
    assert int(lab.client.zcard(QueueKeys(queue).registry)) == 0
    assert again.boot(1).tuple == "{:ok, :registered}"
    assert again.boot(1).before.size == 0 and not again.boot(1).before.pending


def test_boot_two_says_what_it_did(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.click("Boot #2")  # before Boot #1
    assert panel.note == "Boot #1 had not run, so it ran first; then Boot #2: {:ok, :exists}, registry size 1"
    assert len(panel.history) == 2
    panel.click("Boot #2")  # once it has run
    assert panel.note.startswith("Boot #2 already ran — shown again, nothing new ran")
    assert len(panel.history) == 2
    assert not any(panel.control(label).disabled for label in ("Boot #1", "Boot #2", "Reset", "next boot every"))


def test_the_period_dropdown_says_what_it_changes(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.click("30 min")
    assert panel.note == "next boot registers every 30 min; boots already run keep their period"
    assert panel.boot(1).every_ms == 30 * MIN


def test_the_lit_lines_stay_open_and_the_rest_folds(lab: emq_lab.Lab, queue: str) -> None:
    panel = BootPanel(lab, queue)
    panel.boot(2)
    html = panel.html("emq-script")
    opened = re.sub(r"<details>.*?</details>", "", html)  # the lines shown without a click
    assert "return 0" in opened and "EXISTS" in opened and "HSET" not in opened
    assert html.count("<details>") >= 2  # the header and the argument checks folded
    assert "font-size:14px" in html
    every = re.findall(r"<div style=\"[^\"]*\">\s*(\d+) ", html)
    assert [int(n) for n in every] == list(range(1, len(source("register").splitlines()) + 1))  # every line kept


def test_one_boot_and_one_hidden_line_read_in_the_singular(lab: emq_lab.Lab, queue: str) -> None:
    counter = BootCounter(lab, queue, boots=1)
    assert "after 1 boot<" in counter.html() and "after 1 boots" not in counter.html()
    assert line_span(47, 47) == "line 47" and line_span(3, 5) == "lines 3-5"
