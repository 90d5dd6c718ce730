"""Patch layers: one client method replaced per active mock, stacked like ``mock.patch``.

Each mock wraps whatever the method is when it starts (the library's own, or another
mocking tool's patch), and hands on every call it does not answer. A mock stopped out of
order cannot take its layer out from under a later patch; the layer then stays in the
chain, inert (its target is inactive, so it only hands calls on), until the layer above
it is undone and skips it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()  # starting and stopping mocks from several threads at once


class Layer:
    """``owner.name`` replaced by ``make(the current one)`` until :meth:`undo`."""

    def __init__(self, owner: type, name: str, make: Callable[[Any], Any]) -> None:
        self.owner = owner
        self.name = name
        with _lock:
            self.real = getattr(owner, name)
            self.replacement = make(self.real)
            setattr(owner, name, self.replacement)

    def undo(self) -> None:
        """Put back what was there, skipping layers stopped earlier under this one."""
        with _lock:
            if self.owner.__dict__.get(self.name) is not self.replacement:
                _stale[id(self.replacement)] = self
                return
            real = self.real
            while id(real) in _stale:
                real = _stale.pop(id(real)).real
            setattr(self.owner, self.name, real)


# Layers whose mock stopped while another patch sat on top, by their replacement's id: the
# next undo that reaches them takes them out of the chain too.
_stale: dict[int, Layer] = {}
