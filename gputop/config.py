"""Settings from a TOML file and GPUTOP_* variables, under the command line.

Precedence: command line > environment (``GPUTOP_*``) > file > built-in defaults.  The
file is ``$XDG_CONFIG_HOME/gputop/config.toml`` (``~/.config/gputop/config.toml``), or
``GPUTOP_CONFIG``; it is read with the standard library's ``tomllib``.  Every setting
names the command-line option it stands for, so values from the file and the
environment go through the option's own parser and are checked the same way; a bad
one is one line naming the key and its line, and gputop exits 2.

``gputop config --print`` shows each effective setting and where it came from; the
dashboard's S key saves its layout (pane, zoom, window, theme, GPU overlay) back into
the file, keeping the rest of the file as it was.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gputop.safefile import UnsafeFile, open_regular, read_regular

CONFIG_MAX_BYTES = 1 << 20
THEMES = ("dark", "light", "colorblind", "high-contrast")
PANES = tuple("12345678")
DEFAULT_LISTEN = "127.0.0.1:9464"  # gputop serve's address: local only unless asked


class ConfigError(ValueError):
    """A setting that cannot be used: one line naming the key, its line and why."""


def did_you_mean(word: str, choices) -> str:
    """ "; did you mean 'theme'?" for a typo of one of ``choices``, a key given without its
    table ('hold_s' for 'detector.hold_s') or the one choice containing it ('storm');
    "" when nothing is close."""
    import difflib

    choices = [str(c) for c in choices]
    names = {c.rpartition(".")[2]: c for c in choices}  # a key's last part: its table's key
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.7) or \
        [names[n] for n in difflib.get_close_matches(word, list(names), n=1, cutoff=0.75)]
    if not close and len(word) >= 3:
        containing = [c for c in choices if word.lower() in c.lower()]
        close = containing if len(containing) == 1 else []
    return f"; did you mean {close[0]!r}?" if close and close[0] != word else ""


def expected(what: str, got, choices=()) -> str:
    """The one voice of every refused value: "expected WHAT, got 'X'" (+ did you mean)."""
    return f"expected {what}, got {got!r}" + (did_you_mean(str(got), choices) if choices else "")


@dataclass(frozen=True)
class Setting:
    key: str  # in the file: "delay_s", or "detector.hold_s" for a key in a [detector] table
    dest: str  # the argparse destination it sets
    option: str  # the command-line option, for messages and for spotting it in argv
    kind: type  # what TOML must hold: str, float, int, bool, list
    parse: Callable[[str], Any] | None = None  # the option's own parser, for str/number values
    command: str | None = None  # the subcommand whose parser owns the option (serve's --listen)

    @property
    def env(self) -> str:
        return "GPUTOP_" + re.sub(r"[^A-Z0-9]", "_", self.key.upper())


def settings(parsers: dict[str, Callable]) -> tuple[Setting, ...]:
    """The settings, with ``parsers`` (name -> the CLI's argument parser function); what
    each means is the option's own --help and docs/configuration.md."""
    p = parsers
    return (
        Setting("delay_s", "delay", "-d/--delay", float, p["delay"]),
        Setting("window_s", "window", "--window", float, p["window"]),
        Setting("theme", "theme", "--theme", str, p["theme"]),
        Setting("readonly", "readonly", "--readonly", bool),
        Setting("mouse", "mouse", "--no-mouse", bool),
        Setting("pane", "pane", "--pane", str, p["pane"]),
        Setting("zoom", "zoom", "--zoom", bool),
        Setting("hidden_panes", "hide", "--hide", list, p["pane"]),
        Setting("all_gpus", "all_gpus", "--all-gpus", bool),
        Setting("ebpf", "ebpf", "--ebpf", str, p["ebpf"]),
        Setting("ebpf_duty", "ebpf_duty", "--ebpf-duty", float, p["duty"]),
        Setting("engines", "engine", "--engine", list, p["url"]),
        Setting("work_counter", "work_counter", "--work-counter", str, p["counter"]),
        Setting("host_root", "host_root", "--host-root", str, p["path"]),
        Setting("detector.busy_util_pct", "busy_util_pct", "--busy-util-pct", float,
                p["percent"]),
        Setting("detector.collapse_ratio", "collapse_ratio", "--collapse-ratio", float,
                p["ratio"]),
        Setting("detector.latency_factor", "latency_factor", "--latency-factor", float,
                p["factor"]),
        Setting("detector.hold_s", "hold_s", "--hold-s", float, p["hold"]),
        Setting("serve.listen", "listen", "--listen", str, str, command="serve"),
    )


def config_path(environ=os.environ) -> Path:
    if environ.get("GPUTOP_CONFIG"):
        return Path(environ["GPUTOP_CONFIG"])
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gputop" / "config.toml"


def key_line(text: str, key: str) -> int | None:
    """The line (1-based) that sets ``key`` ("table.name" inside [table]), for messages."""
    table, _, name = key.rpartition(".")
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.-]+)\s*\]", stripped)
        if header:
            current = header.group(1)
            continue
        if current == table and re.match(rf"^{re.escape(name)}\s*=", stripped):
            return number
    return None


