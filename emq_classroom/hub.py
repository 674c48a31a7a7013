"""The class on one JupyterHub: learners log in and find the dives in their own server, with their
own ACL user; the instructor (a hub admin) finds the instructor's page, read through an observer.

What it trusts: the hub's process alone holds the admin password (from a file or the environment,
never the command line). At each spawn it makes or rotates the learner's ACL user and passes only
that learner's URL and namespace to its server (an admin's gets a read-only observer's); deleting a
hub user deletes their ACL user. Each process of a learner's server may hold at most
:data:`OPEN_FILES` open files (:func:`limited`), so one cannot fill ``maxclients`` with sockets.

``python -m emq_classroom hub`` runs it; a ``jupyterhub_config.py`` of your own calls
:func:`configure` with :func:`settings_from_env`. JupyterHub is imported only inside :func:`configure`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from emq_lab import copies, errors, validate
from emq_lab.backend import open_client

from .users import acl_users, make_learner, make_observer, on_every_node, revoke_learner

SERVER_ENV = "EMQ_LAB_HUB_SERVER"  # the class server, with the admin user and no password
PASSWORD_ENV = "EMQ_LAB_ADMIN_PASSWORD"
PASSWORD_FILE_ENV = "EMQ_LAB_ADMIN_PASSWORD_FILE"
PREFIX_ENV = "EMQ_LAB_HUB_PREFIX"
NOTEBOOKS_ENV = "EMQ_LAB_HUB_NOTEBOOKS"
LEARNER_NOTEBOOKS = ("00-start.ipynb", "01-upsert.ipynb", "02-cadence.ipynb", "03-cancel.ipynb")
INSTRUCTOR_NOTEBOOKS = ("instructor.ipynb",)
OBSERVER_PREFIX = "observer-"  # and the admin's hub name: the instructor's read-only ACL user
FOLDER = "emq-lab"  # in each user's home: their copies, and where their server opens
#: Open files (sockets among them) each process of a learner's server may hold, soft and hard limit: a
#: kernel holds 84 (tests/test_hub.py), and 256 is a quarter of ``maxclients`` for 30 learners.
OPEN_FILES = 256


@dataclass(frozen=True)
class HubSettings:
    """The class server (the admin user, no password), its admin password, the learners' prefix, the dives."""

    server_url: str
    admin_password: str = field(repr=False)
    prefix: str = "learner-"
    notebooks: Path = Path(__file__).resolve().parents[1] / "notebooks"

    def __post_init__(self) -> None:
        validate.namespace(self.prefix)
        if urlsplit(self.server_url).password:
            raise ValueError(
                f"server_url: {errors.redact(self.server_url)} holds a password; give it from a file "
                f"(--password-file, ${PASSWORD_FILE_ENV}) or ${PASSWORD_ENV} instead"
            )

    @property
    def admin_url(self) -> str:
        """The server URL with the admin password in it: only ever inside the hub's process."""
        return with_password(self.server_url, self.admin_password)

    def acl_name(self, hub_name: str) -> str:
        """The ACL user and namespace of the hub user ``hub_name``."""
        try:
            return validate.namespace(self.prefix + hub_name)
        except ValueError as exc:
            raise ValueError(f"hub user {hub_name!r}: no ACL user can be named after it ({exc})") from None

    def observer_name(self, hub_name: str) -> str:
        """The read-only observer of the admin ``hub_name``: ``observer-<name>``, never a learner's name."""
        name = validate.namespace(OBSERVER_PREFIX + hub_name)
        if name.startswith(self.prefix):
            raise ValueError(f"prefix: {self.prefix!r} would list the observers as learners")
        return name


def with_password(url: str, password: str) -> str:
    """``url`` with ``password`` as its password (percent-encoded), its user kept."""
    parts = urlsplit(url)
    user = quote(unquote(parts.username or ""), safe="")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}"))


def read_secret(path: str | None, env: str, *, what: str) -> str | None:
    """The first line of the file ``path``, else ``$env``, else None (ValueError naming ``what``: an empty file)."""
    if path:
        try:
            text = Path(path).expanduser().read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ValueError(f"{what}: cannot read {path}: {exc.strerror}") from None
        secret = text[0].strip() if text else ""
        if not secret:
            raise ValueError(f"{what}: {path} is empty")
        return secret
    value = os.environ.get(env, "").strip()
    return value or None


