"""The Lua scripts, one file per verb, loaded through redis-py's ``Script``."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from redis.commands.core import Script


def source(name: str) -> str:
    """The text of ``<name>.lua`` (``contrast/<x>`` for a contrast script)."""
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Scripts:
    """The scripts registered on one client (EVALSHA, loading on NOSCRIPT)."""

    register: Script
    advance: Script
    cancel: Script
    enqueue: Script

    @classmethod
    def load(cls, client: object) -> Scripts:
        reg = client.register_script  # type: ignore[attr-defined]
        return cls(
            register=reg(source("register")),
            advance=reg(source("advance")),
            cancel=reg(source("cancel")),
            enqueue=reg(source("enqueue")),
        )
