"""Recordings: the append-only store, time specs, export and report."""