def settings_from_env() -> HubSettings:
    """The settings from ``$EMQ_LAB_HUB_SERVER``, the admin password's variables, its prefix's and notebooks'."""
    server = os.environ.get(SERVER_ENV, "").strip()
    if not server:
        raise ValueError(f"{SERVER_ENV}: the class server's URL with its admin user, e.g. redis://admin@HOST:6379/0")
    password = read_secret(os.environ.get(PASSWORD_FILE_ENV), PASSWORD_ENV, what="admin password")
    if password is None:
        raise ValueError(f"admin password: set {PASSWORD_FILE_ENV} (a file) or {PASSWORD_ENV}")
    notebooks = os.environ.get(NOTEBOOKS_ENV)
    extra = {"notebooks": Path(notebooks)} if notebooks else {}
    return HubSettings(server, password, prefix=os.environ.get(PREFIX_ENV, "learner-"), **extra)


def copy_notebooks(
    source: Path, names: tuple[str, ...], folder: Path, *, owner: tuple[int, int] | None = None
) -> list[Path]:
    """The files written: the notebooks ``names`` copied without outputs, each only if ``folder`` has none yet."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        target = folder / name
        if target.exists():
            continue
        copies.strip_file(source / name, target)
        written.append(target)
    # No "get notified about Jupyter news?" toast over the first notebook (a class may be offline).
    config = folder.parent / ".jupyter" / "labconfig" / "page_config.json"
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        written.append(config)
    if owner is not None:
        for path in [folder, config.parent.parent, config.parent, *written]:
            os.chown(path, *owner)
    return written


def home_of(spawner: Any) -> tuple[Path, tuple[int, int] | None]:
    """The spawner's user's home and, when the server runs as another Unix user, its uid and gid."""
    if getattr(spawner, "home_dir", ""):  # SimpleLocalProcessSpawner: everyone runs as the hub's user
        return Path(spawner.home_dir), None
    import pwd

    entry = pwd.getpwnam(spawner.user.name)  # LocalProcessSpawner: a Unix user per learner
    return Path(entry.pw_dir), (entry.pw_uid, entry.pw_gid)


def prepare_spawn(settings: HubSettings, spawner: Any, *, copy: bool = True) -> dict[str, str]:
    """The variables the user's server gets, its ACL user (an admin's: the observer) made and notebooks copied."""
    hub_name, admin = spawner.user.name, bool(spawner.user.admin)
    client, _ = open_client(settings.admin_url)
    with client:
        if admin:
            observer = make_observer(client, settings.observer_name(hub_name))
            env = {"EMQ_LAB_URL": observer.url(settings.server_url), "EMQ_LAB_CLASS_PREFIX": settings.prefix}
        else:
            learner = make_learner(client, settings.acl_name(hub_name))
            env = {"EMQ_LAB_URL": learner.url(settings.server_url), "EMQ_LAB_NAMESPACE": learner.namespace}
    if not copy:
        return env
    home, owner = home_of(spawner)
    copy_notebooks(settings.notebooks, INSTRUCTOR_NOTEBOOKS if admin else LEARNER_NOTEBOOKS, home / FOLDER, owner=owner)
    return env


def pre_spawn_hook(settings: HubSettings, *, copy: bool = True) -> Callable[[Any], Any]:
    """A ``Spawner.pre_spawn_hook``: :func:`prepare_spawn` off the hub's event loop, then the server's settings."""

    async def hook(spawner: Any) -> None:
        prepare = functools.partial(prepare_spawn, settings, spawner, copy=copy)
        env = await asyncio.get_running_loop().run_in_executor(None, prepare)
        spawner.environment = {**spawner.environment, **env}  # a new dict: the config's is shared
        spawner.notebook_dir = f"~/{FOLDER}"
        admin = bool(spawner.user.admin)
        spawner.default_url = "/voila/render/instructor.ipynb" if admin else "/lab/tree/00-start.ipynb"

    return hook


def _names(settings: HubSettings, hub_name: str) -> list[str]:
    """The ACL users the hub may have made for ``hub_name``: its learner's and its observer's."""
    names = []
    for name in (settings.prefix + hub_name, OBSERVER_PREFIX + hub_name):
        with contextlib.suppress(ValueError):  # no ACL user can have that name: the hub never made one
            names.append(validate.namespace(name))
    return names


def strays(acl: list[str], prefix: str, hub_names: list[str]) -> list[str]:
    """The ACL users a hub made (``<prefix><name>``, ``observer-<name>``) whose hub user is gone."""
    wanted = {made for name in hub_names for made in (prefix + name, OBSERVER_PREFIX + name)}
    return sorted(user for user in acl if user.startswith((prefix, OBSERVER_PREFIX)) and user not in wanted)


def reconcile(client: Any, prefix: str, hub_names: list[str]) -> list[str]:
    """The ACL users of hub users gone (:func:`strays`: while the hub was down, or at its start), deleted."""
    validate.namespace(prefix)
    gone = strays(acl_users(client), prefix, hub_names)
    if gone:
        on_every_node(client, "ACL", "DELUSER", *gone)
    return gone


def hub_users(db_url: str) -> list[str]:
    """The names of the users in a JupyterHub's database (``sqlite:///emq-hub/jupyterhub.sqlite``)."""
    from sqlalchemy import create_engine, text  # JupyterHub's own dependency
    from sqlalchemy.exc import SQLAlchemyError

    try:
        engine = create_engine(db_url)
    except (SQLAlchemyError, ValueError) as exc:
        raise ValueError(f"hub-db: {db_url!r} is no database URL ({exc})") from None
    try:
        with engine.connect() as connection:
            return [str(row[0]) for row in connection.execute(text("SELECT name FROM users"))]
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        raise ValueError(f"hub-db: cannot read the hub's users from {db_url} ({reason}); nothing deleted") from None
    finally:
        engine.dispose()


