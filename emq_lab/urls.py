"""What a URL may say, checked before any connection (each fault a ValueError saying what to write instead), and
how an error shows one (:func:`redact`: never its password); no client opened (:func:`refuse_plain` only PINGs)."""

from __future__ import annotations

import re
import socket
from urllib.parse import SplitResult, parse_qsl, unquote_plus, urlsplit, urlunsplit

from .validate import shorten

#: Query options whose values an error may show; every other value is shown as ``***`` (a
#: password may hide behind any name: ``%70assword``, a misspelt ``pasword``).
SHOWN_PARAMS = frozenset(
    ("db", "username", "protocol", "client_name", "ssl_cert_reqs", "ssl_check_hostname", "ssl_min_version",
     "socket_timeout", "socket_connect_timeout", "retry_on_timeout", "health_check_interval", "timeout")
)  # fmt: skip
MAX_SHOWN = 200  # characters of a URL an error shows
SHOWN_PART = 40  # characters of a query option or a database an error shows


def redact(url: str) -> str:
    """``url`` on one line, parsable or not, every password ``***`` (user-info, query values not in SHOWN_PARAMS)."""
    text = str(url)
    scheme, sep, rest = text.partition("://")
    if sep and "@" in rest:
        userinfo, _, host = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        text = f"{scheme}://{user}:***@{host}" if colon else text
    head, question, query = text.partition("?")
    if question:
        parts = []
        for part in re.split(r"([&;])", query):
            name, eq, _ = part.partition("=")
            parts.append(f"{name}=***" if eq and unquote_plus(name).strip().lower() not in SHOWN_PARAMS else part)
        text = f"{head}?{''.join(parts)}"
    return shorten(text, MAX_SHOWN)


MAX_DB = 2**31 - 1  # the largest database number a server reads (SELECT refuses more)
MAX_HOST = 253  # characters of a DNS name (labels of at most 63)
#: Query options that would undo the timeouts every client here has (redis-py's URL options win
#: over its keyword arguments); ``connect(url, timeout_s=...)`` sets them instead.
TIMEOUT_OPTIONS = ("socket_timeout", "socket_connect_timeout", "retry_on_timeout", "health_check_interval")
#: The query options a URL may set (redis-py would pass any other name to the client as a keyword: a TypeError).
URL_OPTIONS = (
    "db", "username", "password", "client_name",
    "ssl_cert_reqs", "ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile", "ssl_check_hostname",
)  # fmt: skip


def parse(target: str, *, timeout_s: float) -> tuple[SplitResult, str, bool]:
    """The URL's parts, the scheme redis-py knows and cluster or not, once checked (``timeout_s``: for the messages)."""
    shown = redact(target)
    try:
        parts = urlsplit(target)
        port = parts.port
    except ValueError as exc:
        # never the parser's own words: they quote the text by the port, where a password holding / # ? ends up
        why = "its IPv6 address has no closing ]" if "IPv6" in str(exc) else "its port is not a number from 0 to 65535"
        raise ValueError(
            f"url: {shown} is not a valid URL ({why}); write redis://host:port/0, and percent-encode "
            "a password holding / # ? or @ (%2F %23 %3F %40)"
        ) from None
    scheme = parts.scheme.lower()
    cluster = scheme.endswith("+cluster")
    base = scheme.removesuffix("+cluster")
    if base not in ("redis", "rediss", "valkey", "valkeys"):
        raise ValueError(
            f"url: {shown} has scheme {parts.scheme!r}; use redis://, rediss://, valkey://, "
            "valkeys://, a +cluster variant of these, valkey+local:// (a private server), "
            "or leave it empty for the embedded backend"
        )
    if not parts.hostname:
        raise ValueError(f"url: {shown} names no host; write {base}://127.0.0.1:{port or 6379}/0")
    host = parts.hostname
    if len(host) > MAX_HOST or any(len(label) > 63 for label in host.split(".")):
        raise ValueError(
            f"url: its host name is {len(host)} characters long; a host name has at most {MAX_HOST} "
            "(and at most 63 between dots): check the URL"
        )
    path = parts.path.strip("/")
    if path and not path.isdigit():
        raise ValueError(f"url: {shown} ends in /{path}, which is not a database number; write /0 (or another integer)")
    pairs = parse_qsl(parts.query, keep_blank_values=True)  # names percent-decoded, as redis-py reads them
    options = dict(pairs)
    for option, _ in pairs:
        if option not in URL_OPTIONS and option not in TIMEOUT_OPTIONS:
            raise ValueError(
                f"url: its query sets '{shorten(option, SHOWN_PART)}', which is not an option emq-lab takes; "
                f"the options are {', '.join(URL_OPTIONS)}"
            )
    if len(options) < len(pairs):
        raise ValueError(f"url: {shown} sets an option twice; set each once")
    for option in TIMEOUT_OPTIONS:
        if option in options:
            raise ValueError(
                f"url: {shown} sets {option}, which emq-lab does not take from a URL (every call waits at "
                f"most timeout_s, {timeout_s:g} s by default); drop it and pass connect(url, timeout_s=...) "
                "(up to 300 s)"
            )
    db = options.get("db")
    if db is not None and not db.isdigit():
        raise ValueError(f"url: {shown} has ?db={db}, which is not a database number; write /0 in the path instead")
    if db is not None and path and int(db) != int(path):
        raise ValueError(f"url: {shown} names database /{path} and ?db={db}; keep one of them (the path: /{db})")
    chosen = path or db
    if chosen and int(chosen) > MAX_DB:
        raise ValueError(
            f"url: {shown} names database {shorten(chosen, SHOWN_PART)}; a server numbers its databases from 0 "
            "(16 of them by default, 0 to 15): write /0"
        )
    tls = [option for option in options if option.startswith("ssl_")]
    if tls and base not in ("rediss", "valkeys"):
        raise ValueError(
            f"url: {shown} sets {', '.join(tls)}, which only a TLS URL takes; use {base}s:// for TLS, or drop "
            f"the option{'s' if len(tls) > 1 else ''}"
        )
    if cluster and chosen and int(chosen) != 0:
        raise ValueError(
            f"url: {shown} asks for database {chosen}, but a cluster has only database 0; drop the /{chosen}"
        )
    return parts, "rediss" if base in ("rediss", "valkeys") else "redis", cluster


def refuse_plain(parts: SplitResult, shown: str, timeout_s: float) -> None:
    """A ValueError if the server a TLS URL names answers a plain PING (a TLS client would wait out its timeout)."""
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(b"PING\r\n")
            reply = sock.recv(1)
    except OSError:
        return  # unreachable, or not talking: the real connection says which
    if reply in (b"+", b"-"):
        scheme = parts.scheme.lower().replace("rediss", "redis").replace("valkeys", "valkey")
        plain = urlunsplit(parts._replace(scheme=scheme))
        raise ValueError(
            f"url: {shown} asks for TLS, but the server at {host}:{port} speaks plain text; use {redact(plain)}"
        )
