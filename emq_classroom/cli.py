"""The instructor's commands: ``python -m emq_classroom doctor|users|scripts|revoke|overview|hub``.

Every command reads the admin password from ``--password-file`` or ``$EMQ_LAB_ADMIN_PASSWORD``,
never from the command line: a password inside ``--url`` still works, with a warning (it shows in
``ps`` and the shell's history while the command runs)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from redis.exceptions import RedisError

from emq_lab import errors
from emq_lab.backend import open_client
from emq_lab.errors import BackendUnavailable

from . import guard, sockets
from .doctor import apply_limits, doctor, table
from .hub import PASSWORD_ENV, HubSettings, read_secret, with_password
from .overview import Overview, overview
from .search import Search
from .users import MAX_LEARNERS, create_users, load_scripts, refuse_open_default, revoke_users

URL_HELP = (
    f"the server, as its admin user (redis://admin@host:port/0; the password from --password-file or ${PASSWORD_ENV})"
)
HUB_LEARNER_ENV = "EMQ_LAB_HUB_LEARNER_PASSWORD"
HUB_INSTRUCTOR_ENV = "EMQ_LAB_HUB_INSTRUCTOR_PASSWORD"
LEARNERS_PREFIX = "the learners' names start with this (default: learner)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m emq_classroom",
        description="Run a class on one Valkey: check the server, one ACL user and namespace per learner, "
        "the scripts they may run, and what each has done.",
    )
    server = argparse.ArgumentParser(add_help=False)  # what every command but hub takes first
    server.add_argument("--url", required=True, help=URL_HELP)
    server.add_argument(
        "--password-file", help=f"a file whose first line is the admin password (else ${PASSWORD_ENV}, else the URL's)"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, description=description, parents=[server])

    check = command("doctor", "check what a class server needs; print what is wrong and the fix")
    check.add_argument("--learners", type=int, help="size maxclients for this many learners (default: the ACL users)")
    users = command(
        "users",
        "create (or re-create, with new passwords) one ACL user per learner and print their settings",
        "Create one ACL user per learner, limited to its namespace's keys and emq-lab's commands (no Lua of "
        "its own), load emq-lab's scripts, and print one shell line per learner (the only copy of the "
        "passwords). Refused on a server whose default user lets anyone in.",
    )
    users.add_argument("--learners", type=int, required=True, help=f"how many learners (1 to {MAX_LEARNERS})")
    users.add_argument(
        "--prefix", default="learner", help="user and namespace names: <prefix>01, ... (default: learner)"
    )
    command("scripts", "load emq-lab's scripts (after a server restart: learners may not load them)")
    revoke = command("revoke", "delete the learners' ACL users (their keys stay)")
    revoke.add_argument("--prefix", default="learner", help="delete the users <prefix><digits> (default: learner)")
    tidy = command(
        "reconcile",
        "delete the ACL users of hub users that are gone (the hub does it at each start)",
        "Read the users of a JupyterHub's database and delete every ACL user the hub made "
        "(<prefix><name>, observer-<name>) whose hub user is gone: one deleted while the hub was down.",
    )
    tidy.add_argument("--hub-db", required=True, help="the hub's database: sqlite:///emq-hub/jupyterhub.sqlite")
    tidy.add_argument("--prefix", default="learner-", help="the learners' ACL users: <prefix><hub name>")
    show = command("overview", "print every learner: dives, queues, registry sizes, checks")
    show.add_argument("--prefix", default="learner", help=LEARNERS_PREFIX)
    watch = command(
        "guard",
        "run the class guard until Ctrl-C: close a learner's connections past its quota (and suspend it), "
        "huge unread replies, sockets that never log in and connections trying passwords; suspend a learner whose "
        f"commands held the server {guard.slow.MAX_HOLD_MS} ms or more in all; print what it does",
    )
    watch.add_argument("--prefix", default="learner", help=LEARNERS_PREFIX)
    watch.add_argument("--every", type=float, default=1.0, help="seconds between two sweeps (default: 1)")
    watch.add_argument(
        "--kill-local",
        action="store_true",
        help=f"also kill (SIGKILL) each process of this machine holding {sockets.KILL_AT} or more sockets that never "
        "logged in from 127.0.0.1/::1 (Linux; only when the server runs on this machine; the hub does it itself)",
    )
    _hub_parser(commands)
    return parser


def _hub_parser(commands: Any) -> None:
    hub = commands.add_parser(
        "hub",
        help="run the class's JupyterHub: each learner's server gets their own ACL user; the instructor an observer",
        description="Run JupyterHub for the class on this machine. A learner logs in with any name and the "
        "class's shared password; at each start of their server the hub makes or rotates their ACL user "
        "(<prefix><name>) and copies the dives (without outputs) into ~/emq-lab once. The instructor logs in "
        "as --instructor (a hub admin) and finds the instructor's page, read through a read-only observer "
        "user. Deleting a user in the hub's admin page deletes their ACL user. The passwords come from files "
        "or the environment, never the command line. A jupyterhub_config.py in this folder is read after.",
    )
    hub.add_argument("--url", required=True, help=URL_HELP)
    hub.add_argument("--password-file", help=f"a file whose first line is the admin password (else ${PASSWORD_ENV})")
    hub.add_argument("--instructor", required=True, help="the instructor's hub name (a hub admin)")
    hub.add_argument(
        "--learner-password-file",
        help=f"the password every learner logs in with, 8+ characters (else ${HUB_LEARNER_ENV})",
    )
    hub.add_argument(
        "--instructor-password-file",
        help=f"the instructor's hub password, 32+ characters (else ${HUB_INSTRUCTOR_ENV})",
    )
    for flag, default, says in (
        ("--prefix", "learner-", "the learners' ACL users: <prefix><hub name> (default: learner-)"),
        ("--ip", "127.0.0.1", "where learners reach the hub (default: 127.0.0.1; a class: 0.0.0.0)"),
        ("--port", 8000, "the hub's port (default: 8000)"),
        ("--hub-port", 8081, "the hub's API, on 127.0.0.1 (default: 8081)"),
        ("--proxy-api-port", 8001, "the proxy's API, on 127.0.0.1 (default: 8001)"),
        ("--state", "emq-hub", "the hub's database, cookie secret and homes (default: ./emq-hub)"),
    ):
        hub.add_argument(flag, type=type(default), default=default, help=says)
    hub.add_argument(
        "--spawner",
        choices=("simple", "local"),
        default="simple",
        help="simple: every server runs as this Unix user, homes under STATE/homes (a workshop on a machine "
        "you trust the class with: a learner's code can read the others' files and processes); local: one "
        "Unix user per learner (they must exist; run the hub as root)",
    )


def admin_url(url: str, password_file: str | None) -> str:
    """``url`` with the admin password from ``password_file`` or ``$EMQ_LAB_ADMIN_PASSWORD`` (warned if in the URL)."""
    password = read_secret(password_file, PASSWORD_ENV, what="admin password")
    parts = urlsplit(url)
    if parts.password or "password" in dict(parse_qsl(parts.query)):
        print(
            "warning: the password in --url shows in ps and your shell's history; put it in a file "
            f"(--password-file) or ${PASSWORD_ENV}" + ("; the file's is used" if password else ""),
            file=sys.stderr,
        )
    return with_password(url, password) if password else url


def _login(path: str | None, env: str, what: str, option: str = "") -> str:
    """The secret from the file ``path`` or ``$env`` (``option``: the file's, by default named after ``what``)."""
    secret = read_secret(path, env, what=what)
    if secret is None:
        raise ValueError(f"{what}: give {option or '--' + what.replace(' ', '-') + '-file'} or set ${env}")
    return secret


def class_hub(settings: HubSettings) -> Any:
    """JupyterHub that, having read its users at start, deletes the ACL users of those gone (:func:`hub.reconcile`)."""
    from jupyterhub import orm
    from jupyterhub.app import JupyterHub

    from .hub import reconcile

    class ClassHub(JupyterHub):
        async def init_users(self) -> None:
            await super().init_users()
            names = [user.name for user in self.db.query(orm.User)]
            tidy, _ = open_client(settings.admin_url)
            with tidy:
                gone = reconcile(tidy, settings.prefix, names)
            if gone:
                self.log.info("emq-lab: deleted the ACL users of hub users gone: %s", " ".join(gone))

    return ClassHub


def run_hub(args: argparse.Namespace) -> int:
    """Check the class server, load the scripts, then run JupyterHub in this process until stopped."""
    try:
        import jupyterhub.app  # noqa: F401 - only to say what is missing
        from traitlets.config import Config
    except ImportError:
        raise ValueError("hub: JupyterHub is not installed; make hub installs it (pip install -e '.[hub]')") from None

    from . import hub

    password = _login(args.password_file, PASSWORD_ENV, "admin password", "--password-file")
    os.environ.pop(PASSWORD_ENV, None)  # read: the proxy and anything else the hub starts never inherit it
    parts = urlsplit(args.url)
    user = f"{parts.username}@" if parts.username else ""
    server = urlunsplit(parts._replace(netloc=user + parts.netloc.rpartition("@")[2]))
    if parts.password:
        warning = f"warning: the password in --url is ignored; the hub reads ${PASSWORD_ENV} or --password-file"
        print(warning, file=sys.stderr)
    settings = HubSettings(server, password, prefix=args.prefix)
    settings.observer_name(args.instructor)  # a name an ACL user may have, apart from the learners'
    learners = _login(args.learner_password_file, HUB_LEARNER_ENV, "learner password")
    instructor = _login(args.instructor_password_file, HUB_INSTRUCTOR_ENV, "instructor password")
    client, _ = open_client(settings.admin_url)
    with client:
        refuse_open_default(client)
        shas = load_scripts(client)
    # For a jupyterhub_config.py next to it (read after ours) that calls hub.settings_from_env():
    # the server and prefix, and the password's file (never the password itself).
    os.environ.update({hub.SERVER_ENV: server, hub.PREFIX_ENV: args.prefix})
    if args.password_file:
        os.environ[hub.PASSWORD_FILE_ENV] = str(Path(args.password_file).expanduser().resolve())
    state = Path(args.state).resolve()
    (state / "homes").mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o700)
    config = Config()
    hub.configure(config, settings, spawner=args.spawner, homes=str(state / "homes"))
    config.JupyterHub.bind_url = f"http://{args.ip}:{args.port}"
    config.JupyterHub.hub_bind_url = f"http://127.0.0.1:{args.hub_port}"
    config.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{args.proxy_api_port}"
    config.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
    config.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
    config.JupyterHub.cookie_secret_file = str(state / "cookie_secret")
    config.Authenticator.admin_users = {args.instructor}
    config.Authenticator.allow_all = True  # any name, with the class's password
    config.SharedPasswordAuthenticator.user_password = learners
    config.SharedPasswordAuthenticator.admin_password = instructor
    print(f"{len(shas)} scripts loaded on {errors.redact(server)}; the hub: http://{args.ip}:{args.port}/", flush=True)
    # The class guard sweeps beside the hub; on a class server on this machine it also kills (the
    # learners' servers run here, so a loopback address is theirs).
    watcher, _ = open_client(settings.admin_url)
    stop = threading.Event()
    options = {"prefix": args.prefix, "kill_local": on_this_machine(server), "report": _say}
    threading.Thread(target=guard.watch, args=(watcher, stop), kwargs=options, daemon=True).start()
    try:
        ClassHub = class_hub(settings)
        ClassHub.instance(config=config)
        ClassHub.launch_instance([])
    finally:
        stop.set()
    return 0


