"""How the dashboard starts: the settings from the command line, GPUTOP_* and the config
file (gputop.config) that the app itself reads.  Plain data, so the command line can
build it without loading Textual."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ViewSettings:
    theme: str = "dark"
    readonly: bool = False
    mouse: bool = True
    pane: str = "1"
    zoom: bool = False
    hidden: tuple[str, ...] = ()
    all_gpus: bool = False
    window_s: float = 60.0
    config_path: Path | None = None  # where S saves the layout (None: the default place)
