"""Which installation this is: the PyPI distribution name, and a clash with another project.

PyPI's ``gputop`` is another project (0.3.0, a different tool) whose wheel also installs a
top-level ``gputop/`` package (``__init__.py``, ``cli.py``) and a ``gputop`` command.  This
project's distribution is ``gputop-tui`` (installed from its checkout; the name is not yet
uploaded to PyPI, so the fix names the checkout, not an index); the command and the import package stay
``gputop``.  Both installed in one environment overwrite each other's files, and
uninstalling either removes files the other needs; ``gputop doctor`` says so (one line,
with the fix), as nothing in pip refuses the second install.
"""

from __future__ import annotations

import importlib.metadata

DISTRIBUTION = "gputop-tui"
OTHER = "gputop"  # the other project's distribution on PyPI
REINSTALL = f"pip install --force-reinstall . in {DISTRIBUTION}'s checkout"
SUMMARY_START = "A terminal dashboard that shows what an NVIDIA GPU is really doing"


def clash() -> str | None:
    """Why this environment's gputop may not be ours (None: no clash)."""
    try:
        other = importlib.metadata.distribution(OTHER)
    except importlib.metadata.PackageNotFoundError:
        return None
    summary = (other.metadata.get("Summary") or "").strip()
    if summary.startswith(SUMMARY_START):  # this project, installed under its old name
        return (f"this project is installed under its old name '{OTHER}' {other.version}: "
                f"pip uninstall {OTHER}, then {REINSTALL}")
    return (f"another project's '{OTHER}' {other.version} ({summary[:60] or 'no summary'}) is "
            f"installed here: its gputop/ package and gputop command overwrite this one's. "
            f"Fix: pip uninstall {OTHER}, then {REINSTALL} "
            "(or pipx install ., one environment per tool)")
