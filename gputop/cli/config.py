"""``gputop config``: the settings from GPUTOP_* and the config file applied where the
command line did not set them (every command, ``_apply_config``), and printed with where
each came from (``--print``)."""

from __future__ import annotations

import re

from gputop.cli.options import (UsageError, _counter_name, _delay, _duty, _ebpf_mode, _factor,
                                _hold, _pane, _percent, _ratio, _theme, _url, _window)
from gputop.config import DEFAULT_LISTEN
from gputop.units import printable


def add_parser(sub) -> None:
    config = sub.add_parser("config", help="the effective settings and where each came from")
    config.add_argument("--print", action="store_true", default=True,
                        help="print them (the default)")


def _config_parsers() -> dict:
    return {"delay": _delay, "window": _window, "theme": _theme, "pane": _pane,
            "ebpf": _ebpf_mode, "url": _url, "counter": _counter_name, "percent": _percent,
            "ratio": _ratio, "factor": _factor, "duty": _duty, "hold": _hold, "path": str}


def _apply_config(args, argv: list[str]) -> dict:
    """Settings from GPUTOP_* and the config file put into ``args`` where the command line
    did not set them; returns every setting's effective value and where it came from."""
    from gputop.config import ConfigError, Effective, given_on_command_line, layered, settings

    all_settings = settings(_config_parsers())
    defaults = {s.dest: getattr(args, s.dest, None) for s in all_settings}
    if defaults.get("listen") is None:
        defaults["listen"] = DEFAULT_LISTEN
    try:
        effective, path = layered(all_settings, defaults)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    for dest, eff in list(effective.items()):
        if given_on_command_line(eff.setting, argv):
            effective[dest] = Effective(eff.setting, getattr(args, dest, eff.value), "command line")
        elif eff.source != "default" and (hasattr(args, dest) or eff.setting.command is None):
            setattr(args, dest, eff.value)
    args.config_path = path
    return effective


def cmd_config(args, effective: dict) -> int:
    """``gputop config --print``: each setting, its value, where it came from."""
    from gputop.config import toml_value

    path = args.config_path
    print(f"# config file: {path}" + ("" if path.exists() else " (none)"))
    print("# precedence: command line > environment > file > default")
    width = max(len(e.setting.key) for e in effective.values())
    print(f"# {'KEY':<{width - 2}}  {'VALUE':<24}  {'FROM':<26}  ENVIRONMENT / OPTION")
    for eff in effective.values():
        value = "(none)" if eff.value is None else toml_value(eff.value)
        value = re.sub(r"://[^/@\s\"]*@", "://***@", value)  # engines' user:password@
        print(f"{eff.setting.key:<{width}}  {printable(value):<24}  {eff.source:<26}  "
              f"{eff.setting.env} / {eff.setting.option}")
    return 0
