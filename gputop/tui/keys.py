"""The dashboard's keys, for its help screen and for ``gputop --help`` (which must not load
Textual to print them)."""

KEYS = [
    ("1-6", "focus and zoom a pane (again or Esc: back to all panes)"),
    ("7", "every GPU at a glance (↑↓, Enter selects the GPU for the other panes)"),
    ("8", "processes: ↑↓ select, < > or F6 sort, / filter, t tree, k or F9 send a signal"),
    ("tab / shift+tab", "next / previous pane"),
    ("a", "panes 1-2: every GPU, one line each / the selected GPU"),
    ("space", "pause the view (sampling continues) / resume"),
    ("left / right", "step one frame back / forward in history (pauses)"),
    ("[ / ]", "previous / next GPU"),
    ("+ / -", "longer / shorter time window"),
    ("e", "explain the focused pane: definitions and where its numbers came from"),
    ("r", "start / stop recording to a file (live view)"),
    ("p / P", "pin the dashboard to a process tree (picker, type to filter) / unpin"),
    ("T", "next colour theme: dark, light, colorblind, high-contrast"),
    ("S", "save the layout (pane, zoom, window, theme, a) to the config file"),
    ("mouse", "click a pane to focus it, double-click to zoom; click a header (8) to sort; "
              "wheel scrolls lists (--no-mouse leaves the mouse to the terminal)"),
    ("? / h / F1", "this help"),
    ("q / F10 / Ctrl-C", "quit"),
]
