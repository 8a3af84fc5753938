"""The shipped rules and Grafana dashboard against a real Prometheus (Debian's 2.42):
three `gputop serve --demo` hosts scraped every second; every GPU arrives, the storm host's
episode carries its cause, the exported launch histogram gives gputop's own p99 within one
bucket, and every PromQL expression of the dashboard and the recording rules returns data,
while every alert rule evaluates without error (its firing logic: `promtool test rules`)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import need
from tests.test_serve import start_serve

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "contrib" / "prometheus" / "gputop-rules.yml"
RULE_TESTS = ROOT / "contrib" / "prometheus" / "gputop-rules.test.yml"
DASHBOARD = ROOT / "contrib" / "grafana" / "gputop.json"



@pytest.fixture(autouse=True)
def prometheus_installed():
    need("prometheus")
    need("promtool")


def test_promtool_checks_and_unit_tests_the_rules():
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "12 rules found" in check.stdout
    tested = subprocess.run(["promtool", "test", "rules", str(RULE_TESTS)], capture_output=True,
                            text=True, timeout=60, cwd=RULE_TESTS.parent)
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prom:
    def __init__(self, url: str):
        self.url = url

    def api(self, path: str, **params) -> dict:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as r:
            answer = json.load(r)
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expr: str) -> list:
        return self.api("query", query=expr)["result"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prom")
    hosts = {"storm": start_serve("--demo", "logprobs-storm", "-d", "0.25"),
             "jitter": start_serve("--demo", "launch-jitter", "-d", "0.25"),
             "four": start_serve("--demo", "serving", "--gpus", "4", "-d", "0.25")}
    targets = "\n".join(
        f"      - targets: ['{s.url.split('//')[1]}']\n        labels: {{host: {name}}}"
        for name, s in hosts.items())
    (tmp / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files: ['{RULES}']\n"
        f"scrape_configs:\n  - job_name: gputop\n    static_configs:\n{targets}\n")
    port = free_port()
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={tmp / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
         "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=open(tmp / "prom.log", "w"))
    prom = Prom(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(prom.query('up{job="gputop"} == 1')) == 3:
                break
        except OSError:
            pass
        time.sleep(0.5)
    else:
        raise AssertionError("Prometheus did not scrape the three hosts: "
                             + (tmp / "prom.log").read_text()[-2000:])
    yield prom, hosts
    proc.terminate()
    proc.wait(timeout=30)
    for s in hosts.values():
        s.proc.terminate()
        s.proc.wait(timeout=15)


def wait_for(prom: Prom, expr: str, timeout_s: float = 60.0) -> list:
    deadline = time.monotonic() + timeout_s
    while True:
        result = prom.query(expr)
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.5)


def test_every_gpu_of_every_host_is_there(fleet):
    prom, _hosts = fleet
    counts = {r["metric"]["host"]: int(float(r["value"][1]))
              for r in wait_for(prom, "count by (host) (gputop_gpu_info)")}
    assert counts == {"storm": 1, "jitter": 1, "four": 4}


def test_the_storm_host_is_in_an_episode_with_its_cause(fleet):
    prom, _hosts = fleet
    expr = ('topk(1, gputop_episode_suspect_score{host="storm"}) and on (instance, gpu) '
            'gputop_episode_active{kind="busy_unproductive", host="storm"} == 1')
    deadline = time.monotonic() + 60
    cause = None
    while time.monotonic() < deadline:
        top = prom.query(expr)
        if top and top[0]["metric"]["cause"] == "oversized_request":
            cause = top[0]["metric"]["cause"]
            break
        time.sleep(0.5)
    assert cause == "oversized_request", prom.query('gputop_episode_suspect_score')
    quiet = prom.query('gputop_episode_active{kind="busy_unproductive", host="four"} == 1')
    assert quiet == []
    # the alert rule takes the cause along while it is pending (for: 1m) or firing; the
    # cause is part of the alert's identity, so an earlier top suspect was its own alert
    alerts = wait_for(prom, 'ALERTS{alertname="GPUBusyButUnproductive", host="storm", '
                            'cause="oversized_request"}', 30)
    assert alerts and alerts[0]["metric"]["alertstate"] in ("pending", "firing")


def test_histogram_quantile_agrees_with_gputops_own_p99(fleet):
    prom, hosts = fleet
    time.sleep(3)
    api = "cudaLaunchKernel"
    result = wait_for(prom, "histogram_quantile(0.99, sum by (le) (rate("
                      f'gputop_launch_duration_seconds_bucket{{host="jitter", api="{api}"}}[10s])))')
    theirs_s = float(result[0]["value"][1])
    ours_us = json.loads(hosts["jitter"].get("/snapshot.json")[2])["launch"]["apis"][api]["p99_us"]
    # buckets double: within one bucket means within a factor of 2 either way
    assert 0.5 <= theirs_s * 1e6 / ours_us <= 2.0, (theirs_s * 1e6, ours_us)


def grafana_exprs() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    exprs += [a["expr"] for a in board["annotations"]["list"] if a.get("expr")]
    for var in board["templating"]["list"]:
        match = re.fullmatch(r"label_values\((.+), *\w+\)", var.get("query") or "")
        if match:
            exprs.append(match.group(1))
    substitute = {"$instance": ".*", "$gpu": ".*", "$__rate_interval": "10s",
                  "$__interval": "5s", "$__range": "1m"}
    out = []
    for expr in exprs:
        for name, value in substitute.items():
            expr = expr.replace(name, value)
        assert "$" not in expr, expr
        out.append(expr)
    return out


def rule_exprs(kind: str) -> list[tuple[str, str]]:
    import yaml

    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [(rule[kind], rule["expr"]) for g in groups for rule in g["rules"] if kind in rule]


def test_every_dashboard_and_recording_rule_expression_returns_data(fleet):
    prom, _hosts = fleet
    time.sleep(5)  # rate() over [1m] and the rules need a few evaluations
    empty = []
    for expr in grafana_exprs() + [e for _n, e in rule_exprs("record")]:
        if not wait_for(prom, expr, 20):
            empty.append(expr)
    assert not empty, empty
    for name, _expr in rule_exprs("record"):
        assert prom.query(name), name  # the recorded series exist under their names


def test_every_alert_rule_evaluates_cleanly(fleet):
    prom, _hosts = fleet
    rules = [r for g in prom.api("rules")["groups"] for r in g["rules"]]
    assert len(rules) == 12
    bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    assert not bad, bad
    assert {r["name"] for r in rules if r["type"] == "alerting"} == {n for n, _ in rule_exprs("alert")}


def test_a_healthy_host_fires_no_alert(fleet):
    """The healthy serving host (4 GPUs): no alert expression selects it, whatever its
    `for:` would add.  Its cudaStreamSynchronize lasts ~15 ms (the GPU's work it waits
    for): LaunchLatencyHigh fired on it before synchronize calls were left out."""
    prom, hosts = fleet
    instance = hosts["four"].url.split("//")[1]
    wait_for(prom, f'gputop:launch_duration_seconds:p99_5m{{instance="{instance}", '
                   'api="cudaStreamSynchronize"} > 0.001')  # the slow calls are there
    time.sleep(3)  # a few evaluations of every rule
    for name, expr in rule_exprs("alert"):
        selected = [r["metric"] for r in prom.query(expr)
                    if r["metric"].get("instance") == instance]
        assert not selected, (name, selected)
    firing = [a for a in prom.api("alerts")["alerts"]
              if a["labels"].get("instance") == instance]
    assert not firing, firing


def test_fleet_through_promql_puts_the_storm_host_first(fleet):
    from gputop.fleet import ask_prometheus, ranked

    prom, hosts = fleet
    deadline = time.monotonic() + 60
    while True:
        rows = ranked(ask_prometheus(prom.url))
        top = rows[0]
        if top.suspect == "oversized_request" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert top.url == hosts["storm"].url and top.episode == "busy_unproductive"
    assert top.suspect == "oversized_request"
    assert len([r for r in rows if r.gpu is not None]) == 6
    assert all(r.parts.get("free") is not None for r in rows)
