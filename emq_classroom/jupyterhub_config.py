# The class's JupyterHub configuration, for `jupyterhub -f <this file>` (or copy its two lines into
# your own jupyterhub_config.py, or the Kubernetes chart's hub.extraConfig). It reads the class
# server from EMQ_LAB_HUB_SERVER and its admin password from EMQ_LAB_ADMIN_PASSWORD_FILE (or
# EMQ_LAB_ADMIN_PASSWORD); `python -m emq_classroom hub` does the same with its options.
from emq_classroom import hub

hub.configure(c, hub.settings_from_env())  # type: ignore[name-defined]  # noqa: F821 - JupyterHub defines c
