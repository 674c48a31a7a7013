"""The sandbox's worker holds nothing of the kernel's and cannot reach it: an empty environment, no
inherited descriptor, no root, no new privileges, no file written, no process started; the kernel
is non-dumpable, so the worker cannot read its environment or memory through /proc (read from
inside a process started and confined as the worker is). Stale temp dirs go at start; a sandbox
stopped by one ``with_scripts`` lab's script says so to the others; a check keeps its verdict when
the class server cannot record it."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from servers import ValkeyServer

import emq_lab
from emq_lab import exercises, sandbox

LINUX = sys.platform.startswith("linux")
REGISTER = exercises.solution("register")
C_CALL = "local s = string.rep('a', 30000)\nreturn string.find(s, '.-.-.-.-b')"


def proc(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_text(errors="replace")


@pytest.mark.skipif(not LINUX, reason="the worker is confined on Linux")
def test_the_worker_runs_confined(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EMQ_LAB_URL", "redis://learner:s3cret@127.0.0.1:1/")
    marker = tmp_path / "kernel-only"
    fd = os.open(marker, os.O_CREAT | os.O_RDWR)
    os.set_inheritable(fd, True)  # a descriptor the kernel would hand on if it were not careful
    box = sandbox.Sandbox()
    try:
        box.ready()
        assert box._process is not None
        pid = box._process.pid
        if os.geteuid() == 0:  # root reads a non-dumpable process's /proc files; another user may not
            assert Path(f"/proc/{pid}/environ").read_bytes() == b""
            opened = [os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd")]
            assert str(marker) not in opened and not any("kernel-only" in target for target in opened), opened
        else:
            with pytest.raises(PermissionError):
                Path(f"/proc/{pid}/environ").read_bytes()
        status = proc(pid, "status")
        assert re.search(r"^NoNewPrivs:\s+1$", status, re.M), status
        uids = re.search(r"^Uid:\s+(.*)$", status, re.M)
        assert uids is not None
        if os.geteuid() == 0:
            assert set(uids.group(1).split()) == {str(sandbox.worker.NOBODY)}  # root is given up
        limits = proc(pid, "limits")
        for name in ("Max file size", "Max processes", "Max core file size"):
            assert re.search(rf"^{name}\s+0\s+0\s", limits, re.M), limits
        assert box.client.eval("return redis.call('SET', KEYS[1], 'v')", 1, "k") == "OK"  # and it works
    finally:
        box.kill()
        os.close(fd)


PROBE = """
import os, sys
sys.path[:] = sys.argv[2:]
from emq_lab.sandbox import worker
worker.confine()
kernel = os.getppid()
for path in (f"/proc/{kernel}/environ", f"/proc/{kernel}/mem"):
    try:
        with open(path, "rb") as f:
            print(path, "read", f.read(4096))
    except OSError as error:
        print(path, "refused", error.errno)
try:
    with open(os.path.join(sys.argv[1], "written"), "w") as f:
        f.write("x" * 100)
    print("write", "done")
except OSError as error:
    print("write", "refused", error.errno)
try:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    print("fork", "done")
except OSError as error:
    print("fork", "refused", error.errno)