def _flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def read_file(path: Path) -> tuple[dict[str, Any], str]:
    """(flat key -> value, the text) of the config file; ({}, "") when there is none."""
    try:
        raw = read_regular(path, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        return {}, ""
    except (UnsafeFile, OSError) as exc:
        raise ConfigError(f"config {path}: {exc.strerror or exc}") from None
    import tomllib  # only with a file to read: most runs have none (5 ms of start-up)

    try:
        text = raw.decode("utf-8")
        return _flatten(tomllib.loads(text)), text
    except UnicodeDecodeError:
        raise ConfigError(f"config {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path}: {exc}") from None


def _convert(setting: Setting, value: Any, where: str) -> Any:
    """A file or environment value as the option would have parsed it."""
    def bad(why: str) -> ConfigError:
        return ConfigError(f"{where}: {setting.key} {why}")

    if setting.kind is bool:
        if isinstance(value, str):  # from the environment
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise bad(expected("true or false", value))
        if not isinstance(value, bool):
            raise bad(expected("true or false", value))
        return value
    if setting.kind is list:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list):
            raise bad(expected("a list", value))
        try:
            return [setting.parse(str(item).strip()) for item in items if str(item).strip()]
        except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
            raise bad(str(exc)) from None
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        kind = "a number" if setting.kind is float else f"a {setting.kind.__name__}"
        raise bad(expected(kind, value))
    if setting.kind is float and not isinstance(value, (int, float, str)):
        raise bad(expected("a number", value))
    try:
        return setting.parse(str(value)) if setting.parse else value
    except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
        raise bad(str(exc)) from None


@dataclass(frozen=True)
class Effective:
    setting: Setting
    value: Any
    source: str  # "default", "file (line N)", "environment GPUTOP_X", "command line"


def layered(all_settings: tuple[Setting, ...], defaults: dict[str, Any],
            environ=os.environ) -> tuple[dict[str, Effective], Path]:
    """Each setting's value from environment > file > default (the command line comes
    later, in argparse); ConfigError on a bad file, key or value."""
    path = config_path(environ)
    data, text = read_file(path)
    known = {s.key: s for s in all_settings}
    for key in data:
        if key not in known:
            line = key_line(text, key)
            raise ConfigError(f"config {path}" + (f" line {line}" if line else "")
                              + f": unknown key {key!r}" + did_you_mean(key, known)
                              + " (gputop config --print lists them)")
    out = {}
    for s in all_settings:
        if s.env in environ:
            out[s.dest] = Effective(s, _convert(s, environ[s.env], f"environment {s.env}"),
                                    f"environment {s.env}")
        elif s.key in data:
            line = key_line(text, s.key)
            where = f"config {path}" + (f" line {line}" if line else "")
            out[s.dest] = Effective(s, _convert(s, data[s.key], where),
                                    f"file line {line}" if line else "file")
        else:
            out[s.dest] = Effective(s, defaults.get(s.dest), "default")
    return out, path


def given_on_command_line(setting: Setting, argv: list[str]) -> bool:
    options = setting.option.split("/")
    return any(arg == o or arg.startswith(o + "=") for arg in argv for o in options)


# ---------------------------------------------------------------- saving the layout

LAYOUT_KEYS = ("pane", "zoom", "window_s", "theme", "all_gpus")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _read_for_update(path: Path) -> tuple[str, os.stat_result | None]:
    """(text, stat) of the config file about to be rewritten, ("", None) when there is
    none.  Never through a symbolic link, and not a file with a second name (a hard
    link): gputop often runs as root in a directory another user may control (``sudo
    -E`` keeps XDG_CONFIG_HOME), and S must not read a file of root's into it."""
    try:
        fd = open_regular(path, follow_links=False)
    except FileNotFoundError:
        return "", None
    except (UnsafeFile, OSError) as exc:
        raise ConfigError(f"config {path}: {exc.strerror or exc}; layout not saved") from None
    try:
        st = os.fstat(fd)
        if st.st_nlink != 1:
            raise ConfigError(f"config {path} has {st.st_nlink} names (hard links): layout "
                              "not saved")
        if st.st_size > CONFIG_MAX_BYTES:
            raise ConfigError(f"config {path} is larger than {CONFIG_MAX_BYTES:,} bytes")
        raw = os.read(fd, CONFIG_MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return raw.decode("utf-8"), st
    except UnicodeDecodeError:
        raise ConfigError(f"config {path}: not UTF-8 text") from None


def save_layout(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write the top-level ``values`` (LAYOUT_KEYS) into the config file: a key already
    set is replaced on its own line, a new one goes above the first [table]; comments
    and every other line stay.  Written to a new temporary file (a random name, created
    exclusively, never through a link) with the old file's mode and owner, then renamed
    over it, so a crash never leaves half a config, a 0600 file holding credentials stays
    0600, and a name another user planted beside it is never written through."""
    path = path or config_path()
    text, old = _read_for_update(path)
    lines = text.splitlines()
    first_table = next((i for i, line in enumerate(lines)
                        if re.match(r"^\s*\[", line)), len(lines))
    for key, value in values.items():
        line = f"{key} = {toml_value(value)}"
        number = key_line("\n".join(lines), key)
        if number is not None:
            lines[number - 1] = line
        else:
            lines.insert(first_table, line)
            first_table += 1
    body = "\n".join(lines) + "\n"
    import tempfile
    import tomllib

    try:
        tomllib.loads(body)  # never write what gputop could not read back
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path}: the layout would not read back ({exc})") from None
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory = os.stat(path.parent)
    owner = (old.st_uid, old.st_gid) if old is not None else (directory.st_uid, directory.st_gid)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, stat.S_IMODE(old.st_mode) if old is not None else 0o600)
        if os.geteuid() == 0 and owner != (0, 0):
            os.fchown(fd, *owner)  # root saving a user's file keeps it the user's
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            fd = -1
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
