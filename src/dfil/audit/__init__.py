"""The paper audited against itself: every printed statistic whose inputs the paper also
prints, recomputed (pure: numpy, scipy, jinja2, jsonschema; never torch).

The checks are data (``config/paper_audit.yaml``, schema ``dfil/audit/schema.json``),
evaluated by :mod:`dfil.audit.kinds` through :mod:`dfil.audit.checks` and rendered by
:mod:`dfil.audit.report` to ``audit.md`` and ``audit.html``.
"""

from dfil.audit.checks import Outcome, evaluate_all, load_checks, read_checks_file, summary

__all__ = ["Outcome", "evaluate_all", "load_checks", "read_checks_file", "summary"]
