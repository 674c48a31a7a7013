"""The instructor's overview: every learner of the class, started or not, with the dives they
reached, their queues and their exercise progress. Read-only: it never writes a key.

The learners are the server's ACL users named with the class's prefix, joined by every namespace
that has keys (found by a bounded SCAN, never KEYS). Each learner's keys are counted by a SCAN of
that learner's own pattern with its own bound, so one learner's thousands of keys can never hide
another's; a row lists at most :data:`MAX_QUEUES_SHOWN` queues. One learner's broken keys (a wrong
type, a progress value that is no time) or hostile names (control characters) are reported on
that learner's row and never stop the view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

from .. import keys, progress, validate
from ..clock import hhmm
from ..dives import QUEUES
from .users import acl_users

SCAN_COUNT = 1000
#: Keys read looking for namespaces that have no ACL user (a server whose users cannot be listed).
MAX_SCANNED = 100_000
#: Keys read in one learner's namespace.
MAX_PER_LEARNER = 10_000
#: Queues one row lists (then "… and N more").
MAX_QUEUES_SHOWN = 20

# Each dive and the queues its notebook uses: the dives' own list, so the two never disagree.
DIVES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (f"{number:02d} {dive}", queues) for number, (dive, queues) in enumerate(QUEUES.items(), start=1)
)


def shown(text: str) -> str:
    """``text`` with every character that is not printable escaped (``\\n``, ``\\x1b``): a name
    can never forge a line of the overview or send a terminal escape."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


@dataclass(frozen=True)
class QueueSummary:
    """One learner's queue: its registry size, jobs waiting, how many keys it has (None and a
    ``problem`` when a key holds the wrong type)."""

    queue: str
    registrations: int | None
    waiting: int | None
    keys: int
    problem: str = ""


@dataclass(frozen=True)
class LearnerSummary:
    namespace: str
    queues: tuple[QueueSummary, ...] = ()
    attempts: tuple[progress.Attempt, ...] = ()
    problems: tuple[str, ...] = ()
    unlisted: tuple[str, ...] = ()  # queues past MAX_QUEUES_SHOWN: counted, not listed

    @property
    def started(self) -> bool:
        return bool(self.queues or self.attempts)

    @property
    def dives(self) -> tuple[str, ...]:
        """The dives whose queues exist in this namespace, in course order."""
        present = {q.queue for q in self.queues}.union(self.unlisted)
        return tuple(dive for dive, names in DIVES if present.intersection(names))

    def exercises(self) -> list[tuple[str, str, int | None]]:
        """Every check of the course (and any other recorded): passed / failed / not tried, and when."""
        done = {a.exercise: a for a in self.attempts}
        names = [*progress.EXERCISES, *sorted(set(done) - set(progress.EXERCISES))]
        return [
            (name, ("passed" if done[name].passed else "failed") if name in done else "not tried",
             done[name].at_ms if name in done else None)
            for name in names
        ]  # fmt: skip

    def progress_text(self) -> str:
        """``register passed 09:15, advance failed 09:40`` (the checks tried), or ``no check tried``."""
        tried = [f"{shown(name)} {state} {hhmm(at)}" for name, state, at in self.exercises() if at is not None]
        return ", ".join(tried) or "no check tried"

    def lines(self) -> list[str]:
        name = shown(self.namespace)
        if not self.started and not self.problems:
            return [f"{name}: not started"]
        got = ", ".join(self.dives) or "no dive yet"
        passed = sum(1 for _, state, _ in self.exercises() if state == "passed")
        count = len(self.queues) + len(self.unlisted)
        head = f"{name}: {count} queue(s) · dives: {got} · checks passed {passed}/{len(progress.EXERCISES)}"
        lines = [head, f"  checks: {self.progress_text()}"]
        for q in self.queues:
            if q.problem:
                lines.append(f"  {shown(q.queue):<14} ⚠ {shown(q.problem)} · keys {q.keys:>4}")
            else:
                lines.append(
                    f"  {shown(q.queue):<14} registry {q.registrations:>3} · waiting {q.waiting:>4} · keys {q.keys:>4}"
                )
        if self.unlisted:
            lines.append(f"  … and {len(self.unlisted)} more queue(s)")
        lines += [f"  ⚠ {shown(problem)}" for problem in self.problems]
        return lines


@dataclass(frozen=True)
class Overview:
    """Every learner found, whether the search for namespaces beyond the ACL users saw the whole
    server (``complete``; each learner's own count has its own bound), and a note
    when the server's ACL users could not be read (then only learners with keys are listed)."""

    learners: tuple[LearnerSummary, ...]
    scanned: int
    complete: bool
    users_note: str = ""

    def lines(self) -> list[str]:
        lines = [line for learner in self.learners for line in learner.lines()] or ["no learner found yet"]
        if self.users_note:
            lines.append(f"({shown(self.users_note)})")
        if not self.complete:
            lines.append(
                f"(stopped looking for other namespaces after {self.scanned} keys: the list may be incomplete)"
            )
        return lines

    @property
    def readout(self) -> str:
        return "\n".join(self.lines())


