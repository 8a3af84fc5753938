"""Command-line patterns (``--match``, the picker's "every match") that cannot freeze gputop.

A user's regular expression is matched against every process's command line, some of
which other users chose.  With Python's ``re`` a pattern such as ``^(a|a)*$`` on a long
command line backtracks for minutes holding the interpreter lock: q, SIGTERM and the
screen all stop.  The ``regex`` module matches with a time limit and releases the lock
(``concurrent``); a match that runs out of time counts as no match.  It is imported on
first use (2 MiB resident: most sessions never match a pattern).
"""

from __future__ import annotations

from collections.abc import Sequence

MATCH_TIMEOUT_S = 0.05  # per command line
ARGS_MAX = 32  # a command line's words looked at for its program (the first few say it)
_OPTION_VALUES = ("-X", "-W", "-Q")  # the interpreter's options that take the next word


def program(argv: Sequence[str]) -> tuple[str, str]:
    """What a command line runs, as ``(how, name)``: ``("exe", base name)`` for a program,
    and for a Python interpreter ``("module", M)`` after ``-m M``, ``("script", base name)``
    after its own options, ``("code", "")`` for ``-c``, ``("", "")`` when it names none.
    Engine discovery and the diagnosis's servers both ask this (a path among the arguments
    never counts: ``python train.py --out /ckpt/vllm-serve`` runs train.py)."""
    if not argv:
        return "", ""
    exe = argv[0].rsplit("/", 1)[-1]
    if not exe.startswith("python"):
        return "exe", exe
    rest = iter(argv[1:ARGS_MAX])
    for word in rest:
        if word == "-m":
            return "module", next(rest, "")
        if word.startswith("-m"):
            return "module", word[2:]
        if word.startswith("-c"):
            return "code", ""
        if word in _OPTION_VALUES:
            next(rest, "")
        elif not word.startswith("-"):
            return "script", word.rsplit("/", 1)[-1]
    return "", ""


class PatternError(ValueError):
    """Not a valid regular expression: one line for the user."""


class CmdlinePattern:
    def __init__(self, text: str):
        import regex

        try:
            self._compiled = regex.compile(text)
        except regex.error as exc:
            raise PatternError(f"{text!r} is not a valid regular expression: {exc}") from None
        self.text = text
        self.timeouts = 0  # command lines given up on

    def search(self, cmdline: str) -> bool:
        try:
            return self._compiled.search(cmdline, timeout=MATCH_TIMEOUT_S,
                                         concurrent=True) is not None
        except TimeoutError:
            self.timeouts += 1
            return False
