"""Each course script as its page prints it (quoted below, verbatim), beside this lab's version, with what differs."""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass

from ..scripts import source
from .source import lua_html


@dataclass(frozen=True)
class Beside:
    """The page's script, the lines of ours that do the same moves, and the differences."""

    page: str  # which page prints it, and whose script it is
    course: str  # the script as the page prints it
    ours: str  # the name of this lab's script (emq_lab/scripts/<ours>.lua)
    first: str  # the first line of ours to show (its text, stripped)
    last: str  # the last line of ours to show
    differs: tuple[str, ...]

    def line_numbers(self) -> tuple[int, int]:
        """The 1-based line numbers of ``first`` and ``last`` in our script."""
        text = [line.strip() for line in source(self.ours).splitlines()]
        start = text.index(self.first) + 1
        return start, text.index(self.last, start - 1) + 1

    def excerpt(self) -> str:
        """Our script's lines ``first`` to ``last``."""
        start, end = self.line_numbers()
        return "\n".join(source(self.ours).splitlines()[start - 1 : end])

    def line_range(self) -> str:
        start, end = self.line_numbers()
        return f"line {start}" if start == end else f"lines {start} to {end}"

    def __repr__(self) -> str:
        out = [f"the page: {self.page}", *(f"  {line}" for line in self.course.splitlines())]
        out.append(f"this lab: {self.ours}.lua, {self.line_range()} (the whole script follows)")
        out += [f"  {line}" for line in self.excerpt().splitlines()]
        out.append("what differs, and why:")
        out += [textwrap.fill(line, 96, initial_indent="  - ", subsequent_indent="    ") for line in self.differs]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        col = "flex:1 1 420px;min-width:0;overflow-x:auto"
        differs = "".join(f"<li>{html.escape(line)}</li>" for line in self.differs)
        return (
            "<div style='display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start'>"
            f"<div style='{col}'><p style='margin:0 0 4px'><b>the page</b>: {html.escape(self.page)}</p>"
            f"{lua_html(self.course)}</div>"
            f"<div style='{col}'><p style='margin:0 0 4px'><b>this lab</b>: <code>{self.ours}.lua</code>, "
            f"{self.line_range()}</p>{lua_html(self.excerpt())}</div></div>"
            f"<p style='margin:6px 0 2px'><b>what differs, and why</b></p><ul style='margin:0'>{differs}</ul>"
        )


REGISTER = Beside(
    page="R4.02.2, EchoMQ's @register (repeat.ex)",
    course="""if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0                                  -- live name → {:ok, :exists}, no write
end
redis.call('HSET', KEYS[2], 'every_ms', ARGV[2], 'template', ARGV[3])
redis.call('ZADD', KEYS[1], tonumber(ARGV[4]), ARGV[1])
return 1                                    -- fresh name → {:ok, :registered}""",
    ours="register",
    first="if redis.call('EXISTS', record) == 1 then",
    last="return 1",
    differs=(
        "the guard, the two writes and the replies 1 and 0 are the page's, move for move",
        "KEYS and ARGV get local names (registry, record, name, every_ms, template, first_ms)",
        "above the guard, the arguments are checked (ARGV[1] names KEYS[2]'s record, every_ms and "
        "first_ms are integers): a bad call gets an error reply and writes nothing. The page's script "
        "trusts its Elixir caller; this lab's is called from notebooks, so it checks",
    ),
)

ADVANCE = Beside(
    page="R4.02.3, EchoMQ's @advance (repeat.ex)",
    course="""if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])           -- cancelled mid-tick → sweep, {:ok, :absent}
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])  -- ARGV[2] = now_ms() + every_ms
return 1                                    -- {:ok, :advanced}""",
    ours="advance",
    first="if redis.call('EXISTS', record) == 0 then",
    last="return 1",
    differs=(
        "the EXISTS sweep (record gone: ZREM, reply 0) and the ZADD (reply 1) are the page's",
        "between them, this lab compares: the row must still hold the score the tick read (ARGV[3]) and "
        "the record the period (ARGV[4]), else reply 2 and no write. The compare-and-set is this lab's, "
        "not the page's; dive 03 shows the race it closes",
        "ARGV[2], the next score, is computed by the caller as now + every_ms, as on the page; the "
        "arguments are checked first, as in register.lua",
    ),
)

ZSCORE_UPSERT = Beside(
    page=(
        "the ZSCORE form of R4.02.2: addRepeatableJob-2.lua, a BullMQ 5 script (abridged by the page; "
        "BullMQ 6 removed it)"
    ),
    course="""-- addRepeatableJob-2.lua (real)
local prevMillis = ZSCORE repeatKey customKey   -- was this scheduler already registered?
if prevMillis then
  local delayedJobId = "repeat:"..customKey..":"..prevMillis
  -- reconcile the stale delayed entry from the prior next-run, then re-store
end

-- storeRepeatableJob (called below) — the store
ZADD repeatKey nextMillis customKey        -- one row per scheduler key""",
    ours="contrast/upsert",
    first="local prev_ms = redis.call('ZSCORE', registry, name)",
    last="return 1",
    differs=(
        "the probe (ZSCORE: a score, or false for a new name) and the store (ZADD the same member) are the page's",
        "the member is the name itself; BullMQ lets the caller choose a scheduler key",
        "removing the stale occurrence is one ZREM; BullMQ's removeJob also deletes the job's hash",
        "the next run is the boot's now + first_in_ms, this lab's simplification: BullMQ 6's "
        "addJobScheduler-11.lua keeps the previous slot when every is unchanged, and runs the job at once "
        "when every changes",
        "replies 1 and 0 ({:ok, :registered}, {:ok, :updated}) are this lab's notation",
    ),
)

COURSE = {"register": REGISTER, "advance": ADVANCE, "contrast/upsert": ZSCORE_UPSERT}


def beside(name: str) -> Beside:
    """The page's script beside ``<name>.lua``: ``register``, ``advance`` or ``contrast/upsert``."""
    if name not in COURSE:
        raise ValueError(f"name: the course pages print no script for {name!r}; try one of {', '.join(COURSE)}")
    return COURSE[name]
