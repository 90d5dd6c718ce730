"""A deadline for receiving each request: slow clients cannot hold connections open.

uvicorn closes a keep-alive connection that stays idle after a response
(``timeout_keep_alive``), but nothing else: a client that opens a connection and sends its
headers (or its body) a byte at a time keeps it, and its file descriptor, forever (nginx's
``client_header_timeout`` and ``client_body_timeout``, Apache's ``RequestReadTimeout``
exist for this). This is uvicorn's httptools protocol with one timer: from the
connection's start, and from the first bytes of each later request, the whole request
(headers and body) must arrive within the deadline. Late headers get a 408 and the
connection is closed; a late body closes the connection (the call sees a disconnect).
Once a request is in, the timer is off: handling it may take as long as it takes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_TIMEOUT_BODY = b'{"message": "Request not received in time"}'
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's protocol with the request deadline; ``request_timeout`` set by :func:`timed`."""

    request_timeout: float = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._receiving = False  # a request's headers are in, its body not yet complete

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None:  # the first bytes of the next request
            self._arm()
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a pipelined request, in the same bytes as the last one
            self._arm()

    def on_headers_complete(self) -> None:
        self._receiving = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._receiving = False
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.request_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if not self._receiving:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def timed(seconds: float) -> type[TimedHttpToolsProtocol]:
    """The protocol class for ``uvicorn.run(http=...)`` with a ``seconds`` deadline."""
    return type("TimedHttpToolsProtocol", (TimedHttpToolsProtocol,), {"request_timeout": seconds})
