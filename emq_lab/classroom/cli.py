"""The instructor's commands: ``python -m emq_lab.classroom doctor|users|scripts|revoke|overview``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from redis.exceptions import RedisError

from ..backend import open_client
from ..errors import BackendUnavailable
from .doctor import apply_limits, doctor, table
from .overview import overview
from .users import MAX_LEARNERS, create_users, load_scripts, revoke_users

URL_HELP = "the server, as an admin user (redis://admin:PASSWORD@host:port/0)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m emq_lab.classroom",
        description="Run a class on one Valkey: check the server, one ACL user and namespace per learner, "
        "the scripts they may run, and what each has done.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("doctor", help="check what a class server needs; print what is wrong and the fix")
    check.add_argument("--url", required=True, help=URL_HELP)
    users = commands.add_parser(
        "users",
        help="create (or re-create, with new passwords) one ACL user per learner and print their settings",
        description="Create one ACL user per learner, limited to its namespace's keys and emq-lab's "
        "commands (no Lua of its own), load emq-lab's scripts, and print one shell line per learner "
        "(the only copy of the passwords). Refused on a server whose default user lets anyone in.",
    )
    users.add_argument("--url", required=True, help=URL_HELP)
    users.add_argument("--learners", type=int, required=True, help=f"how many learners (1 to {MAX_LEARNERS})")
    users.add_argument(
        "--prefix", default="learner", help="user and namespace names: <prefix>01, ... (default: learner)"
    )
    scripts = commands.add_parser(
        "scripts", help="load emq-lab's scripts (after a server restart: learners may not load them)"
    )
    scripts.add_argument("--url", required=True, help=URL_HELP)
    revoke = commands.add_parser("revoke", help="delete the learners' ACL users (their keys stay)")
    revoke.add_argument("--url", required=True, help=URL_HELP)
    revoke.add_argument("--prefix", default="learner", help="delete the users <prefix><digits> (default: learner)")
    show = commands.add_parser("overview", help="print every learner: dives, queues, registry sizes, checks")
    show.add_argument("--url", required=True, help=URL_HELP)
    show.add_argument("--prefix", default="learner", help="the learners' names start with this (default: learner)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        client, _ = open_client(args.url)
    except (ValueError, RedisError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        if args.command == "doctor":
            failed = False
            for title, rows in doctor(client):
                print("\n".join(([title] if title else []) + table(rows)))
                failed = failed or any(row.verdict == "FIX" for row in rows)
            return 1 if failed else 0
        if args.command == "users":
            learners = create_users(client, learners=args.learners, prefix=args.prefix)
            shas = load_scripts(client)
            print(f"# {len(learners)} learner(s), {len(shas)} scripts loaded. Each learner pastes their line")
            print("# into a shell, then runs make lab. These passwords are printed only here.")
            print("\n".join(apply_limits(client, learners=len(learners))))
            for learner in learners:
                print(learner.env(args.url))
        elif args.command == "scripts":
            shas = load_scripts(client)
            print(f"loaded {len(shas)} scripts")
        elif args.command == "revoke":
            removed = revoke_users(client, prefix=args.prefix)
            print(f"removed {len(removed)} user(s)" + (f": {' '.join(removed)}" if removed else ""))
        else:
            print(overview(client, prefix=args.prefix).readout)
    except (ValueError, RedisError, BackendUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        client.close()
    return 0
