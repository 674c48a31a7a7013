"""Valkey's cjson, bit and ``redis.sha1hex`` for the sandbox's Lua, in Python, each error in Valkey 9's
words (lua_cjson 2.1.0, LuaBitOp 1.0.2; tests/test_conformance.py measures it): raised as
:class:`LuaArgError` or ``ValueError``, the runner raises it in Lua at the script's line.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, NoReturn

ENCODE_MAX_DEPTH = DECODE_MAX_DEPTH = 1000  # lua_cjson's defaults, as Valkey builds it
SPARSE_RATIO, SPARSE_SAFE = 2, 10


@contextmanager
def _deep() -> Iterator[None]:
    """Room on Python's stack for cjson's 1,000 levels of nesting (a few frames each)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 8000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


class LuaArgError(ValueError):
    """A bad argument, worded as luaL_argerror words it."""


def _tolstring(value: Any) -> Any:
    """A number as Lua makes it a string and cjson writes it (``%.14g``); any other value as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.14g}".encode()
    return value


# cjson escapes the control characters, '"', '\\', '/' and DEL; every other byte goes out as it is.
_ESCAPES = {i: b"\\u%04x" % i for i in (*range(32), 127)}
_ESCAPES.update({8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r", 34: b'\\"', 92: b"\\\\", 47: b"\\/"})


def _string(value: bytes) -> bytes:
    return b'"' + b"".join(_ESCAPES.get(b, bytes((b,))) for b in value) + b'"'


class Json:
    """cjson.encode and cjson.decode over one Lua runtime; ``null`` is the runner's cjson.null."""

    def __init__(self, module: Any, runtime: Any) -> None:
        self._module, self._runtime = module, runtime
        self.null: Any = None

    def encode(self, *args: Any) -> bytes:
        if len(args) != 1:
            raise LuaArgError("bad argument #1 to 'encode' (expected 1 argument)")
        out: list[bytes] = []
        with _deep():
            self._encode(args[0], 0, out)
        return b"".join(out)

    def _kind(self, value: Any) -> str:
        if value is None:
            return "nil"
        if isinstance(value, bool):
            return "boolean"
        if isinstance(value, (int, float)):
            return "number"
        if isinstance(value, bytes):
            return "string"
        if type(value).__name__ == "_LuaCoroutineFunction":  # how lupa hands over a coroutine
            return "thread"
        return str(self._module.lua_type(value))

    def _encode(self, value: Any, depth: int, out: list[bytes]) -> None:
        kind = "nil" if value is self.null else self._kind(value)  # in the browser null is a Python object
        if kind == "string":
            out.append(_string(value))
        elif kind == "number":
            out.append(self._number(value))
        elif kind == "boolean":
            out.append(b"true" if value else b"false")
        elif kind in ("nil", "userdata"):  # the only userdata a script holds is cjson.null
            out.append(b"null")
        elif kind == "table":
            depth += 1
            if depth > ENCODE_MAX_DEPTH:
                raise ValueError(f"Cannot serialise, excessive nesting ({depth})")
            self._table(value, depth, out)
        else:
            raise ValueError(f"Cannot serialise {kind}: type not supported")

    @staticmethod
    def _number(value: float) -> bytes:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("Cannot serialise number: must not be NaN or Inf")
        return _tolstring(value)

    def _table(self, table: Any, depth: int, out: list[bytes]) -> None:
        items = list(table.items())
        length = self._array_length(items)
        if length > 0:
            values = dict(items)
            for index in range(1, length + 1):
                out.append(b"," if index > 1 else b"[")
                self._encode(values.get(index, values.get(float(index))), depth, out)
            out.append(b"]")
            return
        out.append(b"{")
        for number, (key, item) in enumerate(items):
            if number:
                out.append(b",")
            kind = self._kind(key)
            if kind == "string":
                out.append(_string(key))
            elif kind == "number":
                out.append(b'"' + self._number(key) + b'"')
            else:
                raise ValueError(f"Cannot serialise {kind}: table key must be a number or string")
            out.append(b":")
            self._encode(item, depth, out)
        out.append(b"}")

    def _array_length(self, items: list[tuple[Any, Any]]) -> int:
        """cjson's lua_array_length: the largest key of an array, 0 when empty, -1 when not an array."""
        largest = 0
        for key, _ in items:
            if isinstance(key, bool) or not isinstance(key, (int, float)):
                return -1
            if key < 1 or math.floor(key) != key:
                return -1
            largest = max(largest, int(key))
        if largest > len(items) * SPARSE_RATIO and largest > SPARSE_SAFE:
            raise ValueError("Cannot serialise table: excessively sparse array")
        return largest

    def decode(self, *args: Any) -> Any:
        if len(args) != 1:
            raise LuaArgError("bad argument #1 to 'decode' (expected 1 argument)")
        text = _tolstring(args[0])
        if not isinstance(text, bytes):
            raise LuaArgError(f"bad argument #1 to 'decode' (string expected, got {self._kind(text)})")
        if len(text) >= 2 and (not text[0] or not text[1]):
            raise ValueError("JSON parser does not support UTF-16 or UTF-32")
        with _deep():
            return _Parser(text.split(b"\0", 1)[0], self).document()


