"""Reports people read: the weekly incident digest and the postmortem / weekly-review notebooks.

::

    from rca.report import write_digest, run_postmortem
    md, html = write_digest("rca-store", "reports", week="2026-W48")
    notebook, page = run_postmortem("rca-store", "inc-53b51cadb0ce", html=True)

The digest reads the store only; the notebooks use the public API (``rca.open_store``) and
are executed with papermill, so they double as its documentation.
"""

from rca.report._window import Window, iso_week, resolve_window, window_between
from rca.report.digest import Digest, build_digest, write_digest
from rca.report.postmortem import NOTEBOOKS, notebook_html, run_postmortem, run_weekly_review

__all__ = [
    "NOTEBOOKS",
    "Digest",
    "Window",
    "build_digest",
    "iso_week",
    "notebook_html",
    "resolve_window",
    "run_postmortem",
    "run_weekly_review",
    "window_between",
    "write_digest",
]
