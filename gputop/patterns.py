"""Command-line patterns (``--match``, the picker's "every match") that cannot freeze gputop.

A user's regular expression is matched against every process's command line, some of
which other users chose.  With Python's ``re`` a pattern such as ``^(a|a)*$`` on a long
command line backtracks for minutes holding the interpreter lock: q, SIGTERM and the
screen all stop.  The ``regex`` module matches with a time limit and releases the lock
(``concurrent``); a match that runs out of time counts as no match.  It is imported on
first use (2 MiB resident: most sessions never match a pattern).
"""

from __future__ import annotations

MATCH_TIMEOUT_S = 0.05  # per command line


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
