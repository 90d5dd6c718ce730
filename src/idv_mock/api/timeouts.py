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
_EARLY = 0.002  # a timer may fire up to a millisecond early (the loop's clock resolution)


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's protocol with the request deadline; ``request_timeout`` set by :func:`timed`.

    One timer per connection, not one per request: each request only notes when its first
    bytes came (``_since``, None once it is in), and the timer, when it fires, closes the
    connection if the request it finds started ``request_timeout`` ago, or sets itself for
    that request's own deadline. Under load a connection so arms a timer every
    ``request_timeout`` seconds instead of twice per request (arm, cancel)."""

    request_timeout: float = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._since: float | None = None  # loop time of the first bytes of the request in
        self._received: object = None  # the scope of the last request received whole

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._since is None:  # the first bytes of the next request
            self._arm()
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._since is None:  # a pipelined request, in the same bytes as the last one
            self._arm()

    def on_message_complete(self) -> None:
        self._since = None  # in: the timer, when it fires, finds nothing to do
        self._received = self.scope
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._since = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._since = since = self.loop.time()
        if self._timer is None:
            self._timer = self.loop.call_at(since + self.request_timeout, self._check)

    def _check(self) -> None:
        self._timer = None
        if self._since is None:  # no request on its way: the next one arms the timer again
            return
        deadline = self._since + self.request_timeout
        if self.loop.time() < deadline - _EARLY:  # a later request, with time left
            self._timer = self.loop.call_at(deadline, self._check)
            return
        self._since = None
        if self.transport.is_closing():
            return
        if not self._receiving():
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()

    def _receiving(self) -> bool:
        """Whether the late request's headers are in (its body is late): uvicorn starts a
        scope at a request's first byte and gives it a method once the headers are in."""
        scope = self.scope  # None before the connection's first request
        return scope is not None and scope is not self._received and "method" in scope


def timed(seconds: float) -> type[TimedHttpToolsProtocol]:
    """The protocol class for ``uvicorn.run(http=...)`` with a ``seconds`` deadline."""
    return type("TimedHttpToolsProtocol", (TimedHttpToolsProtocol,), {"request_timeout": seconds})