def on_this_machine(url: str) -> bool:
    """Whether the server of ``url`` is on this machine: its host a loopback address (or ``localhost``)."""
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or sockets.loopback(host)


def _say(line: str) -> None:
    """Print a guard's line that kills a process on the hub's stderr too (all are on the instructor's page)."""
    if " killed process " in line:
        print(f"emq-lab guard: {line}", file=sys.stderr, flush=True)


#: Overview passes the CLI takes at most to walk the search whole (the page takes one a refresh).
CLI_PASSES = 100


def walked_overview(client: Any, *, prefix: str) -> Overview:
    """The overview once the search walked the whole server (or :data:`CLI_PASSES` passes), as the page shows it."""
    search = Search()
    for _ in range(CLI_PASSES):
        view = overview(client, prefix=prefix, search=search)
        if view.complete:
            break
    return view


def _run(args: argparse.Namespace, client: Any) -> int:
    """One command but hub, on the admin's ``client``; its exit status."""
    if args.command == "doctor":
        failed = False
        for title, rows in doctor(client, learners=args.learners):
            print("\n".join(([title] if title else []) + table(rows)))
            failed = failed or any(row.verdict == "FIX" for row in rows)
        return 1 if failed else 0
    if args.command == "users":
        learners = create_users(client, learners=args.learners, prefix=args.prefix)
        loaded = len(load_scripts(client))
        print(f"# {len(learners)} learner(s), {loaded} scripts loaded. Each learner pastes their line")
        print("# into a shell, then runs make lab. These passwords are printed only here.")
        print("\n".join(apply_limits(client, learners=len(learners))))
        print("\n".join(learner.env(args.url) for learner in learners))
    elif args.command == "scripts":
        print(f"loaded {len(load_scripts(client))} scripts")
    elif args.command == "guard":
        if not 0.1 <= args.every <= 60:
            raise ValueError(f"every: expected 0.1 to 60 seconds between sweeps, got {args.every}")
        print(f"guarding the learners {args.prefix}... every {args.every:g} s; Ctrl-C stops", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            guard.watch(
                client, threading.Event(), every_s=args.every, prefix=args.prefix, report=print,
                kill_local=args.kill_local,
            )  # fmt: skip
    elif args.command in ("reconcile", "revoke"):
        if args.command == "reconcile":
            from .hub import hub_users, reconcile

            removed = reconcile(client, args.prefix, hub_users(args.hub_db))
        else:
            removed = revoke_users(client, prefix=args.prefix)
        print(f"removed {len(removed)} user(s)" + (f": {' '.join(removed)}" if removed else ""))
    else:
        print(walked_overview(client, prefix=args.prefix).readout)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "hub":
            return run_hub(args)
        client, _ = open_client(admin_url(args.url, args.password_file))
        with client:
            return _run(args, client)
    except (ValueError, RedisError, BackendUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
