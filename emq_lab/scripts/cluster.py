"""A batch of script calls on a cluster, routed as redis-py's cluster client routes one call.

Every call of a batch is on one queue, so on one hash slot: the batch goes to the node the
client's slot map names for that slot, as one MULTI/EXEC, so that the node runs all of its calls
or none. A reshard moves a slot from node to node; while it does, the node may refuse a call
instead of queuing it, and then runs none of the batch (EXECABORT):

- ``MOVED``: the slot has moved: correct the slot map (redis-py's ``move_slot``) and send the
  batch to the new owner; later batches go there first;
- ``ASK`` or ``TRYAGAIN``: the slot is on the move (some of its keys have left): wait, and send the
  batch again.

Without the MULTI a node mid-move would run some calls and refuse others: a tick's advance
without its enqueue (a lost run). Nothing of a refused batch ran, so sending it again is safe; a
batch whose reply was lost (a connection error) may have run and is never sent again. redis-py's
own cluster pipeline is not used: it refuses EVALSHA, and sends a call again after a connection
error. A move that outlasts :data:`ROUNDS` tries is a :class:`emq_lab.BackendUnavailable`; any
other fault raises through :func:`emq_lab.backend.fault`, as the same call's would on one server."""

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

#: Tries of a batch before it gives up on a slot on the move, a pause after each ASK or TRYAGAIN.
ROUNDS = 16
PAUSE_S = 0.2


def pipelined(client: RedisCluster, slot: int, queue: Callable[[Pipeline], object]) -> list[Any]:
    """The replies, in order, of the calls ``queue(pipe)`` puts on a pipeline to ``slot``'s node."""
    for _ in range(ROUNDS):
        pipe = client.get_redis_connection(client.nodes_manager.get_node_from_slot(slot)).pipeline(transaction=True)
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
