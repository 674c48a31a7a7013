"""The keyspace of a queue; every key name is built here. Every key of a queue carries one hash
tag, so the queue lives on one cluster hash slot: ``emq:{q}:...``, or in a namespace ``ns`` (a
classroom: one per learner) ``emq:ns:{ns:q}:...``, so a class using the same queue names spreads
over the hash slots, and a learner's ACL key pattern ``emq:ns:{ns:*`` matches no other learner's key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PREFIX = "emq"


def _glob_escape(text: str) -> str:
    # Names exclude * ? [ ] (validate.py): a backslash is the one glob metacharacter they may hold.
    return text.replace("\\", "\\\\")


@dataclass(frozen=True)
class QueueKeys:
    """Every key of one queue (in one namespace, or none)."""

    queue: str
    namespace: str | None = None

    @property
    def tag(self) -> str:
        """``emq:{q}``, or ``emq:ns:{ns:q}`` in a namespace."""
        if self.namespace is None:
            return f"{PREFIX}:{{{self.queue}}}"
        return f"{PREFIX}:ns:{{{self.namespace}:{self.queue}}}"

    @property
    def registry(self) -> str:
        """ZSET of registrations: member = name, score = next run in ms."""
        return f"{self.tag}:repeat"

    def record(self, name: str) -> str:
        """HASH of one registration: ``every_ms`` and ``template``."""
        return f"{self.registry}:{name}"

    @property
    def counter(self) -> str:
        """STRING counter that mints ``JOB-000001``, ``JOB-000002``, ... (INCR in enqueue.lua)."""
        return f"{self.tag}:id"

    @property
    def job_prefix(self) -> str:
        """What every job hash's key starts with; enqueue.lua appends the id."""
        return f"{self.tag}:job:"

    def job(self, job_id: str) -> str:
        """HASH of one occurrence."""
        return f"{self.job_prefix}{job_id}"

    @property
    def wait(self) -> str:
        """LIST of job ids waiting for a worker, newest at the head."""
        return f"{self.tag}:wait"

    @property
    def delayed(self) -> str:
        """ZSET of pending occurrences (the contrast scripts): member ``repeat:<name>:<run_ms>``."""
        return f"{self.tag}:delayed"


#: What follows the namespace in the name of its progress hash (:func:`progress`).
PROGRESS_TAIL = ":}:progress"


def namespace_head() -> str:
    """What every key in a namespace starts with (``emq:ns:{``); the namespace runs from there to the next ``:``."""
    return f"{PREFIX}:ns:{{"


def progress(namespace: str | None) -> str:
    """HASH of a learner's exercise results: field = the check (``register``, ``upsert.predict``),
    value = ``passed <ms>`` or ``failed <ms>``. In a namespace it is ``emq:ns:{ns:}:progress``:
    inside the learner's key pattern, and no queue's key (a queue name is never empty)."""
    return f"{PREFIX}:progress" if namespace is None else f"{namespace_head()}{namespace}{PROGRESS_TAIL}"


# A class server's guard (an admin) writes these, outside every learner's key pattern.
def guard_log() -> str:
    """LIST of what the guard did, newest first (the instructor's page reads it)."""
    return f"{PREFIX}:classroom:guard"


def guard_suspended() -> str:
    """HASH: field = a suspended ACL user, value = when (server ms) the guard turns it on again."""
    return f"{PREFIX}:classroom:suspended"


def guard_logins() -> str:
    """HASH: ``<node>:<ACL LOG entry id>`` -> its count, ``refused:<node>`` -> the refusals, at the last sweep."""
    return f"{PREFIX}:classroom:logins"


def guard_memory() -> str:
    """HASH: a primary's index -> ``<used_memory> <server ms>`` at the guard's last walk that freed no one."""
    return f"{PREFIX}:classroom:memory"


def namespace_pattern(namespace: str) -> str:
    """SCAN glob (and ACL key pattern) for every key of every queue in ``namespace``."""
    return f"{PREFIX}:ns:{{{_glob_escape(namespace)}:*"


def namespaces_pattern(prefix: str = "") -> str:
    """SCAN glob of every key in the namespaces that start with ``prefix`` (all of them for "")."""
    return f"{PREFIX}:ns:{{{_glob_escape(prefix)}*"


def namespaces_glob(head: str, chars: Iterable[str], *, negate: bool = False) -> str:
    """SCAN glob of every key in the namespaces that start with ``head`` and then one character of
    ``chars`` (``negate``: any character but those); ``:``, what follows a namespace in its keys,
    stands for the namespace ``head`` itself."""
    members = "".join("\\" + c if c in "-^]\\" else c for c in chars)  # ``-`` escaped: it would make a range
    return f"{PREFIX}:ns:{{{_glob_escape(head)}[{'^' if negate else ''}{members}]*"


def no_key_glob() -> str:
    """A SCAN glob no emq-lab key matches (a namespace is never empty): a SCAN step that only moves its cursor."""
    return f"{PREFIX}:ns:{{}}"


def observer_pattern() -> str:
    """The ACL key pattern of the instructor's observer: read access (``%R~``) to every emq-lab key,
    every learner's namespace included, and to no other key."""
    return f"%R~{PREFIX}:*"


def namespace_of(key: str) -> str | None:
    """The namespace of a key in one (a queue's, or its progress), else None; also of a key cut at
    128 bytes, as SLOWLOG shows it (a namespace holds no ``:`` and at most 64 characters)."""
    head = namespace_head()
    namespace, colon, _ = key[len(head) :].partition(":") if key.startswith(head) else ("", "", "")
    return namespace if namespace and colon else None


def split_namespaced(key: str) -> tuple[str, str, str] | None:
    """``emq:ns:{ns:q}:rest`` -> ``(ns, q, rest)``; None for a key of no namespace. A namespace
    holds no ``:`` and a queue no ``}``, so the split is unambiguous."""
    namespace = namespace_of(key)
    queue, brace, rest = key[len(f"{PREFIX}:ns:{{{namespace}:") :].partition("}:") if namespace else ("", "", "")
    return (namespace, queue, rest) if namespace and queue and brace else None
