"""A class on one Valkey: one ACL user and one namespace per learner, and the instructor's view.

``python -m emq_lab.classroom doctor --url ...`` checks the server; ``users --url ... --learners
30`` creates ``learner01`` ... ``learner30`` and loads emq-lab's scripts. Each learner may run
only the commands emq-lab sends, only on its own namespace's keys (``emq:ns:{learner07:*``), and
no Lua of its own (only EVALSHA of the scripts the instructor loaded), so no learner can read,
write or delete another's keys, by hand or from a script. ``users`` prints one shell line per
learner; that printout is the only place the random passwords appear. ``scripts`` loads the
scripts again after a restart, ``revoke`` removes the users, ``reconcile`` the ACL users of hub
users that are gone, ``overview`` prints what the instructor's panel shows. ``users`` also sets
the server's limits for the class (``doctor`` checks them). ``guard`` runs the class guard
(:mod:`.guard`) until Ctrl-C: it closes what one learner holds past the class's limits. ``hub`` runs the
class's JupyterHub (:mod:`.hub`): each learner's server gets its own ACL user, the instructor a
read-only observer.
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
