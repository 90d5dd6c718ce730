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

The protocol adds nothing to a request's own path (no parser callback is wrapped: three
wrapped callbacks cost about 2.5 µs per call under load, a tenth of a GET by id). A
connection's timer ticks instead, every tenth of the deadline (at most a second), and
reads the state uvicorn keeps anyway: the scope it starts at a request's first byte, and
the cycle it makes once the headers are in. A connection and its first request are timed
from the connection's start; a later request from the first tick that saw it on its way,
so it is cut off between its deadline and one tick later (two, for a first request whose
headers came before the first tick but whose body did not), never before.

uvicorn's class is a private one: :mod:`idv_mock.ground.compat` checks it (and uvicorn's version)
at import; without it, a warning and ``--request-timeout`` is off, never a crash of
``serve``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from idv_mock.ground import compat

if TYPE_CHECKING:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
else:  # uvicorn's class when it can be subclassed (compat checks, and warns when not)
    HttpToolsProtocol = compat.httptools_protocol() or object

_TIMEOUT_BODY = b'{"message": "Request not received in time"}'
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)
_EARLY = 0.002  # a timer may fire up to a millisecond early (the loop's clock resolution)
_MAX_TICK = 1.0  # seconds: how late past its deadline a request may be cut off, at most
_TICKS = 10  # per deadline, for deadlines under 10 s


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's protocol with the request deadline; ``request_timeout`` set by :func:`timed`."""

    request_timeout: float = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._watched: object = None  # the request on its way in at the last tick
        self._since = 0.0  # loop time it was first seen; the connection's start for its first

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watched = self  # no request yet: the connection itself is timed from now
        self._since = self.loop.time()
        self._tick_at(self._since)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._watched = None
        super().connection_lost(exc)

    def _tick_at(self, now: float) -> None:
        tick = min(self.request_timeout / _TICKS, _MAX_TICK)
        self._timer = self.loop.call_at(now + tick, self._check)

    def _incoming(self) -> object:
        """The request still on its way in (its scope, or the connection before its first
        request), None when the last one is in."""
        scope = self.scope  # uvicorn starts a new scope at each request's first byte
        if scope is None:
            return self
        # the cycle is made when the headers are in, and more_body set False once all of the
        # body is; uvicorn leaves it True when the app answered before the body was all in,
        # so such a connection, idle afterwards, is closed at the deadline as well
        cycle = self.cycle
        if cycle is None or cycle.scope is not scope or cycle.more_body:
            return scope
        return None

    def _check(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        try:
            incoming = self._incoming()
        except AttributeError as exc:  # another uvicorn, whose protocol keeps other names
            _warn_once(exc)
            return  # this connection goes on without a deadline, as with plain httptools
        if incoming is not self._watched:
            if not self._first_of(incoming):  # a new request (or none): its time starts now
                self._since = now  # (the connection's first keeps the connection's start)
            self._watched = incoming
        if incoming is not None and now >= self._since + self.request_timeout - _EARLY:
            self._cut_off(incoming)
            return
        self._tick_at(now)

    def _first_of(self, incoming: object) -> bool:
        """Whether ``incoming`` is surely the connection's first request, whose deadline
        runs from the connection's start: nothing was on its way at the last tick, and no
        request's headers were ever complete on the connection (so none came before)."""
        return self._watched is self and incoming is not None and self.cycle is None

    def _cut_off(self, incoming: object) -> None:
        cycle = self.cycle
        headers_in = cycle is not None and cycle.scope is incoming
        if not headers_in:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def _warn_once(exc: AttributeError) -> None:
    global _WARNED
    if not _WARNED:
        _WARNED = True
        LOG.warning(
            "--request-timeout is off: this uvicorn's httptools protocol has no %s "
            "(api/timeouts.py reads uvicorn 0.54's)",
            exc.name or exc,
        )


_WARNED = False
LOG = logging.getLogger("idv_mock.timeouts")


def timed(seconds: float) -> type[TimedHttpToolsProtocol] | str:
    """The protocol class for ``uvicorn.run(http=...)`` with a ``seconds`` deadline; "auto"
    (uvicorn's own, no deadline) when uvicorn's protocol cannot be subclassed (compat warned)."""
    if compat.httptools_protocol() is None:
        return "auto"
    return type("TimedHttpToolsProtocol", (TimedHttpToolsProtocol,), {"request_timeout": seconds})
