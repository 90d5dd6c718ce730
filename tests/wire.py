"""Reading an HTTP/1.1 answer off a raw socket, for tests that must write bytes by hand."""

from __future__ import annotations

import socket


def read_answer(sock: socket.socket) -> tuple[bytes, bytes]:
    """The head and body of one answer with a ``content-length``, however the server's
    event loop split them into segments (asyncio's loop sends them apart)."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(4096)
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head, body
