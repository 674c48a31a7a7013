"""Jobs: the occurrences a pump produced (``JOB-`` ids minted in enqueue.lua, or ``<name>:<slot_ms>``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import validate
from .backend import fields, text

if TYPE_CHECKING:
    from .lab import Lab


class Jobs:
    """browse / count / trim / get for queue ``queue``."""

    def __init__(self, lab: Lab, queue: str) -> None:
        self.lab, self.k = lab, lab.keyspace(queue)  # keyspace checks the name
        self.queue = self.k.queue

    def browse(self, limit: int = 10) -> list[str]:
        """Waiting job ids, newest first."""
        validate.limit(limit)
        return [text(job_id) for job_id in self.lab.client.lrange(self.k.wait, 0, limit - 1)]

    def count(self) -> int:
        """How many jobs wait."""
        return int(self.lab.client.llen(self.k.wait))

    def trim(self, keep: int) -> int:
        """Keep the newest ``keep`` waiting jobs, delete the older ones (wait-list entries and job
        hashes); how many were deleted. A demo that makes thousands of jobs cleans up so."""
        validate.integer(keep, "keep", 0)
        older = [text(job_id) for job_id in self.lab.client.lrange(self.k.wait, keep, -1)]
        for start in range(0, len(older), 500):
            self.lab.client.unlink(*(self.k.job(job_id) for job_id in older[start : start + 500]))
        if keep:
            self.lab.client.ltrim(self.k.wait, 0, keep - 1)
        else:  # LTRIM 0 -1 would keep the whole list
            self.lab.client.unlink(self.k.wait)
        return len(older)

    def get(self, job_id: str) -> dict[str, str]:
        """The job hash ({} when there is none)."""
        return fields(self.lab.client.hgetall(self.k.job(job_id)))
