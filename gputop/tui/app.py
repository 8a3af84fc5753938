"""The live dashboard: six panes over one session's timeline (and 7, 8 zoomed).

``GputopApp`` is the shell (``tui/shell.py``: composing, mounting, the refresh loop, the
status line) with the keys, one class per kind, each owning its ``BINDINGS`` (Textual
merges a class's bindings with its bases'):

- ``actions_panes.py``: panes 1-8, Tab, Esc, the GPU ([ ]), a, the window (+ -);
- ``actions_cursor.py``: the cursor: pause (space), step (← →);
- ``actions_process.py``: pin (p, P) and signals (k / F9 in pane 8);
- ``actions_keep.py``: record (r), the theme (T), save the layout (S);
- ``actions_help.py``: help (?) and explain (e);

and the shell's own q / F10 / Ctrl-C.  Dialogs are ``tui/dialogs.py`` and
``tui/picker.py``; the key list the help page and ``gputop --help`` print is
``tui/keys.py``; replay (``tui/replay.py``) is this app over a recording's cursor."""

from __future__ import annotations

from gputop.tui.actions_cursor import CursorActions
from gputop.tui.actions_help import HelpActions, source_line
from gputop.tui.actions_keep import KeepActions
from gputop.tui.actions_panes import WINDOWS_S, PaneActions
from gputop.tui.actions_process import ProcessActions
from gputop.tui.shell import (FLASH_S, GRID_PANES, MIN_SIZE, NEVER_DROPPED, STALE_KEY_S,
                              WIDE_SIZE, FramesArrived, exit_notice)

__all__ = ["FLASH_S", "GRID_PANES", "MIN_SIZE", "NEVER_DROPPED", "STALE_KEY_S", "WIDE_SIZE",
           "WINDOWS_S", "FramesArrived", "GputopApp", "exit_notice", "source_line"]


class GputopApp(PaneActions, CursorActions, ProcessActions, KeepActions, HelpActions):
    """The dashboard: the shell and every kind of key."""
