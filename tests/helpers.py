"""Assertions shared by the backend tests."""

from __future__ import annotations

import emq_lab
from emq_lab import keys


def snapshot(lab: emq_lab.Lab, queue: str) -> dict[str, object]:
    """Every key of ``queue`` with its type and value, for "nothing was written" checks."""
    client = lab.client
    dump: dict[str, object] = {}
    for key in lab.keys(queue):
        kind = client.type(key)
        if kind == "hash":
            dump[key] = ("hash", client.hgetall(key))
        elif kind == "zset":
            dump[key] = ("zset", client.zrange(key, 0, -1, withscores=True))
        elif kind == "list":
            dump[key] = ("list", client.lrange(key, 0, -1))
        else:
            dump[key] = (kind, client.get(key))
    assert all(keys.slot(k) == keys.slot(keys.registry(queue)) for k in dump)
    return dump
