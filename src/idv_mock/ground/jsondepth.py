"""The nesting limit of JSON the mock accepts: 64 levels, everywhere a document is read.

orjson parses up to 1,024 levels, but what comes after it does not: JSON Schema validation
and ``repr`` recurse once per level and end in ``RecursionError`` (a 500, or a traceback
at start) long before that. Refusing deeper documents up front keeps every such path a
clear 400 (or exit 2). No real request or state document comes near the limit: a
submission is about 8 levels deep, a whole state document about 12.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 64
MESSAGE = f"JSON nested deeper than {MAX_DEPTH} levels is refused"
# A state document holds stored values (a submission, a project's options, a watchlist
# entry, each up to MAX_DEPTH deep as a call sent it) inside its own envelope: the state,
# its projects, a project, its submissions, AML state or worklists, ... So a state is read
# with the envelope's levels added, and what a call stored can always be imported again.
STATE_ENVELOPE = 8
STATE_DEPTH = MAX_DEPTH + STATE_ENVELOPE
STATE_MESSAGE = f"JSON nested deeper than {STATE_DEPTH} levels is refused"


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON) nests more than ``limit`` objects and arrays.

    Iterative, so the check itself cannot overflow the stack; only containers are walked.
    A scalar is depth 0, ``[]`` and ``{}`` depth 1.
    """
    if not isinstance(value, (dict, list)):
        return False
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        for child in children:
            if isinstance(child, (dict, list)):
                pending.append((child, depth + 1))
    return False