def _namespace_of(key: str) -> str | None:
    head = f"{keys.PREFIX}:ns:{{"
    if not key.startswith(head):
        return None
    namespace, colon, _ = key[len(head) :].partition(":")
    return namespace if namespace and colon else None


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
            return f"{key} is not a {kind}"
        return f"{key}: {text[:80]}"
    return ""


@dataclass
class _Found:
    """What a SCAN found of one namespace: keys per queue, and whether it stopped at its bound."""

    queues: dict[str, int] = field(default_factory=dict)
    keys: int = 0
    capped: bool = False

    def add(self, key: str, bound: int) -> None:
        if self.keys >= bound:
            self.capped = True
            return
        self.keys += 1
        parts = keys.split_namespaced(key)
        if parts is not None:
            self.queues[parts[1]] = self.queues.get(parts[1], 0) + 1


def _scan(client: Any, pattern: str, *, count: int, bound: int, found: dict[str, _Found], per: int) -> tuple[int, bool]:
    """Add the keys matching ``pattern`` to ``found`` (each namespace at most ``per`` keys), reading
    at most ``bound`` keys; the keys read and whether the SCAN ran to its end."""
    scanned = 0
    for key in client.scan_iter(match=pattern, count=count):
        if scanned >= bound:
            return scanned, False
        scanned += 1
        namespace = _namespace_of(key)
        if namespace is not None:
            found.setdefault(namespace, _Found()).add(key, per)
    return scanned, True


def overview(
    client: Any,
    *,
    prefix: str = "",
    learners: tuple[str, ...] = (),
    count: int = SCAN_COUNT,
    max_keys: int = MAX_SCANNED,
    per_learner: int = MAX_PER_LEARNER,
) -> Overview:
    """Every learner of the class: the ACL users starting with ``prefix`` and ``learners`` (names to
    list even with no key), each counted by a SCAN of its own namespace (at most ``per_learner``
    keys); then the other namespaces starting with ``prefix`` that have keys (a SCAN reading at
    most ``max_keys``, ``count`` a step). Then one pipelined ZCARD and LLEN per listed queue and an
    HMGET of the course's checks per learner, each reply judged alone."""
    if prefix:
        validate.namespace(prefix)
    for name in learners:
        validate.namespace(name)
    validate.limit(count, field="count")
    validate.limit(max_keys, field="max_keys")
    validate.limit(per_learner, field="per_learner")
    users, note = _users(client, prefix)
    found: dict[str, _Found] = {}
    for name in dict.fromkeys((*users, *learners)):
        found[name] = _Found()
        _, whole = _scan(
            client, keys.namespace_pattern(name), count=count, bound=per_learner, found=found, per=per_learner
        )
        found[name].capped = not whole
    known = dict(found)
    others: dict[str, _Found] = {}
    scanned, complete = _scan(
        client, keys.namespaces_pattern(prefix), count=count, bound=max_keys, found=others, per=per_learner
    )
    found.update((name, seen) for name, seen in others.items() if name not in known)
    ordered = sorted(found)
    listed = {name: sorted(found[name].queues)[:MAX_QUEUES_SHOWN] for name in ordered}
    pipe = client.pipeline(transaction=False)
    for namespace in ordered:
        for queue in listed[namespace]:
            k = keys.QueueKeys(queue, namespace)
            pipe.zcard(k.registry)
            pipe.llen(k.wait)
        pipe.hmget(keys.progress(namespace), list(progress.EXERCISES))
    replies = iter(pipe.execute(raise_on_error=False) if len(pipe) else [])
    summaries = []
    for namespace in ordered:
        seen = found[namespace]
        queue_rows = []
        for queue in listed[namespace]:
            k = keys.QueueKeys(queue, namespace)
            size, waiting = next(replies), next(replies)
            trouble = _problem(size, k.registry, "sorted set (registry)") or _problem(waiting, k.wait, "list (wait)")
            if trouble:
                queue_rows.append(QueueSummary(queue, None, None, seen.queues[queue], trouble))
            else:
                queue_rows.append(QueueSummary(queue, int(size), int(waiting), seen.queues[queue]))
        attempts: dict[str, progress.Attempt] = {}
        problems: list[str] = []
        values = next(replies)
        trouble = _problem(values, keys.progress(namespace), "hash (progress)")
        if trouble:
            problems.append(trouble)
        else:
            recorded = {
                name: value for name, value in zip(progress.EXERCISES, values, strict=True) if value is not None
            }
            attempts, problems = progress.parse(recorded)
        if seen.capped:
            problems.append(f"more than {per_learner} keys: only the first {per_learner} are counted")
        unlisted = tuple(sorted(seen.queues)[MAX_QUEUES_SHOWN:])
        summaries.append(
            LearnerSummary(namespace, tuple(queue_rows), tuple(attempts.values()), tuple(problems), unlisted)
        )
    return Overview(tuple(summaries), scanned, complete, note)
