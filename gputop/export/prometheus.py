"""The exporter's collector: Prometheus families (FACTS.md section 8) over the last derived view.

A scrape never calls NVML or an engine: the session derives a view once per tick on its
own thread and hands it to ``Exporter.on_view``, which also keeps what must be cumulative
for Prometheus (launch-latency histograms since start, episodes counted); ``collect``
only turns that into families, so a scrape storm cannot slow sampling.  Families and
their units come from the signal catalogue (``model/signals.py``); labelled families
(VRAM parts, throttle reasons, episodes, sources) are written here.  Unknown values are
absent, never 0.  No per-process series unless asked (``export_processes``), and never
command lines (other users' commands are private); per-tenant series (pod, container,
Slurm job: ``model/tenants.py``) only with ``export_tenants``.  MIG instances have their
own ``gputop_mig_*`` families labelled ``{gpu, mig}``.
"""

from __future__ import annotations

import bisect
import dataclasses
import socket
import threading
from collections.abc import Iterator

from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily,
                                    Metric)

from gputop import __version__
from gputop.buckets import bucket_mid_ns
from gputop.model.derive import OFF_CPU, View
from gputop.model.detect import CAUSES
from gputop.model import tenants
from gputop.model.signals import ENGINE, GPU, HOST, MIG, REPLICA, TENANT, Signal
from gputop.schema import THROTTLE_REASONS
from gputop.units import printable

# launch durations: le from 1 us, doubling, to 8.4 s (then +Inf)
LAUNCH_BOUNDS_S = tuple(1e-6 * 2**k for k in range(24))
EPISODE_KINDS = ("busy_unproductive", "starved")
# each replica's engine families: gputop_engine_X -> gputop_engine_replica_X{replica, model,
# gpus}, so the page's own (unlabelled) series keep meaning the whole endpoint
REPLICA_SIGNALS = tuple(dataclasses.replace(s, prom=s.prom.replace("gputop_engine_",
                                                                    "gputop_engine_replica_", 1))
                        for s in REPLICA if s.prom)
VRAM_PARTS = ("weights", "kv_used", "kv_free", "kv_pool", "engine_other", "other_processes",
              "free", "unsplit", "overflow")  # kv_pool: a KV pool whose use is unknown


def _namespace(pod: str) -> str:
    """The namespace of a pod shown as "namespace/name" ("" for "pod UID" or none)."""
    return pod.split("/", 1)[0] if "/" in pod and not pod.startswith("pod ") else ""


class _Cumulative:
    """A Prometheus histogram built up from gputop's per-interval log-linear histograms."""

    def __init__(self) -> None:
        self.counts = [0] * (len(LAUNCH_BOUNDS_S) + 1)
        self.sum_s = 0.0

    def add(self, buckets: dict[int, int], sum_ns: int) -> None:
        for index, count in buckets.items():
            self.counts[bisect.bisect_left(LAUNCH_BOUNDS_S, bucket_mid_ns(index) / 1e9)] += count
        self.sum_s += sum_ns / 1e9

    def buckets(self) -> list[tuple[str, float]]:
        out, running = [], 0
        for bound, count in zip(LAUNCH_BOUNDS_S, self.counts):
            running += count
            out.append((f"{bound:.6g}", running))
        out.append(("+Inf", running + self.counts[-1]))
        return out


