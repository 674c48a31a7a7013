"""Lab: one connection, one clock, the scripts, and the per-queue views."""

from __future__ import annotations

from collections.abc import Iterable

from redis.cluster import RedisCluster

from . import validate
from .backend import TIMEOUT_S, open_client
from .clock import Clock, SystemClock
from .jobs import Jobs
from .keys import QueueKeys
from .namespace import resolve_namespace
from .pump import Pump
from .repeat import Repeat
from .schedule import Measure, Rule
from .scripts import Client, Scripts


class Lab:
    """What ``emq_lab.connect()`` returns."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        description: str,
        *,
        namespace: str | None = None,
        scripts: Scripts | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.namespace = None if namespace is None else validate.namespace(namespace)
        self.scripts = scripts if scripts is not None else Scripts.load(client)
        self._description = description

    def keyspace(self, queue: str) -> QueueKeys:
        """The keys of ``queue`` in this lab's namespace."""
        return QueueKeys(validate.name(queue, field="queue"), self.namespace)

    def repeat(self, queue: str) -> Repeat:
        return Repeat(self, queue)

    def jobs(self, queue: str) -> Jobs:
        return Jobs(self, queue)

    def pump(
        self, queue: str, *, batch: int = 100, slot_keyed: bool = False, rule: Rule = Measure.START_TO_START
    ) -> Pump:
        return Pump(self, queue, batch=batch, slot_keyed=slot_keyed, rule=rule)

    def with_clock(self, clock: Clock) -> Lab:
        """This lab (same connection, namespace and scripts) reading now from ``clock``."""
        return Lab(self.client, clock, self._description, namespace=self.namespace, scripts=self.scripts)

    def keys(self, queue: str) -> list[str]:
        """Every key of ``queue`` that exists, sorted: its fixed keys, a record per registry member and a job
        per id on the wait list, found from the queue's own structures (nothing scans: a record written by
        hand, with no registry member, is not found)."""
        (candidates,) = self._candidates([queue])
        pipe = self.client.pipeline(transaction=False)
        for key in candidates:
            pipe.exists(key)
        return [key for key, found in zip(candidates, pipe.execute(), strict=True) if found]

    def reset(self, queue: str) -> int:
        """Delete the keys :meth:`keys` finds for ``queue`` and nothing else; how many were deleted."""
        return self.reset_all([queue])

    def reset_all(self, queues: Iterable[str]) -> int:
        """``reset`` for several queues in two round trips: one reads their structures, one UNLINKs
        (on a cluster, one UNLINK per 500 keys of a queue)."""
        chunks = [
            candidates[start : start + 500]
            for candidates in self._candidates(list(queues))
            for start in range(0, len(candidates), 500)
        ]
        if isinstance(self.client, RedisCluster):  # its pipeline refuses a many-key UNLINK; each chunk is one hash slot
            return sum(int(self.client.unlink(*chunk)) for chunk in chunks)
        pipe = self.client.pipeline(transaction=False)
        for chunk in chunks:
            pipe.unlink(*chunk)
        return sum(int(deleted) for deleted in pipe.execute()) if chunks else 0

    def _candidates(self, queues: list[str]) -> list[list[str]]:
        """For each queue, sorted, every key its structures name, whether or not it exists."""
        spaces = [self.keyspace(queue) for queue in queues]
        pipe = self.client.pipeline(transaction=False)
        for k in spaces:
            pipe.zrange(k.registry, 0, -1)
            pipe.lrange(k.wait, 0, -1)
        replies = pipe.execute() if spaces else []
        return [
            sorted({k.registry, k.counter, k.wait, k.delayed, *map(k.record, members), *map(k.job, job_ids)})
            for k, members, job_ids in zip(spaces, replies[0::2], replies[1::2], strict=True)
        ]

    def describe(self) -> str:
        """The backend (and namespace), for humans (not for compared notebook output)."""
        return self._description if self.namespace is None else f"{self._description}, namespace {self.namespace}"

    def close(self) -> None:
        self.client.close()

    def __repr__(self) -> str:
        return f"Lab(clock={self.clock!r})"


def connect(
    url: str | None = None, clock: Clock | None = None, *, namespace: str | None = None, timeout_s: float = TIMEOUT_S
) -> Lab:
    """A Lab on ``url`` (else ``$EMQ_LAB_URL``, else the embedded server) reading now from
    ``clock``; with ``namespace`` (else ``$EMQ_LAB_NAMESPACE``; ``"auto"`` = this user), every key
    it touches carries it. A server must answer now, else ``emq_lab.BackendUnavailable`` naming the
    URL; a command waits at most ``timeout_s`` seconds for its reply."""
    chosen = resolve_namespace(namespace)
    client, description = open_client(url, timeout_s=timeout_s)
    return Lab(client, clock if clock is not None else SystemClock(), description, namespace=chosen)
