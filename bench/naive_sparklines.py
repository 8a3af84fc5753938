#!/usr/bin/env python3
"""Reference for bench/tui.py: the obvious Textual dashboard, six Sparklines redrawn at 1 Hz."""

import math

from textual.app import App, ComposeResult
from textual.widgets import Sparkline


class Naive(App):
    CSS = "Sparkline { height: 1fr; }"

    def compose(self) -> ComposeResult:
        self.data = [[0.0] * 200 for _ in range(6)]
        self.t = 0
        for _ in range(6):
            yield Sparkline(self.data[0])

    def on_mount(self) -> None:
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        self.t += 1
        for i, line in enumerate(self.query(Sparkline)):
            values = self.data[i][1:] + [50 + 50 * math.sin(self.t / (3 + i))]
            self.data[i] = values
            line.data = values


if __name__ == "__main__":
    Naive().run()
