"""A batch of script calls on a cluster. Its calls are on one queue, so on one hash slot: the batch
goes to that hash slot's node as one MULTI/EXEC, which runs all of them or none (without it, a node mid-
reshard would run a tick's advance and refuse its enqueue: a lost run). A node refuses a batch whole
(EXECABORT) with ``MOVED`` (the hash slot has moved: correct the slot map and send it to the new owner)
or ``ASK``/``TRYAGAIN`` (the hash slot is on the move: wait and send it again). Nothing of a refused
batch ran, so it may go again; one whose reply was lost may have run and never goes again (which
is why redis-py's cluster pipeline, which also refuses EVALSHA, is not used). A move that outlasts
:data:`ROUNDS` tries is a :class:`emq_lab.BackendUnavailable`; other faults raise through ``fault``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from redis import exceptions
from redis.client import Pipeline
from redis.cluster import RedisCluster

from .. import errors
from ..backend import fault
from ..urls import redact

#: Tries of a batch before it gives up on a hash slot on the move, a pause after each ASK or TRYAGAIN.
ROUNDS = 16
PAUSE_S = 0.2


def pipelined(client: RedisCluster, hash_slot: int, queue: Callable[[Pipeline], object]) -> list[Any]:
    """The replies, in order, of the calls ``queue(pipe)`` puts on a pipeline to ``hash_slot``'s node."""
    for _ in range(ROUNDS):
        node = client.nodes_manager.get_node_from_slot(hash_slot)
        pipe = client.get_redis_connection(node).pipeline(transaction=True)
        queue(pipe)
        commands = [args for args, _ in pipe.command_stack]
        try:
            return list(pipe.execute())
        except exceptions.MovedError as moved:  # first: redis-py's MovedError is an AskError
            client.nodes_manager.move_slot(moved)
        except (exceptions.AskError, exceptions.TryAgainError):
            time.sleep(PAUSE_S)
        except Exception as exc:  # an error reply, or the connection: the batch may have run, so it does not go again
            raise fault(exc, client, commands)  # noqa: B904 - fault sets the cause
    raise errors.BackendUnavailable(redact(getattr(client, "emq_url", "")), errors.RESHARDING)
