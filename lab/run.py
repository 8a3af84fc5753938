"""The phase runner: starts the serve loop and the training loop, drives each phase, and
keeps the log of which pathology ran when, while ``gputop record`` watches through its
real CLI (``--engine URL --pid PID``) beside ``nvidia-smi dmon``.

    python -m lab.run --profile gpu --out OUT            # the H200 (scripts/gpu-lab.sh)
    python -m lab.run --profile cpu --out OUT --nvml-stand-in DIR --gputop-python PY

What it leaves in OUT (at most 8 files, as the device tool brings back):
  serve.gputop  train.gputop  the recordings (serve phases; training phases)
  phases.json   the phase log: every phase with its wall times, the cause it stages, the
                load driver's own count, the serve loop's /metrics at its end, the probes
  dmon.txt      nvidia-smi dmon over the whole run (when there is an nvidia-smi)
  screens.tar   the live dashboard drawn headless once per phase (when asked)
Nothing here reads gputop's recordings: ``lab.report`` does that afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, replace

from lab.load import Load, Tally
from lab.procs import Children, http_get, http_post, wait_until
from lab.profiles import PROFILES, LabProfile, Phase
from lab.quota import Quota

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOG_TAIL_BYTES = 4096


class NotStaged(RuntimeError):
    """A phase whose cause could not be staged here (recorded, the phase runs healthy)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def counter(page: str, name: str) -> float | None:
    """One unlabelled sample's value from Prometheus text (the trainer's counters)."""
    for line in page.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def split_cpus(cpus: list[int]) -> tuple[set[int], set[int]]:
    """(the serve loop's cores, everyone else's): two cores of their own where there are
    eight or more, one where there are two, none of its own on one core."""
    if len(cpus) >= 8:
        return set(cpus[2:4]), set(cpus[:2] + cpus[4:])
    if len(cpus) >= 2:
        return {cpus[-1]}, set(cpus[:-1])
    return set(cpus), set(cpus)


