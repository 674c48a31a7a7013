"""Assertions shared by the backend tests."""

from __future__ import annotations

from typing import Any

import redis
from redis.crc import key_slot

import emq_lab
from emq_lab.keys import QueueKeys

MIN = 60_000  # a minute in ms
START = "2026-01-05T09:00:00Z"  # where every test's SimClock starts (the course's Monday, 09:00)


def slot(key: str) -> int:
    """The cluster slot of ``key`` (redis-py's CRC16 of its hash tag, mod 16384)."""
    return int(key_slot(key.encode()))


def scanned(lab: emq_lab.Lab, queue: str) -> list[str]:
    """Every key of ``queue`` by a SCAN of its pattern over the whole server. ``lab.keys(q)`` finds
    them from the queue's own structures; the tests look everywhere, so a stray write shows."""
    tag = lab.keyspace(queue).registry.removesuffix("repeat")  # emq:{q}: (or emq:ns:{ns:q}:)
    pattern = tag.replace("\\", "\\\\") + "*"  # a backslash is the one glob character a name may hold
    return sorted(set(lab.client.scan_iter(match=pattern, count=1000)))


def records(lab: emq_lab.Lab, queue: str) -> set[str]:
    """The names that have a record hash in ``queue``, found by SCAN."""
    prefix = lab.keyspace(queue).record("")
    return {key.removeprefix(prefix) for key in scanned(lab, queue) if key.startswith(prefix)}


def snapshot(lab: emq_lab.Lab, queue: str) -> dict[str, object]:
    """Every key of ``queue`` with its type and value, for "nothing was written" checks."""
    client = lab.client
    dump: dict[str, object] = {}
    for key in scanned(lab, queue):
        kind = client.type(key)
        if kind == "hash":
            dump[key] = ("hash", client.hgetall(key))
        elif kind == "zset":
            dump[key] = ("zset", client.zrange(key, 0, -1, withscores=True))
        elif kind == "list":
            dump[key] = ("list", client.lrange(key, 0, -1))
        else:
            dump[key] = (kind, client.get(key))
    assert all(slot(k) == slot(QueueKeys(queue).registry) for k in dump)
    return dump


class CountingConnection(redis.Connection):
    """A connection that counts what it sends: one per call, one per pipeline."""

    sent = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.sent += 1
        super().send_packed_command(command, check_health)


class RoundTrips:
    """A lab on the same server whose connection counts its round trips (``count`` since the
    last ``start()``). A connection's handshake happens before the first ``start()``."""

    def __init__(self, lab: emq_lab.Lab) -> None:
        self.lab = lab

    def start(self) -> None:
        CountingConnection.sent = 0

    @property
    def count(self) -> int:
        return CountingConnection.sent


def shown(obj: object) -> dict[str, Any]:
    """What a cell ending in ``obj`` shows: its MIME bundle, as IPython formats it for the notebook."""
    from IPython.core.formatters import format_display_data

    data, _ = format_display_data(obj)
    return data


def clickable(panel: Any) -> dict[str, bool]:
    """Which step buttons of a cancel panel a learner can click now (read off the buttons)."""
    from emq_lab.dives.race import LABELS, STEPS

    return {step: not panel.control(LABELS[step]).disabled for step in STEPS}