_TOKEN_NAMES = {"{": "T_OBJ_BEGIN", "}": "T_OBJ_END", "[": "T_ARR_BEGIN", "]": "T_ARR_END",
                ":": "T_COLON", ",": "T_COMMA"}  # fmt: skip
_WORDS = ((b"true", "T_BOOLEAN", True), (b"false", "T_BOOLEAN", False), (b"null", "T_NULL", None))
_NUMBER = re.compile(
    rb"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    rb"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
)
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES = {ord(name): bytes((byte,)) for name, byte in zip('"\\/btnfr', b'"\\/\b\t\n\f\r', strict=True)}


def _strtod(text: bytes) -> float:
    """C's strtod of a number ``_NUMBER`` matched (decimal, hex, inf, nan)."""
    body = text.decode()
    bare = body.lstrip("+-").lower()
    if bare.startswith("0x"):
        return float.fromhex(body)
    if bare.startswith("nan"):
        return math.nan
    return float(body)


class _Token(NamedTuple):
    kind: str
    at: int  # where it starts in the text
    value: Any = None


class _Parser:
    """lua_cjson's decoder, token by token, with its error texts."""

    def __init__(self, data: bytes, codec: Json) -> None:
        self.data, self.at, self.depth, self.codec = data, 0, 0, codec

    def document(self) -> Any:
        value = self.value(self.next())
        token = self.next()
        if token.kind != "T_END":
            self.fail("the end", token)
        return value

    def fail(self, expected: str, token: _Token) -> NoReturn:
        found = token.value if token.kind == "T_ERROR" else token.kind
        raise ValueError(f"Expected {expected} but found {found} at character {token.at + 1}")

    def next(self) -> _Token:
        data = self.data
        while self.at < len(data) and data[self.at] in b" \t\n\r":
            self.at += 1
        start = self.at
        if start >= len(data):
            return _Token("T_END", start)
        char = chr(data[start])
        if char in _TOKEN_NAMES:
            self.at += 1
            return _Token(_TOKEN_NAMES[char], start)
        if char == '"':
            return self.string()
        if char == "-" or char.isdigit():
            return self.number()
        for word, kind, value in _WORDS:
            if data.startswith(word, start):
                self.at += len(word)
                return _Token(kind, start, value)
        if char == "+" or data[start : start + 3].lower() in (b"inf", b"nan"):  # not JSON, yet cjson reads them
            return self.number()
        return _Token("T_ERROR", start, "invalid token")

    def number(self) -> _Token:
        start = end = self.at
        while end < len(self.data) and (
            chr(self.data[end]) in "0123456789-+." or "a" <= chr(self.data[end] | 0x20) <= "y"
        ):
            end += 1
        found = _NUMBER.match(self.data[start:end])
        if found is None:
            return _Token("T_ERROR", start, "invalid number")
        self.at = start + found.end()
        return _Token("T_NUMBER", start, _strtod(found.group()))

    def string(self) -> _Token:
        data, start = self.data, self.at
        self.at += 1
        out = bytearray()
        while True:
            if self.at >= len(data):
                return _Token("T_ERROR", self.at, "unexpected end of string")
            char = data[self.at]
            if char == ord('"'):
                self.at += 1
                return _Token("T_STRING", start, bytes(out))
            if char != ord("\\"):
                out.append(char)
                self.at += 1
                continue
            escape = data[self.at + 1] if self.at + 1 < len(data) else 0
            if escape == ord("u"):
                decoded = self.unicode()
                if decoded is None:
                    return _Token("T_ERROR", self.at, "invalid unicode escape code")
                out += decoded
                continue
            if escape not in _SIMPLE_ESCAPES:
                return _Token("T_ERROR", self.at, "invalid escape code")
            out += _SIMPLE_ESCAPES[escape]
            self.at += 2

    def unicode(self) -> bytes | None:
        data, at = self.data, self.at
        if not _HEX4.match(data, at + 2):
            return None
        code, length = int(data[at + 2 : at + 6], 16), 6
        if code & 0xF800 == 0xD800:
            if code & 0x400 or data[at + 6 : at + 8] != b"\\u" or not _HEX4.match(data, at + 8):
                return None
            low = int(data[at + 8 : at + 12], 16)
            if low & 0xFC00 != 0xDC00:
                return None
            code, length = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000, 12
        self.at += length
        return chr(code).encode("utf-8", "surrogatepass")

    def value(self, token: _Token) -> Any:
        if token.kind in ("T_STRING", "T_NUMBER", "T_BOOLEAN"):
            return token.value
        if token.kind == "T_NULL":
            return self.codec.null
        if token.kind in ("T_OBJ_BEGIN", "T_ARR_BEGIN"):
            return self.container("T_OBJ_END" if token.kind == "T_OBJ_BEGIN" else "T_ARR_END")
        self.fail("value", token)

    def container(self, end: str) -> Any:
        """An object (``end`` is T_OBJ_END) or an array (T_ARR_END), after its opening token."""
        self.depth += 1
        if self.depth > DECODE_MAX_DEPTH:
            raise ValueError(f"Found too many nested data structures ({self.depth}) at character {self.at}")
        named = end == "T_OBJ_END"
        items: Any = {} if named else []
        token = self.next()
        if token.kind != end:
            while True:
                if named:
                    if token.kind != "T_STRING":
                        self.fail("object key string", token)
                    key, token = token.value, self.next()
                    if token.kind != "T_COLON":
                        self.fail("colon", token)
                    items[key] = self.value(self.next())
                else:
                    items.append(self.value(token))
                token = self.next()
                if token.kind == end:
                    break
                if token.kind != "T_COMMA":
                    self.fail(f"comma or {'object' if named else 'array'} end", token)
                token = self.next()
        self.depth -= 1
        return self.codec._runtime.table_from(items)


