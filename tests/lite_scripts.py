"""The Lua cases that CPython + lupa and Pyodide + fengari must answer alike (tests/test_lite_lua.py).

Run as a script it prints one JSON object: case name -> {"replies": [...], "store": {...}}. The same
file runs under CPython (real lupa) and, through tests/lite_node.mjs, under Pyodide in Node, where
``emq_lab._browser.install()`` makes fakeredis find the fengari module as ``lupa``.

Every case starts on its own FakeServer. A reply is kept as JSON (bytes decoded); an error as
``{"error": <class>, "message": <text before the stack traceback>}``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from emq_lab import _browser

_browser.install()  # noqa: E402 - before fakeredis: under Pyodide, lupa is the fengari module

import fakeredis  # noqa: E402

from emq_lab.scripts import source  # noqa: E402

Q = "emq:{reports}"
REGISTRY, RECORD, DELAYED, WAIT = f"{Q}:repeat", f"{Q}:repeat:nightly", f"{Q}:delayed", f"{Q}:wait"
FIRST_MS = 1767600000000  # 2026-01-05T08:00:00Z: past 2^31, a float in fengari, exact in both
EVERY_MS = 900000

# (script or inline Lua, KEYS, ARGV) calls, run in order on one server.
Call = tuple[str, list[str], list[Any]]


def _script(name: str) -> str:
    return source(name)


def _verbs() -> dict[str, list[Call]]:
    names = ("register", "advance", "cancel", "enqueue", "due", "register_many", "fast/ticks")
    reg, adv, can, enq, due, many, ticks = (_script(n) for n in names)
    keys = [REGISTRY, RECORD]
    good = ["nightly", EVERY_MS, "report {date}", FIRST_MS]
    jobs = [f"{Q}:id", WAIT, f"{Q}:job:"]
    return {
        "register: fresh, then exists": [(reg, keys, good), (reg, keys, ["nightly", 60000, "other", 5])],
        "register: the largest period, then one more": [
            (reg, keys, ["nightly", 315360000000, "t", FIRST_MS]),
            (reg, [REGISTRY, f"{Q}:repeat:b"], ["b", 315360000001, "t", FIRST_MS]),
        ],
        "register: malformed ARGV": [
            (reg, keys, ["nightly", "0", "t", FIRST_MS]),
            (reg, keys, ["nightly", "15m", "t", FIRST_MS]),
            (reg, keys, ["nightly", EVERY_MS]),
            (reg, keys, ["nightly", EVERY_MS, "t", "soon"]),
            (reg, keys, ["nightly", EVERY_MS, "t", "12345678901234567"]),
            (reg, keys, ["weekly", EVERY_MS, "t", FIRST_MS]),
        ],
        "register: negative and zero first run": [
            (reg, keys, ["nightly", EVERY_MS, "t", -5]),
            (reg, [REGISTRY, f"{Q}:repeat:z"], ["z", 1, "", 0]),
        ],
        "due: rows by score up to now, limited": [
            (reg, keys, good),
            (reg, [REGISTRY, f"{Q}:repeat:early"], ["early", 60000, "e", FIRST_MS - 60000]),
            (reg, [REGISTRY, f"{Q}:repeat:late"], ["late", 60000, "l", FIRST_MS + 60000]),
            (due, [REGISTRY], [FIRST_MS, 100]),
            (due, [REGISTRY], [FIRST_MS, 1]),
            (due, [REGISTRY], [FIRST_MS - 60001, 100]),
            (due, [REGISTRY], ["now", 100]),
            (due, [REGISTRY], [FIRST_MS, 0]),
        ],
        "advance: checked, unchecked, malformed, absent": [
            (reg, keys, good),
            (adv, keys, ["nightly", FIRST_MS + EVERY_MS, FIRST_MS, EVERY_MS]),
            (adv, keys, ["nightly", FIRST_MS + 2 * EVERY_MS, "", ""]),
            (adv, keys, ["nightly", "later", "", ""]),
            (adv, keys, ["nightly", "99999999999999999", "", ""]),
            (adv, keys, ["weekly", 5, "", ""]),
            (can, keys, ["nightly"]),
            (adv, keys, ["nightly", 5, "", ""]),
        ],
        "advance: a row that moved, a period that changed": [
            (reg, keys, good),
            (adv, keys, ["nightly", FIRST_MS + EVERY_MS, FIRST_MS - 1, EVERY_MS]),
            (adv, keys, ["nightly", FIRST_MS + EVERY_MS, FIRST_MS, 60000]),
        ],
        "register_many: fresh, live, a name twice, a stranger": [
            (reg, keys, good),
            (many, [REGISTRY, RECORD, f"{Q}:repeat:b", f"{Q}:repeat:b"], [60000, "m", FIRST_MS, "nightly", "b", "b"]),
            (many, [REGISTRY, f"{Q}:repeat:c"], [60000, "m", FIRST_MS, "nope"]),
            (many, [REGISTRY, f"{Q}:repeat:c"], ["0", "m", FIRST_MS, "c"]),
        ],
        "cancel: live, then absent, then re-register": [
            (reg, keys, good),
            (can, keys, ["nightly"]),
            (can, keys, ["nightly"]),
            (can, keys, ["weekly"]),
            (reg, keys, ["nightly", 60000, "again", FIRST_MS + 1]),
        ],
        **_ticks(reg, ticks, [REGISTRY, *jobs]),
        "enqueue: minted ids, then a slot id twice": [
            (enq, jobs, ["", "nightly", FIRST_MS, "t"]),
            (enq, jobs, ["", "nightly", FIRST_MS + EVERY_MS, "t"]),
            (enq, jobs, [f"nightly:{FIRST_MS}", "nightly", FIRST_MS, "t"]),
            (enq, jobs, [f"nightly:{FIRST_MS}", "nightly", FIRST_MS, "t"]),
        ],
    }


def _ticks(reg: str, ticks: str, keys: list[str]) -> dict[str, list[Call]]:
    """ticks.lua: its ms past 2^31 are floats in fengari's Lua 5.3 (32-bit integers), exact
    integers in Lua 5.1; each reply carries them as text (slot, fired_at, next_now)."""

    def named(name: str, every: int, first: int, template: str = "t") -> Call:
        return (reg, [REGISTRY, f"{REGISTRY}:{name}"], [name, every, template, first])

    def head(now: int | str, tick: int, batch: int, reads: int, want: int, ids: str, rule: str) -> list[Any]:
        return [now, tick, batch, reads, want, ids, rule]

    dangling = ("redis.call('ZADD', KEYS[1], ARGV[1], 'gone'); return 1", [REGISTRY], [FIRST_MS])
    grid_now = FIRST_MS + EVERY_MS  # nightly's next slot on the grid is this very now: it stays due
    fat = ("redis.call('HSET', KEYS[1], 'template', string.rep('x', 70000)); return 1", [RECORD], [])
    return {
        "due and ticks: a template stored past register's size is refused, never read": [
            named("nightly", EVERY_MS, FIRST_MS),
            named("b", 60000, FIRST_MS, "tb"),
            fat,
            (_script("due"), [REGISTRY], [FIRST_MS, 100]),
            (ticks, keys, [*head(FIRST_MS, 60000, 10, 100, 3, "fresh", "start-to-start"), ""]),
        ],
        "ticks: on the grid, a row due again at now, a member swept": [
            named("nightly", EVERY_MS, FIRST_MS),
            named("b", 60000, FIRST_MS - 7, "tb"),  # missed slots: skipped to the first after now
            named("c", EVERY_MS, grid_now),
            dangling,
            (ticks, keys, [*head(grid_now, 0, 2, 1, 1, "fresh", "fixed grid"), ""]),
            (ticks, keys, [*head(grid_now, 0, 2, 5, 3, "slot", "fixed grid"), ""]),
        ],
        "ticks: a jump over empty ticks, then ticks at each moment a row falls due": [
            named("nightly", EVERY_MS, FIRST_MS + 10 * 60000),
            named("b", 7 * 60000, FIRST_MS + 60000),
            (ticks, keys, [*head(FIRST_MS, 60000, 10, 100, 3, "fresh", "start-to-start"), ""]),
            (ticks, keys, [*head(FIRST_MS, 0, 10, 100, 4, "slot", "fixed grid"), ""]),
            (ticks, keys, [*head(FIRST_MS, 90000, 1, 2, 50, "slot", "start-to-start"), ""]),
        ],
        "ticks: start-to-finish, each run finishing and advancing its row": [
            named("nightly", EVERY_MS, FIRST_MS),
            named("b", 60000, FIRST_MS + 30000),
            (ticks, keys, [*head(FIRST_MS, 60000, 10, 100, 5, "fresh", "start-to-finish"), 240000]),
            (ticks, keys, [*head(FIRST_MS, 0, 10, 100, 3, "slot", "start-to-finish"), ""]),
        ],
        "ticks: nothing registered, then malformed calls write nothing": [
            (ticks, keys, [*head(FIRST_MS, 60000, 10, 100, 3, "fresh", "start-to-start"), ""]),
            named("nightly", EVERY_MS, FIRST_MS),
            (ticks, keys, [*head("12345678901234567", 60000, 10, 100, 3, "fresh", "start-to-start"), ""]),
            (ticks, keys, [*head(FIRST_MS, 60000, 0, 100, 3, "fresh", "start-to-start"), ""]),
            (ticks, keys, [*head(FIRST_MS, 60000, 10, 100, 0, "fresh", "start-to-start"), ""]),
            (ticks, keys, [*head(FIRST_MS, 60000, 10, 100, 3, "fresh", "start-to-start"), "5"]),
            (ticks, [f"{Q}:elsewhere", *keys[1:]], [*head(FIRST_MS, 60000, 10, 100, 3, "fresh", "start-to-start"), ""]),
        ],
    }


def _contrast() -> dict[str, list[Call]]:
    naive, upsert = _script("contrast/naive"), _script("contrast/upsert")
    keys = [REGISTRY, RECORD, DELAYED]
    return {
        "naive: two boots append two rows": [
            (naive, keys, ["nightly", EVERY_MS, "t", FIRST_MS]),
            (naive, keys, ["nightly", EVERY_MS, "t", FIRST_MS + 60000]),
        ],
        "upsert: fresh, then rewrite": [
            (upsert, keys, ["nightly", EVERY_MS, "t", FIRST_MS]),
            (upsert, keys, ["nightly", 60000, "t2", FIRST_MS + 60000]),
        ],
    }


def _lua() -> dict[str, list[Call]]:
    def one(code: str, *args: Any) -> list[Call]:
        return [(code, [REGISTRY], list(args))]

    return {
        "reply: nested table, numbers, booleans": one("return {1, 2.9, -3.5, 'a', {true, false}, {}}"),
        "reply: status and error tables": [
            ("return redis.status_reply('FINE')", [], []),
            ("return redis.error_reply('ERR emq: told you')", [], []),
            ("return {err = 'custom failure'}", [], []),
        ],
        "error: raised in the script": one("error('boom')"),
        "error: arithmetic on nil": one("local x = nil; return x + 1"),
        "error: a command that does not exist": one("return redis.call('NOPE', KEYS[1])"),
        "error: wrong arity inside a script": one("return redis.call('GET')"),
        "error: pcall catches a redis.call error": one(
            "local ok, err = pcall(redis.call, 'INCR', KEYS[1]); return {ok and 1 or 0, type(err)}"
        ),
        "error: redis.pcall hands back an error table": one(
            "redis.call('SET', KEYS[1], 'x'); local r = redis.pcall('INCR', KEYS[1]); return r.err"
        ),
        "error: a global write is refused": one("leak = 1; return 1"),
        "error: a syntax error": one("return (("),
        "commands: zset, hash, list replies": one(
            "redis.call('ZADD', KEYS[1], ARGV[1], 'a', 2, 'b');"
            "redis.call('HSET', KEYS[1] .. ':h', 'f', 'v', 'g', 'w');"
            "redis.call('RPUSH', KEYS[1] .. ':l', 'x', 'y');"
            "return {redis.call('ZSCORE', KEYS[1], 'a'), redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES'),"
            " redis.call('HGETALL', KEYS[1] .. ':h'), redis.call('LRANGE', KEYS[1] .. ':l', 0, -1),"
            " redis.call('GET', 'missing') == false, redis.call('INCRBY', KEYS[1] .. ':n', 5)}",
            FIRST_MS,
        ),
        "numbers: big scores keep their value": one(
            "local n = tonumber(ARGV[1]); redis.call('ZADD', KEYS[1], n + 1, 'm');"
            "return {string.format('%.0f', n), redis.call('ZSCORE', KEYS[1], 'm'), n % 1000, math.floor(n / 3)}",
            FIRST_MS,
        ),
        "numbers: a float reply is truncated": one("return 7.9"),
        "cjson: decode, read, encode": one(
            "local v = cjson.decode(ARGV[1]); return {v.name, v.tags[2], v.n, v.none == cjson.null,"
            " cjson.encode(v.tags), cjson.encode({k = 'v'}), cjson.encode({1, 'two', cjson.null})}",
            '{"name": "nightly", "tags": ["a", "b"], "n": 3, "none": null}',
        ),
        "cjson: bad JSON is an error": one("return cjson.decode('{oops')"),
        "lua 5.1 names: unpack, loadstring": one(
            "local a, b = unpack({1, 2}); return {a + b, loadstring('return 9')()}"
        ),
        "keys and args: counts and order": [("return {#KEYS, #ARGV, KEYS[2], ARGV[3]}", ["k1", "k2"], ["a", "b", "c"])],
    }


# Cases whose reply differs on purpose, with the reason. The test checks that they still differ (a
# fengari that stops differing is noticed, and the note can go) and that the text up to Lua's own
# message (before ``[string``) is the same.
KNOWN_DIFFERENCES = {
    "quirk: a number past 2^31 in a string": "fengari's integers are 32 bits: 315360000000 is a float, "
    "so tostring and .. print 315360000000.0 (lupa on Lua 5.1: 315360000000)",
    "error: a syntax error": "Lua 5.3 words the compile error differently from Lua 5.1 (<eof> unquoted)",
    "error: arithmetic on nil": "Lua 5.3 words it 'on a nil value (local 'x')', Lua 5.1 'on local 'x' (a nil value)'",
}


def _quirks() -> dict[str, list[Call]]:
    return {"quirk: a number past 2^31 in a string": [("return tostring(315360000000) .. ' ' .. 315360000000", [], [])]}


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    return value


def _error(error: BaseException) -> dict[str, str]:
    return {"error": type(error).__name__, "message": str(error).split("\nstack traceback:", 1)[0]}


def store(client: Any) -> dict[str, Any]:
    """Every key with its type and contents, sorted: what two runs must leave alike."""
    found: dict[str, Any] = {}
    for key in sorted(client.scan_iter(match="*")):
        kind = client.type(key)
        if kind == "string":
            found[key] = ["string", client.get(key)]
        elif kind == "hash":
            found[key] = ["hash", dict(sorted(client.hgetall(key).items()))]
        elif kind == "zset":
            found[key] = ["zset", [[m, s] for m, s in client.zrange(key, 0, -1, withscores=True)]]
        elif kind == "list":
            found[key] = ["list", client.lrange(key, 0, -1)]
        else:
            found[key] = [kind]
    return found


def run_calls(calls: list[Call]) -> dict[str, Any]:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=True)
    replies = []
    for code, keys, args in calls:
        try:
            replies.append(_plain(client.register_script(code)(keys=keys, args=args)))
        except Exception as error:  # noqa: BLE001 - the error is the reply being compared
            replies.append(_error(error))
    return {"replies": replies, "store": store(client)}


def run_verbs() -> dict[str, Any]:
    """emq-lab's own verbs on the embedded backend, on a SimClock: register, tick, cancel, re-register."""
    import emq_lab

    lab = emq_lab.connect(clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    rep, pump = lab.repeat("lite"), lab.pump("lite")
    replies: list[Any] = []
    for name, every in (("nightly", 15 * 60000), ("hourly", 60 * 60000), ("nightly", 60000)):
        replies.append(str(rep.register(name, every, f"run {name}")))
    for _ in range(5):
        replies.append([o.job_id for o in pump.tick()])
        lab.clock.advance(15 * 60000)  # type: ignore[attr-defined]
    replies.append([str(o) for o in rep.register_many([("a", 60000, "x"), ("b", 120000, "y", 60000), ("a", 1, "z")])])
    lab.clock.advance(60 * 60000)  # type: ignore[attr-defined]
    replies.append([(o.job_id, o.name) for o in pump.drain()])
    replies.append(str(rep.cancel("hourly")))
    replies.append(str(rep.cancel("hourly")))
    replies.append([list(e) for e in rep.entries()])
    replies.append(lab.jobs("lite").browse(limit=20))
    for bad in ((0, "t"), (10**13, "t")):
        try:
            rep.register("bad", *bad)
        except ValueError as error:
            replies.append(str(error))
    alice = emq_lab.connect(clock=lab.clock, namespace="alice")
    replies.append(str(alice.repeat("lite").register("nightly", 60000, "hers")))
    replies.append(alice.keys("lite"))
    result = {"replies": replies, "store": store(lab.client)}
    lab.reset("lite")
    alice.reset("lite")
    return result


def cases() -> dict[str, Callable[[], dict[str, Any]]]:
    every: dict[str, Callable[[], dict[str, Any]]] = {}
    for group in (_verbs(), _contrast(), _lua(), _quirks()):
        for name, calls in group.items():
            every[name] = lambda calls=calls: run_calls(calls)
    every["emq-lab verbs: register, tick, cancel"] = run_verbs
    return every


def run_all() -> dict[str, Any]:
    return {name: case() for name, case in cases().items()}


if __name__ == "__main__":
    json.dump(run_all(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
