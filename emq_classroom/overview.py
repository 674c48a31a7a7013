"""The instructor's overview: per dive and per check, how many learners got there, then every
learner. Read-only, and bounded whatever a learner stores: the course's queues and the progress
are read by name, pipelined; only the search for the rest SCANs, at most ``max_keys`` keys a pass
(:mod:`.search`). A learner's broken keys, long or hostile names show on its row, cut, and never
stop the view."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from emq_lab import keys, progress, validate
from emq_lab.clock import hhmm, hhmmss
from emq_lab.dives import QUEUES
from emq_lab.validate import printable

from .guard import LOG_LINES, read_log, suspended
from .search import Found, Search, walk
from .users import acl_users

SCAN_COUNT = 1000
#: Keys the search for unnamed namespaces and queues examines (on each node), then it stops.
MAX_SCANNED = 20_000
#: Keys of one learner that search counts.
MAX_PER_LEARNER = 2_000
#: Queues one row lists (then "… and N more").
MAX_QUEUES_SHOWN = 20
#: Characters of a name shown (a longer one is cut; past validate.MAX_NAME it is not read either).
SHOWN_NAME = 40
#: Lines of the guard's log shown.
GUARD_LINES = 5
#: Jobs waiting in one queue past which its row warns: a read of the whole wait list (LRANGE 0 -1,
#: as a dive's snapshot does) holds the server for every learner. 2,000,000 held it 0.3 to 0.6 s
#: (README, Classroom: known limits); 100,000 took 13 to 18 ms.
BIG_WAIT = 100_000

# Each dive and the queues its notebook uses: the dives' own list, so the two never disagree.
DIVES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (f"{number:02d} {dive}", queues) for number, (dive, queues) in enumerate(QUEUES.items(), start=1)
)
COURSE_QUEUES: tuple[str, ...] = tuple(queue for _, queues in DIVES for queue in queues)


def cut(name: str, most: int = SHOWN_NAME) -> str:
    """``name`` printable, at most ``most`` characters of it, and its length when longer (it may be megabytes)."""
    if len(name) <= most:
        return printable(name)
    return f"{printable(name[:most])}… ({len(name):,} characters)"


@dataclass(frozen=True)
class QueueSummary:
    """One learner's queue: its registry size and jobs waiting (None and a ``problem`` when they cannot be read)."""

    queue: str
    registrations: int | None
    waiting: int | None
    problem: str = ""

    def text(self) -> str:
        if self.problem:
            return f"{cut(self.queue)} ⚠ {printable(self.problem)}"
        return f"{cut(self.queue)} (registry {self.registrations}, waiting {self.waiting})"


@dataclass(frozen=True)
class LearnerSummary:
    namespace: str
    queues: tuple[QueueSummary, ...] = ()
    attempts: tuple[progress.Attempt, ...] = ()
    problems: tuple[str, ...] = ()
    unlisted: tuple[str, ...] = ()  # queues past MAX_QUEUES_SHOWN: counted, not listed
    revoked: bool = False  # keys in the namespace, but no ACL user any more
    dives: tuple[str, ...] = ()  # the dives whose queues exist, in course order
    suspended_until_ms: int | None = None  # the class guard suspended this learner until then
    unseen: bool = False  # the search stopped before finding any key of this namespace
    guarded: str = ""  # the guard's newest line about this learner, if any

    @property
    def guard_mark(self) -> str:
        """``suspended until 09:41:33`` or ``connections closed by the guard`` (or "")."""
        if self.suspended_until_ms is not None:
            return f"suspended until {hhmmss(self.suspended_until_ms)}"
        return "connections closed by the guard" if self.guarded else ""

    @property
    def started(self) -> bool:
        return bool(self.queues or self.attempts or self.unlisted)

    def exercises(self) -> list[tuple[str, str, int | None]]:
        """Every check of the course (and any other recorded): passed, failed or not tried, and when."""
        done = {a.exercise: a for a in self.attempts}
        names = [*progress.EXERCISES, *sorted(set(done) - set(progress.EXERCISES))]
        return [
            (name, ("passed" if done[name].passed else "failed") if name in done else "not tried",
             done[name].at_ms if name in done else None)
            for name in names
        ]  # fmt: skip

    def progress_text(self) -> str:
        """``register passed 09:15, advance failed 09:40`` (the checks tried), or ``no check tried``."""
        tried = [f"{printable(name)} {state} {hhmm(at)}" for name, state, at in self.exercises() if at is not None]
        return ", ".join(tried) or "no check tried"

    @property
    def mark(self) -> str:
        """``revoked``, ``not started``, ``not seen`` (the search stopped before its other queues) or ``""``."""
        if self.revoked:
            return "revoked"
        if self.started or self.problems:
            return ""
        return "not seen" if self.unseen else "not started"

    def lines(self) -> list[str]:
        """One line (and one per problem): name, dives, checks, queues."""
        name = cut(self.namespace) + (f" ({self.guard_mark})" if self.guard_mark else "")
        guarded = [f"  guard: {printable(self.guarded)}"] if self.guarded else []
        if self.mark == "not started":
            return [f"{name}: not started", *guarded]
        if self.mark == "not seen":
            return [f"{name}: no course queue, no check; the search stopped before its other queues", *guarded]
        label = f"{name} (revoked)" if self.revoked else name
        passed = sum(1 for _, state, _ in self.exercises() if state == "passed")
        count = len(self.queues) + len(self.unlisted)
        queues = ", ".join(q.text() for q in self.queues[:3])
        more = count - min(3, len(self.queues))
        queues += f", … and {more} more" if more > 0 else ""
        line = (
            f"{label}: {count} queue(s) · dives: {', '.join(self.dives) or 'no dive yet'} · "
            f"checks passed {passed}/{len(progress.EXERCISES)}: {self.progress_text()}"
        )
        return [line + (f" · {queues}" if queues else ""), *(f"  ⚠ {printable(p)}" for p in self.problems), *guarded]


