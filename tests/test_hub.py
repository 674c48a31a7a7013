"""The class on a real JupyterHub (with configurable-http-proxy) on loopback beside one throwaway
Valkey, started by the documented command: two learners log in through Chromium and run their
copy of 01 (its predictions and checks among it); the instructor, a hub admin, opens the
instructor's page and sees the two with their progress; each learner's server holds only
their own credential; a learner deleted from the hub is refused by Valkey.

Skipped loudly without jupyterhub, configurable-http-proxy (make test-browser installs it into
.venv/node) or Chromium, unless EMQ_LAB_REQUIRE_BROWSER=1."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from browser import ARTIFACTS, ROOT, launched_chromium, screenshot, skip_or_fail
from class_server import ADMIN_PASSWORD, ClassServer, started_class_server
from helpers import MIN, START
from servers import free_port

import emq_classroom as classroom
import emq_lab
from emq_classroom import Learner
from emq_classroom.hub import (
    FOLDER,
    LEARNER_NOTEBOOKS,
    OPEN_FILES,
    HubSettings,
    configure,
    limit_open_files,
    prepare_spawn,
    revoking,
)
from emq_lab import keys, progress

LEARNERS = ("ada", "cy")  # two: a third adds a minute of the suite and nothing a second does not show
INSTRUCTOR = "teacher"
LEARNER_LOGIN = "class-password-1"
INSTRUCTOR_LOGIN = "instructor-password-0123456789abcdef"  # JupyterHub wants 32+ characters
PROXY = Path(sys.prefix) / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
RUN_S = 420  # two notebooks at once on a busy two-core machine


@dataclass
class Hub:
    url: str
    process: subprocess.Popen[bytes]
    state: Path
    log: Path

    def servers(self) -> dict[str, int]:
        """Each hub user's single-user server process: {hub name: pid}."""
        found = {}
        for pid in _children(self.process.pid):
            env = _environ(pid)
            if "JUPYTERHUB_USER" in env and "jupyterhub-singleuser" in _cmdline(pid):
                found[env["JUPYTERHUB_USER"]] = pid
        return found


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (by /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _need_hub_tools() -> None:
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        skip_or_fail("the Python package 'jupyterhub' is not installed (pip install -e '.[hub]'; make install does)")
    if not PROXY.exists():
        skip_or_fail(f"no configurable-http-proxy at {PROXY} (make chp; make test-browser does)")


@contextmanager
def running_hub(server: ClassServer) -> Iterator[Hub]:
    """``python -m emq_classroom hub`` as the README says, the passwords in files, on free
    loopback ports; stopped with SIGTERM (it stops the servers and the proxy), then anything left."""
    work = Path(tempfile.mkdtemp(prefix="emq-hub-"))
    secrets = {"admin.pw": ADMIN_PASSWORD, "learners.pw": LEARNER_LOGIN, "instructor.pw": INSTRUCTOR_LOGIN}
    for name, secret in secrets.items():
        (work / name).write_text(secret + "\n")
        (work / name).chmod(0o600)
    port = free_port()
    command = [
        sys.executable, "-m", "emq_classroom", "hub",
        "--url", f"redis://admin@127.0.0.1:{server.server.port}/0", "--password-file", str(work / "admin.pw"),
        "--instructor", INSTRUCTOR, "--learner-password-file", str(work / "learners.pw"),
        "--instructor-password-file", str(work / "instructor.pw"),
        "--port", str(port), "--hub-port", str(free_port()), "--proxy-api-port", str(free_port()),
        "--state", str(work / "state"),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMQ_LAB_")}
    env["PYTHONPATH"] = str(ROOT)  # this checkout's emq_lab, in the hub and in every server it starts
    log = work / "hub.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
    assert ADMIN_PASSWORD not in " ".join(command)
    hub = Hub(f"http://127.0.0.1:{port}", process, work / "state", log)
    seen: dict[int, str] = {}
    try:
        _wait_ready(hub)
        yield hub
    finally:
        seen.update((pid, _cmdline(pid)) for pid in _descendants(process.pid))
        failed = sys.exc_info()[0] is not None
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        for pid, cmdline in seen.items():  # what the hub did not stop (each server has a session of its own)
            if cmdline and _cmdline(pid) == cmdline:  # still that process, not a new one with its pid
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if failed:
            print(f"the hub's log: {log}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _wait_ready(hub: Hub, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if hub.process.poll() is not None:
            raise RuntimeError(f"the hub exited:\n{hub.log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{hub.url}/hub/api", timeout=2):
                return  # the hub itself answered: until its route is added, the proxy alone says 404
        except OSError:  # an HTTPError too
            time.sleep(0.25)
    raise RuntimeError(f"the hub did not answer in {timeout} s:\n{hub.log.read_text()[-4000:]}")


def log_in(page: Any, hub: Hub, name: str, password: str) -> None:
    page.goto(f"{hub.url}/hub/login")
    page.locator("#username_input").fill(name)
    page.locator("#password_input").fill(password)
    page.locator("#login_submit").click()
    page.wait_for_url(re.compile(r"/hub/(spawn|spawn-pending|user)|/user/"), timeout=60_000)


ALL_RAN = """() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')];
  return prompts.length > 0 && prompts.every((p) => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
}"""
ERRORS = """() => [...document.querySelectorAll(
  '.jp-Notebook [data-mime-type="application/vnd.jupyter.stderr"], .jp-Notebook [data-mime-type*="error"]'
)].map((e) => e.innerText.slice(0, 400))"""


def start_run_all(page: Any, hub: Hub, name: str) -> None:
    """Open the learner's copy of 01 in their JupyterLab, wait for the kernel, Run All."""
    page.wait_for_url(re.compile(rf"/user/{name}/lab"), timeout=240_000)
    page.goto(f"{hub.url}/user/{name}/lab/tree/01-upsert.ipynb?reset")
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=120_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()


def wait_all_ran(pages: dict[str, Any]) -> None:
    """Until every page's cells have all run (the kernels work at once), or one stopped."""
    deadline = time.monotonic() + RUN_S
    waiting = dict(pages)
    while waiting and time.monotonic() < deadline:
        for name, page in list(waiting.items()):
            if page.evaluate(ALL_RAN):
                del waiting[name]
            elif page.locator(".jp-InputArea-prompt", has_text="[*]").count() == 0 and page.evaluate(ERRORS):
                pytest.fail(f"{name}'s 01 stopped on an error: {page.evaluate(ERRORS)}")
        time.sleep(1)
    assert not waiting, f"01 did not finish in {RUN_S} s for {sorted(waiting)}"


def _rss_mib(pid: int) -> float:
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _files_limit(pid: int) -> int:
    """The soft limit of open files of ``pid`` (/proc/<pid>/limits), 0 when unknown."""
    for line in _read(f"/proc/{pid}/limits").splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    return 0


def report_costs(hub: Hub, admin: redis.Redis, used_before: int) -> None:
    """What one learner costs after running 01 (printed, and kept in test-artifacts/hub-costs.json):
    the server's and the kernels' memory, their connections to Valkey, the memory of their keys."""
    servers = hub.servers()
    clients = admin.client_list()
    costs: dict[str, Any] = {"used_memory_delta_mib": (int(admin.info("memory")["used_memory"]) - used_before) / 2**20}
    for name in LEARNERS:
        tree = _descendants(servers[name])
        kernels = [pid for pid in tree if "ipykernel" in _cmdline(pid)]
        namespace = f"learner-{name}"
        key_bytes = sum(
            admin.memory_usage(key) or 0 for key in admin.scan_iter(match=keys.namespace_pattern(namespace), count=1000)
        )
        costs[name] = {
            "server_rss_mib": round(_rss_mib(servers[name]), 1),
            "kernel_rss_mib": round(sum(_rss_mib(pid) for pid in kernels), 1),
            "tree_rss_mib": round(sum(_rss_mib(pid) for pid in [servers[name], *tree]), 1),
            "valkey_connections": sum(1 for client in clients if client.get("user") == namespace),
            "server_open_files": _open_files(servers[name]),
            "kernel_open_files": max((_open_files(pid) for pid in kernels), default=0),
            "open_files_limit": _files_limit(servers[name]),
            "key_memory_kib": round(key_bytes / 1024, 1),
        }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "hub-costs.json").write_text(json.dumps(costs, indent=1) + "\n")
    print("one learner's cost after 01:", json.dumps(costs))


@pytest.mark.browser  # make test-browser
def test_a_class_on_jupyterhub(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    _need_hub_tools()
    with started_class_server() as server, running_hub(server) as hub, launched_chromium() as chromium:
        admin = server.admin()
        used_before = int(admin.info("memory")["used_memory"])
        learners = {}
        for name in LEARNERS:  # all log in; their servers start side by side
            context = chromium.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.set_default_timeout(60_000)
            log_in(page, hub, name, LEARNER_LOGIN)
            learners[name] = page
        context = chromium.new_context(viewport={"width": 1280, "height": 720})
        teacher = context.new_page()  # the instructor logs in now: their server starts beside the learners'
        teacher.set_default_timeout(60_000)
        log_in(teacher, hub, INSTRUCTOR, INSTRUCTOR_LOGIN)
        for name, page in learners.items():
            start_run_all(page, hub, name)
        wait_all_ran(learners)
        for page in learners.values():  # each answers 01's first prediction in its form, as a learner does
            form = page.locator(".emq-predict").first
            form.locator("input[type=text]").first.fill("1")
            form.get_by_role("button", name="Check").click()
            expect(form.locator(".emq-verdict")).not_to_contain_text("not checked yet", timeout=60_000)

        # Each learner's work is in their own namespace on the class server: 01's prediction and checks.
        for name in LEARNERS:
            done = admin.hgetall(keys.progress(f"learner-{name}"))
            assert {"upsert.predict", "register"} <= set(done), f"{name}'s progress: {done}"
            assert admin.exists(keys.QueueKeys("reports", f"learner-{name}").registry)
        report_costs(hub, admin, used_before)
        page = learners["ada"]
        page.locator(".jp-Notebook .jp-Cell").first.scroll_into_view_if_needed()
        screenshot(page, "hub-learner-01")
        assert not page.evaluate(ERRORS)

        # Each server holds its own learner's URL and namespace and no other credential.
        servers = hub.servers()
        assert set(LEARNERS) <= set(servers), f"single-user servers found: {servers}"
        urls = {name: _environ(servers[name])["EMQ_LAB_URL"] for name in LEARNERS}
        passwords = {name: urlsplit(url).password or "" for name, url in urls.items()}
        for name in LEARNERS:
            parts = urlsplit(urls[name])
            assert parts.username == f"learner-{name}" and len(passwords[name]) >= 20
            for pid in [servers[name], *_descendants(servers[name])]:  # the server and its kernels
                env = _environ(pid)
                if not env:
                    continue
                text = "\n".join(f"{k}={v}" for k, v in env.items())
                if pid == servers[name] or "ipykernel" in _cmdline(pid):
                    assert env["EMQ_LAB_URL"] == urls[name] and env["EMQ_LAB_NAMESPACE"] == f"learner-{name}"
                else:  # the exercises' sandbox worker: an empty environment
                    assert "EMQ_LAB_URL" not in env, f"{name}'s {_cmdline(pid)[:80]} holds EMQ_LAB_URL"
                assert ADMIN_PASSWORD not in text and LEARNER_LOGIN not in text and INSTRUCTOR_LOGIN not in text
                others = [other for other in LEARNERS if other != name and passwords[other] in text]
                assert not others, f"{name}'s process {pid} holds the credential of {others}"
            as_learner = redis.Redis.from_url(urls[name])
            assert as_learner.ping()  # the hub's rotation is the password the server knows
            as_learner.close()

        # The instructor: a hub admin, on the instructor's page, through the read-only observer.
        # The page opened while the learners worked: its refresh every 5 s shows where they are now.
        teacher.wait_for_url(re.compile(rf"/user/{INSTRUCTOR}/voila/render/instructor.ipynb"), timeout=240_000)
        table = teacher.locator(".emq-classroom-panel .emq-readout").first
        table.wait_for(timeout=240_000)
        for name in LEARNERS:  # each learner's row lists the prediction they made (a refresh may be up to 5 s away)
            row = re.compile(rf"learner-{name}[^\n]*01 upsert[^\n]*[✓✗] upsert\.predict")
            expect(table).to_contain_text(row, use_inner_text=True, timeout=30_000)
        # the summary comes first
        expect(table).to_contain_text(f"{len(LEARNERS)} started, 0 not started", use_inner_text=True)
        assert ADMIN_PASSWORD not in teacher.content()
        teacher.locator(".emq-classroom-panel").first.evaluate("el => el.scrollIntoView({block: 'start'})")
        screenshot(teacher, "hub-instructor")
        observer_url = _environ(hub.servers()[INSTRUCTOR])["EMQ_LAB_URL"]
        assert urlsplit(observer_url).username == f"observer-{INSTRUCTOR}"
        observer = redis.Redis.from_url(observer_url)
        for write in (("SET", "emq:x", "1"), ("DEL", keys.progress("learner-ada")), ("EVAL", "return 1", "0")):
            with pytest.raises(redis.exceptions.NoPermissionError):
                observer.execute_command(*write)
        observer.close()

        # The instructor deletes cy in the hub: cy's ACL user goes, and Valkey refuses cy's password.
        teacher.goto(f"{hub.url}/hub/home")
        status = teacher.evaluate(
            """async (name) => (await fetch(`/hub/api/users/${name}`,
                {method: 'DELETE', headers: {'X-XSRFToken': window.jhdata.xsrf_token}})).status""",
            "cy",
        )
        assert status == 204, hub.log.read_text()[-3000:]
        assert "learner-cy" not in admin.acl_users() and "learner-ada" in admin.acl_users()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis.from_url(urls["cy"]).ping()
        redis.Redis.from_url(urls["ada"]).ping()  # the others go on
        admin.close()
        for page in [*learners.values(), teacher]:
            page.context.close()


# --- The hub's parts, without a hub: on one class server (each test its own names). ---


@pytest.fixture(scope="module")
def class_server() -> Iterator[ClassServer]:
    with started_class_server() as server:
        admin, _ = emq_lab.backend.open_client(server.admin_url)
        classroom.load_scripts(admin)  # what the hub does when it starts
        admin.close()
        yield server


def _settings(server: ClassServer, prefix: str) -> HubSettings:
    return HubSettings(f"redis://admin@127.0.0.1:{server.server.port}/0", ADMIN_PASSWORD, prefix=prefix)


def _spawner(name: str, home: Path, *, admin: bool = False) -> SimpleNamespace:
    """What prepare_spawn reads of a JupyterHub spawner (SimpleLocalProcessSpawner's home_dir)."""
    return SimpleNamespace(user=SimpleNamespace(name=name, admin=admin), home_dir=str(home))


def test_a_spawn_gives_the_learner_their_own_url_and_copies_rotating_the_password(
    class_server: ClassServer, tmp_path: Path
) -> None:
    settings = _settings(class_server, "sp1-")
    first = prepare_spawn(settings, _spawner("ann", tmp_path / "ann"))
    assert set(first) == {"EMQ_LAB_URL", "EMQ_LAB_NAMESPACE"} and first["EMQ_LAB_NAMESPACE"] == "sp1-ann"
    assert urlsplit(first["EMQ_LAB_URL"]).username == "sp1-ann" and ADMIN_PASSWORD not in first["EMQ_LAB_URL"]
    lab = emq_lab.connect(first["EMQ_LAB_URL"], clock=emq_lab.SimClock(START), namespace=first["EMQ_LAB_NAMESPACE"])
    assert lab.repeat("reports").register("digest", MIN, "{}") is emq_lab.Outcome.REGISTERED
    lab.close()
    folder = tmp_path / "ann" / FOLDER
    copied = sorted(path.name for path in folder.glob("*.ipynb"))
    assert copied == sorted(LEARNER_NOTEBOOKS)
    for path in folder.glob("*.ipynb"):
        cells = json.loads(path.read_text())["cells"]
        code = [cell for cell in cells if cell["cell_type"] == "code"]
        assert code and all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code)
    mine = folder / "01-upsert.ipynb"
    mine.write_text(mine.read_text().replace("dives.setup", "dives.setup  # my note"))
    again = prepare_spawn(settings, _spawner("ann", tmp_path / "ann"))  # the next start of the server
    assert "# my note" in mine.read_text()  # the learner's copy is never overwritten
    with pytest.raises(redis.exceptions.AuthenticationError):  # the old password is gone
        redis.Redis.from_url(first["EMQ_LAB_URL"]).ping()
    assert redis.Redis.from_url(again["EMQ_LAB_URL"]).ping()
    with pytest.raises(ValueError, match="hub user 'b:ad'"):
        prepare_spawn(settings, _spawner("b:ad", tmp_path / "bad"))


def test_the_instructor_gets_a_read_only_observer_that_sees_the_class(
    class_server: ClassServer, tmp_path: Path
) -> None:
    settings = _settings(class_server, "sp2-")
    ann = prepare_spawn(settings, _spawner("ann", tmp_path / "ann"))
    lab = emq_lab.connect(ann["EMQ_LAB_URL"], clock=emq_lab.SimClock(START), namespace=ann["EMQ_LAB_NAMESPACE"])
    lab.repeat("reports").register("digest", MIN, "{}")
    progress.record(lab, "register", True)
    env = prepare_spawn(settings, _spawner("boss", tmp_path / "boss", admin=True))
    assert set(env) == {"EMQ_LAB_URL", "EMQ_LAB_CLASS_PREFIX"} and env["EMQ_LAB_CLASS_PREFIX"] == "sp2-"
    assert urlsplit(env["EMQ_LAB_URL"]).username == "observer-boss"
    assert sorted(path.name for path in (tmp_path / "boss" / FOLDER).glob("*.ipynb")) == ["instructor.ipynb"]
    observer, _ = emq_lab.backend.open_client(env["EMQ_LAB_URL"])
    seen = classroom.overview(observer, prefix="sp2-")
    (row,) = seen.learners
    assert row.namespace == "sp2-ann" and row.dives == ("01 upsert",) and "register passed" in row.progress_text()
    hand = redis.Redis.from_url(env["EMQ_LAB_URL"], decode_responses=True)
    registry = keys.QueueKeys("reports", "sp2-ann").registry
    assert hand.zcard(registry) == 1  # it reads a learner's keys
    sha = class_server.admin().script_load("return 1")
    refused = [
        ("SET", "emq:x", "1"), ("DEL", registry), ("HSET", keys.progress("sp2-ann"), "register", "0"),
        ("ZADD", registry, "0", "x"), ("EVAL", "return 1", "0"), ("EVALSHA", sha, "0"), ("FCALL", "f", "0"),
        ("SCRIPT", "FLUSH"), ("FUNCTION", "FLUSH"), ("KEYS", "*"), ("FLUSHALL",), ("CONFIG", "SET", "maxclients", "1"),
        ("ACL", "LIST"), ("ACL", "SETUSER", "x"), ("ACL", "DELUSER", "sp2-ann"), ("CLIENT", "KILL", "ID", "1"),
        ("GET", "secret"),
    ]  # fmt: skip
    for command in refused:
        with pytest.raises(redis.exceptions.NoPermissionError):
            hand.execute_command(*command)
    assert lab.repeat("reports").count() == 1
    hand.close()
    observer.close()
    lab.close()


def test_deleting_a_hub_user_deletes_their_acl_user(class_server: ClassServer, tmp_path: Path) -> None:
    pytest.importorskip("jupyterhub", reason="HUB TESTS SKIPPED: jupyterhub is not installed (pip install -e '.[hub]')")
    from jupyterhub.auth import Authenticator

    settings = _settings(class_server, "sp3-")
    env = prepare_spawn(settings, _spawner("cy", tmp_path / "cy"))
    held = redis.Redis.from_url(env["EMQ_LAB_URL"])
    assert held.ping()
    authenticator = revoking(Authenticator, settings)()
    authenticator.delete_user(SimpleNamespace(name="cy"))
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis.from_url(env["EMQ_LAB_URL"]).ping()
    with pytest.raises(redis.exceptions.ConnectionError):  # the server closed the open connection too
        held.ping()
    assert "sp3-cy" not in class_server.admin().acl_users()
    authenticator.delete_user(SimpleNamespace(name="never-spawned"))  # no ACL user: nothing to do


def test_the_cli_reads_the_admin_password_from_a_file_or_the_environment(
    class_server: ClassServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = f"redis://admin@127.0.0.1:{class_server.server.port}/0"
    secret = tmp_path / "admin.pw"
    secret.write_text(ADMIN_PASSWORD + "\n")
    assert (
        classroom.main(["users", "--url", bare, "--password-file", str(secret), "--learners", "1", "--prefix", "pf"])
        == 0
    )
    out, err = capsys.readouterr()
    assert "EMQ_LAB_URL=" in out and ADMIN_PASSWORD not in out + err and "warning" not in err
    monkeypatch.setenv("EMQ_LAB_ADMIN_PASSWORD", ADMIN_PASSWORD)
    assert classroom.main(["revoke", "--url", bare, "--prefix", "pf"]) == 0
    assert capsys.readouterr().out.startswith("removed 1 user(s)")
    monkeypatch.delenv("EMQ_LAB_ADMIN_PASSWORD")
    assert classroom.main(["scripts", "--url", class_server.admin_url]) == 0  # still works, with a warning
    out, err = capsys.readouterr()
    assert "warning: the password in --url shows in ps" in err and ADMIN_PASSWORD not in out + err
    assert classroom.main(["scripts", "--url", bare]) == 2  # no password at all: refused by the server
    (tmp_path / "empty.pw").write_text("")
    assert classroom.main(["scripts", "--url", bare, "--password-file", str(tmp_path / "empty.pw")]) == 2
    assert "admin password: " in capsys.readouterr().err
    with pytest.raises(ValueError, match="server_url: .* holds a password"):
        HubSettings(class_server.admin_url, ADMIN_PASSWORD)


def test_configure_sets_the_hook_and_keeps_kubespawner_on_kubernetes(tmp_path: Path) -> None:
    pytest.importorskip("jupyterhub", reason="HUB TESTS SKIPPED: jupyterhub is not installed (pip install -e '.[hub]')")
    from traitlets.config import Config

    settings = HubSettings("valkey+cluster://admin@valkey-0.valkey:6379", "pw", prefix="learner-")
    local, kube = Config(), Config()
    configure(local, settings, spawner="simple", homes=str(tmp_path))
    configure(kube, settings, spawner="kube")
    from jupyterhub.spawner import SimpleLocalProcessSpawner

    assert issubclass(local.JupyterHub.spawner_class, SimpleLocalProcessSpawner)  # each process: OPEN_FILES
    assert local.SimpleLocalProcessSpawner.home_dir_template == str(tmp_path / "{username}")
    assert "spawner_class" not in kube.JupyterHub and "cmd" not in kube.Spawner  # the chart's KubeSpawner and image
    for config in (local, kube):
        assert callable(config.Spawner.pre_spawn_hook)
        assert config.JupyterHub.authenticator_class.delete_user is not None
    with pytest.raises(ValueError, match="spawner: expected"):
        configure(Config(), settings, spawner="docker")
    ann = Learner("learner-ann", "pw")  # a learner's URL keeps the cluster scheme, and no database
    assert ann.url(settings.server_url) == "valkey+cluster://learner-ann:pw@valkey-0.valkey:6379"


OPENER = """
import json, os, resource, socket, subprocess, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 4, hard * 4))
    raised = True
except (ValueError, OSError):
    raised = False
kernel = subprocess.run(  # what a process it starts (a kernel) inherits
    [sys.executable, "-c", "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[1])"],
    capture_output=True, text=True,
).stdout.strip()
held, error = [], None
while len(held) < 5000:  # bounded whatever the limit
    try:
        held.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5))
    except OSError as exc:
        error = [exc.errno, exc.strerror]
        break
print(json.dumps({"soft": soft, "hard": hard, "raised": raised, "kernel": int(kernel), "held": len(held),
                  "error": error, "cwd": os.getcwd()}), flush=True)
sys.stdin.readline()  # holds the sockets until the test has counted them
"""


def test_a_learners_process_cannot_hold_more_sockets_than_the_hubs_open_files_limit(
    class_server: ClassServer, tmp_path: Path
) -> None:
    """The spawner the hub configures starts a learner's server through its preexec function: in
    it, and in every process it starts, at most OPEN_FILES files are open; a socket past that
    fails with EMFILE ("Too many open files"), the class server counts no more of its sockets, and
    the process cannot raise the limit (as an ordinary user; as root, without CAP_SYS_RESOURCE)."""
    pytest.importorskip("jupyterhub", reason="HUB TESTS SKIPPED: jupyterhub is not installed (pip install -e '.[hub]')")
    import errno
    import logging

    from traitlets.config import Config

    config = Config()
    configure(config, _settings(class_server, "sp5-"), spawner="simple", homes=str(tmp_path))
    home = tmp_path / "ann"
    spawner = SimpleNamespace(home_dir=str(home), log=logging.getLogger("test-hub"))
    preexec = config.JupyterHub.spawner_class.make_preexec_fn(spawner, "ann")  # as Spawner.start passes it to Popen
    command = [sys.executable, "-c", OPENER, str(class_server.server.port)]
    if os.geteuid() == 0:  # root may raise any limit: drop that capability, as an ordinary user has none
        if not shutil.which("setpriv"):
            pytest.skip("run as root without setpriv: cannot show that a learner cannot raise the limit")
        command = ["setpriv", "--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource", *command]
    admin = class_server.admin()
    most = admin.config_get("maxclients")["maxclients"]
    admin.config_set("maxclients", 4 * OPEN_FILES)  # room for all it may open (users of another test set it lower)
    before = sum(1 for client in admin.client_list() if client["user"] == "default")
    child = subprocess.Popen(command, preexec_fn=preexec, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        seen = json.loads(child.stdout.readline())
        for _ in range(100):  # the server accepts them a moment later (bounded: 5 s)
            held = sum(1 for client in admin.client_list() if client["user"] == "default") - before
            if held >= seen["held"]:
                break
            time.sleep(0.05)
    finally:
        child.communicate("done\n", timeout=30)
        admin.config_set("maxclients", most)
        admin.close()
    assert seen["soft"] == seen["hard"] == seen["kernel"] == OPEN_FILES
    assert not seen["raised"]
    assert OPEN_FILES - 16 <= seen["held"] < OPEN_FILES  # its stdin, stdout, stderr and Python's own files
    assert seen["error"] == [errno.EMFILE, "Too many open files"]
    assert held == seen["held"]  # what the class server saw of it: no more
    assert seen["cwd"] == str(home)  # the spawner's own preparation still ran (SimpleLocalProcessSpawner: the home)
    with pytest.raises(ValueError, match="open_files"):
        limit_open_files(16)
