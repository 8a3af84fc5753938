"""``gputop capture-engine URL`` as a user runs it: a real process against a real HTTP server
on 127.0.0.1; what the bug report gets is readable by gputop and names nobody."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from gputop.sources.engine_capture import redact
from gputop.sources.engine_metrics import recognise
from tests.engine_pages import sglang_page, vllm_pages
from tests.http_server import Response, ScriptedServer
from tests.test_cli import assert_one_line_error

SECRET_MODEL = "/srv/acme-private/models/llama-70b-finetune-v7"


def gputop(*args, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})


def private_page() -> str:
    """The real vLLM page serving a model by its path, with LoRA adapters named after a
    customer, behind a router's worker address."""
    text = vllm_pages.with_optional(lora=(("acme-support-lora,acme-sales-lora",
                                           "acme-billing-lora", 1.0),))
    return text.replace('model_name="tiny-llama"', f'model_name="{SECRET_MODEL}"')


def test_capture_writes_a_redacted_page_that_reads_as_the_original(tmp_path):
    page = private_page()
    with ScriptedServer([Response(page)]) as server:
        result = gputop("capture-engine", server.url, "-o", "capture.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("gputop: wrote capture.txt: vllm page")
    out = tmp_path / "capture.txt"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    text = out.read_text()
    for secret in ("acme", "/srv/", "llama-70b"):
        assert secret not in text
    assert "127.0.0.1" not in text.splitlines()[0]  # the source is named without its host
    original, captured = recognise(page), recognise(text)
    assert captured.values == original.values
    assert captured.histograms == original.histograms
    assert captured.cache == original.cache  # the cache config's numbers and words stay
    assert captured.model == "model_name-1"
    # two adapters running, one waiting, each its own stand-in
    assert captured.lora == (("lora-1", "lora-2"), ("lora-3",), 4)
    assert original.lora[0] == ("acme-support-lora", "acme-sales-lora")
    # every line that is not a label value is the engine's own, byte for byte
    assert len(text.splitlines()) == len(page.splitlines()) + 2  # + the two header lines


def test_replicas_stay_apart_after_redaction():
    page = sglang_page.page_text(workers=2)
    text, redactor = redact(page)
    parsed = recognise(text)
    assert [r.replica["worker_addr"] for r in parsed.replicas] == ["worker_addr-1",
                                                                   "worker_addr-2"]
    assert "30001" not in text and "30002" not in text
    assert [r.values for r in parsed.replicas] == [r.values for r in recognise(page).replicas]
    assert redactor.replaced[("model_name", sglang_page.MODEL)] == "model_name-1"


def test_escaped_label_values_are_redacted_too():
    page = ('# TYPE vllm:num_requests_running gauge\n'
            'vllm:num_requests_running{engine="0",model_name="a \\"quoted\\" \\\\path\\nname"} 3.0\n')
    text, _ = redact(page)
    assert "quoted" not in text and "path" not in text
    assert recognise(text).values["requests_running"] == 3.0


def test_to_standard_output(tmp_path):
    with ScriptedServer([Response((Path(__file__).parent / "data" / "metrics" /
                                   "llamacpp-0.3.36.txt").read_text())]) as server:
        result = gputop("capture-engine", server.url, "-o", "-")
    assert result.returncode == 0
    assert result.stdout.startswith("# captured by gputop")
    assert "llamacpp:tokens_predicted_total" in result.stdout
    assert result.stderr.startswith("gputop: llamacpp page")


def test_refusals_are_one_line(tmp_path):
    (tmp_path / "taken.txt").write_text("mine")
    os.symlink("/etc/passwd", tmp_path / "link.txt")
    with ScriptedServer([Response(vllm_pages.real_page())]) as server, \
            ScriptedServer([Response("<html>login</html>", content_type="text/html")]) as html:
        assert_one_line_error(gputop("capture-engine", server.url, "-o", "taken.txt",
                                     cwd=tmp_path), "exists")
        assert (tmp_path / "taken.txt").read_text() == "mine"
        assert_one_line_error(gputop("capture-engine", server.url, "-o", "link.txt",
                                     cwd=tmp_path), "symbolic link")
        assert_one_line_error(gputop("capture-engine", html.url, "-o", "x.txt", cwd=tmp_path),
                              "HTML")
    assert_one_line_error(gputop("capture-engine", "ftp://example/metrics"), "not an http(s) URL")
    assert_one_line_error(gputop("capture-engine", "http://127.0.0.1:9/metrics", "-o", "y.txt",
                                 cwd=tmp_path), "capture-engine")
    assert not (tmp_path / "x.txt").exists() and not (tmp_path / "y.txt").exists()