class Exporter:
    """Keeps the newest view (and the cumulative parts) for scrapes; thread-safe."""

    def __init__(self, hostname: str | None = None, export_processes: bool = False,
                 export_tenants: bool = False):
        self.hostname = hostname or socket.gethostname()
        self.export_processes = export_processes
        self.export_tenants = export_tenants
        self._lock = threading.Lock()
        self._view: View | None = None
        self._launch: dict[str, _Cumulative] = {}
        self._offcpu = _Cumulative()
        self._traced_s: float | None = None  # probes attached so far, when sampled
        self._episodes: dict[str, int] = dict.fromkeys(EPISODE_KINDS, 0)
        self._open_episodes: set[tuple[str, str, float]] = set()  # counted already

    # ------------------------------------------------------------ fed by the session

    def on_view(self, view: View) -> None:
        with self._lock:
            for hist in view.frame.launch:
                target = self._offcpu if hist.api == OFF_CPU else \
                    self._launch.setdefault(hist.api, _Cumulative())
                target.add(hist.buckets, hist.sum_ns)
            if view.frame.launch_armed_s is not None:
                self._traced_s = (self._traced_s or 0.0) + view.frame.launch_armed_s
            keys = {(e.subject, e.kind, e.start_wall_s) for e in view.detector.actives}
            for _, kind, _ in keys - self._open_episodes:  # each subject may have one open
                self._episodes[kind] = self._episodes.get(kind, 0) + 1
            self._open_episodes = keys
            self._view = view

    @property
    def view(self) -> View | None:
        with self._lock:
            return self._view

    # ------------------------------------------------------------ read by scrapes

    def collect(self) -> Iterator:
        with self._lock:
            view = self._view
            launch = {api: (c.buckets(), c.sum_s) for api, c in self._launch.items()}
            offcpu = (self._offcpu.buckets(), self._offcpu.sum_s)
            traced_s = self._traced_s
            episodes = dict(self._episodes)
        info = GaugeMetricFamily("gputop_info", "gputop's version and the host it watches",
                                 labels=["version", "hostname"])
        info.add_metric([__version__, printable(self.hostname)], 1)
        yield info
        if view is None:
            return
        yield from self._sources(view)
        yield from self._gpus(view)
        yield from self._engine(view)
        yield from self._signals(HOST, [((), view)])
        yield from self._launch_families(launch, offcpu, traced_s)
        yield from self._episode_families(view, episodes)

    def _sources(self, view: View):
        up = GaugeMetricFamily("gputop_source_up", "1 when the source delivered its reading",
                               labels=["source"])
        age = GaugeMetricFamily("gputop_source_reading_age_seconds",
                                "how old the source's reading is at the last tick",
                                labels=["source"])
        for name, status in view.sources.items():
            up.add_metric([name], 1 if status.ok else 0)
            if status.ok and status.age_s is not None:
                age.add_metric([name], status.age_s)
        yield up
        yield age

    @staticmethod
    def _signals(signals: tuple[Signal, ...], scoped: list[tuple[tuple[str, ...], object]],
                 label_names: tuple[str, ...] = ()):
        """One family per exported name: signals sharing a family add their constant labels."""
        families: dict[str, Metric] = {}
        for signal in signals:
            if signal.prom is None:
                continue
            # quantiles of the engine's own histogram over an interval: a summary without
            # _sum/_count, as Prometheus allows the quantile label only on summaries
            kind = "summary" if "quantile" in signal.prom_labels else signal.kind
            family = families.setdefault(signal.prom,
                                         Metric(signal.prom_family, signal.help, kind))
            for label_values, obj in scoped:
                value = signal.read(obj)
                if value is not None:
                    labels = {**dict(zip(label_names, label_values)), **signal.prom_labels}
                    family.add_sample(signal.prom, labels, value * signal.prom_scale)
        yield from families.values()

    def _gpus(self, view: View):
        info = GaugeMetricFamily("gputop_gpu_info", "a GPU gputop reads",
                                 labels=["gpu", "uuid", "name"])
        lost = GaugeMetricFamily("gputop_gpu_lost", "1 when the GPU fell off the bus", labels=["gpu"])
        throttled = GaugeMetricFamily("gputop_gpu_throttled",
                                      "1 while the clocks are throttled for this reason",
                                      labels=["gpu", "reason"])
        memory = GaugeMetricFamily("gputop_gpu_memory_bytes",
                                   "the card's memory split by what holds it", labels=["gpu", "part"])
        process_labels = ["gpu", "pid", "user", "process", "container", "pod", "mig",
                          "slurm_job"]
        processes = GaugeMetricFamily("gputop_process_gpu_memory_bytes",
                                      "GPU memory per process (--export-processes)",
                                      labels=process_labels)
        process_sm = GaugeMetricFamily(
            "gputop_process_sm_utilization_ratio", "SM time of the process over NVML's last "
            "per-process sample (reliable with one process per GPU; --export-processes)",
            labels=process_labels)
        process_mem = GaugeMetricFamily(
            "gputop_process_memory_utilization_ratio", "memory-controller time of the process "
            "over NVML's last per-process sample (--export-processes)", labels=process_labels)
        scoped, migs, owners = [], [], []
        for g in view.gpus:
            s = g.sample
            gpu = str(s.index)
            scoped.append(((gpu,), g))
            info.add_metric([gpu, printable(s.uuid), printable(s.name)], 1)
            lost.add_metric([gpu], 1 if s.lost else 0)
            if not s.lost and "throttle" not in s.missing:  # known: every reason, 0 or 1
                for reason in dict.fromkeys((*THROTTLE_REASONS, *s.throttle)):
                    throttled.add_metric([gpu, reason], 1 if reason in s.throttle else 0)
            if g.vram is not None:
                parts = dict(g.vram.parts(include_zero=True))
                parts["engine_other"] = parts.pop("other", None)
                parts["overflow"] = g.vram.overflow_bytes
                parts["unsplit"] = g.vram.unsplit_bytes
                for part in VRAM_PARTS:
                    if parts.get(part) is not None:
                        memory.add_metric([gpu, part], parts[part])
            if self.export_processes:
                for p in g.processes:
                    # names from other users: a name that is not UTF-8 must not make
                    # the encoder drop the whole scrape
                    labels = [gpu, str(p.pid), *map(printable, (p.user, p.name, p.container,
                                                                p.pod)),
                              "" if p.mig_index is None else str(p.mig_index),
                              printable(p.slurm_job)]
                    for family, value, scale in ((processes, p.mem_bytes, 1),
                                                 (process_sm, p.sm_util_pct, 0.01),
                                                 (process_mem, p.mem_util_pct, 0.01)):
                        if value is not None:
                            family.add_metric(labels, value * scale)
            migs += [((gpu, str(m.sample.index)), m) for m in g.migs]
            if self.export_tenants:
                owners += [((gpu, "" if t.mig_index is None else str(t.mig_index),
                             *map(printable, (t.pod, _namespace(t.pod), t.container,
                                              t.slurm_job))), t)
                           for t in tenants.owners(g.processes)]
        yield info
        yield lost
        yield from self._signals(GPU, scoped, ("gpu",))
        yield throttled
        yield memory
        if self.export_processes:
            yield processes
            yield process_sm
            yield process_mem
        yield from self._migs(migs)
        if self.export_tenants:
            yield from self._signals(TENANT, owners,
                                     ("gpu", "mig", "pod", "namespace", "container", "slurm_job"))

    def _migs(self, migs: list[tuple[tuple[str, str], object]]):
        """MIG instances: an info series naming each, then the catalogue's MIG signals."""
        info = GaugeMetricFamily("gputop_mig_info", "a MIG instance of a GPU",
                                 labels=["gpu", "mig", "gpu_instance", "compute_instance",
                                         "profile", "uuid"])
        for (gpu, mig), m in migs:
            s = m.sample
            info.add_metric([gpu, mig, "" if s.gpu_instance_id is None else str(s.gpu_instance_id),
                             "" if s.compute_instance_id is None else str(s.compute_instance_id),
                             s.profile, s.uuid], 1)
        yield info
        yield from self._signals(MIG, migs, ("gpu", "mig"))

    def _engine(self, view: View):
        engine = view.engine
        up = GaugeMetricFamily("gputop_engine_up", "1 when the engine's reading is current")
        up.add_metric([], 1 if engine is not None else 0)
        yield up
        if engine is None:
            return
        info = GaugeMetricFamily("gputop_engine_info", "the serving engine gputop reads",
                                 labels=["kind", "model"])
        info.add_metric([engine.sample.kind, printable(engine.sample.model)], 1)
        yield info
        yield from self._signals(ENGINE, [((), engine)])
        if engine.replicas:
            replica = GaugeMetricFamily(
                "gputop_engine_replica_info",
                "a data-parallel engine or model behind the endpoint, and the GPUs its "
                "processes are on", labels=["replica", "model", "gpus"])
            scoped = []
            for r in engine.replicas:
                labels = (r.sample.replica, r.sample.model, ",".join(map(str, r.gpus)))
                replica.add_metric(list(labels), 1)
                scoped.append((labels, r))
            yield replica
            yield from self._signals(REPLICA_SIGNALS, scoped, ("replica", "model", "gpus"))

    @staticmethod
    def _launch_families(launch, offcpu, traced_s):
        family = HistogramMetricFamily("gputop_launch_duration_seconds",
                                       "host-side duration of CUDA launch API calls (eBPF)",
                                       labels=["api"])
        for api, (buckets, sum_s) in sorted(launch.items()):
            family.add_metric([api], buckets, sum_s)
        yield family
        off = HistogramMetricFamily("gputop_launch_offcpu_seconds",
                                    "time the launching threads spent switched out (eBPF)")
        if offcpu[0][-1][1]:
            off.add_metric([], offcpu[0], offcpu[1])
        yield off
        if traced_s is not None:  # --ebpf-duty: the launch histograms count these seconds only
            traced = CounterMetricFamily(
                "gputop_launch_traced_seconds",
                "seconds the launch probes were attached (--ebpf-duty samples them); calls per "
                "second = rate of gputop_launch_duration_seconds_count / rate of this")
            traced.add_metric([], traced_s)
            yield traced

    @staticmethod
    def _episode_families(view: View, episodes: dict[str, int]):
        active = GaugeMetricFamily("gputop_episode_active",
                                   "1 while the GPU is busy but unproductive (or starved)",
                                   labels=["gpu", "kind"])
        suspect = GaugeMetricFamily("gputop_episode_suspect_score",
                                    "how likely each cause is, while an episode is open",
                                    labels=["gpu", "cause"])
        total = CounterMetricFamily("gputop_episodes", "episodes opened since gputop started",
                                    labels=["kind"])
        for g in view.gpus:
            gpu = str(g.sample.index)
            episode = view.alert_for(g.sample.index)
            for kind in EPISODE_KINDS:
                active.add_metric([gpu, kind], 1 if episode is not None and episode.kind == kind
                                  else 0)
            if episode is not None:
                for cause, score in episode.suspects:
                    if cause in CAUSES:
                        suspect.add_metric([gpu, cause], score)
        for kind, count in episodes.items():
            total.add_metric([kind], count)
        yield active
        yield suspect
        yield total
