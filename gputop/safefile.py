"""Reading a file whose path someone else chose, without hanging or filling memory.

gputop runs as root and reads paths that come from outside: a model directory an
endpoint names, a recording or config handed around.  A FIFO there would block a plain
``open()`` forever, a symlink to /dev/zero would be read without end.  Only regular
files are read, opened without blocking and checked with ``fstat`` (not a separate
``stat``, which a swap could fool), and never beyond a size limit.
"""

from __future__ import annotations

import os
import stat


class UnsafeFile(OSError):
    """Not a regular file, or larger than allowed: the message says which."""


def open_regular(path: str | os.PathLike, follow_links: bool = True) -> int:
    """A read-only descriptor of a regular file (the caller closes it)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", 40) and not follow_links:
            raise UnsafeFile(f"{path} is a symbolic link: not followed") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise UnsafeFile(f"{path} is {kind}, not a regular file")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike, max_bytes: int, follow_links: bool = True) -> bytes:
    """The whole of a regular file of at most ``max_bytes``; UnsafeFile otherwise."""
    fd = open_regular(path, follow_links)
    try:
        if os.fstat(fd).st_size > max_bytes:
            raise UnsafeFile(f"{path} is larger than {max_bytes:,} bytes")
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise UnsafeFile(f"{path} is larger than {max_bytes:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)
