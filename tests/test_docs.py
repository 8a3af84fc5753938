"""Documents whose tables come from the code stay current."""

from pathlib import Path

from gputop.model import doc_tables

ROOT = Path(__file__).resolve().parent.parent


def test_the_diagnosis_reference_shows_the_signatures_and_thresholds_that_run():
    path = ROOT / "docs" / "diagnosis.md"
    text = path.read_text()
    assert doc_tables.render(text) == text, (
        "docs/diagnosis.md is out of date: run python -m gputop.model.doc_tables")
    for name in doc_tables.TABLES:
        assert doc_tables.BEGIN.format(name) in text
