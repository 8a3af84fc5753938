"""The p picker: GPU processes and processes that map CUDA libraries, filtered by typing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from gputop.schema import ProcessScan, ProcSample
from gputop.tui.fitting import clip
from gputop.units import printable

@dataclass(frozen=True)
class Candidate:
    pid: int | None  # None: "everything matching the typed pattern"
    text: str
    pattern: str | None = None


def candidates(processes: tuple[ProcSample, ...], found: ProcessScan | None = None
               ) -> list[Candidate]:
    """The picker's rows: the frame's GPU processes, and with ``found`` (the session's scan
    of /proc, ``Session.scan_processes``) the CUDA processes and everyone's CPU% now."""
    rows: dict[int, Candidate] = {}
    cuda = found.cuda_cmdlines if found is not None else {}
    cpu_now = found.cpu_pct if found is not None else {}
    for p in processes:
        mem = "n/a" if p.mem_bytes is None else f"{p.mem_bytes / 2**30:.1f} GiB"
        cpu_pct = cpu_now.get(p.pid, p.cpu_pct)
        cpu = "" if cpu_pct is None else f" {cpu_pct:>4.0f}% CPU"
        owner = f"  [{p.pod or p.container}]" if p.pod or p.container else ""
        rows.setdefault(p.pid, Candidate(p.pid, f"{p.pid:>7} {clip(p.user, 8):<8} GPU{p.gpu_index} "
                                                f"{mem:>9}{cpu}  {p.cmdline or p.name}{owner}"))
    for pid, cmdline in cuda.items():
        if pid not in rows:
            user = found.users.get(pid, "?") if found is not None else "?"
            cpu = f" {cpu_now[pid]:>4.0f}% CPU" if pid in cpu_now else ""
            rows[pid] = Candidate(pid, f"{pid:>7} {clip(user, 8):<8} CUDA {'':>9}{cpu}  {cmdline}")
    return sorted(rows.values(), key=lambda c: c.pid)


class OnceScreen(ModalScreen):
    """A modal that answers once: a second Enter (or a click) arriving before the screen is
    gone must not dismiss it again (Textual raises ScreenStackError)."""

    _answered = False

    def answer(self, value) -> None:
        if not self._answered:
            self._answered = True
            self.dismiss(value)


class PromptScreen(OnceScreen):
    """One line of text asked for (replay's jump-to time, the fleet's filter): Enter answers
    it, Escape answers None."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 70; height: 5; border: round $accent; background: $surface; }
    """

    def __init__(self, prompt: str, value: str = "", input_id: str = "prompt"):
        super().__init__()
        self.prompt, self.value, self.input_id = prompt, value, input_id

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.prompt)
            yield Input(value=self.value, id=self.input_id)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.answer(event.value)

    def action_cancel(self) -> None:
        self.answer(None)


class PickerScreen(OnceScreen):
    """Type to filter; Enter pins the highlighted process (or every match of the text)."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical { width: 90%; height: 80%; border: round $accent;
                              background: $surface; }
    PickerScreen OptionList { height: 1fr; }
    """

    def __init__(self, options: list[Candidate]):
        super().__init__()
        self.all_options = options
        self.shown: list[Candidate] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("pin a process: type to filter, Enter pins it and its children; "
                         "the first line pins every process matching the text (re-pins on restart)")
            yield Input(placeholder="filter (pid, user, command)", id="filter")
            yield OptionList(id="choices")

    def on_mount(self) -> None:
        self._refill("")
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refill(event.value)

    def set_options(self, options: list[Candidate]) -> None:
        """The full list, once the scan of /proc (off the UI thread) is done."""
        self.all_options = options
        if self.is_mounted and not self._answered:
            self._refill(self.query_one(Input).value)

    def _refill(self, text: str) -> None:
        needle = text.strip().lower()
        self.shown = [c for c in self.all_options if needle in c.text.lower()]
        if needle:
            self.shown.insert(0, Candidate(None, f"every process matching {text.strip()!r}",
                                           pattern=re.escape(text.strip())))
        choices = self.query_one(OptionList)
        choices.clear_options()
        choices.add_options([Option(Text(printable(c.text))) for c in self.shown] or
                            [Option("no GPU or CUDA processes", disabled=True)])
        if self.shown:
            choices.highlighted = 1 if needle and len(self.shown) > 1 else 0

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        index = self.query_one(OptionList).highlighted
        self.answer(self.shown[index] if self.shown and index is not None else None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.answer(self.shown[event.option_index] if self.shown else None)

    def key_down(self) -> None:
        self.query_one(OptionList).action_cursor_down()

    def key_up(self) -> None:
        self.query_one(OptionList).action_cursor_up()

    def action_cancel(self) -> None:
        self.answer(None)
