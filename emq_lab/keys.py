"""The keyspace of a queue. Every key carries the hash tag ``{q}``, so one queue
lives on one cluster slot; no other module builds a key string."""

from __future__ import annotations

PREFIX = "emq"


def _tag(queue: str) -> str:
    return f"{PREFIX}:{{{queue}}}"


def registry(queue: str) -> str:
    """ZSET of registrations: member = name, score = next run in ms."""
    return f"{_tag(queue)}:repeat"


def record(queue: str, name: str) -> str:
    """HASH of one registration: ``every_ms`` and ``template``."""
    return f"{_tag(queue)}:repeat:{name}"


def job_counter(queue: str) -> str:
    """STRING counter that mints ``JOB-000001``, ``JOB-000002``, ..."""
    return f"{_tag(queue)}:id"


def job(queue: str, job_id: str) -> str:
    """HASH of one occurrence."""
    return f"{_tag(queue)}:job:{job_id}"


def wait(queue: str) -> str:
    """LIST of job ids waiting for a worker, newest at the head."""
    return f"{_tag(queue)}:wait"


def pattern(queue: str) -> str:
    """SCAN pattern matching every key of ``queue`` and nothing else."""
    escaped = queue.replace("\\", "\\\\")
    return f"{PREFIX}:{{{escaped}}}:*"


def _crc16(data: bytes) -> int:
    # CRC-16/XMODEM (poly 0x1021, init 0), the checksum Redis Cluster uses.
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(key: str | bytes) -> int:
    """The cluster slot of ``key``: CRC16 of its hash tag (or the whole key) mod 16384."""
    raw = key.encode() if isinstance(key, str) else key
    start = raw.find(b"{")
    if start != -1:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1 : end]
    return _crc16(raw) % 16384


def delayed(queue: str) -> str:
    """ZSET of pending occurrences: member ``repeat:<name>:<run_ms>``, score = run in ms."""
    return f"{_tag(queue)}:delayed"
