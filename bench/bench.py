"""emq-lab's performance table: the boot storm and the pump beside the server's own ceiling and
beside BullMQ, the embedded backend, every panel's click, and the notebooks.

    make bench                       # = .venv/bin/python bench/bench.py
    .venv/bin/python bench/bench.py --names 2000 --samples 10 --no-notebooks   # a quicker look

Everything runs in one process against one throwaway valkey-server that the bench starts on a
loopback port (and stops), plus the embedded fakeredis. Ratios are taken inside one run, so a
busy machine moves the rates more than the ratios. Nothing here asserts a time; the bench exits
non-zero only when boot #2 wrote to the server, which the course says it never does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEER = Path(__file__).resolve().parent / "peers" / "bullmq"
sys.path.insert(0, str(ROOT / "tests"))

import redis  # noqa: E402
from servers import ValkeyServer, server_binary  # noqa: E402

import emq_lab  # noqa: E402

MIN = 60_000
EVERY_MS = 15 * MIN
TEMPLATE = '{"kind": "report"}'
START = "2026-01-05T09:00:00Z"
FOREIGN_KEYS = 100_000


def rate(per_s: float) -> str:
    """A rate as the table prints it: ``12.1k/s``."""
    return f"{per_s / 1000:,.1f}k/s" if per_s >= 1000 else f"{per_s:,.0f}/s"


# -- what a measurement gives ---------------------------------------------------------------------


@dataclass
class Row:
    section: str
    path: str
    backend: str
    result: str
    ratio: str = ""
    writes: str = ""
    trips: str = ""
    target: str = ""


@dataclass
class Rate:
    """``count`` things done in ``seconds``, with the server's writes and our round trips."""

    count: int
    seconds: float
    writes: int | None = None
    trips: int | None = None
    server_s: float | None = None  # the server's time in the scripts (INFO commandstats), where there is INFO

    @property
    def per_s(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("inf")

    @property
    def us_each(self) -> float:
        return self.seconds / self.count * 1e6 if self.count else 0.0


def fraction(part: float, whole: float) -> str:
    """``part`` as a share of ``whole``: ``1/29`` below one half, else a percentage."""
    if whole <= 0 or part <= 0:
        return "-"
    share = part / whole
    return f"1/{whole / part:,.0f} of ceiling" if share < 0.5 else f"{share:.0%} of ceiling"


def trips_text(r: Rate, unit: str) -> str:
    trips = r.trips or 0
    return f"{trips:,} ({trips / max(r.count, 1):.3f}/{unit})"


def verdict(ok: bool, text: str) -> str:
    return f"{'met' if ok else 'MISSED'}: {text}"


# -- counting what the client sends ---------------------------------------------------------------


class RoundTrips:
    """Counts round trips on a redis-py client (real or fakeredis): every ``send_packed_command``
    of its connections, so a pipeline's ``execute()`` counts once (plus the ``SCRIPT EXISTS``
    redis-py sends before a pipeline that holds scripts)."""

    def __init__(self, client: Any) -> None:
        self.count = 0
        pool = client.connection_pool
        counter = self
        base = pool.connection_class

        class Counting(base):  # type: ignore[misc, valid-type]
            def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                counter.count += 1
                super().send_packed_command(command, check_health)

        pool.disconnect()
        pool.connection_class = Counting
        pool.reset()


def changes(client: Any) -> int | None:
    """The server's ``rdb_changes_since_last_save`` (None where there is no INFO: fakeredis)."""
    try:
        return int(client.info("persistence")["rdb_changes_since_last_save"])
    except (redis.ResponseError, KeyError):
        return None


def script_usec(client: Any) -> int | None:
    """Microseconds the server spent in EVALSHA so far (INFO commandstats; a script's own calls
    are inside it). None where there is no INFO: fakeredis."""
    try:
        stats = client.info("commandstats")
    except redis.ResponseError:
        return None
    return int(stats.get("cmdstat_evalsha", {}).get("usec", 0)) if stats else None


def measured(lab: Any, trips: RoundTrips, action: Callable[[], int]) -> Rate:
    before_writes, before_trips, before_usec = changes(lab.client), trips.count, script_usec(lab.client)
    start = time.perf_counter()
    count = action()
    seconds = time.perf_counter() - start
    after_writes, after_usec = changes(lab.client), script_usec(lab.client)
    writes = None if before_writes is None or after_writes is None else after_writes - before_writes
    server = None if before_usec is None or after_usec is None else (after_usec - before_usec) / 1e6
    return Rate(count, seconds, writes, trips.count - before_trips, server)


def open_lab(url: str | None) -> tuple[Any, RoundTrips]:
    lab = emq_lab.connect(url, clock=emq_lab.SimClock(START))
    return lab, RoundTrips(lab.client)


def names(n: int) -> list[str]:
    return [f"name-{i:05d}" for i in range(n)]


# -- the boot storm -------------------------------------------------------------------------------


def register_loop(lab: Any, queue: str, ids: list[str]) -> int:
    rep = lab.repeat(queue)
    for name in ids:
        rep.register(name, EVERY_MS, TEMPLATE)
    return len(ids)


def register_many(lab: Any, queue: str, ids: list[str]) -> int:
    outcomes = lab.repeat(queue).register_many([(name, EVERY_MS, TEMPLATE) for name in ids])
    return len(outcomes)


def boots(lab: Any, trips: RoundTrips, queue: str, ids: list[str], how: Callable[..., int]) -> tuple[Rate, Rate]:
    lab.reset(queue)
    first = measured(lab, trips, lambda: how(lab, queue, ids))
    second = measured(lab, trips, lambda: how(lab, queue, ids))
    lab.reset(queue)
    return first, second


def register_lua() -> str:
    return (ROOT / "emq_lab" / "scripts" / "register.lua").read_text(encoding="utf-8")


def exists_call(client: Any, queue: str) -> tuple[str, list[str]]:
    """A register call that answers EXISTS: the script's sha and the EVALSHA arguments."""
    sha = str(client.script_load(register_lua()))
    registry, record = f"emq:{{{queue}}}:repeat", f"emq:{{{queue}}}:repeat:name-00000"
    args = ["2", registry, record, "name-00000", str(EVERY_MS), TEMPLATE, "0"]
    client.evalsha(sha, *args)  # the first call registers; every later one takes the exists path
    return sha, args


def ceiling(server: ValkeyServer, client: Any, requests: int) -> tuple[float | None, str]:
    """valkey-benchmark's EVALSHA of register.lua on the exists path, -P 64."""
    binary = shutil.which("valkey-benchmark")
    if binary is None:
        return None, "valkey-benchmark not on PATH (Debian: valkey-tools); no ceiling"
    sha, args = exists_call(client, "bench-ceiling")
    before = changes(client)
    command = [binary, "-h", "127.0.0.1", "-p", str(server.port), "-n", str(requests), "-P", "64", "-q", "--csv"]
    out = subprocess.run([*command, "EVALSHA", sha, *args], capture_output=True, text=True, timeout=300, check=True)
    last = [line for line in out.stdout.splitlines() if line.startswith('"EVALSHA')][-1]
    wrote = (changes(client) or 0) - (before or 0)
    return float(last.split('","')[1]), f"valkey-benchmark -n {requests:,} -c 50 -P 64; {wrote} writes"


def pipelined_exists(lab: Any, n: int) -> Rate:
    """The same exists-path script, ``n`` EVALSHA in one redis-py pipeline (no emq-lab around it)."""
    sha, args = exists_call(lab.client, "bench-pipelined")
    pipe = lab.client.pipeline(transaction=False)
    start = time.perf_counter()
    for _ in range(n):
        pipe.evalsha(sha, *args)
    pipe.execute()
    return Rate(n, time.perf_counter() - start)


def boot_storm(lab: Any, trips: RoundTrips, ids: list[str], top: float | None) -> tuple[list[Row], dict[str, Rate]]:
    rows: list[Row] = []
    got: dict[str, Rate] = {}
    ways: list[tuple[str, Callable[..., int]]] = [
        ("register in a loop", register_loop),
        ("Repeat.register_many", register_many),
    ]
    for label, how in ways:
        first, second = boots(lab, trips, "bench-storm", ids, how)
        got[label] = second
        got[label + " #1"] = first
        for number, r in ((1, first), (2, second)):
            writes = "-" if r.writes is None else f"{r.writes:,}"
            if number == 2:
                writes += " (must be 0: ok)" if r.writes == 0 else " (must be 0: NOT 0)"
            target = ""
            if label == "Repeat.register_many" and number == 2 and top:
                target = verdict(r.per_s >= top / 3 and r.writes == 0, ">= 1/3 of ceiling, 0 writes")
            rows.append(
                Row(
                    "boot storm",
                    f"{label}, boot #{number}",
                    "valkey",
                    f"{rate(r.per_s)} ({r.seconds:.2f} s)",
                    fraction(r.per_s, top) if top else "",
                    writes,
                    trips_text(r, "name"),
                    target,
                )
            )
    return rows, got


# -- the peer -------------------------------------------------------------------------------------


def bullmq(server: ValkeyServer, n: int, batch: int) -> tuple[dict[str, Any] | None, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None, "node/npm not on PATH: BullMQ peer skipped"
    if not (PEER / "node_modules" / "bullmq").is_dir():
        install = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=PEER, capture_output=True, text=True, timeout=600
        )
        if install.returncode != 0:
            return None, f"npm ci failed in {PEER.relative_to(ROOT)}: {install.stderr.strip()[-300:]}"
    out = subprocess.run(
        [
            node,
            "storm.mjs",
            "--port",
            str(server.port),
            "--names",
            str(n),
            "--batch",
            str(batch),
            "--every",
            str(EVERY_MS),
        ],
        cwd=PEER,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        return None, f"BullMQ peer failed: {out.stderr.strip()[-300:]}"
    return json.loads(out.stdout.strip().splitlines()[-1]), ""


def peer_rows(found: dict[str, Any], ours: dict[str, Rate], top: float | None) -> list[Row]:
    rows = []
    label = f"BullMQ {found['bullmq']} upsertJobScheduler, {found['batch']} in flight"
    many, many_first = ours.get("Repeat.register_many"), ours.get("Repeat.register_many #1")
    for number, boot in enumerate(found["boots"], 1):
        theirs = found["names"] / boot["seconds"]
        mine = many_first if number == 1 else many
        times = f"emq-lab register_many {mine.per_s / theirs:.1f}x" if mine else ""
        need = 5 if number == 1 else 20
        target = verdict(mine.per_s >= need * theirs, f"register_many >= {need}x") if mine else ""
        per = boot["writes"] / found["names"]
        rows.append(
            Row(
                "peer",
                f"{label}, boot #{number}",
                "valkey",
                f"{rate(theirs)} ({boot['seconds']:.2f} s)",
                "; ".join(x for x in (fraction(theirs, top) if top else "", times) if x),
                f"{boot['writes']:,} ({per:.0f}/name)",
                "",
                target,
            )
        )
    return rows


# -- the pump -------------------------------------------------------------------------------------


def pump_rows(lab: Any, trips: RoundTrips, ids: list[str], backend: str, runs: int) -> list[Row]:
    """The tick loop and drain over the same due names, ``runs`` times each, taking turns; each
    way's fastest run is shown (the machine's noise only ever slows a run down). Drain runs over
    half the names too: linear in the rows due means the same µs a name at both sizes."""
    rows: list[Row] = []
    queue = "bench-pump"

    def tick_loop(_due: list[str]) -> int:
        pump, fired = lab.pump(queue), 0
        while got := len(pump.tick()):  # a batch per tick, then one empty read
            fired += got
        return fired

    def drain(_due: list[str]) -> int:
        return len(lab.pump(queue).drain())

    half = ids[: len(ids) // 2]
    ways: list[tuple[str, Callable[[list[str]], int], list[str]]] = [
        ("Pump.tick in a loop (batch 100)", tick_loop, ids),
        ("Pump.drain (batch 100)", drain, ids),
        ("Pump.drain (batch 100), half the names", drain, half),
    ]
    fastest: dict[str, Rate] = {}
    for _ in range(runs):
        for label, how, due in ways:
            lab.reset(queue)
            lab.repeat(queue).register_many([(name, EVERY_MS, TEMPLATE) for name in due])
            r = measured(lab, trips, lambda how=how, due=due: how(due))
            lab.reset(queue)
            if label not in fastest or r.seconds < fastest[label].seconds:
                fastest[label] = r
    loop, whole = fastest[ways[0][0]], fastest[ways[1][0]]
    for label, _, _ in ways:
        r = fastest[label]
        ratio, target = "", ""
        if r is whole:
            ratio = f"{r.per_s / loop.per_s:.2f}x the tick loop"
            target = verdict(r.per_s >= 0.9 * loop.per_s, "as fast as the tick loop (within 10%)")
        elif r is not loop:
            ratio = f"{r.us_each / whole.us_each:.2f}x the µs/name of the whole drain"
            target = verdict(r.us_each <= 1.25 * whole.us_each and whole.us_each <= 1.25 * r.us_each, "linear (±25%)")
        result = f"{rate(r.per_s)} fired ({r.seconds:.2f} s), {r.us_each:,.0f} µs/name"
        if r.server_s is not None:
            result += f"; in the server's scripts {r.server_s:.2f} s"
        path = f"{label}, {r.count:,} due names"
        rows.append(Row("pump", path, backend, result, ratio, "", trips_text(r, "job"), target))
    return rows


def embedded_rows(ids: list[str], runs: int) -> list[Row]:
    lab, trips = open_lab(None)
    rows: list[Row] = []
    ways: list[tuple[str, Callable[..., int]]] = [
        ("register in a loop", register_loop),
        ("Repeat.register_many", register_many),
    ]
    for label, how in ways:
        first, second = boots(lab, trips, "bench-storm", ids, how)
        for number, r in ((1, first), (2, second)):
            rows.append(
                Row(
                    "embedded",
                    f"{label}, boot #{number}",
                    "fakeredis",
                    f"{r.us_each:,.0f} µs/name ({rate(r.per_s)})",
                    "",
                    "",
                    trips_text(r, "name"),
                )
            )
    rows += [
        Row("embedded", r.path, r.backend, r.result, r.ratio, r.writes, r.trips, r.target)
        for r in pump_rows(lab, trips, ids, "fakeredis", runs)
    ]
    lab.close()
    return rows


# -- clicks ---------------------------------------------------------------------------------------


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def spread(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def click_row(
    path: str,
    backend: str,
    samples: list[float],
    *,
    median_ms: float | None,
    p95_ms: float | None,
    trips: list[int] | None = None,
) -> Row:
    mid, p95 = spread(samples)
    if median_ms is None:
        target = ""
    elif p95_ms is None:
        target = verdict(mid < median_ms, f"median < {median_ms:g} ms")
    else:
        target = verdict(mid < median_ms and p95 < p95_ms, f"median < {median_ms:g} ms, p95 < {p95_ms:g} ms")
    if len(samples) < 10:
        result = f"median {mid:,.1f} ms, worst {max(samples):,.1f} ms"
    else:
        result = f"median {mid:,.1f} ms, p95 {p95:,.1f} ms"
    per = f"{statistics.mean(trips):,.1f}/click" if trips else ""
    return Row("clicks", f"{path} ({len(samples)} samples)", backend, result, "", "", per, target)


NOTEBOOK_MOVES = [  # 02-cadence's explorer: its defaults, then the three moves the notebook makes
    {"period_minutes": 15, "run_minutes": 4, "cycles": 4, "tick_seconds": 0},
    {"period_minutes": 15, "run_minutes": 10, "cycles": 4, "tick_seconds": 0},
    {"period_minutes": 15, "run_minutes": 4, "cycles": 6, "tick_seconds": 120},
    {"period_minutes": 1, "run_minutes": 0, "cycles": 8, "tick_seconds": 90},
]


@contextlib.contextmanager
def foreign_keys(client: Any, n: int) -> Iterator[None]:
    """``n`` keys that belong to nobody in emq-lab, deleted again by name afterwards."""
    made = [f"bench-foreign:{i}" for i in range(n)]
    for start in range(0, n, 5000):
        client.mset({key: "x" for key in made[start : start + 5000]})
    try:
        yield
    finally:
        for start in range(0, n, 5000):
            client.unlink(*made[start : start + 5000])


def click_rows(url: str | None, backend: str, samples: int, ff_runs: int) -> list[Row]:
    from emq_lab.widgets import BootPanel, CadenceExplorer, CancelPanel
    from emq_lab.widgets.cadence import FastForwardPanel

    lab, counter = open_lab(url)
    rows: list[Row] = []
    trips: list[int] = []

    def timed(action: Callable[[], Any]) -> float:
        before = counter.count
        start = time.perf_counter()
        action()
        took = (time.perf_counter() - start) * 1000
        trips.append(counter.count - before)
        return took

    boot = BootPanel(lab, "bench-boot")
    took: list[float] = []
    trips.clear()
    for _ in range(samples):
        boot.reset()
        took += [timed(lambda: boot.boot(1)), timed(lambda: boot.boot(2))]
    rows.append(click_row("BootPanel.boot(1), .boot(2)", backend, took, median_ms=20, p95_ms=50, trips=trips))
    lab.reset("bench-boot")

    explorer = CadenceExplorer(lab, prefix="bench-cadence")
    for label, cycles in (("notebook's settings", None), ("24 cycles (the maximum)", 24)):
        took = []
        trips.clear()
        for i in range(samples):
            move = dict(NOTEBOOK_MOVES[i % len(NOTEBOOK_MOVES)])
            if cycles is not None:
                move["cycles"] = cycles
            took.append(timed(lambda move=move: explorer.set(**move)))
        limit = (20.0, 50.0) if cycles is None else (None, None)  # the targets hold at the notebook's settings
        path = f"CadenceExplorer.set, {label}"
        rows.append(click_row(path, backend, took, median_ms=limit[0], p95_ms=limit[1], trips=trips))

    with foreign_keys(lab.client, FOREIGN_KEYS):
        panel = CancelPanel(lab, "bench-race")
        took = []
        trips.clear()
        for _ in range(max(1, samples // 2)):
            panel.reset()
            took += [timed(lambda step=step: panel.step(step)) for step in ("read", "cancel", "enqueue", "advance")]
        label = f"CancelPanel.step beside {FOREIGN_KEYS:,} foreign keys"
        rows.append(click_row(label, backend, took, median_ms=5, p95_ms=None, trips=trips))
        lab.reset("bench-race")

    fast = FastForwardPanel(lab, "bench-ff", occurrences=10_000)
    trips.clear()
    took = [timed(fast.run) for _ in range(ff_runs)]
    limit = 300.0 if backend == "valkey" else 1500.0
    path = "FastForwardPanel.run, 10,000 ticks"
    rows.append(click_row(path, backend, took, median_ms=limit, p95_ms=None, trips=trips))
    lab.reset("bench-ff")
    for queue in ("bench-cadence-s2s", "bench-cadence-s2f", "bench-cadence-grid"):
        lab.reset(queue)
    lab.close()
    return rows


def import_row(url: str) -> Row:
    """``import emq_lab`` and a lab on a URL in a fresh interpreter: the time, and whether
    fakeredis came in with it (it should not until the embedded backend is used)."""
    probe = (
        "import sys, time; t = time.perf_counter(); import emq_lab; "
        f"lab = emq_lab.connect({url!r}); took = time.perf_counter() - t; "
        "print(took, 'fakeredis' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    seconds, loaded = out.stdout.split()
    fake = "fakeredis imported" if loaded == "True" else "fakeredis not imported"
    return Row("import", "import emq_lab; emq_lab.connect(url)", "valkey", f"{float(seconds) * 1000:,.0f} ms", fake)


# -- notebooks ------------------------------------------------------------------------------------


@contextlib.contextmanager
def environment(**values: str | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def notebook_rows(url: str | None, backend: str) -> list[Row]:
    import nbformat
    from nbclient import NotebookClient

    rows = []
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(
            notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        with environment(EMQ_LAB_URL=url):
            start = time.perf_counter()
            try:
                client.execute()
            except Exception as exc:  # a notebook that fails is a row that says so, not a lost table
                rows.append(Row("notebooks", path.stem, backend, f"FAILED: {type(exc).__name__}"))
                continue
            seconds = time.perf_counter() - start
        rows.append(Row("notebooks", f"{path.stem} (kernel start included)", backend, f"{seconds:.1f} s"))
    return rows


# -- the class server --------------------------------------------------------------------------


def classroom_rows(passes: int) -> list[Row]:
    """On a class server of its own: the instructor's overview of 30 learners, one holding 400,000
    keys and another 20 queues named with 2 MB each (the fastest and median of ``passes``, wall and
    CPU); then what one learner costs the server: notebook 01 run as an ACL user, the used_memory
    it adds and the connections its kernel holds."""
    import statistics as stats

    import nbformat
    from class_server import fill
    from nbclient import NotebookClient

    import emq_classroom as classroom

    rows: list[Row] = []
    server = ValkeyServer()
    try:
        admin = redis.Redis(host="127.0.0.1", port=server.port, decode_responses=True)
        admin.config_set("maxmemory", 2**30)
        classroom.create_users(admin, learners=30, prefix="bench", check=False)
        fill(admin, "bench01", keys_held=400_000)
        fill(admin, "bench02", long_names=20)
        walls, cpus = [], []
        view = classroom.overview(admin, prefix="bench")
        for _ in range(passes):
            used = admin.info("cpu")
            server_cpu = float(used["used_cpu_user"]) + float(used["used_cpu_sys"])
            start, cpu = time.perf_counter(), time.process_time()
            view = classroom.overview(admin, prefix="bench")
            walls.append(time.perf_counter() - start)
            used = admin.info("cpu")
            server_cpu = float(used["used_cpu_user"]) + float(used["used_cpu_sys"]) - server_cpu
            cpus.append(time.process_time() - cpu + server_cpu)
        size = len(view.readout.encode())
        rows.append(
            Row(
                "classroom",
                f"overview: 30 learners, one with 400,000 keys, one with 20 names of 2 MB ({passes} passes)",
                "valkey",
                f"median {stats.median(walls) * 1000:,.0f} ms, fastest {min(walls) * 1000:,.0f} ms; "
                f"CPU (client + server) median {stats.median(cpus) * 1000:,.0f} ms; readout {size / 1024:,.1f} KiB",
                target=verdict(stats.median(walls) < 0.5, "< 0.5 s"),
            )
        )
        (learner,) = classroom.create_users(admin, learners=1, prefix="cost", check=False)
        classroom.load_scripts(admin)
        path = ROOT / "notebooks" / "01-upsert.ipynb"
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(
            notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        before = int(admin.info("memory")["used_memory"])
        peak = 0
        env = environment(EMQ_LAB_URL=learner.url(server.url), EMQ_LAB_NAMESPACE=learner.namespace)
        with env, client.setup_kernel():
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
                held = sum(1 for c in admin.client_list() if c["user"] == learner.name)
                peak = max(peak, held)
            during = int(admin.info("memory")["used_memory"])
            held = sum(1 for c in admin.client_list() if c["user"] == learner.name)
        after = int(admin.info("memory")["used_memory"])
        keys_left = sum(1 for _ in admin.scan_iter(match=f"emq:ns:{{{learner.namespace}:*", count=1000))
        rows.append(
            Row(
                "classroom",
                "one learner: 01-upsert run as its ACL user (kernel alive)",
                "valkey",
                f"used_memory +{(during - before) / 2**20:,.2f} MiB while its kernel runs, "
                f"+{(after - before) / 2**20:,.2f} MiB after ({keys_left} keys left); "
                f"connections: {held} at the end, at most {peak} after a cell",
            )
        )
        admin.close()
    finally:
        server.close()
    return rows


# -- the machine and the table --------------------------------------------------------------------


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def table(rows: list[Row]) -> str:
    head = ("section", "path", "backend", "result", "ratio", "server writes", "round trips", "target")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = (r.section, r.path, r.backend, r.result, r.ratio, r.writes, r.trips, r.target)
        lines.append("| " + " | ".join(c or "" for c in cells) + " |")
    return "\n".join(lines)


def exercise_rows(url: str | None, backend: str) -> list[Row]:
    """How long each exercise checker takes to answer, on the reference and on the buggy version
    (the issue's budget: under 3 s on the embedded backend)."""
    from emq_lab import exercises

    lab = emq_lab.connect(url, clock=emq_lab.SimClock(START))
    checkers: list[tuple[str, Callable[..., Any]]] = [
        ("register", exercises.register),
        ("next_run", exercises.next_run),
        ("advance", exercises.advance),
    ]
    rows: list[Row] = []
    try:
        for name, checker in checkers:
            for version, answer in (("reference", exercises.solution(name)), ("buggy", exercises.buggy(name))):
                start = time.perf_counter()
                check = checker(answer, lab)
                took = time.perf_counter() - start
                target = verdict(took < 3, "< 3 s") if backend == "fakeredis" else ""
                result = f"{took:,.2f} s, {'passed' if check.passed else 'failed'}"
                rows.append(Row("exercises", f"exercises.{name}({version})", backend, result, target=target))
    finally:
        lab.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--names", type=int, default=10_000, help="names per boot and per pump (10,000)")
    parser.add_argument("--samples", type=int, default=30, help="clicks per panel twin (30)")
    parser.add_argument("--ff-runs", type=int, default=3, help="fast-forwards of 10,000 ticks per backend (3)")
    parser.add_argument(
        "--pump-runs", type=int, default=7, help="runs of the tick loop and of drain, the fastest shown (7)"
    )
    parser.add_argument("--batch", type=int, default=500, help="BullMQ upserts in flight (500)")
    parser.add_argument("--requests", type=int, default=1_000_000, help="valkey-benchmark requests (1,000,000)")
    parser.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    parser.add_argument(
        "--only", choices=["classroom"], help="run one section only (classroom: the class server's numbers)"
    )
    parser.add_argument("--overview-passes", type=int, default=10, help="overview passes per measurement (10)")
    args = parser.parse_args()
    if args.pump_runs < 1:
        parser.error("--pump-runs: at least 1")
    os.environ.pop("EMQ_LAB_URL", None)  # the embedded rows are embedded; the Valkey rows pass a URL
    ids = names(args.names)
    rows: list[Row] = []
    notes: list[str] = []
    command = "make bench" if len(sys.argv) == 1 else "python bench/bench.py " + " ".join(sys.argv[1:])
    server: ValkeyServer | None = None
    version = "none"
    wrote: list[tuple[str, int | None]] = []
    try:
        if args.only == "classroom" or server_binary() is None:
            if server_binary() is None:
                notes.append("no valkey-server on PATH: the Valkey rows, the ceiling and the peer are skipped")
        else:
            server = ValkeyServer()
            lab, trips = open_lab(server.url)
            info = lab.client.info("server")
            version = str(info.get("valkey_version") or info.get("redis_version"))
            top, how = ceiling(server, lab.client, args.requests)
            rows.append(
                Row(
                    "boot storm",
                    "server ceiling: EVALSHA register.lua (exists path)",
                    "valkey",
                    rate(top) if top else "skipped",
                    how if top else "",
                )
            )
            if top is None:
                notes.append(how)
            anchor = pipelined_exists(lab, args.names)
            rows.append(
                Row(
                    "boot storm",
                    f"anchor: the same EVALSHA x{args.names:,} in one redis-py pipeline",
                    "valkey",
                    rate(anchor.per_s),
                    fraction(anchor.per_s, top) if top else "",
                )
            )
            storm, ours = boot_storm(lab, trips, ids, top)
            rows += storm
            wrote += [(label, r.writes) for label, r in ours.items() if not label.endswith("#1")]
            found, why = bullmq(server, args.names, args.batch)
            if found is None:
                notes.append(why)
                rows.append(Row("peer", "BullMQ upsertJobScheduler", "valkey", "skipped (see notes)"))
            else:
                rows += peer_rows(found, ours, top)
            rows += pump_rows(lab, trips, ids, "valkey", args.pump_runs)
            rows.append(import_row(server.url))
            lab.close()
        if server_binary() is not None:
            rows += classroom_rows(args.overview_passes)
        backends: list[tuple[str | None, str]] = [] if args.only else [(None, "fakeredis")]
        if not args.only:
            rows += embedded_rows(ids, args.pump_runs)
        if server is not None:
            backends.append((server.url, "valkey"))
        for url, backend in backends:
            rows += click_rows(url, backend, args.samples, args.ff_runs)
        for url, backend in backends:
            rows += exercise_rows(url, backend)
        if not args.no_notebooks:
            for url, backend in backends:
                rows += notebook_rows(url, backend)
    finally:
        if server is not None:
            server.close()

    print(f"command: {command}")
    print(
        f"machine: {os.cpu_count()} cores, {cpu_model()}, Valkey {version}, Python {platform.python_version()}, "
        f"redis-py {redis.__version__}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )
    print(
        f"N = {args.names:,} names; clicks: {args.samples} per twin; fast-forward: {args.ff_runs} runs per backend; "
        f"pump: the fastest of {args.pump_runs} runs of each way"
    )
    print()
    print(table(rows))
    print()
    bad = [(label, w) for label, w in wrote if w != 0]
    if wrote and not bad:
        listed = ", ".join(label for label, _ in wrote)
        print(f"boot #2 wrote nothing ({listed}: 0 server writes each), as the course says.")
    for label, w in bad:
        print(f"boot #2 with {label} WROTE {w} times to the server: the course says it writes nothing.")
    for note in notes:
        print(f"note: {note}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