@dataclass(frozen=True)
class Overview:
    """Every learner found, whether the search saw the whole server, a note if the ACL users could not be read,
    and the guard's last lines (newest first)."""

    learners: tuple[LearnerSummary, ...]
    scanned: int
    complete: bool
    users_note: str = ""
    guard: tuple[str, ...] = ()
    goes_on: bool = False  # the search is kept: the next pass walks on from where this one stopped

    def dive_counts(self) -> list[tuple[str, int]]:
        """Each dive and how many learners reached it."""
        return [(dive, sum(1 for learner in self.learners if dive in learner.dives)) for dive, _ in DIVES]

    def check_counts(self) -> list[tuple[str, int, int, int]]:
        """Each check of the course: how many learners passed it, failed it, did not try it."""
        states = [{name: state for name, state, _ in learner.exercises()} for learner in self.learners]
        said = {check: [s.get(check, "not tried") for s in states] for check in progress.EXERCISES}
        return [(c, said[c].count("passed"), said[c].count("failed"), said[c].count("not tried")) for c in said]

    def summary_lines(self) -> list[str]:
        total = len(self.learners)
        if not total:
            return ["no learner found yet"]
        marks = [learner.mark for learner in self.learners]
        width = max(len(check) for check in progress.EXERCISES)
        return [
            f"class: {total} learner(s) · {marks.count('')} started · {marks.count('not started')} not started"
            + "".join(f" · {marks.count(mark)} {mark}" for mark in ("not seen", "revoked") if mark in marks),
            "reached: " + " · ".join(f"{dive} {n}/{total}" for dive, n in self.dive_counts()),
            f"{'check':<{width}}  passed  failed  not tried",
            *(f"{c:<{width}}  {p:>6}  {f:>6}  {n:>9}" for c, p, f, n in self.check_counts()),
        ]

    def lines(self) -> list[str]:
        lines = self.summary_lines()
        if self.learners:
            lines += ["learners:", *(line for learner in self.learners for line in learner.lines())]
        if self.users_note:
            lines.append(f"({printable(self.users_note)})")
        if not self.complete:
            lines.append(
                f"(stopped looking for other namespaces and queues after {self.scanned} keys: "
                "the list may be incomplete" + ("; the next refresh looks further)" if self.goes_on else ")")
            )
        return lines + [f"guard: {printable(line)}" for line in self.guard]

    @property
    def readout(self) -> str:
        return "\n".join(self.lines())


def _users(client: Any, prefix: str) -> tuple[list[str], str]:
    """The ACL users named ``<prefix>...`` and a note when they could not be read."""
    if not prefix:
        return [], ""
    try:
        return sorted(user for user in acl_users(client) if user.startswith(prefix)), ""
    except RedisError as exc:
        return [], f"could not list the server's ACL users ({type(exc).__name__}): learners with no key are not shown"


def _problem(reply: Any, key: str, kind: str) -> str:
    if isinstance(reply, Exception):
        text = str(reply.args[0]) if reply.args else str(reply)
        if "WRONGTYPE" in text:
            return f"{cut(key, 80)} is not a {kind}"
        return f"{cut(key, 80)}: {validate.shorten(text, 80)}"
    return ""


