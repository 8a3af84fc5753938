"""Recordings: one SQLite file of raw frames, each compressed with zstandard.

Layout (open it with ``sqlite3 FILE``):
  meta(key TEXT PRIMARY KEY, value BLOB)   format, format_version, schema, gputop_version,
                                           host, created_wall_s, source, gpus, sources, dict
  frames(seq INTEGER PRIMARY KEY, time_wall_s REAL (indexed), payload BLOB)
         payload = zstd(JSON of the frame) with the first frame as a raw-content
         dictionary (``meta.dict``): frames differ little, so each compresses to a few
         hundred bytes while staying independently readable.

Every frame is its own committed transaction in WAL mode, so a crash or ``kill -9``
loses at most the frame being written.  The writer creates the file with mode 0600,
refuses to overwrite anything, and does not follow a symlink at the path.  With a
size cap the oldest frames are dropped (a ring), so a forgotten recorder never
fills the disk.  The reader opens read-only and turns every kind of damage into a
``RecordingError`` with one line of explanation, keeping the frames it could read.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import zstandard

from gputop import __version__
from gputop.safefile import open_regular
from gputop.schema import (MAX_FRAME_BYTES, SCHEMA_VERSION, Frame, SchemaError, frame_from_dict,
                           frame_to_dict)

FORMAT = "gputop-recording"
FORMAT_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
ZSTD_LEVEL = 12  # 0.06 ms a frame; levels above gain < 1% here


class RecordingError(Exception):
    """A recording that cannot be written or read; the message is one line for the user."""


def _encode_json(frame: Frame) -> bytes:
    return json.dumps(frame_to_dict(frame), separators=(",", ":")).encode()


class Recorder:
    """Appends frames to a new recording file."""

    def __init__(self, path: str | os.PathLike, source_label: str,
                 max_bytes: int | None = None):
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.frames_written = 0
        self.frames_dropped = 0
        self._create_file()
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript("""
                CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB);
                CREATE TABLE frames(seq INTEGER PRIMARY KEY, time_wall_s REAL NOT NULL,
                                    payload BLOB NOT NULL);
                CREATE INDEX frames_by_time ON frames(time_wall_s);
            """)
        except sqlite3.Error as exc:
            raise RecordingError(f"cannot create recording {self.path}: {exc}") from None
        self._meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
                      "schema": SCHEMA_VERSION, "gputop_version": __version__,
                      "host": socket.gethostname(), "created_wall_s": time.time(),
                      "source": source_label}
        self._put_meta(self._meta)
        self._compressor: zstandard.ZstdCompressor | None = None

    def _create_file(self) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o600)
        except FileExistsError:
            raise RecordingError(f"{self.path} exists (or is a link): recordings are never "
                                 "overwritten; choose another name") from None
        except OSError as exc:
            raise RecordingError(f"cannot create {self.path}: {exc.strerror}") from None
        os.close(fd)

    def _put_meta(self, values: dict) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                             [(k, v if isinstance(v, bytes) else json.dumps(v))
                              for k, v in values.items()])

    def append(self, frame: Frame) -> None:
        raw = _encode_json(frame)
        try:
            if self._compressor is None:  # the first frame is the dictionary for all
                self._put_meta({"dict": raw,
                                "gpus": [{"index": g.index, "name": g.name, "uuid": g.uuid}
                                         for g in frame.gpus],
                                "sources": sorted(frame.sources)})
                self._compressor = zstandard.ZstdCompressor(
                    level=ZSTD_LEVEL, dict_data=_dictionary(raw))
            self._db.execute("INSERT INTO frames VALUES (?, ?, ?)",
                             (frame.seq, frame.time_wall_s, self._compressor.compress(raw)))
        except sqlite3.IntegrityError:
            raise RecordingError(f"frame {frame.seq} is already in {self.path}") from None
        except sqlite3.Error as exc:
            raise RecordingError(f"cannot write to {self.path}: {exc}") from None
        self.frames_written += 1
        if self.max_bytes and self.frames_written % 30 == 0:
            try:  # a full disk shows here first (the checkpoint grows the main file)
                self._enforce_cap()
            except sqlite3.Error as exc:
                raise RecordingError(f"cannot write to {self.path}: {exc}") from None

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{self.path}{suffix}").st_size
            except OSError:
                pass
        return total

    def _enforce_cap(self) -> None:
        """Drop the oldest tenth of the frames while over the cap (a ring, not a stop)."""
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        while self.size_bytes() > self.max_bytes:
            count = self._db.execute("SELECT count(*) FROM frames").fetchone()[0]
            if count <= 10:
                break
            drop = max(1, count // 10)
            self._db.execute("DELETE FROM frames WHERE seq IN "
                             "(SELECT seq FROM frames ORDER BY seq LIMIT ?)", (drop,))
            self.frames_dropped += drop
            self._db.execute("PRAGMA incremental_vacuum")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._put_meta({"frames_dropped": self.frames_dropped})

    def close(self) -> None:
        """Checkpoint and leave the file in rollback-journal mode: a finished recording is
        one self-contained file that readers can open on a read-only mount."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.Error:  # a full disk: the WAL stays beside it, readable as it is
            pass
        finally:
            try:
                self._db.close()
            except sqlite3.Error:
                pass


