"""The layering of ARCHITECTURE.md, checked on every run instead of remembered: who may
import whom (read from the source's import statements), and a process that imports every
module outside tui/ without loading Textual."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gputop"

# the model layer is pure: frames in, views out; no threads, no I/O
MODEL_MAY_IMPORT = ("gputop.model", "gputop.schema", "gputop.units", "gputop.buckets",
                    "gputop.patterns")
IMPURE = ("threading", "socket", "subprocess", "urllib", "http", "sqlite3", "psutil",
          "pynvml", "bcc", "requests", "asyncio")
# sources read the world; they neither draw nor derive (model.kv: parsing a model config)
SOURCES_MAY_NOT = ("gputop.tui", "gputop.serve", "gputop.session", "gputop.export",
                   "gputop.record", "gputop.cli", "gputop.fleet")
UI = ("textual", "rich")


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-node.level])
            names.append(f"{base}.{node.module}" if node.module else base)
    return names


def modules(under: str = "") -> list[Path]:
    return sorted((PACKAGE / under).rglob("*.py"))


def starts(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_only_tui_imports_textual_or_rich():
    bad = [(str(p.relative_to(PACKAGE)), n) for p in modules() if "tui" not in p.parts
           for n in imports(p) if starts(n, UI)]
    assert not bad, bad


def test_the_model_is_pure():
    bad = []
    for p in modules("model"):
        for n in imports(p):
            if n.startswith("gputop") and not starts(n, MODEL_MAY_IMPORT):
                bad.append((p.name, n))
            if starts(n, IMPURE):
                bad.append((p.name, n))
    assert not bad, bad


def test_sources_neither_draw_nor_derive():
    bad = [(str(p.relative_to(PACKAGE)), n) for p in modules("sources") for n in imports(p)
           if starts(n, SOURCES_MAY_NOT)
           or (n.startswith("gputop.model") and not starts(n, ("gputop.model.kv",)))]
    assert not bad, bad


def test_only_the_entry_point_imports_the_cli():
    bad = [p.name for p in modules() if p.name != "__main__.py" and p.name != "cli.py"
           and any(starts(n, ("gputop.cli",)) for n in imports(p))]
    assert not bad, bad


def test_every_module_outside_tui_loads_without_textual():
    names = [".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
             for p in modules() if "tui" not in p.parts and p.name != "__main__.py"]
    names = [n[: -len(".__init__")] if n.endswith(".__init__") else n for n in names]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n"
            "    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
