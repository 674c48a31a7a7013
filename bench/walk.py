"""The class guard's memory walk and freeing (emq_classroom/memory.py), measured: four learners on a
throwaway class server, one holding N small keys; the walk alone, then one guard sweep with the server
past maxmemory, while another learner PINGs and writes every 10 ms and 50 sockets that never log in
are opened 1 s into the sweep. Method and results: bench/README.md.

    .venv/bin/python bench/walk.py 2600000
    PYTHONPATH=<another checkout> .venv/bin/python bench/walk.py 401450   # that checkout's guard
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from class_server import started_class_server  # noqa: E402

from emq_lab import keys

import emq_classroom as classroom  # noqa: E402
from emq_classroom import guard, memory  # noqa: E402

OTHER = r"""
import json, select, sys, time
import redis
r = redis.Redis(port=int(sys.argv[1]), username=sys.argv[2], password=sys.argv[3], socket_timeout=120)
print("ready", flush=True)
slowest, first, last, t0 = 0.0, None, None, time.monotonic()
while not select.select([sys.stdin], [], [], 0)[0]:
    start = time.monotonic()
    r.ping()
    slowest = max(slowest, time.monotonic() - start)
    try:
        r.set(sys.argv[4], "v")
    except redis.exceptions.OutOfMemoryError:
        first, last = first or time.monotonic() - t0, time.monotonic() - t0
    time.sleep(0.01)
print(json.dumps({"slowest_ping_s": round(slowest, 3), "refused_s": round((last or 0) - (first or 0), 2)}))
"""


def cpu(client: object) -> float:
    info = client.info("cpu")  # type: ignore[attr-defined]
    return float(info["used_cpu_user"] + info["used_cpu_sys"])


def main(count: int) -> None:
    with started_class_server() as server:
        port, admin = server.server.port, server.admin()
        admin.config_set("lazyfree-lazy-user-del", "yes")
        eve, bob, *_ = classroom.create_users(admin, learners=4, prefix="room", check=False)
        pipe = admin.pipeline(transaction=False)
        for i in range(count):  # plain pipelined SETs (written by the admin, as eve could)
            pipe.set(keys.QueueKeys(f"q{i % 50}", eve.namespace).job(f"JOB-{i:07d}"), "x" * 20)
            if i % 20_000 == 19_999:
                pipe.execute()
        pipe.execute()
        admin.hset(keys.progress(eve.namespace), "register", "passed 1")
        time.sleep(2)  # the keyspace's rehash over
        admin.config_set("maxmemory", int(int(admin.info("memory")["used_memory"]) / 0.85))
        guard_cpu, at, server_cpu = time.process_time(), time.monotonic(), cpu(admin)
        walk = getattr(memory, "walk", None)  # an older checkout's walk: memory.sizes
        _ = walk(admin, prefix="room") if walk else memory.sizes(admin, prefix="room")
        print(json.dumps({
            "keys": count, "walk_s": round(time.monotonic() - at, 2),
            "guard_cpu_s": round(time.process_time() - guard_cpu, 2), "server_cpu_s": round(cpu(admin) - server_cpu, 2),
        }), flush=True)  # fmt: skip
        time.sleep(1)
        admin.config_set("maxmemory", int(admin.info("memory")["used_memory"]) - 2**20)  # past it: writes refused
        written = keys.QueueKeys("q", bob.namespace).counter
        other = subprocess.Popen(
            [sys.executable, "-c", OTHER, str(port), bob.name, bob.password, written],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert other.stdout is not None and other.stdout.readline().strip() == "ready"
        flood: dict[str, float] = {}

        def flooding() -> None:
            time.sleep(1.0)
            socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
            opened = time.monotonic()
            for sock in socks:
                sock.settimeout(120)
                with contextlib.suppress(OSError):
                    sock.recv(1)
                sock.close()
            flood["closed_after_s"] = round(time.monotonic() - opened, 2)

        time.sleep(0.3)
        flooder = threading.Thread(target=flooding)
        guard_cpu, at, server_cpu = time.process_time(), time.monotonic(), cpu(admin)
        flooder.start()
        swept = guard.sweep(admin, prefix="room", log=False)
        took = {"sweep_s": round(time.monotonic() - at, 2), "guard_cpu_s": round(time.process_time() - guard_cpu, 2),
                "server_cpu_s": round(cpu(admin) - server_cpu, 2)}  # fmt: skip
        for _ in range(100):  # the sweep ended first: the next ones close them (every 0.2 s, as during a flood)
            flooder.join(0.2)
            if not flooder.is_alive():
                break
            guard.sweep(admin, prefix="room", log=False)
        out, _ = other.communicate("stop\n", timeout=120)
        print(json.dumps({**took, "other": json.loads(out.strip().splitlines()[-1]), "flood": flood}))
        for line in swept.lines():
            print(line)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 401_450)