class Runner:
    def __init__(self, args, profile: LabProfile):
        self.args, self.p = args, profile
        self.out = os.path.abspath(args.out)
        self.tmp = tempfile.mkdtemp(prefix="gputop-lab-")
        self.children = Children()
        self.tally = Tally()
        self.serve_cpus, self.other_cpus = split_cpus(sorted(os.sched_getaffinity(0)))
        self.serving = any(ph.segment == "serve" for ph in profile.phases)
        self.training = any(ph.segment == "train" for ph in profile.phases)
        # without a serve loop the trainer takes its cores: the host phase's hogs find it
        self.train_cpus = self.other_cpus if self.serving else self.serve_cpus
        self.python = sys.executable
        self.gputop = [args.gputop_python, "-m", "gputop"]
        self.control = os.path.join(self.tmp, "train-control.json")
        self.screens = [] if args.screens == "none" else (
            [p.name for p in profile.phases] if args.screens == "all" else
            list(profile.screens) if args.screens is None else args.screens.split(","))
        self.doc: dict = {
            "lab": 1, "profile": args.profile, "config": asdict(profile),
            "argv": sys.argv, "cpus": {
                "serve": sorted(self.serve_cpus) if self.serving else [],
                "train": sorted(self.train_cpus), "others": sorted(self.other_cpus)},
            "phases": [], "settles": [], "recordings": {}, "errors": []}

    # ------------------------------------------------------------------ helpers

    def env(self, extra: dict | None = None) -> dict:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, [ROOT, os.environ.get("PYTHONPATH")])), PYTHONUNBUFFERED="1")
        return {**env, **(extra or {})}

    def gputop_env(self, pid: int) -> dict:
        """On a machine without a GPU, the C NVML stand-in (tests/stand_in) with one GPU
        whose process is ``pid``; on a real GPU nothing is added."""
        if not self.args.nvml_stand_in:
            return self.env()
        return self.env({"LD_LIBRARY_PATH": self.args.nvml_stand_in,
                         "NVML_STAND_IN_GPUS": "1", "NVML_STAND_IN_PROCS": f"{pid}:0:4096"})

    def logfile(self, name: str) -> str:
        return os.path.join(self.tmp, f"{name}.log")

    def set_control(self, **value) -> None:
        path = self.control + ".new"
        with open(path, "w") as f:
            json.dump(value, f)
        os.replace(path, self.control)

    def spawn_record(self, segment: str, url: str, pid: int) -> None:
        path = os.path.join(self.out, f"{segment}.gputop")
        name = f"record-{segment}"
        self.children.start(
            name, self.gputop + ["record", path, "--engine", url, "--pid", str(pid), "-d",
                                 f"{self.p.delay_s:g}", "--duration", "1h"],
            self.logfile(name), env=self.gputop_env(pid), cwd=ROOT)
        self.doc["recordings"][segment] = {"file": os.path.basename(path), "url": url, "pid": pid}

    def wait_record(self, segment: str) -> None:
        name = f"record-{segment}"
        wait_until(lambda: b"gputop: recording" in open(self.logfile(name), "rb").read(),
                   60, self.children.procs[name], f"gputop record ({segment})")
        time.sleep(2 * self.p.delay_s)  # its first frames, with rates

    def stop_record(self, segment: str) -> None:
        rc = self.children.stop(f"record-{segment}", signal.SIGTERM, timeout_s=60)
        self.doc["recordings"][segment]["rc"] = rc
        if rc != 0:
            self.doc["errors"].append(f"gputop record ({segment}) exited {rc}")

    def screen(self, phase: Phase, url: str, pid: int) -> None:
        if phase.name not in self.screens:
            return
        path = os.path.join(self.tmp, "screens", f"{phase.name}.svg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.children.start(
            f"screen-{phase.name}",
            [self.args.gputop_python, "-m", "lab.screen", path, "--seconds",
             f"{self.p.screen_s:g}", "--title", f"gputop, lab phase {phase.name}: {phase.what}",
             "--", "--engine", url, "--pid", str(pid), "-d", f"{self.p.delay_s:g}"],
            self.logfile(f"screen-{phase.name}"), env=self.gputop_env(pid), cwd=ROOT)

    def wait_screens(self) -> None:
        for name in [n for n in self.children.procs if n.startswith("screen-")]:
            rc = self.children.wait(name, timeout_s=self.p.screen_s + 60)
            if rc != 0:
                self.doc["errors"].append(f"{name} exited {rc}")

    def hog(self, name: str, kind: str, cpus: set[int], seconds: float) -> str:
        self.children.start(name, [self.python, "-m", "lab.hogs", kind, "--seconds",
                                   f"{seconds:g}", "--device", self.p.device],
                            self.logfile("hogs"), cpus=cpus, env=self.env(), cwd=ROOT)
        return name

    # ------------------------------------------------------------------ the serve loop

    def start_serve(self) -> None:
        self.serve_port = free_port()
        self.serve_url = f"http://127.0.0.1:{self.serve_port}"
        proc = self.children.start(
            "serve", [self.python, "-m", "lab.serve_loop", "--preset", self.p.preset,
                      "--device", self.p.device, "--port", str(self.serve_port),
                      *self.p.serve_args], self.logfile("serve"), cpus=self.serve_cpus,
            env=self.env(), cwd=ROOT)
        health = wait_until(lambda: json.loads(http_get(self.serve_url + "/health", 2)),
                            self.p.start_timeout_s, proc, "the serve loop")
        self.serve_pid = proc.pid
        self.vocab = json.loads(http_get(self.serve_url + "/v1/models"))["data"][0]
        self.vocab_size = self.vocab["vocab_size"]
        self.doc["serve"] = {"url": self.serve_url, "pid": proc.pid, "health": health,
                             "probes": self.probe()}
        log(f"serve loop ready: {health}")

    def probe(self) -> list[dict]:
        """What the endpoint answers, kept for the test: n / logprobs / max_tokens, and
        three requests it must refuse with a reason."""
        url = self.serve_url + "/v1/completions"
        limit = self.vocab["max_model_len"]
        asks = [{"prompt": "gputop lab", "n": 3, "max_tokens": 5, "logprobs": 4},
                {"prompt": [5, 6, 7, 8], "max_tokens": 3, "logprobs": 1, "temperature": 0},
                {"prompt": "x", "n": 0}, {"prompt": "x", "logprobs": 21},
                {"prompt": [5] * limit, "max_tokens": 1}]
        out = []
        for body in asks:
            status, answer = http_post(url, body)
            out.append({"request": {k: (v if k != "prompt" or len(v) < 64 else f"{len(v)} ids")
                                    for k, v in body.items()},
                        "status": status, "response": answer})
        return out

    def page(self) -> str:
        return http_get(self.serve_url + "/metrics", 10).decode()

    def quota(self, pid: int) -> Quota:
        """``pid`` under the profile's CPU quota, or NotStaged saying why not."""
        quota = Quota(pid, self.p.quota_cores, f"gputop-lab-quota-{os.getpid()}")
        try:
            log(f"  quota: {self.p.quota_cores:g} cores on pid {pid} in {quota.apply()}")
            return quota
        except OSError as exc:
            quota.release()
            raise NotStaged(f"no CPU quota could be set: {exc}") from exc

    @staticmethod
    def release(quota: Quota, entry: dict) -> None:
        """The quota's cgroup gone with its phase; where it stays, the phase says why."""
        left = quota.release()
        if left:
            entry["quota_left"] = left
            log(f"  quota: {left}")

    def serve_extras(self, phase: Phase, seconds: float
                     ) -> tuple[list[Load], list[str], Quota | None]:
        p, vocab = self.p, self.vocab_size
        loads = {"storm": p.storm, "prefill": p.prefill, "kv": p.kv, "membw": p.membw}
        if phase.name in loads:
            return [Load(self.serve_port, loads[phase.name], self.tally, vocab,
                         seed=hash(phase.name) % 1000).start()], [], None
        if phase.name == "quota":
            return [], [], self.quota(self.serve_pid)
        return [], self.hogs(phase, seconds, self.serve_cpus), None

    def hogs(self, phase: Phase, seconds: float, cpus: set[int]) -> list[str]:
        """The side processes a host or shared phase starts against a loop on ``cpus``."""
        if phase.name == "host":
            return [self.hog(f"hog-{i}", "cpu", cpus, seconds + 5)
                    for i in range(self.p.hogs_per_core * len(cpus))]
        if phase.name == "shared":
            # on a GPU the second context time-slices the device; on the CPU the "device"
            # is the loop's core, so the stand-in competes there
            return [self.hog("gpu-hog", "gpu", cpus if self.p.device == "cpu"
                             else self.other_cpus, seconds + 5)]
        return []

    @staticmethod
    def staged(entry: dict, extras, phase: Phase, seconds: float, unstaged):
        """What ``extras`` starts for ``phase`` (of ``entry``), or ``unstaged`` where its
        cause could not be staged here (recorded in the entry: the phase runs healthy)."""
        try:
            return extras(phase, seconds)
        except NotStaged as exc:
            entry["truth"], entry["not_staged"] = None, str(exc)
            log(f"  {entry['name']}: {exc}")
            return unstaged

    def run_serve(self) -> None:
        steady = Load(self.serve_port, self.p.steady, self.tally, self.vocab_size).start()
        self.spawn_record("serve", self.serve_url + "/metrics", self.serve_pid)
        self.wait_record("serve")
        phases = [ph for ph in self.p.phases if ph.segment == "serve"]
        for i, phase in enumerate(phases):
            if i:
                self.settle(self.p.settle_s)
            seconds = self.p.first_phase_s if i == 0 else self.p.phase_s
            entry = self.begin(phase)
            loads, hogs, quota = self.staged(entry, self.serve_extras, phase, seconds,
                                             ([], [], None))
            self.screen(phase, self.serve_url + "/metrics", self.serve_pid)
            time.sleep(seconds)
            entry["end_wall_s"] = time.time()
            for load in loads:
                load.stop(cut=True)
            for name in hogs:
                self.children.stop(name, signal.SIGKILL)
            if quota is not None:
                self.release(quota, entry)
            entry["client"] = self.tally.summary(entry["start_wall_s"], entry["end_wall_s"])
            entry["metrics_page"] = self.page()
            self.report(entry)
        if self.training:
            # the training loop builds its model, and its recorder starts, while this ends
            self.set_control(mode="warm")
            self.spawn_record("train", self.train_url, self.train.pid)
        self.settle(self.p.settle_s)
        steady.stop(cut=True)
        self.wait_screens()
        time.sleep(2 * self.p.delay_s)
        self.doc["serve"]["final_page"] = self.page()
        log("serve phases done; stopping the recorder and the serve loop")
        self.stop_record("serve")
        self.doc["load"] = {"bins": self.tally.bins(), "requests": self.tally.requests,
                            "usage_tokens": self.tally.usage_tokens,
                            "errors": self.tally.errors}
        self.doc["serve"]["rc"] = self.children.stop("serve")
        log("serve loop stopped")

    def settle(self, seconds: float) -> None:
        start = time.time()
        time.sleep(seconds)
        self.doc["settles"].append({"start_wall_s": start, "end_wall_s": time.time()})

    def begin(self, phase: Phase) -> dict:
        entry = {"name": phase.name, "segment": phase.segment, "truth": phase.truth,
                 "what": phase.what, "start_wall_s": time.time()}
        self.doc["phases"].append(entry)
        log(f"phase {phase.name}: {phase.what}")
        return entry

    def report(self, entry: dict) -> None:
        c = entry["client"]
        itl = c.get("itl_p99_s")
        log(f"  {entry['name']}: {c['tokens_per_s']:.0f} tok/s by the clients' count"
            + (f", ITL p99 {itl * 1e3:.0f} ms" if itl is not None else ""))

    # ------------------------------------------------------------------ the training loop

    def start_train(self) -> None:
        """Started first, idle: it imports torch while the serve loop works, and builds
        its model on the device only when the training phases begin."""
        self.set_control(mode="idle")
        self.train_port = free_port()
        self.train_url = f"http://127.0.0.1:{self.train_port}/metrics"
        self.train = self.children.start(
            "train", [self.python, "-m", "lab.train_loop", "--preset", self.p.preset,
                      "--device", self.p.device, "--port", str(self.train_port),
                      "--control", self.control, *self.p.train_args],
            self.logfile("train"), cpus=self.train_cpus, env=self.env(), cwd=ROOT)

    def train_tokens(self) -> float | None:
        return counter(http_get(self.train_url, 5).decode(), "trainer_tokens_total")

    def train_extras(self, phase: Phase, seconds: float) -> tuple[dict, list[str], Quota | None]:
        """The control file's mode, the side processes and the quota a training phase
        stages; a quota that cannot be set raises NotStaged."""
        p = self.p
        if phase.name == "stall":
            return {"mode": "stall", "stall_s": p.stall_s}, [], None
        if phase.name == "graph":
            return {"mode": "graph", "graph_factor": p.graph_factor}, [], None
        if phase.name == "quota":
            return {"mode": "train"}, [], self.quota(self.train.pid)
        return {"mode": "train"}, self.hogs(phase, seconds, self.train_cpus), None

    def run_train(self) -> None:
        self.set_control(mode="warm")
        if "train" not in self.doc["recordings"]:  # no serve loop started it
            self.spawn_record("train", self.train_url, self.train.pid)
        self.set_control(mode="train")
        wait_until(lambda: (counter(http_get(self.train_url, 2).decode(),
                                    "trainer_steps_total") or 0) >= 3,
                   self.p.start_timeout_s, self.train, "the training loop")
        self.doc["train"] = {"url": self.train_url, "pid": self.train.pid}
        log("training loop running")
        self.wait_record("train")
        phases = [ph for ph in self.p.phases if ph.segment == "train"]
        for i, phase in enumerate(phases):
            if i:
                self.set_control(mode="train")
                self.settle(self.p.settle_s)
            seconds = self.p.first_phase_s if i == 0 else self.p.phase_s
            before = self.train_tokens()
            entry = self.begin(phase)
            mode, hogs, quota = self.staged(entry, self.train_extras, phase, seconds,
                                            ({"mode": "train"}, [], None))
            self.set_control(**mode)
            self.screen(phase, self.train_url, self.train.pid)
            time.sleep(seconds)
            entry["end_wall_s"] = time.time()
            after = self.train_tokens()
            for name in hogs:
                self.children.stop(name, signal.SIGKILL)
            if quota is not None:
                self.release(quota, entry)
            seconds = entry["end_wall_s"] - entry["start_wall_s"]
            entry["client"] = {"tokens": after - before, "tokens_per_s": (after - before) / seconds}
            entry["metrics_page"] = http_get(self.train_url).decode()
            self.report(entry)
        self.set_control(mode="train")
        self.settle(self.p.settle_s)
        self.wait_screens()
        self.stop_record("train")
        self.set_control(mode="stop")
        self.doc["train"]["rc"] = self.children.stop("train", timeout_s=30)

    # ------------------------------------------------------------------ the run

    def run(self) -> int:
        os.makedirs(self.out, exist_ok=True)
        os.sched_setaffinity(0, self.other_cpus)  # the serve loop's cores stay its own
        self.doc["started_wall_s"] = time.time()
        smi = shutil.which("nvidia-smi")
        try:
            if smi:
                self.children.start("dmon", [smi, "dmon", "-s", "pucm", "-d", "1", "-o", "DT"],
                                    os.path.join(self.out, "dmon.txt"))
            log(f"lab: profile {self.args.profile}, "
                + (f"serve loop on cores {sorted(self.serve_cpus)}, " if self.serving else
                   f"training loop on cores {sorted(self.train_cpus)}, ")
                + f"the rest on {sorted(self.other_cpus)}")
            if self.training:
                self.start_train()
            if self.serving:
                self.start_serve()
                self.run_serve()
            if self.training:
                self.run_train()
        except (RuntimeError, OSError, ValueError, KeyError) as exc:
            self.doc["errors"].append(f"{type(exc).__name__}: {exc}")
        finally:
            self.children.stop_all()
            self.doc["ended_wall_s"] = time.time()
            self.doc["logs"] = {}
            for name in sorted(os.listdir(self.tmp)):
                if name.endswith(".log"):
                    with open(os.path.join(self.tmp, name), "rb") as f:
                        f.seek(max(0, os.path.getsize(f.name) - LOG_TAIL_BYTES))
                        self.doc["logs"][name] = f.read().decode(errors="replace")
            self.finish()
        for error in self.doc["errors"]:
            print(f"lab: {error}", file=sys.stderr)
        return 1 if self.doc["errors"] else 0

    def finish(self) -> None:
        with open(os.path.join(self.out, "phases.json"), "w") as f:
            json.dump(self.doc, f, indent=1)
        screens = os.path.join(self.tmp, "screens")
        if os.path.isdir(screens) and os.listdir(screens):
            with tarfile.open(os.path.join(self.out, "screens.tar"), "w") as tar:
                for name in sorted(os.listdir(screens)):
                    tar.add(os.path.join(screens, name), arcname=f"screens/{name}")
        shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="cpu")
    parser.add_argument("--out", required=True, help="where the recordings and the log go")
    parser.add_argument("--gputop-python", default=sys.executable,
                        help="the interpreter gputop is installed for (default: this one)")
    parser.add_argument("--nvml-stand-in", default=None, metavar="DIR",
                        help="a directory holding the C stand-in libnvidia-ml.so.1 (no GPU)")
    parser.add_argument("--screens", default=None, metavar="PHASES",
                        help="all, none, or phases whose dashboard to draw (default: the "
                             "profile's)")
    parser.add_argument("--phase-s", type=float, default=None,
                        help="seconds per phase instead of the profile's (the first 1.25x, "
                             "the settling between them 0.25x): a dry run")
    parser.add_argument("--device", default=None, help="instead of the profile's")
    parser.add_argument("--preset", default=None, help="instead of the profile's")
    args = parser.parse_args(argv)
    profile = PROFILES[args.profile]
    if args.phase_s is not None:
        if not args.phase_s > 0:
            parser.error("--phase-s must be > 0")
        profile = replace(profile, phase_s=args.phase_s, first_phase_s=1.25 * args.phase_s,
                          settle_s=0.25 * args.phase_s)
    profile = replace(profile, device=args.device or profile.device,
                      preset=args.preset or profile.preset)
    if args.nvml_stand_in and not os.path.isfile(os.path.join(args.nvml_stand_in,
                                                              "libnvidia-ml.so.1")):
        parser.error(f"--nvml-stand-in: no libnvidia-ml.so.1 in {args.nvml_stand_in}")
    names = {p.name for p in profile.phases}
    if args.screens not in (None, "all", "none") and not set(args.screens.split(",")) <= names:
        parser.error(f"--screens: phases are {', '.join(p.name for p in profile.phases)}")
    return Runner(args, profile).run()


if __name__ == "__main__":
    sys.exit(main())
