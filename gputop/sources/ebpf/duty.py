"""Sampled probes (``--ebpf-duty``): attached part of the time, so traced threads pay less.

A uprobe costs the traced thread a trap on every call (~1.2 us here, 9 us measured
elsewhere), paid by the very thread whose launch jitter is measured.  With a duty
cycle of D the probes are attached ``on_s`` seconds in every ``on_s / D`` (1 s in 10 at
0.1): attached fresh (~1 ms a probe), disabled at once when the window ends (an ioctl: the
programs stop counting at that instant, so the window's length is exact), then detached
one at a time, the most called API first.  A disabled probe still traps until its
detach, which the kernel takes ~0.1 s for (an RCU grace period, one probe after
another), so the hottest API stops costing ~0.1 s after the window and the coldest ones
later; ``bench/ebpf_duty.py`` measures what the traced thread pays on average.

Durations are unchanged by sampling (percentiles agree within a bucket for a steady
workload); counts cover only the attached time, so the frame carries how long that was
(``launch_armed_s``) and the model divides by it for calls/s.
"""

from __future__ import annotations

import threading
import time

from gputop.sources.ebpf.release import disable

DUTY_ON_S = 1.0


class DutyCycle:
    """The thread that attaches and detaches an ``EbpfSource``'s probes on a cycle."""

    def __init__(self, source):
        self.source = source
        self.period_s = source.duty_on_s / source.duty
        # Only this thread attaches and detaches (stop() joins it before the source's
        # close); the lock is for the windows, which the poll reads.
        self._windows_lock = threading.Lock()
        self._stop = threading.Event()
        self._targets_known = threading.Event()
        self._targets: list[int] | None = None
        self._windows: list[list[float | None]] = []  # [start, end or None while attached]
        self._last_read = time.monotonic()
        self._calls: dict[str, int] = {}  # calls per API seen so far: detach order
        self._events: dict[str, list[bytes]] = {}  # API -> attached probes' event names
        self._thread = threading.Thread(target=self._run, name="gputop-ebpf-duty", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ from the poll

    def targets(self, pids: list[int] | None) -> None:
        """The processes to probe (the pinned tree, or None for all), from the poll, which
        owns the pin; the first cycle waits for it."""
        self._targets = pids
        self._targets_known.set()

    def armed_since_last_read(self) -> float:
        """Seconds the probes were attached since the previous call (the poll's interval)."""
        now = time.monotonic()
        with self._windows_lock:
            start, self._last_read = self._last_read, now
            total = sum(max(0.0, min(end if end is not None else now, now) - max(begin, start))
                        for begin, end in self._windows)
            self._windows = [w for w in self._windows if w[1] is None or w[1] > now]
        return total

    def note_calls(self, hists) -> None:
        for hist in hists:
            self._calls[hist.api] = self._calls.get(hist.api, 0) + hist.count

    def stop(self) -> None:
        """End the cycle; returns once the thread is out of its probe operation (at most
        one kernel detach, ~0.1 s), leaving what is still attached to the source's close."""
        self._stop.set()
        self._targets_known.set()
        self._thread.join(timeout=1.0)

    # ------------------------------------------------------------ the thread

    def _run(self) -> None:
        self._targets_known.wait()
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                self._attach_all()
                self._stop.wait(self.source.duty_on_s)
            except Exception:  # e.g. a process gone mid-scan: the next cycle scans afresh
                pass
            finally:
                self._end_window()
            try:
                self._detach_all()
            except Exception:
                pass
            self._stop.wait(max(0.0, began + self.period_s - time.monotonic()))

    def _attach_all(self) -> None:
        libraries = self.source.refresh(self._targets)
        for library in libraries:
            for api in library.attached or library.apis:
                if self._stop.is_set():
                    return
                self._events.setdefault(api, []).extend(self.source.attach(library, (api,)))
        with self._windows_lock:
            if any(self._events.values()):
                self._windows.append([time.monotonic(), None])

    def _end_window(self) -> None:
        bpf = self.source._bpf
        if bpf is not None:
            disable(list(bpf.uprobe_fds.values()))  # counting stops now, traps later
        with self._windows_lock:
            if self._windows and self._windows[-1][1] is None:
                self._windows[-1][1] = time.monotonic()

    def _detach_all(self) -> None:
        for api in sorted(self._events, key=lambda a: -self._calls.get(a, 0)):
            while self._events[api]:
                if self._stop.is_set():
                    return
                try:
                    self.source._bpf.detach_uprobe_event(self._events[api].pop())
                except Exception:
                    pass  # already gone
