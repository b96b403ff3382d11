"""The server's protocol: length-prefixed JSON frames, and one lead byte that says what a
client wants (and carries fds 0/1/2 with SCM_RIGHTS when it asks for a run).

    server → client   frame {"stamp", "pid", "version"}            at once, on accept
    client → server   b"R" + fds 0,1,2, then frame {"argv", "env", "cwd", "umask"}
                      b"S" (your stamp is stale: exit)   b"Q" (status)   b"X" (stop)
    server → client   frame {"child": pid}                         after the fork
    client → server   frames {"kill": signum}                      relayed signals
    server → client   frame {"exit": code} or {"signal": signum}   when the child is reaped

A frame is 4 bytes big-endian length + UTF-8 JSON. Stdlib only: the client imports this.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

RUN, STALE, STATUS, STOP = b"R", b"S", b"Q", b"X"
MAX_FRAME = 16 << 20
"""A frame bigger than this is refused (an environment is a few KiB)."""
_LEN = struct.Struct(">I")


class WireError(Exception):
    """The peer closed early or sent something that is not a frame."""


def encode(obj: Any) -> bytes:
    data = json.dumps(obj, separators=(",", ":")).encode()
    return _LEN.pack(len(data)) + data


def send(sock: socket.socket, obj: Any) -> None:
    sock.sendall(encode(obj))


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise WireError("connection closed")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket) -> Any:
    """One frame (blocking)."""
    (size,) = _LEN.unpack(_read_exact(sock, _LEN.size))
    if size > MAX_FRAME:
        raise WireError(f"frame of {size} bytes")
    try:
        return json.loads(_read_exact(sock, size))
    except ValueError as e:
        raise WireError(f"bad frame: {e}") from None


class FrameReader:
    """Frames out of a non-blocking socket's bytes, as they arrive (the server's side)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        self._buf += data
        out = []
        while len(self._buf) >= _LEN.size:
            (size,) = _LEN.unpack_from(self._buf)
            if size > MAX_FRAME:
                raise WireError(f"frame of {size} bytes")
            if len(self._buf) < _LEN.size + size:
                break
            raw = bytes(self._buf[_LEN.size : _LEN.size + size])
            del self._buf[: _LEN.size + size]
            try:
                out.append(json.loads(raw))
            except ValueError as e:
                raise WireError(f"bad frame: {e}") from None
        return out
