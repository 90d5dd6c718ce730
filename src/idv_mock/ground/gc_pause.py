"""Pausing the cycle collector while many long-lived objects are made.

Seeding, loading a state file and a test session's first fixture each make hundreds of
thousands of objects that live on; the collector walking all of them again and again while
they are made costs more than the making. Standard library only, so the pytest plugin can
pause it before it imports anything of the mock.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """No cycle collection inside; collected as usual afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