def _one_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:120]


def _version(value) -> int | None:
    """A version number from the header, or None when it is not a small whole number."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        return None
    return value


def _dictionary(raw: bytes) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


class Recording:
    """Read-only access to a recording: header, frame count, seek by time, frames."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        # applied to every frame read (replay/export/report --model: a corrected model)
        self.frame_patch = None
        if not self.path.exists():
            raise RecordingError(f"{self.path}: no such file")
        if self.path.is_dir():
            raise RecordingError(f"{self.path} is a directory, not a recording")
        try:  # a FIFO or a device given as a recording must not hang or be read forever
            fd = open_regular(self.path)
            try:
                magic = os.read(fd, len(SQLITE_MAGIC))
            finally:
                os.close(fd)
        except OSError as exc:
            raise RecordingError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if not magic:
            raise RecordingError(f"{self.path} is empty: not a recording")
        if magic != SQLITE_MAGIC:
            raise RecordingError(f"{self.path} is not a gputop recording")
        # mode=ro reads a recording being written (its -wal exists); a finished one (no
        # -wal) opens immutable, so nothing is created beside it: a read-only directory
        # or mount works, and export/report leave no -wal/-shm behind.  The path is
        # percent-quoted: "p%41" is a file called p%41, not pA.
        resolved = self.path.resolve()
        live = Path(f"{resolved}-wal").exists()
        uri = f"file:{urllib.parse.quote(str(resolved))}?mode=ro" + ("" if live else "&immutable=1")
        try:
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._db.text_factory = bytes  # damaged text must not raise while fetching
            rows = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, ValueError) as exc:  # sqlite's message itself may be junk
            raise RecordingError(f"{self.path} is damaged or not a gputop recording "
                                 f"({_one_line(exc)})") from None
        try:
            meta = {}
            for key, value in rows.items():
                key = key.decode() if isinstance(key, bytes) else str(key)
                meta[key] = value if key == "dict" else json.loads(value)
        except (ValueError, TypeError):
            raise RecordingError(f"{self.path}: damaged header") from None
        if meta.get("format") != FORMAT:
            raise RecordingError(f"{self.path} is not a gputop recording")
        format_version, schema = _version(meta.get("format_version", 0)), _version(meta.get("schema", 0))
        if format_version is None or schema is None:
            raise RecordingError(f"{self.path}: damaged header (format or schema version)")
        if format_version > FORMAT_VERSION or schema > SCHEMA_VERSION:
            raise RecordingError(f"{self.path} was written by a newer gputop "
                                 f"({meta.get('gputop_version')}, schema {meta.get('schema')}); "
                                 "upgrade gputop to read it")
        self.meta = meta
        self.source_label = str(meta.get("source", "recording"))
        self._decompressor = None
        dictionary = meta.get("dict")
        if dictionary:
            if not isinstance(dictionary, bytes) or len(dictionary) > MAX_FRAME_BYTES:
                raise RecordingError(f"{self.path}: damaged header (dictionary)")
            self._decompressor = zstandard.ZstdDecompressor(dict_data=_dictionary(dictionary))
        self.skipped_frames = 0

    def close(self) -> None:
        self._db.close()

    def _query(self, sql: str, args=()):
        try:
            return self._db.execute(sql, args).fetchall()
        except (sqlite3.Error, ValueError) as exc:
            raise RecordingError(f"{self.path} is damaged ({_one_line(exc)})") from None

    def count(self) -> int:
        return self._query("SELECT count(*) FROM frames")[0][0]

    def time_range(self) -> tuple[float, float] | None:
        first, last = self._query("SELECT min(time_wall_s), max(time_wall_s) FROM frames")[0]
        return None if first is None else (first, last)

    def seq_at(self, time_wall_s: float) -> int | None:
        """The last frame at or before a wall time (the first frame if before it all)."""
        row = self._query("SELECT seq FROM frames WHERE time_wall_s <= ? "
                          "ORDER BY time_wall_s DESC LIMIT 1", (time_wall_s,))
        if row:
            return row[0][0]
        row = self._query("SELECT min(seq) FROM frames")
        return row[0][0]

    def seq_before(self, seq: int, seconds: float) -> int:
        """The frame ``seconds`` before frame ``seq`` (where a fold starts to have history)."""
        row = self._query("SELECT time_wall_s FROM frames WHERE seq = ?", (seq,))
        if not row:
            return seq
        found = self.seq_at(row[0][0] - seconds)
        return seq if found is None else min(found, seq)

    def seq_from(self, time_wall_s: float) -> int | None:
        """The first frame at or after a wall time (None if after them all)."""
        row = self._query("SELECT seq FROM frames WHERE time_wall_s >= ? "
                          "ORDER BY time_wall_s LIMIT 1", (time_wall_s,))
        return row[0][0] if row else None

    def seq_span(self, low_wall_s: float, high_wall_s: float) -> tuple[int | None, int | None]:
        """The first and last frame (by sequence) whose wall time is in [low, high]."""
        first, last = self._query("SELECT min(seq), max(seq) FROM frames WHERE time_wall_s "
                                  "BETWEEN ? AND ?", (low_wall_s, high_wall_s))[0]
        return first, last

    def seq_bounds(self) -> tuple[int, int] | None:
        first, last = self._query("SELECT min(seq), max(seq) FROM frames")[0]
        return None if first is None else (first, last)

    def rank_of(self, seq: int) -> int:
        """0-based position of a frame (frame N of M)."""
        return self._query("SELECT count(*) FROM frames WHERE seq < ?", (seq,))[0][0]

    def frames(self, from_seq: int | None = None, to_seq: int | None = None,
               batch: int = 512) -> Iterator[Frame]:
        """Frames in order, decoded lazily; undecodable frames are skipped and counted.
        Reading stops at damage, keeping what came before it."""
        low = -1 if from_seq is None else from_seq - 1
        high = 2**62 if to_seq is None else to_seq
        while True:
            try:
                rows = self._db.execute(
                    "SELECT seq, payload FROM frames WHERE seq > ? AND seq <= ? "
                    "ORDER BY seq LIMIT ?", (low, high, batch)).fetchall()
            except (sqlite3.Error, ValueError):
                self.skipped_frames += 1
                return
            fresh = [(seq, payload) for seq, payload in rows
                     if isinstance(seq, int) and low < seq <= high]
            if not fresh:  # the end, or a damaged index answering out of order
                return
            for seq, payload in fresh:
                if seq <= low:
                    continue
                low = seq
                frame = self._decode(payload)
                if frame is None:
                    self.skipped_frames += 1
                else:
                    yield frame

    def _decode(self, payload: bytes) -> Frame | None:
        """One frame, or None when it cannot be read.  Bounded: a frame that would
        decompress to more than MAX_FRAME_BYTES (a zstd bomb) is refused before any of it
        is allocated, and JSON nested too deeply to be a frame is refused too."""
        if not isinstance(payload, bytes) or len(payload) > MAX_FRAME_BYTES:
            return None
        try:
            raw = self._decompressor.decompress(payload, max_output_size=MAX_FRAME_BYTES) \
                if self._decompressor else payload
            if len(raw) > MAX_FRAME_BYTES:
                return None
            frame = frame_from_dict(json.loads(raw))
            return self.frame_patch(frame) if self.frame_patch is not None else frame
        except (zstandard.ZstdError, ValueError, SchemaError, TypeError, RecursionError,
                OverflowError, MemoryError):
            return None
