"""Small modal dialogs: a menu (sort column, signal), a one-line filter, a yes/no question.

Each returns its answer through ``dismiss`` (None when cancelled with Escape), so the
caller is a plain callback and a dialog never acts by itself.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from gputop.units import printable

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: auto; min-width: 40; max-width: 90%; height: auto;
                    border: round $accent; background: $surface; padding: 0 1; }}
{name} OptionList {{ height: auto; max-height: 16; border: none; }}
"""


class MenuScreen(ModalScreen):
    """Pick one of ``options`` ((key, label) pairs); a key's first letter also picks it."""

    DEFAULT_CSS = DIALOG_CSS.format(name="MenuScreen")
    BINDINGS = [Binding("escape,q", "cancel", "cancel")]

    def __init__(self, title: str, options: list[tuple[str, str]]):
        super().__init__()
        self.title_text = printable(title)
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "Enter picks · Esc cancels"
            yield OptionList(*[Option(printable(label), id=key) for key, label in self.options])

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class FilterScreen(ModalScreen):
    """One line of text; Enter keeps it, Escape cancels, an empty line clears the filter."""

    DEFAULT_CSS = DIALOG_CSS.format(name="FilterScreen")
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, text: str = "", title: str = "filter processes"):
        super().__init__()
        self.text = text
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "regex or text over user, command, container, pod · Enter · Esc"
            yield Input(value=self.text, placeholder="e.g. vllm|train  (empty: show all)")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen):
    """A question answered with y (or Enter) / n (or Escape)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmScreen")
    BINDINGS = [Binding("y,enter", "answer(True)", "yes"),
                Binding("n,escape,q", "answer(False)", "no")]

    def __init__(self, question: str):
        super().__init__()
        self.question = printable(question)

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "confirm"
            box.border_subtitle = "y: yes · n / Esc: no"
            yield Static(self.question, markup=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
