"""The class guard's choices against sockets that never log in, without a server: the server's
``age`` counts whole seconds from the second of the accept, so the guard waits for an age past
its grace (a client in its handshake is never closed); a flood's refusals are said, and counted."""

from __future__ import annotations

from helpers import START

import emq_lab
from emq_lab.classroom import guard


def _unlogged(ident: int, age: int, *, cmd: str = "NULL") -> dict[str, str]:
    return {"id": str(ident), "user": "default", "age": str(age), "cmd": cmd, "addr": f"127.0.0.1:{40000 + ident}"}


def test_a_socket_not_logged_in_is_closed_only_once_its_age_is_past_the_grace() -> None:
    entries = [
        _unlogged(10, 0),  # accepted this second: in its handshake
        _unlogged(11, 1),  # age 1 may be 7 ms old (accepted at a second's end)
        _unlogged(12, 2),  # at least a second old
        _unlogged(13, 40),
        {"id": "14", "user": "learner01", "age": "40", "cmd": "ping", "addr": "127.0.0.1:50000"},  # mid-session
    ]
    picked = guard.choose(entries, me=1, learner=lambda user: user.startswith("learner"), login_open=True)
    assert [(c.id, c.why) for c in picked] == [(12, "login"), (13, "login")]
    assert guard.GRACE_S == 1
    # With the default user on (no class set-up), "default" is a user like another: nothing closed.
    assert not guard.choose(entries, me=1, learner=lambda user: user.startswith("learner"), login_open=False)
    waited = guard.choose(entries, me=1, learner=bool, login_open=True, grace_s=5)
    assert [c.id for c in waited] == [13]


def test_a_sweep_that_met_a_flood_says_the_refusals_and_asks_for_the_next_sweep_soon() -> None:
    closed = tuple(guard.Closed(i, "default", f"127.0.0.1:{40000 + i}", "login") for i in range(3))
    at = emq_lab.SimClock(START).now_ms()
    flood = guard.Sweep(900, closed=closed, at_ms=at, refused=54, unlogged=880)
    assert flood.lines() == [
        "09:00:00 closed 3 connection(s) not logged in after 1 s, from 127.0.0.1 (3)",
        "09:00:00 the server refused 54 new connection(s) at maxclients since the last sweep "
        "(880 connection(s) not logged in now)",
    ]
    assert flood.flooded
    assert guard.Sweep(900, at_ms=at, refused=1).flooded  # refusals alone: a flood too
    quota = guard.Sweep(40, closed=(guard.Closed(5, "learner01", "127.0.0.1:1", "quota"),), at_ms=at)
    assert not quota.flooded and not guard.Sweep(40, at_ms=at).flooded
