"""The instructor's search for what is not read by name: namespaces whose ACL user is gone and each
learner's other queues. A SCAN walk, at most ``budget`` keys a pass (a :class:`Search` kept between
passes walks on); a step whose reply the server cuts off (a learner's 2 MB key names) is taken again
in parts (:class:`_Apart`), so only that learner's keys of the step are skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

from emq_lab import keys

from .logins import text
from .users import primaries


@dataclass
class Found:
    """What the search found of one namespace: keys per queue, whether it stopped at its bound or skipped some."""

    queues: dict[str, int] = field(default_factory=dict)
    keys: int = 0
    capped: bool = False
    skipped: bool = False

    def add(self, key: str, bound: int) -> None:
        if self.keys >= bound:
            self.capped = True
            return
        self.keys += 1
        parts = keys.split_namespaced(key)
        if parts is not None:
            self.queues[parts[1]] = self.queues.get(parts[1], 0) + 1


@dataclass
class Search:
    """Where the search stands, kept between passes: each walks on, and the last whole walk's finds stay shown."""

    cursors: dict[int, int] = field(default_factory=dict)  # node -> where its walk goes on
    ended: set[int] = field(default_factory=set)  # the nodes whose walk ended
    found: dict[str, Found] = field(default_factory=dict)  # this walk's finds so far
    last: dict[str, Found] | None = None  # the last whole walk's
    walks: int = 0  # whole walks done

    def shown(self) -> dict[str, Found]:
        """This walk's finds and the last whole walk's (a queue seen by either)."""
        if self.last is None:
            return dict(self.found)
        shown = {}
        for name in set(self.found) | set(self.last):
            new, old = self.found.get(name, Found()), self.last.get(name, Found())
            queues = {**old.queues, **new.queues}
            shown[name] = Found(queues, max(new.keys, old.keys), new.capped or old.capped, new.skipped or old.skipped)
        return shown

    def add(self, batch: list[str], per: int) -> None:
        """Count each key of ``batch`` on its namespace (up to ``per`` a namespace)."""
        for key in batch:
            namespace = keys.namespace_of(key)
            if namespace is not None:
                self.found.setdefault(namespace, Found()).add(key, per)


class _Cut(Exception):
    """The server closed the connection mid-reply: the reply passed its output-buffer limit."""


def _scan_step(node: Any, conn: Any, cursor: int, pattern: str, count: int) -> tuple[int, list[str]]:
    """The next cursor and keys of one SCAN on ``conn``, used directly: a cut reply costs no retries (:class:`_Cut`)."""
    try:
        conn.send_command("SCAN", cursor, "MATCH", pattern, "COUNT", count)
        reply = conn.read_response()
    except (RedisError, OSError) as exc:
        conn.disconnect()
        said = str(exc).lower()
        if isinstance(exc, OSError) or "closed the connection" in said or "closed by server" in said:
            raise _Cut from None
        reply = node.scan(cursor=cursor, match=pattern, count=count)
    cursor_reply, batch = reply
    return int(cursor_reply), [text(key) for key in batch]


def _next(name: str, head: str) -> str:
    """The character of ``name`` after ``head``; ``:`` (what follows a namespace in a key) past its end."""
    return name[len(head)] if len(name) > len(head) else ":"


class _Apart:
    """The step at ``cursor`` taken again in parts, its namespaces halved by name (``emq:ns:{lng[0-4]*``...)
    down to the one whose own keys are cut off: about 2 log2(class) SCANs. Each part, whatever its
    pattern, visits the same slots, so returns the same next cursor."""

    def __init__(self, node: Any, conn: Any, cursor: int, count: int, search: Search, per: int) -> None:
        self.node, self.conn, self.cursor, self.count = node, conn, cursor, count
        self.search, self.per = search, per
        self.after: int | None = None
        self.calls = 0

    def scan(self, pattern: str) -> bool:
        """One part; False when its reply too is cut off."""
        self.calls += 1
        try:
            self.after, batch = _scan_step(self.node, self.conn, self.cursor, pattern, self.count)
        except _Cut:
            return False
        self.search.add(batch, self.per)
        return True

    def split(self, head: str, names: list[str]) -> None:
        """The namespaces starting with ``head`` (``names`` of them known), whose part was cut off."""
        chars = sorted({_next(name, head) for name in names})
        if not chars:  # no namespace known under it: nothing to take apart
            return
        self.scan(keys.namespaces_glob(head, chars, negate=True))  # those no one knows yet
        self.halves(head, names, chars)

    def halves(self, head: str, names: list[str], chars: list[str]) -> None:
        """The namespaces ``head`` + one of ``chars`` (``:``: ``head`` itself), whose part was cut off."""
        if chars == [":"]:  # the namespace ``head`` itself: its own keys are cut off
            self.search.found.setdefault(head, Found()).skipped = True
            return
        if len(chars) == 1:  # one character: the namespaces under ``head`` + it
            self.split(head + chars[0], [name for name in names if name.startswith(head + chars[0])])
            return
        middle = len(chars) // 2
        for part in (chars[:middle], chars[middle:]):
            if not self.scan(keys.namespaces_glob(head, part)):
                self.halves(head, [name for name in names if _next(name, head) in part], part)

    def step(self, prefix: str, namespaces: list[str]) -> tuple[int, int]:
        """The whole step for the namespaces starting with ``prefix``: the next cursor and the keys examined."""
        self.split(prefix, [name for name in namespaces if name.startswith(prefix)])
        if self.after is None:  # every part was cut off: only the cursor, with a pattern no key matches
            self.after, _ = _scan_step(self.node, self.conn, self.cursor, keys.no_key_glob(), self.count)
            self.calls += 1
        return self.after, self.count * self.calls


def walk(
    client: Any, search: Search, prefix: str, named: set[str], *, count: int, budget: int, per: int
) -> tuple[int, bool]:
    """The keys examined and whether the walk ended on every node, walking on from ``search``'s cursors at
    most ``budget`` keys a node, for the namespaces starting with ``prefix`` (``named``: known)."""
    pattern = keys.namespaces_pattern(prefix)
    examined = 0
    nodes = primaries(client)
    for index, node in enumerate(nodes):
        if index in search.ended:
            continue
        cursor, spent = search.cursors.get(index, 0), 0
        conn = node.connection_pool.get_connection()
        try:
            while spent < budget:
                try:
                    cursor, batch = _scan_step(node, conn, cursor, pattern, count)
                    search.add(batch, per)
                    spent += count
                except _Cut:
                    apart = _Apart(node, conn, cursor, count, search, per)
                    cursor, cost = apart.step(prefix, sorted(named | set(search.found)))
                    spent += cost
                if cursor == 0:
                    search.ended.add(index)
                    break
        finally:
            node.connection_pool.release(conn)
        search.cursors[index] = cursor
        examined += spent
    ended = len(search.ended) >= len(nodes)
    if ended:
        search.last, search.found, search.walks = search.found, {}, search.walks + 1
        search.cursors.clear()
        search.ended.clear()
    return examined, ended
