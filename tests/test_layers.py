"""The layering of docs/design.md.  Ruff says most of it (TID251 banned imports in
gputop/ruff.toml and the nested ruff.toml of cli/, model/, record/, sources/ and tui/, run by
scripts/test.sh); this file checks what ruff cannot: that the rules bite where they are
meant to, that the model's allow-list is complete, and that no module outside tui/ loads
Textual through the modules it imports."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gputop"

# what the pure model may import of gputop: everything else must be banned in model/ruff.toml
MODEL_MAY_IMPORT = {"model", "schema", "modelconfig", "units", "buckets", "patterns"}
IMPURE = ("threading", "socket", "subprocess", "urllib", "http", "sqlite3", "psutil",
          "pynvml", "bcc", "requests", "asyncio")


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                           "--output-format", "concise", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def banned(config: str) -> set[str]:
    with open(PACKAGE / config, "rb") as file:
        return set(tomllib.load(file)["lint"]["flake8-tidy-imports"]["banned-api"])


def test_the_package_keeps_its_layers():
    done = ruff("--select", "TID", "gputop")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path, line, allowed", [
    ("gputop/model/x.py", "import threading", False),
    ("gputop/model/x.py", "from gputop.sources.nvml import NvmlSource", False),
    ("gputop/model/x.py", "from gputop.session import Session", False),
    ("gputop/model/x.py", "from gputop.schema import Frame", True),
    ("gputop/sources/x.py", "from gputop.model.derive import derive", False),
    ("gputop/sources/x.py", "from gputop.sampler import Sampler", False),
    ("gputop/sources/registry.py", "from gputop.sampler import Sampler", False),
    ("gputop/sources/engine.py", "from gputop.model.kv import kv_layout", False),
    ("gputop/sources/engine.py", "from gputop.modelconfig import kv_fields", True),
    ("gputop/sources/x.py", "from gputop.schema import Frame", True),
    ("gputop/record/x.py", "from gputop.session import Session", False),  # no upward imports
    ("gputop/record/x.py", "from gputop.cursor import RecordingCursor", False),
    ("gputop/record/x.py", "from gputop.model.derive import View", True),
    ("gputop/record/x.py", "import sqlite3", True),
    ("gputop/serve.py", "from textual.app import App", False),
    ("gputop/session.py", "import rich", False),
    ("gputop/tui/x.py", "from textual.app import App", True),
    ("gputop/tui/x.py", "from gputop.cli import main", False),
    ("gputop/serve.py", "from gputop.cli.options import UsageError", False),
    ("gputop/cli/x.py", "from gputop.cli.options import UsageError", True),  # one package
    ("gputop/cli/x.py", "from textual.app import App", False),
    ("gputop/cli/x.py", "from gputop.tui.app import GputopApp", False),  # only inside a command
    ("gputop/cli/x.py", "def live():\n    from gputop.tui.app import GputopApp", True),
    ("gputop/tui/x.py", "from gputop.sources.proctree import pin_pid", False),  # the session pins
    ("gputop/tui/x.py", "import psutil", False),
    ("gputop/webconfig.py", "import yaml", False),  # the serve extra: imported where used
    ("gputop/webconfig.py", "def load():\n    import yaml\n    return yaml", True),
])
def test_the_rules_bite_where_they_are_meant_to(path, line, allowed):
    """The nested configs are found by the file's path, as for the package's own files."""
    done = ruff("--select", "TID", "--stdin-filename", path, "-", stdin=line + "\n")
    assert (done.returncode == 0) == allowed, done.stdout + done.stderr


def test_the_model_bans_every_other_module_of_the_package():
    """Ruff bans by name, so the model's allow-list is said as a ban of everything else."""
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    must = {f"gputop.{n}" for n in names - MODEL_MAY_IMPORT}
    assert must <= banned("model/ruff.toml"), sorted(must - banned("model/ruff.toml"))
    assert set(IMPURE) <= banned("model/ruff.toml")


def test_every_module_outside_tui_loads_without_textual():
    names = [".".join(p.relative_to(ROOT).with_suffix("").parts)
             for p in sorted(PACKAGE.rglob("*.py")) if "tui" not in p.parts
             and p.name != "__main__.py"]
    names = [n[: -len(".__init__")] if n.endswith(".__init__") else n for n in names]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n"
            "    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