def _tobit(value: Any, position: int, name: str) -> int:
    given = value
    if isinstance(value, bytes):
        try:
            value = float(value.decode().strip())
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kinds = {type(None): "no value", bytes: "string", bool: "boolean"}
        got = kinds.get(type(given), "table")
        raise LuaArgError(f"bad argument #{position} to '{name}' (number expected, got {got})")
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return _signed(round(value) if isinstance(value, float) else value)  # round half to even, as the 2^52 trick


def _signed(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def bit_library() -> dict[str, Any]:
    """LuaBitOp's functions: 32-bit signed results, arguments read as LuaBitOp reads them."""

    def arg(args: tuple[Any, ...], index: int, name: str) -> int:
        return _tobit(args[index] if len(args) > index else None, index + 1, name)

    def fold(name: str, op: Any) -> Any:
        def run(*args: Any) -> int:
            result = arg(args, 0, name)
            for index in range(1, len(args)):
                result = op(result, arg(args, index, name))
            return _signed(result)

        return run

    def shift(name: str, op: Any) -> Any:
        return lambda *args: _signed(op(arg(args, 0, name) & 0xFFFFFFFF, arg(args, 1, name) & 31))

    def tohex(*args: Any) -> bytes:
        value = arg(args, 0, "tohex") & 0xFFFFFFFF
        digits = arg(args, 1, "tohex") if len(args) > 1 and args[1] is not None else 8
        text = f"{value:08x}"[8 - min(abs(digits), 8) :] if digits else ""
        return (text.upper() if digits < 0 else text).encode()

    def bswap(*args: Any) -> int:
        return _signed(int.from_bytes((arg(args, 0, "bswap") & 0xFFFFFFFF).to_bytes(4, "little"), "big"))

    return {
        "tobit": lambda *args: arg(args, 0, "tobit"),
        "tohex": tohex,
        "bnot": lambda *args: _signed(~arg(args, 0, "bnot")),
        "band": fold("band", lambda a, b: a & b),
        "bor": fold("bor", lambda a, b: a | b),
        "bxor": fold("bxor", lambda a, b: a ^ b),
        "lshift": shift("lshift", lambda v, n: v << n),
        "rshift": shift("rshift", lambda v, n: v >> n),
        "arshift": shift("arshift", lambda v, n: _signed(v) >> n),
        "rol": shift("rol", lambda v, n: (v << n) | (v >> (32 - n)) if n else v),
        "ror": shift("ror", lambda v, n: (v >> n) | (v << (32 - n)) if n else v),
        "bswap": bswap,
    }


def sha1hex(*args: Any) -> bytes:
    """redis.sha1hex(text): the SHA-1 of a string (a number as its text), in hex."""
    if len(args) != 1:
        raise ValueError("wrong number of arguments")
    value = _tolstring(args[0])
    if not isinstance(value, bytes):
        value = b""
    return hashlib.sha1(value).hexdigest().encode()