def overview(
    client: Any,
    *,
    prefix: str = "",
    learners: tuple[str, ...] = (),
    count: int = SCAN_COUNT,
    max_keys: int = MAX_SCANNED,
    per_learner: int = MAX_PER_LEARNER,
    search: Search | None = None,
) -> Overview:
    """Every learner of the class: the ACL users and namespaces starting with ``prefix``, and ``learners``
    (listed even with no key); ``search``, kept between passes, walks on."""
    if prefix:
        validate.namespace(prefix)
    for name in learners:
        validate.namespace(name)
    for value, field in ((count, "count"), (max_keys, "max_keys"), (per_learner, "per_learner")):
        validate.limit(value, field=field)
    users, note = _users(client, prefix)
    named = set(users).union(learners)
    kept = search is not None
    search = Search() if search is None else search
    wanted = {name for name in named if name.startswith(prefix)}
    scanned, _ = walk(client, search, prefix, wanted, count=count, budget=max_keys, per=per_learner)
    found, complete = search.shown(), search.last is not None
    ordered = sorted(named.union(found))

    pipe = client.pipeline(transaction=False)  # by name: which course queues exist, and the progress
    for namespace in ordered:
        for queue in COURSE_QUEUES:
            k = keys.QueueKeys(queue, namespace)
            pipe.exists(k.registry, k.wait, k.counter, k.delayed)
        pipe.hmget(keys.progress(namespace), list(progress.EXERCISES))
    first = iter(pipe.execute(raise_on_error=False) if len(pipe) else [])
    present: dict[str, list[str]] = {}
    recorded: dict[str, Any] = {}
    queues: dict[str, list[str]] = {}  # the course's present, then the others the search found
    for namespace in ordered:
        present[namespace] = [queue for queue in COURSE_QUEUES if _truthy(next(first))]
        recorded[namespace] = next(first)
        others = sorted(set(found.get(namespace, Found()).queues) - set(COURSE_QUEUES))
        queues[namespace] = [*present[namespace], *others]
    pipe = client.pipeline(transaction=False)  # the queues listed: registry size and jobs waiting
    for namespace in ordered:
        for queue in queues[namespace][:MAX_QUEUES_SHOWN]:
            if len(queue) <= validate.MAX_NAME:
                k = keys.QueueKeys(queue, namespace)
                pipe.zcard(k.registry)
                pipe.llen(k.wait)
    second = iter(pipe.execute(raise_on_error=False) if len(pipe) else [])

    log = read_log(client, lines=LOG_LINES)
    held = suspended(client)
    summaries = []
    for namespace in ordered:
        rows = []
        for queue in queues[namespace][:MAX_QUEUES_SHOWN]:
            if len(queue) > validate.MAX_NAME:
                rows.append(QueueSummary(queue, None, None, "a name longer than any queue may have: not read"))
                continue
            k = keys.QueueKeys(queue, namespace)
            size, waiting = next(second), next(second)
            trouble = _problem(size, k.registry, "sorted set (registry)") or _problem(waiting, k.wait, "list (wait)")
            rows.append(
                QueueSummary(queue, None, None, trouble) if trouble else QueueSummary(queue, int(size), int(waiting))
            )
        problems = [
            f"{row.waiting:,} jobs waiting in {cut(row.queue)}: reading them all holds the whole class; "
            f"lab.reset({cut(row.queue)!r}) frees them in the background"
            for row in rows
            if row.waiting is not None and row.waiting > BIG_WAIT
        ]
        attempts: dict[str, progress.Attempt] = {}
        trouble = _problem(recorded[namespace], keys.progress(namespace), "hash (progress)")
        if trouble:
            problems.append(trouble)
        else:
            values = zip(progress.EXERCISES, recorded[namespace], strict=True)
            attempts, parsed = progress.parse({name: value for name, value in values if value is not None})
            problems += parsed
        seen = found.get(namespace, Found())
        if seen.capped:
            problems.append(f"more than {per_learner} keys: only the first {per_learner} found are counted")
        if seen.skipped:
            problems.append("names too long to read: the search skipped some of its keys")
        summaries.append(
            LearnerSummary(
                namespace,
                tuple(rows),
                tuple(attempts.values()),
                tuple(problems),
                tuple(queues[namespace][MAX_QUEUES_SHOWN:]),
                revoked=bool(users) and not note and namespace not in named,
                dives=tuple(dive for dive, course in DIVES if set(present[namespace]).intersection(course)),
                suspended_until_ms=held.get(namespace),
                unseen=not complete and namespace not in found,
                guarded=next((line for line in log if _about(line, namespace)), ""),
            )
        )
    return Overview(tuple(summaries), scanned, complete, note, tuple(log[:GUARD_LINES]), goes_on=kept)


def _about(line: str, learner: str) -> bool:
    """Whether one of the guard's lines names ``learner``."""
    return f" of {learner} (" in line or f" suspended {learner} for " in line or f" {learner} may connect" in line


def _truthy(reply: Any) -> bool:
    """An EXISTS reply that counts at least one key (an error reply counts as none)."""
    return not isinstance(reply, Exception) and bool(int(reply))
