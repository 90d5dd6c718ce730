"""The service's names from before it was split into parts, kept working for a while.

Until session 6 every operation was a method of ``Service`` itself (through mixins);
now most live on the part that owns their state (``service.calls``, ``service.tokens``,
...). Code written against the old names (tests, conftests, demo scripts) keeps running:
each old name forwards to its new home and warns, naming it. Only names that act on a
project's state are here; the web layer's plumbing (``admit_call``, ``record_call``,
``fire_fault``, ``run_due``, ``webhook_now``, ...) was never for users and is gone.
docs/in-process.md lists the same table.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

# old Service method -> where it is now, read from the service ("calls.journal": the
# part service.calls, its method journal); every one takes the same arguments as before
MOVED: dict[str, str] = {
    "journal": "calls.journal",
    "clear_journal": "calls.clear_journal",
    "deliveries": "delivery.recorded",
    "resend_delivery": "resend",
    "register_tokens": "tokens.register",
    "delete_tokens": "tokens.delete",
    "delete_oldest_tokens": "tokens.delete_oldest",
    "token": "tokens.get",
    "token_count": "tokens.count",
    "token_lives": "tokens.lives",
    "token_page": "tokens.page",
    "review": "edit",
    "client_review": "records.client_review",
    "image": "records.image",
    "put_images": "records.put_images",
    "migrate": "records.migrate",
    "screen": "screening.screen",
    "report_pdf": "screening.report_pdf",
    "monitor": "screening.monitor",
    "monitoring_record": "screening.monitoring_record",
    "monitoring_records_of": "screening.records_of",
    "own_watchlist": "screening.own_watchlist",
    "delete_watchlist_entry": "screening.delete_watchlist_entry",
    "delete_worklist": "screening.delete_worklist",
    "delete_records": "screening.delete_records",
    "liveform_open": "liveform.open",
    "liveform_step": "liveform.step",
    "liveform_session": "liveform.session",
}


class MovedNames:
    """The old names as a type checker sees them (``Service`` derives from this): without
    it mypy reports each as a missing attribute although it runs. Only annotations: the
    methods themselves are ``add_aliases``'s, and take what their new homes take."""

    journal: Callable[..., Any]
    clear_journal: Callable[..., Any]
    deliveries: Callable[..., Any]
    resend_delivery: Callable[..., Any]
    register_tokens: Callable[..., Any]
    delete_tokens: Callable[..., Any]
    delete_oldest_tokens: Callable[..., Any]
    token: Callable[..., Any]
    token_count: Callable[..., Any]
    token_lives: Callable[..., Any]
    token_page: Callable[..., Any]
    review: Callable[..., Any]
    client_review: Callable[..., Any]
    image: Callable[..., Any]
    put_images: Callable[..., Any]
    migrate: Callable[..., Any]
    screen: Callable[..., Any]
    report_pdf: Callable[..., Any]
    monitor: Callable[..., Any]
    monitoring_record: Callable[..., Any]
    monitoring_records_of: Callable[..., Any]
    own_watchlist: Callable[..., Any]
    delete_watchlist_entry: Callable[..., Any]
    delete_worklist: Callable[..., Any]
    delete_records: Callable[..., Any]
    liveform_open: Callable[..., Any]
    liveform_step: Callable[..., Any]
    liveform_session: Callable[..., Any]


def add_aliases(cls: type) -> None:
    """Give ``cls`` (``Service``) each old name as a method forwarding to its new home."""
    for old, new in MOVED.items():
        if old in vars(cls):  # an alias never hides a method of the same name
            raise TypeError(f"{cls.__name__}.{old} exists: drop it from MOVED")
        setattr(cls, old, _alias(cls.__name__, old, new))


def _alias(owner: str, old: str, new: str) -> Callable[..., Any]:
    *path, name = new.split(".")

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        message = f"{owner}.{old} is deprecated: use service.{new}"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        target = self
        for part in path:
            target = getattr(target, part)
        return getattr(target, name)(*args, **kwargs)

    forward.__name__ = old
    forward.__qualname__ = f"{owner}.{old}"
    forward.__doc__ = f"Deprecated: ``service.{new}``, which takes the same arguments."
    return forward