def revoking(base: type[Any], settings: HubSettings) -> type:
    """``base`` (an Authenticator) whose ``delete_user`` also deletes the user's ACL user and observer."""

    def delete_user(self: Any, user: Any) -> Any:
        result = base.delete_user(self, user)
        client, _ = open_client(settings.admin_url)
        with client:
            for name in _names(settings, user.name):
                if revoke_learner(client, name):
                    self.log.info("emq-lab: deleted the ACL user %s of %s", name, user.name)
        return result

    return type(f"Class{base.__name__}", (base,), {"delete_user": delete_user, "__module__": __name__})


def limit_open_files(limit: int = OPEN_FILES) -> Callable[[], None]:
    """A ``preexec_fn`` setting the soft and hard ``RLIMIT_NOFILE`` to ``limit`` (at most the hard limit it has)."""
    validate.integer(limit, "open_files", 64, unit=" (a kernel alone holds about 70)")
    import resource  # here, not in the child: no import between fork and exec

    def preexec() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        most = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))

    return preexec


def limited(base: type[Any], open_files: int = OPEN_FILES) -> type:
    """``base`` (a ``LocalProcessSpawner``) whose servers' processes hold at most ``open_files`` open files."""
    limit = limit_open_files(open_files)

    def make_preexec_fn(self: Any, name: str) -> Callable[[], None]:
        prepare = base.make_preexec_fn(self, name)

        def preexec() -> None:
            limit()  # first: a process of root may still lower its hard limit; then base's setuid
            prepare()

        return preexec

    return type(f"Limited{base.__name__}", (base,), {"make_preexec_fn": make_preexec_fn, "__module__": __name__})


def configure(
    c: Any, settings: HubSettings, *, spawner: str = "simple", homes: str = "", open_files: int = OPEN_FILES
) -> None:
    """Set a JupyterHub config ``c`` for the class: the revoking authenticator, the pre-spawn hook and the
    spawner (``simple``: all as the hub's Unix user; ``local``: one per learner; ``kube``: the chart's)."""
    from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
    from jupyterhub.spawner import LocalProcessSpawner, SimpleLocalProcessSpawner

    kinds: dict[str, type[Any]] = {"simple": SimpleLocalProcessSpawner, "local": LocalProcessSpawner}
    if spawner not in (*kinds, "kube"):
        raise ValueError(f"spawner: expected 'simple', 'local' or 'kube', got {spawner!r}")
    spawner_class = limited(kinds[spawner], open_files) if spawner in kinds else None
    c.JupyterHub.authenticator_class = revoking(SharedPasswordAuthenticator, settings)
    c.Spawner.pre_spawn_hook = pre_spawn_hook(settings, copy=spawner != "kube")
    # The instructor's page in Voila with emq-lab's template (no CDN), as make present shows it.
    c.Spawner.args = ["--VoilaConfiguration.template=emq"]
    c.Spawner.http_timeout = 180  # a busy machine starts JupyterLab slowly
    c.Spawner.start_timeout = 180
    if spawner == "kube":
        return
    c.JupyterHub.spawner_class = spawner_class
    if spawner == "simple" and homes:
        c.SimpleLocalProcessSpawner.home_dir_template = str(Path(homes) / "{username}")
    if spawner == "simple" and os.getuid() == 0:
        c.Spawner.args = [*c.Spawner.args, "--allow-root"]
    c.Spawner.cmd = [str(Path(sys.executable).with_name("jupyterhub-singleuser"))]
    proxy = Path(sys.prefix) / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
    if proxy.exists():  # make hub installs it into the venv; else the one on PATH
        c.ConfigurableHTTPProxy.command = [str(proxy)]
