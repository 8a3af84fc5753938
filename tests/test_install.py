"""The distribution is gputop-tui (PyPI's gputop is another project), the command and the
import package stay gputop, and a clash with the other project is detected and named."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from gputop import install

ROOT = Path(__file__).parent.parent
CLASH = "from gputop.install import clash; print(clash())"


def test_the_distribution_name_and_the_command():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == install.DISTRIBUTION == "gputop-tui"
    assert project["scripts"] == {"gputop": "gputop.cli:main"}
    assert project["description"].startswith(install.SUMMARY_START)


def _dist_info(where: Path, summary: str) -> None:
    info = where / "gputop-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: gputop\nVersion: 0.3.0\n"
                                   f"Summary: {summary}\n")
    (info / "top_level.txt").write_text("gputop\n")


def _clash(*path: Path, isolated: bool = False) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, (ROOT, *path))))
    argv = [sys.executable, *(["-S"] if isolated else []), "-c", CLASH]
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_other_project_is_named_with_the_fix(tmp_path):
    _dist_info(tmp_path, "Real-time GPU monitoring tool")
    line = _clash(tmp_path)
    assert line.startswith("another project's 'gputop' 0.3.0 (Real-time GPU monitoring tool)")
    assert "pip uninstall gputop, then pip install --force-reinstall . in gputop-tui's checkout" in line


def test_this_project_under_its_old_name(tmp_path):
    _dist_info(tmp_path, install.SUMMARY_START + ": GPU-Util next to SM activity")
    assert "its old name 'gputop' 0.3.0" in _clash(tmp_path)


def test_no_clash_in_an_environment_without_it():
    assert _clash(isolated=True) == "None"  # no site-packages: no 'gputop' distribution


def test_doctor_says_it(tmp_path, nvml_library):
    _dist_info(tmp_path, "Real-time GPU monitoring tool")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(ROOT), str(tmp_path))),
               LD_LIBRARY_PATH=str(nvml_library), NVML_STAND_IN_GPUS="1")
    result = subprocess.run([sys.executable, "-m", "gputop", "doctor"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.splitlines()[0].startswith("ok   NVML"), result.stdout
    assert result.stdout.splitlines()[-1].startswith(
        "FAIL installation: another project's 'gputop' 0.3.0"), result.stdout
