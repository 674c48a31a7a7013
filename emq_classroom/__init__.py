"""A class on one Valkey: one ACL user and one namespace per learner, and the instructor's view.

What it defends: no learner may read, write or delete another's keys, by hand or from a script (its
ACL user runs only emq-lab's commands on its own namespace, and no Lua but the loaded scripts), nor
hold the class's connections, memory or time (:mod:`.guard`). ``python -m emq_classroom``:
``doctor`` checks the server, ``users`` makes the learners (printing the only copy of their
passwords) and sets the server's limits, ``scripts`` loads the scripts after a restart, ``revoke``
and ``reconcile`` delete users, ``overview`` prints the instructor's view, ``guard`` runs the guard
until Ctrl-C and ``hub`` the class's JupyterHub (:mod:`.hub`).
"""

from __future__ import annotations

from . import guard
from .cli import main
from .demo import prepare
from .doctor import apply_limits, doctor
from .overview import DIVES, LearnerSummary, Overview, overview
from .users import (
    Learner,
    acl_rules,
    create_users,
    existing_users,
    learner_names,
    load_scripts,
    revoke_users,
    script_commands,
)

__all__ = [
    "DIVES", "Learner", "LearnerSummary", "Overview", "acl_rules", "apply_limits", "create_users", "doctor",
    "existing_users", "guard", "learner_names", "load_scripts", "main", "overview", "prepare",
    "revoke_users", "script_commands",
]  # fmt: skip
