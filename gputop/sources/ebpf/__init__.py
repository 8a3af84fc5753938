"""Host launch latency from eBPF uprobes on the CUDA runtime and driver (bcc).

Where to attach: every mapped ``libcudart.so*`` / ``libcuda.so*`` of the target
processes (the pinned tree, or every process), once per distinct file (device +
inode, not path string), reached through ``/proc/PID/map_files`` so the file probed is
the one mapped (a library in a container's mount namespace included), never one a
process has put at that path since.  Symbols a library lacks are
skipped and listed.  The kernel side (``launch.bpf.c``) keeps cumulative
histograms; each poll reads them and emits the difference since the last poll,
so frames carry per-interval histograms that the model merges over any window.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from gputop import hostroot
from gputop.buckets import bucket_bounds_ns, bucket_mid_ns
from gputop.schema import HostSample, LaunchHist
from gputop.sources.base import Reading, SourceError
from gputop.sources.ebpf.duty import DUTY_ON_S, DutyCycle
from gputop.sources.ebpf.release import release_in_background

RUNTIME_APIS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaGraphLaunch", "cudaMemcpyAsync",
                "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaLaunchKernel_ptsz",
                "cudaLaunchKernelExC_ptsz", "cudaGraphLaunch_ptsz", "cudaMemcpyAsync_ptsz",
                "cudaStreamSynchronize_ptsz")
DRIVER_APIS = ("cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch", "cuLaunchKernel_ptsz",
               "cuLaunchKernelEx_ptsz", "cuGraphLaunch_ptsz")
APIS = RUNTIME_APIS + DRIVER_APIS
LIBRARIES = (("libcudart.so", RUNTIME_APIS), ("libcuda.so", DRIVER_APIS))
RESCAN_S = 5.0
# Distinct libraries probed at most: each costs up to 2 x 11 perf-event descriptors, and a
# user who maps 400 copies of libcuda.so.1 once took root's gputop to 1,022 of its 1,024
# descriptors.  Beyond the cap (and half the descriptor limit) a library is listed, not probed.
MAX_LIBRARIES = 32
WRAP_U32 = 1 << 32  # the kernel's bucket counters are u32
BCC_DIR = Path("/usr/lib/python3/dist-packages/bcc")
SOURCE = Path(__file__).with_name("launch.bpf.c")


def import_bcc():
    """bcc from the distribution's package (python3-bpfcc), which lives outside any virtual
    environment: import that one package from there, not the whole dist-packages."""
    if "bcc" in sys.modules:
        return sys.modules["bcc"]
    try:
        import bcc  # noqa: F401 - already importable (system Python)
        return sys.modules["bcc"]
    except ImportError:
        pass
    init = BCC_DIR / "__init__.py"
    if not init.exists():
        raise SourceError("bcc is not installed: apt-get install python3-bpfcc "
                          "(or run scripts/setup-ebpf.sh)")
    spec = importlib.util.spec_from_file_location("bcc", init,
                                                  submodule_search_locations=[str(BCC_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["bcc"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules["bcc"]
        raise SourceError(f"bcc failed to load: {exc}") from None
    return module


def unavailable_reason() -> str | None:
    """Why eBPF cannot work here, with the fix; None when it can."""
    if not SOURCE.is_file():
        return f"gputop's BPF program is missing from this installation ({SOURCE}): reinstall gputop"
    if os.geteuid() != 0:
        return "eBPF needs root (or CAP_BPF and CAP_PERFMON): run gputop with sudo"
    release = os.uname().release
    if not Path(f"/lib/modules/{release}/build").exists():
        return (f"kernel headers missing at /lib/modules/{release}/build: "
                "run scripts/setup-ebpf.sh")
    if not Path("/sys/kernel/tracing/uprobe_events").exists() and \
            not Path("/sys/kernel/debug/tracing/uprobe_events").exists():
        return "tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing"
    try:
        import_bcc()
    except SourceError as exc:
        return str(exc)
    return None


def program_text(mode: str, task_storage: bool = True) -> str:
    """The BPF C for a mode ("full" or "light"), as loaded (doctor --ebpf-source prints it).

    ``task_storage`` keeps each thread's call in flight in its task storage; without it
    (kernels that refuse task storage in uprobe programs) an LRU hash keyed by thread."""
    stubs = []
    for index, api in enumerate(APIS, start=1):
        stubs.append(f"int gputop_entry_{index}(struct pt_regs *ctx) "
                     f"{{ return on_entry(ctx, {index}); }}  // {api}")
    if mode == "full":
        stubs.append("int gputop_ret(struct pt_regs *ctx) { return on_return(ctx); }")
    try:
        text = SOURCE.read_text()
    except OSError as exc:
        raise SourceError(f"gputop's BPF program cannot be read ({SOURCE}: "
                          f"{exc.strerror or exc}): reinstall gputop") from None
    text = text.replace("/* @STUBS@ */", "\n".join(stubs))
    if task_storage:
        text = "#define GPUTOP_TASK_STORAGE 1\n" + text
    if mode == "full":
        text = "#define GPUTOP_MODE_FULL 1\n" + text
    return text


@dataclass
class Library:
    path: str  # the mapping itself: /proc/PID/map_files/START-END
    shown: str  # as the process maps it
    apis: tuple[str, ...]
    attached: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def mapped_libraries(pids: list[int] | None) -> dict[tuple[int, int], Library]:
    """CUDA libraries mapped by the target processes, keyed by (device, inode).

    The file probed is reached through ``/proc/PID/map_files/START-END``: the kernel's
    link to the very inode mapped there, in whatever mount namespace it lives.  A path
    from the maps line, resolved from here (even through ``/proc/PID/root``), would
    follow whatever the process put at that path since: a process that replaced its
    ``libcuda.so.1`` with a symbolic link would have root's bcc parse and probe a file of
    its choosing.  The inode is checked against the maps line as well."""
    found: dict[tuple[int, int], Library] = {}
    pid_list = pids if pids is not None else [int(p) for p in os.listdir(hostroot.proc())
                                               if p.isdigit()]
    for pid in pid_list:
        try:
            with open(hostroot.proc(pid, "maps")) as maps:
                lines = maps.readlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or not parts[4].isdigit():
                continue
            path = parts[5].strip()
            name = os.path.basename(path.removesuffix(" (deleted)"))
            for prefix, apis in LIBRARIES:
                if not name.startswith(prefix):
                    continue
                mapping = hostroot.proc(pid, "map_files", parts[0])
                try:
                    st = os.stat(mapping)
                except OSError:
                    continue
                if st.st_ino != int(parts[4]):
                    continue  # not what the maps line says is mapped there
                key = (st.st_dev, st.st_ino)
                if key not in found:
                    found[key] = Library(path=mapping, shown=path, apis=apis)
    return found


def library_cap() -> int:
    """Libraries probed at most: MAX_LIBRARIES, and no more than half the descriptor limit
    can hold (2 probes per API in full mode)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return MAX_LIBRARIES
    return max(1, min(MAX_LIBRARIES, (soft // 2) // (2 * len(RUNTIME_APIS))))


class EbpfSource:
    name = "ebpf"

    def __init__(self, mode: str = "full", pin_state=None, rescan_s: float = RESCAN_S,
                 task_storage: bool | None = None, duty: float = 1.0,
                 duty_on_s: float = DUTY_ON_S):
        if mode not in ("full", "light"):
            raise ValueError(f"--ebpf must be full, light or off, got {mode!r}")
        if not 0 < duty <= 1:
            raise ValueError(f"--ebpf-duty must be above 0 and at most 1, got {duty!r}")
        self.mode = mode
        # Sampled probes: attached duty_on_s in every duty_on_s / duty seconds (DutyCycle)
        self.duty, self.duty_on_s = duty, duty_on_s
        self._cycle: DutyCycle | None = None
        self.pin_state = pin_state
        self.rescan_s = rescan_s
        self._bpf = None
        self._libraries: dict[tuple[int, int], Library] = {}
        self._last_scan = -1e9
        self._previous: dict = {}
        self._epoch = 0
        # None: task storage where the kernel allows it, else the hash (tests force either)
        self.task_storage = task_storage
        self._previous_offcpu: dict = {}
        self._previous_involuntary: dict = {}
        self.skipped_libraries = 0  # seen at the last scan beyond the cap, not probed

    # ------------------------------------------------------------ lifecycle

    def open(self) -> None:
        reason = unavailable_reason()
        if reason:
            raise SourceError(reason)
        bcc = import_bcc()
        first_error = None
        for task_storage in (True, False) if self.task_storage is None else (self.task_storage,):
            try:
                self._bpf = bcc.BPF(text=program_text(self.mode, task_storage).encode())
                # programs reach the verifier when loaded, not when compiled: load one of
                # each kind now, so a kernel that refuses task storage in uprobes says so here
                self._bpf.load_func(b"gputop_entry_1", bcc.BPF.KPROBE)
                if self.mode == "full":
                    self._bpf.load_func(b"gputop_ret", bcc.BPF.KPROBE)
            except Exception as exc:
                first_error = first_error or exc
                if self._bpf is not None:
                    self._bpf.cleanup()
                    self._bpf = None
                continue
            self.task_storage = task_storage
            if self.duty < 1:
                self._cycle = DutyCycle(self)
            return
        raise SourceError(f"the BPF program did not load: {str(first_error).splitlines()[0]}")

    def close(self) -> None:
        if self._cycle is not None:
            self._cycle.stop()  # returns within one probe operation (~0.1 s at worst)
        if self._bpf is not None:
            try:
                # the kernel's ~0.1 s per probe is paid by a background helper (release.py);
                # bcc's cleanup then only drops references: milliseconds, not seconds
                done = release_in_background(list(getattr(self._bpf, "uprobe_fds", {}).values()))
                try:
                    self._bpf.cleanup()
                finally:
                    if done is not None:
                        done()
            finally:
                self._bpf = None

    @property
    def libraries(self) -> list[Library]:
        return list(self._libraries.values())

    # ------------------------------------------------------------ attaching

    def _targets(self, tick: float) -> list[int] | None:
        """PIDs of the pinned tree, or None for every process."""
        resolved = self.pin_state.resolve(tick) if self.pin_state is not None else None
        return None if resolved is None else [p.pid for p in resolved.tree]

    def rescan(self, tick: float | None = None) -> None:
        """Attach to CUDA libraries mapped since the last scan (new processes, dlopen): a
        library seen before has each of its APIs attached or listed as missing."""
        tick = time.monotonic() if tick is None else tick
        for library in self.refresh(self._targets(tick)):
            if not library.attached and not library.missing:
                self.attach(library, library.apis)

    def refresh(self, targets: list[int] | None) -> list[Library]:
        """The target processes' CUDA libraries now, each known one with its current
        mapping's path (the process first seen mapping it may be gone)."""
        current, skipped = [], 0
        for key, found in mapped_libraries(targets).items():
            if key not in self._libraries and len(self._libraries) >= library_cap():
                skipped += 1
                continue
            library = self._libraries.setdefault(key, found)
            library.path, library.shown = found.path, found.shown
            current.append(library)
        self.skipped_libraries = skipped
        return current

    def attach(self, library: Library, apis) -> list[bytes]:
        """Attach entry (and, in full mode, return) probes for ``apis``; an API the library
        does not export (and never had attached) goes to ``missing``.  Returns the new
        probes' event names."""
        before = set(self._bpf.uprobe_fds)
        path = library.path.encode()
        for api in apis:
            try:
                self._bpf.attach_uprobe(name=path, sym=api.encode(),
                                        fn_name=f"gputop_entry_{APIS.index(api) + 1}".encode())
                if self.mode == "full":
                    try:
                        self._bpf.attach_uretprobe(name=path, sym=api.encode(),
                                                   fn_name=b"gputop_ret")
                    except Exception:
                        self._bpf.detach_uprobe(name=path, sym=api.encode())
                        raise
            except Exception:
                if api not in library.attached and api not in library.missing:
                    library.missing.append(api)
                continue
            if api not in library.attached:
                library.attached.append(api)
        return [name for name in self._bpf.uprobe_fds if name not in before]

    # ------------------------------------------------------------ reading

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        if self._bpf is None:
            raise SourceError("not loaded")
        now = time.monotonic()
        targets = self._targets(time_mono_s)
        if self._cycle is not None:
            self._cycle.targets(targets)  # the cycle scans and attaches on its own thread
        elif now - self._last_scan >= self.rescan_s:
            self._last_scan = now
            self.rescan(time_mono_s)
        if not any(lib.attached for lib in self.libraries):
            every = self._cycle.period_s if self._cycle is not None else self.rescan_s
            raise SourceError("no process maps libcudart.so or libcuda.so yet (rescanning "
                              f"every {every:.0f}s)")
        wanted = None if targets is None else set(targets)
        armed_s = self._cycle.armed_since_last_read() if self._cycle is not None else None
        hists = self._launch_hists(wanted)
        offcpu, switches = self._offcpu(wanted)
        if self._cycle is not None:
            self._cycle.note_calls(hists)
        detail = "; ".join(
            f"{lib.shown}: {', '.join(lib.attached) or 'nothing'}"
            + (f" (not exported: {', '.join(lib.missing)})" if lib.missing else "")
            for lib in self.libraries)
        if self.skipped_libraries:
            detail += (f"; {self.skipped_libraries} more CUDA libraries not probed (at most "
                       f"{library_cap()} distinct ones)")
        sampled = "" if self._cycle is None else (
            f", sampled: probes attached {self.duty_on_s:g} s in every "
            f"{self._cycle.period_s:g} s (--ebpf-duty {self.duty:g})")
        return Reading(launch=hists + offcpu, host=HostSample(offcpu_switches=switches),
                       detail=f"{self.mode} mode{sampled}; {detail}", launch_armed_s=armed_s)

    def _launch_hists(self, wanted: set[int] | None) -> tuple[LaunchHist, ...]:
        """Per-interval histograms: differences of the kernel's cumulative counts.

        The epoch is bumped first, so the interval just ended has a max slot of its own
        that no later call writes (launch.bpf.c)."""
        ended = self._epoch
        self._epoch += 1
        self._bpf["epoch"][ctypes.c_int(0)] = ctypes.c_uint64(self._epoch)
        slot = ended & 1
        out = []
        for key, value in self._bpf["stats"].items():
            tgid, api = key.tgid, key.api
            if wanted is not None and tgid not in wanted:
                continue
            count, sum_ns = value.count, value.sum_ns
            previous = self._previous.get((tgid, api))
            if previous is not None and previous[0] == count:
                continue
            current = array("I", bytes(value.buckets))
            self._previous[(tgid, api)] = (count, sum_ns, current)
            if previous is None:
                previous = (0, 0, array("I", bytes(len(current) * 4)))
            delta = {b: (now - before) % WRAP_U32 for b, (now, before)
                     in enumerate(zip(current, previous[2])) if now != before}
            if not delta:
                continue
            if value.max_epoch[slot] == ended and value.max_ns[slot]:
                max_ns = value.max_ns[slot]
            else:  # the interval's max was overwritten by a racing call: its bucket's top
                max_ns = bucket_bounds_ns(max(delta))[1] - 1
            out.append(LaunchHist(api=APIS[api - 1] if 0 < api <= len(APIS) else f"api{api}",
                                  pid=tgid, count=count - previous[0],
                                  sum_ns=sum_ns - previous[1], max_ns=max_ns, buckets=delta))
        return tuple(out)

    def _offcpu(self, wanted: set[int] | None) -> tuple[tuple[LaunchHist, ...], int | None]:
        per_tgid: dict[int, dict[int, int]] = {}
        for key, value in self._bpf["offcpu_hist"].items():
            per_tgid.setdefault(key.tgid, {})[key.bucket] = value.value
        out = []
        for tgid, current in per_tgid.items():
            if wanted is not None and tgid not in wanted:
                continue
            previous = self._previous_offcpu.get(tgid, {})
            delta = {b: n - previous.get(b, 0) for b, n in current.items() if n > previous.get(b, 0)}
            self._previous_offcpu[tgid] = current
            if delta:
                out.append(LaunchHist(api="off-cpu", pid=tgid, count=sum(delta.values()),
                                      sum_ns=int(sum(bucket_mid_ns(b) * n for b, n in delta.items())),
                                      max_ns=int(max(bucket_mid_ns(b) for b in delta)),
                                      buckets=delta))
        switches = 0
        for key, value in self._bpf["involuntary"].items():
            tgid = key.value
            if wanted is not None and tgid not in wanted:
                continue
            switches += value.value - self._previous_involuntary.get(tgid, 0)
            self._previous_involuntary[tgid] = value.value
        return tuple(out), switches