"""


@pytest.mark.skipif(not LINUX, reason="the worker is confined on Linux")
def test_inside_the_worker_the_kernels_environ_and_memory_cannot_be_read() -> None:
    # A process started as the worker is (its command line, an empty environment), confined by the
    # worker's own confine(), tries what a way out of Lua would try; the kernel is this process.
    sandbox._first_start()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: the kernel is not dumpable
    with tempfile.TemporaryDirectory(prefix="emq-lab-probe-") as directory:
        tmp_path = Path(directory)
        os.chmod(tmp_path, 0o777)  # so that a write is refused by the limit, not by the directory
        command = sandbox.command(tmp_path)
        command[command.index("-c") + 1] = PROBE
        run = subprocess.run(command, env={}, cwd=tmp_path, capture_output=True, text=True, timeout=60, close_fds=True)
        written = tmp_path / "written"
        assert not written.exists() or written.stat().st_size == 0
    assert run.returncode == 0, run.stderr[-2000:]
    said = dict((line.split(" ", 1)[0], line.split(" ", 1)[1]) for line in run.stdout.splitlines())
    pid = os.getpid()
    assert said[f"/proc/{pid}/environ"] == "refused 13", run.stdout  # EACCES
    assert said[f"/proc/{pid}/mem"] == "refused 13", run.stdout
    assert said["write"] == "refused 27", run.stdout  # EFBIG: RLIMIT_FSIZE 0
    assert said["fork"] == "refused 11", run.stdout  # EAGAIN: RLIMIT_NPROC 0


def test_temp_dirs_of_ended_kernels_are_removed(tmp_path: Path) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead = tmp_path / f"{sandbox.PREFIX}{ended.pid}-abc"
    live = tmp_path / f"{sandbox.PREFIX}{os.getpid()}-def"
    old = tmp_path / f"{sandbox.PREFIX}x1y2z3"  # an older emq_lab's name: no kernel pid in it
    fresh = tmp_path / f"{sandbox.PREFIX}q9w8e7"
    for path in (dead, live, old, fresh):
        path.mkdir()
        (path / "socket").write_bytes(b"")
    day_ago = time.time() - 2 * 86400
    os.utime(old, (day_ago, day_ago))
    assert sorted(sandbox.remove_stale(tmp_path)) == sorted([dead, old])
    assert not dead.exists() and not old.exists() and live.exists() and fresh.exists()


def test_a_sandbox_stopped_by_one_script_says_so_to_the_other_labs(queue: str) -> None:
    lab = emq_lab.connect("embedded", clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    good = exercises.with_scripts(lab, register="return redis.call('ZADD', KEYS[1], 5, ARGV[1])")
    assert good.repeat(queue).register("a", 1000, "t") is emq_lab.Outcome.REGISTERED
    bad = exercises.with_scripts(lab, register=C_CALL)
    with pytest.raises(sandbox.Stopped, match=r"^user_script:2: emq-lab stop$"):  # its own script: named by line
        bad.repeat(queue).register("b", 1000, "t")
    with pytest.raises(sandbox.Stopped) as told:  # the earlier lab is told it was another call, not blamed
        good.repeat(queue).register("c", 1000, "t")
    assert "stopped during an earlier call, not this one" in str(told.value)
    assert "call with_scripts again" in str(told.value)
    again = exercises.with_scripts(lab, register="return redis.call('ZADD', KEYS[1], 5, ARGV[1])")
    assert again.repeat(queue).register("c", 1000, "t") is emq_lab.Outcome.REGISTERED  # a fresh sandbox
    again.reset(queue)
    lab.close()


# -- a check keeps its verdict when its result cannot be recorded ----------------------------------


@pytest.fixture
def stalled() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not done.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{server.getsockname()[1]}/"
    done.set()
    thread.join()
    for sock in held:
        sock.close()
    server.close()


def closed_port() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"redis://127.0.0.1:{port}/"


@pytest.mark.parametrize("server", ["down", "stalled"])
def test_a_check_keeps_its_verdict_when_the_class_server_is_unavailable(
    server: str, stalled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMQ_LAB_URL", closed_port() if server == "down" else stalled)
    start = time.monotonic()
    check = exercises.register(REGISTER)
    assert check.passed
    assert "not recorded for your instructor" in str(check) and "BackendUnavailable" in str(check), str(check)
    failed = exercises.register(exercises.buggy("register"))
    assert not failed.passed and "not recorded for your instructor" in str(failed)
    assert time.monotonic() - start < 60  # each record waits at most RECORD_TIMEOUT_S for the server


def test_a_check_keeps_its_verdict_when_the_learners_password_was_rotated(
    valkey_server: ValkeyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = redis.Redis.from_url(valkey_server.url, decode_responses=True)
    admin.acl_setuser("rotated", enabled=True, passwords=["+old"], keys=["*"], commands=["+@all"])
    try:
        url = valkey_server.url.replace("redis://", "redis://rotated:old@", 1)
        lab = emq_lab.connect(url, namespace="rotated")
        admin.acl_setuser(
            "rotated", enabled=True, reset_passwords=True, passwords=["+new"], keys=["*"], commands=["+@all"]
        )
        admin.client_kill_filter(user="rotated")
        passed = exercises.register(REGISTER, lab)  # a lab=: its next command has to log in again
        assert passed.passed and "not recorded for your instructor" in str(passed), str(passed)
        assert "old" not in str(passed).split("not recorded", 1)[1]
        monkeypatch.setenv("EMQ_LAB_URL", url)  # no lab=: the kernel's URL, with the old password
        again = exercises.register(REGISTER)
        assert again.passed and "not recorded for your instructor" in str(again), str(again)
        lab.close()
    finally:
        admin.acl_deluser("rotated")
        admin.close()


def test_a_check_runs_from_a_checkout_only_its_owner_can_enter(tmp_path: Path) -> None:
    """A clone in a 0700 directory (mktemp -d, a CI's folder): the worker, confined to another user
    when run as root, must have read every file it needs before it gave up reaching them."""
    checkout = tmp_path / "private"
    shutil.copytree(Path(emq_lab.__file__).parent, checkout / "emq_lab", ignore=shutil.ignore_patterns("__pycache__"))
    checkout.chmod(0o700)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from emq_lab import exercises; "
        "print(exercises.register(exercises.solution('register')).passed)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, str(checkout)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert ran.stdout.strip().endswith("True"), ran.stdout + ran.stderr
