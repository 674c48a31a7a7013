"""Input checks that run before any write; each error names the field and the value. And how any
message or view shows a value or a text: :func:`printable`, :func:`shorten`, :func:`shown`."""

from __future__ import annotations

FORBIDDEN = frozenset("{}*?[]")
MAX_NAME = 200
MAX_EVERY_MS = 10 * 365 * 24 * 3600 * 1000  # ten years of 365 days
MAX_TEMPLATE_BYTES = 64 * 1024
#: The integers the protocol carries (Valkey's counts, integer scores, the scripts' ARGV): a larger
#: int is refused before anything is sent (one of more than 4,300 digits crashes hiredis's packer).
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)


def printable(text: str, keep: str = "") -> str:
    """``text`` with every character that is not printable (but those in ``keep``) escaped: ``\\n``,
    ``\\x1b``, ``\\u202e``; a name or a script's text cannot forge a line or send a terminal escape."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else repr(ch)[1:-1] for ch in text)


def shorten(text: str, most: int) -> str:
    """``text`` :func:`printable` and at most ``most`` characters, a cut one ending in ``…``."""
    head = printable(text[:most])  # a long text is escaped only as far as it is shown
    return head if len(text) <= most and len(head) <= most else head[: most - 1] + "…"


def shown(value: object, most: int = 60) -> str:
    """``value`` as an error message shows it: its repr, :func:`shorten` (a huge int by its size)."""
    if isinstance(value, int) and not MIN_INT64 <= value <= MAX_INT64:
        return f"an int of {value.bit_length()} bits"  # repr() of a huge int is slow, or refused past 4,300 digits
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is named by its type
        text = f"<{type(value).__name__}>"
    return shorten(text, most)


def name(value: object, *, field: str = "name") -> str:
    """A queue or registration name: non-empty str, <= 200 chars, none of ``{}*?[]``."""
    if not isinstance(value, str):
        raise ValueError(f"{field}: expected a str, got {type(value).__name__} {shown(value)}")
    if not value:
        raise ValueError(f"{field}: must not be empty")
    if len(value) > MAX_NAME:
        raise ValueError(f"{field}: at most {MAX_NAME} characters, got {len(value)}")
    if bad := sorted(FORBIDDEN.intersection(value)):
        raise ValueError(
            f"{field}: {shown(value)} contains {' '.join(bad)}; "
            "none of { } * ? [ ] is allowed (they break the hash tag or a key pattern)"
        )
    _utf8(value, field)
    return value


def _utf8(value: str, field: str) -> bytes:  # a lone surrogate cannot be sent
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{field}: {shown(value)} cannot be encoded as UTF-8") from None


def switch(value: object, field: str) -> bool:
    """True or False itself (not 1, not "yes"); a ValueError naming ``field`` for anything else."""
    if not isinstance(value, bool):
        raise ValueError(f"{field}: expected True or False, got {shown(value)}")
    return value


def integer(value: object, field: str, low: int, high: int | None = None, *, unit: str = "") -> int:
    """An int (not a bool) from ``low`` to ``high`` (None: as high as the protocol carries, 2**63 - 1),
    in ``unit`` (" ms", say); a ValueError naming ``field`` for anything else. An IntEnum member
    (a named period) comes back as its plain int, as the scripts expect."""
    top = MAX_INT64 if high is None else high
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
        huge = isinstance(value, int) and not MIN_INT64 <= value <= MAX_INT64  # a bool is within
        if isinstance(value, int) and value > MAX_INT64 and high is None:
            raise ValueError(f"{field}: {shown(value)} is outside a signed 64-bit integer, the most a server takes")
        within = f">= {low:,}" if high is None else f"from {low:,} to {high:,}"
        got = shown(value) if huge else f"{type(value).__name__} {shown(value)}"
        raise ValueError(f"{field}: expected an int {within}{unit}, got {got}")
    return int(value)


def every_ms(value: object) -> int:
    """The period: an int (not bool) from 1 ms to ten years."""
    return integer(value, "every_ms", 1, MAX_EVERY_MS, unit=" ms")


def first_in_ms(value: object) -> int:
    """Delay of the first run: an int (not bool) >= 0, at most ten years."""
    return integer(value, "first_in_ms", 0, MAX_EVERY_MS, unit=" ms")


def template(value: object) -> str:
    """The payload template: a str of at most 64 KiB in UTF-8."""
    if not isinstance(value, str):
        raise ValueError(f"template: expected a str, got {type(value).__name__} {shown(value)}")
    if (size := len(_utf8(value, "template"))) > MAX_TEMPLATE_BYTES:
        raise ValueError(f"template: at most {MAX_TEMPLATE_BYTES} bytes in UTF-8, got {size}")
    return value


def registration(name_: object, every: object, template_: object) -> tuple[str, int, str]:
    """A registration's name, period and template, each checked as ``register`` checks it."""
    return name(name_), every_ms(every), template(template_)


def limit(value: object, *, field: str = "limit") -> int:
    """A batch or page size: an int >= 1 the protocol can carry (at most 2**63 - 1)."""
    return integer(value, field, 1)


NAMESPACE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
MAX_NAMESPACE = 64


def namespace(value: object) -> str:
    """A classroom namespace: 1 to 64 of the letters, digits and ``_ . -`` (no ``:``, so the
    namespace and the queue in ``{ns:q}`` can never be read two ways)."""
    if not isinstance(value, str):
        raise ValueError(f"namespace: expected a str, got {type(value).__name__} {shown(value)}")
    if not value or len(value) > MAX_NAMESPACE:
        raise ValueError(f"namespace: must be 1 to {MAX_NAMESPACE} characters, got {len(value)}")
    if bad := sorted(set(value) - NAMESPACE_CHARS):
        raise ValueError(
            f"namespace: {shown(value)} contains {' '.join(map(repr, bad))}; use letters, digits, '_', '.' and '-' only"
        )
    return value
