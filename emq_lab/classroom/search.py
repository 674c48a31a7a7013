"""The instructor's search for what is not read by name: namespaces whose ACL user is gone and
each learner's queues beyond the course's. A walk of the server's keys with SCAN, at most
``budget`` keys examined a pass (a :class:`Search` kept between passes walks on where the last
stopped), on a connection of the client's pool used directly (no retry: a reply the server cuts
off costs one reconnection). A step whose reply the server cuts off, past its output-buffer limit
(a learner's 2 MB key names), is taken again per learner, so only that learner's keys of the step
are skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from redis import RedisCluster
from redis.exceptions import RedisError

from .. import keys


@dataclass
class Found:
    """What the search found of one namespace: keys per queue, whether it stopped at its bound,
    and whether a step of the search had to skip some of its keys (names too long to read)."""

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

    def merged(self, other: Found) -> Found:
        return Found(
            {**other.queues, **self.queues},
            max(self.keys, other.keys),
            self.capped or other.capped,
            self.skipped or other.skipped,
        )


@dataclass
class Search:
    """Where the search for namespaces and queues stands, kept between passes (the instructor's
    panel keeps one). Each pass walks on from where the last stopped, examining at most
    ``max_keys`` keys of each node, so a server holding more keys than one pass examines (one
    learner's 400,000) is walked whole over several passes, each as cheap as the first; what the
    last whole walk found stays shown meanwhile. Without one, a pass starts a walk of its own."""

    cursors: dict[int, int] = field(default_factory=dict)  # node -> where its walk goes on
    ended: set[int] = field(default_factory=set)  # the nodes whose walk ended
    found: dict[str, Found] = field(default_factory=dict)  # this walk's finds so far
    last: dict[str, Found] | None = None  # the last whole walk's
    walks: int = 0  # whole walks done

    def shown(self) -> dict[str, Found]:
        """This walk's finds and the last whole walk's (a queue seen by either)."""
        if self.last is None:
            return dict(self.found)
        names = set(self.found) | set(self.last)
        return {name: self.found.get(name, Found()).merged(self.last.get(name, Found())) for name in names}


def _namespace_of(key: str) -> str | None:
    head = f"{keys.PREFIX}:ns:{{"
    if not key.startswith(head):
        return None
    namespace, colon, _ = key[len(head) :].partition(":")
    return namespace if namespace and colon else None


def _nodes(client: Any) -> list[Any]:
    if isinstance(client, RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


class _Cut(Exception):
    """The server closed the connection mid-reply: the reply passed its output-buffer limit."""


def _scan_step(node: Any, conn: Any, cursor: int, pattern: str, count: int) -> tuple[int, list[str]]:
    """One SCAN step on ``conn``, a connection of ``node``'s pool used directly: no retry, so a
    reply the server cuts off costs one reconnection, not the client's retries and back-off. Any
    other fault: the step again through ``node`` itself, which says it as the client says faults."""
    try:
        conn.send_command("SCAN", cursor, "MATCH", pattern, "COUNT", count)
        reply = conn.read_response()
    except (RedisError, OSError) as exc:
        conn.disconnect()
        if isinstance(exc, OSError) or _cut_off(exc):
            raise _Cut from None
        reply = node.scan(cursor=cursor, match=pattern, count=count)
    cursor_reply, batch = reply
    return int(cursor_reply), [key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key) for key in batch]


#: A pattern no key of emq-lab matches, of a fixed length: a SCAN step with it returns the next
#: cursor and no long name (a learner's names all start emq:ns:{<learner>:).
_NO_KEY = f"{keys.PREFIX}:ns:{{}}"


def _step_apart(
    node: Any, conn: Any, cursor: int, namespaces: list[str], count: int, search: Search, per: int
) -> tuple[int, int]:
    """The step at ``cursor`` again, once per namespace (SCAN visits the same slots of the table
    whatever the pattern, so each learner's keys of the step come back apart): a namespace whose
    own step is cut off is marked as skipped. Returns the next cursor and the keys examined."""
    after: int | None = None
    for namespace in namespaces:
        try:
            after, batch = _scan_step(node, conn, cursor, keys.namespace_pattern(namespace), count)
        except _Cut:
            search.found.setdefault(namespace, Found()).skipped = True
            continue
        for key in batch:
            search.found.setdefault(namespace, Found()).add(key, per)
    if after is None:  # every namespace's step was cut off (or none is known): only the cursor
        after, _ = _scan_step(node, conn, cursor, _NO_KEY, count)
    return after, count * (len(namespaces) + 1)


def walk(
    client: Any, search: Search, prefix: str, named: set[str], *, count: int, budget: int, per: int
) -> tuple[int, bool]:
    """Walk on each node's keys from ``search``'s cursors, at most ``budget`` keys examined a node
    (``count`` a step), for the namespaces starting with ``prefix``; each key found counts on its
    namespace (up to ``per``). A step whose reply the server cuts off (a learner's very long
    names) is taken again for each namespace ``named`` or found, apart (:func:`_step_apart`).
    Returns the keys examined and whether the walk ended on every node (then it is ``search.last``
    and the next pass starts a new walk)."""
    pattern = keys.namespaces_pattern(prefix)
    examined = 0
    nodes = _nodes(client)
    for index, node in enumerate(nodes):
        if index in search.ended:
            continue
        cursor, spent = search.cursors.get(index, 0), 0
        conn = node.connection_pool.get_connection()
        try:
            while spent < budget:
                try:
                    cursor, batch = _scan_step(node, conn, cursor, pattern, count)
                    spent += count
                except _Cut:
                    cursor, cost = _step_apart(
                        node, conn, cursor, sorted(named | set(search.found)), count, search, per
                    )
                    spent += cost
                    batch = []
                for key in batch:
                    namespace = _namespace_of(key)
                    if namespace is not None:
                        search.found.setdefault(namespace, Found()).add(key, per)
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


def _cut_off(exc: BaseException) -> bool:
    """True when the server closed the connection mid-reply (past its output-buffer limit)."""
    text = str(exc).lower()
    return "closed the connection" in text or "closed by server" in text
