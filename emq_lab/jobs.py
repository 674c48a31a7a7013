"""Jobs: the occurrences a pump produced, with counter-minted branded ids."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import keys, validate
from .outcome import Outcome, outcome_of

if TYPE_CHECKING:
    from .lab import Lab


def branded(number: int) -> str:
    """``JOB-`` and the counter, zero-padded to six digits (wider past 999999)."""
    return f"JOB-{number:06d}"


class Jobs:
    """enqueue / browse for queue ``queue``."""

    def __init__(self, lab: Lab, queue: str) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.wait_key = keys.wait(self.queue)

    def mint(self) -> str:
        """The next fresh id from the queue's counter: JOB-000001, JOB-000002, ..."""
        return branded(int(self.lab.client.incr(keys.job_counter(self.queue))))

    def enqueue(self, job_id: str, name: str, fired_at_ms: int, template: str) -> Outcome:
        """Store the job and push it on the wait list; DUPLICATE if ``job_id`` exists."""
        reply = self.lab.scripts.enqueue(
            keys=[keys.job(self.queue, job_id), self.wait_key],
            args=[job_id, name, fired_at_ms, template],
        )
        return outcome_of("enqueue", reply)

    def browse(self, limit: int = 10) -> list[str]:
        """Waiting job ids, newest first."""
        validate.limit(limit)
        return list(self.lab.client.lrange(self.wait_key, 0, limit - 1))

    def count(self) -> int:
        """How many jobs wait."""
        return int(self.lab.client.llen(self.wait_key))

    def get(self, job_id: str) -> dict[str, str]:
        """The job hash ({} when there is none)."""
        return dict(self.lab.client.hgetall(keys.job(self.queue, job_id)))
