"""Small modal dialogs: a menu (sort column, signal) and a yes/no question (a line of
text is the picker module's PromptScreen).

Each answers once (``OnceScreen``: a second Enter racing the first must not dismiss
twice), None when cancelled with Escape, so the caller is a plain callback and a dialog
never acts by itself.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from gputop.tui.picker import OnceScreen
from gputop.units import printable

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: auto; min-width: 40; max-width: 90%; height: auto;
                    border: round $accent; background: $surface; padding: 0 1; }}
{name} OptionList {{ height: auto; max-height: 16; border: none; }}
"""


class MenuScreen(OnceScreen):
    """Pick one of ``options`` ((key, label) pairs)."""

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
        self.answer(event.option.id)

    def action_cancel(self) -> None:
        self.answer(None)


class ConfirmScreen(OnceScreen):
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
        self.answer(yes)
