"""A learner's script error as one readable line, the same on the sandbox and on Valkey; and
:func:`attempt`, one call of a checker with its error as that line (a limit raises Stopped)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from redis.exceptions import ResponseError

from ..sandbox import CHECK_S, LIMIT_S, MEMORY_BYTES, Stopped
from ..validate import printable

T = TypeVar("T")

TIME_LIMIT = (
    f"the script was still running after {LIMIT_S:g} s of CPU time, the time limit, so the sandbox stopped it there "
    "(an endless loop?)"
)
MEMORY_LIMIT = (
    f"the script held more than {MEMORY_BYTES >> 20} MB of memory, the limit, so the sandbox stopped it there "
    "(a table or a string that grows without end?)"
)
CHECK_LIMIT = (
    f"the check had run for {CHECK_S:g} s of CPU time in all, the limit for one check, so the sandbox stopped the "
    "script there (a script that is slow on every call? a check calls it hundreds of times)"
)


# fakeredis and Valkey word some command errors differently; the learner reads one wording.
_UNDEFINED = r"'\1' is not defined (a typo, or a missing local?)"
_CANON: tuple[tuple[str, str], ...] = (
    (r"^Script attempted to access nonexistent global variable '(.*)'$", _UNDEFINED),
    (r"^attempt to \w+ global '(.*)' \(a nil value\)$", _UNDEFINED),
    (r"^Attempt to modify a readonly table$", "assigns a global variable or changes a library table (string, redis, "
     "...), which Valkey keeps read-only; declare every variable with local"),
    (r"^Script attempted to set global variables: (.*)$", r"assigns the global variable \1; declare it with local"),
    (r"^Wrong number of args calling (Redis )?command from script$", "a redis.call has the wrong number of arguments"),
    (r"^(Lua redis lib )?[Cc]ommand arguments must be strings or integers$",
     "a redis.call argument is nil or not a string or number (a missing KEYS or ARGV entry?)"),
    (r"^[Uu]nknown command.*$", "a redis.call names an unknown command"),
    (r"^.*missing 1 required positional argument: 'op'$", "redis.call needs a command name"),
    (r"^Please specify at least one argument for this call$", "redis.call needs a command name"),
    (r"^Script killed by user with SCRIPT KILL.*$", TIME_LIMIT),  # Valkey's words for a script stopped
    (r"^emq-lab stop$", TIME_LIMIT),
    (r"^emq-lab memory$", MEMORY_LIMIT),
    (r"^emq-lab check$", CHECK_LIMIT),
    (r"^(?:ERR )?emq-lab reply: (\d+) MB, (.*)$", r"the script's reply is \1 MB, \2 limit"),
)  # fmt: skip


def _canonical(message: str) -> str:
    message = message.strip().removeprefix("ERR ").strip()
    for pattern, replacement in _CANON:
        if re.match(pattern, message, flags=re.DOTALL):
            return re.sub(pattern, replacement, message, flags=re.DOTALL)
    return message


def explain_error(exc: BaseException) -> str:
    """One line for a script error, the same on fakeredis and Valkey: ``line 3: <what>``, control characters escaped."""
    text = str(exc)
    piped = re.search(r"of pipeline caused error: (.*)$", text, flags=re.DOTALL)
    if piped:
        text = piped.group(1)
    text = text.split("\nstack traceback:", 1)[0].strip()
    compiled = re.search(
        r"(?:error loading code|Error compiling script[^:]*): (?:\[string \"[^\"]*\"\]|user_script):(\d+): (.*)$",
        text,
        flags=re.DOTALL,
    )
    if compiled:
        return printable(f"syntax error on line {compiled.group(1)}: {compiled.group(2).strip()}")
    # Valkey 8 names the script's sha before its line; Valkey 9 leaves it out.
    text = re.sub(r" script:(?: [0-9a-f]{40},)? on @user_script:(\d+)\.$", r" @line \1", text)
    at_end = re.search(r" @line (\d+)$", text)
    line = at_end.group(1) if at_end else None
    text = text[: at_end.start()] if at_end else text
    text = re.sub(r"^Error running script \(call to f_[0-9a-f]+\): @user_script:\?: ", "", text)
    inner = re.match(r"^(?:ERR )?(?:\[string \"[^\"]*\"\]|user_script):(\d+): (.*)$", text, flags=re.DOTALL)
    if inner:
        line, text = inner.group(1), inner.group(2)
    message = printable(_canonical(text))
    if line is None or line == "0":  # 0: stopped before its first line
        return message
    return f"line {line}: {message}"


def attempt(run: Callable[[], T], returns: str) -> tuple[T | None, str | None]:
    """``run()``'s answer, or None and what went wrong in one line; a script stopped at a limit raises Stopped."""
    try:
        return run(), None
    except ResponseError as exc:
        explained = explain_error(exc)
        if explained.endswith((TIME_LIMIT, MEMORY_LIMIT, CHECK_LIMIT)):
            raise Stopped(str(exc)) from exc
        return None, explained
    except RuntimeError as exc:  # "register.lua returned 2, which no Outcome maps"
        said = str(exc).split("returned ", 1)[-1].split(",", 1)[0]
        return None, f"the script returned {said}; {returns}"
    except (TypeError, ValueError):
        return None, f"the script returned nil or text; {returns}"
