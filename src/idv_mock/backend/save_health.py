"""How the state file's saves are going, kept by the service so the web layer can ask.

The saver (``idv_mock.tools.persistence``) records each outcome here; the write guard of the web
layer asks :meth:`SaveHealth.refusal` before a write, and the control API and the start
banner show :meth:`SaveHealth.describe`. Like Redis's ``stop-writes-on-bgsave-error``:
while the last save failed, accepting writes would only grow what a crash loses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class SaveHealth:
    path: str | None = None  # None: no state file, nothing to report
    stop_writes: bool = True  # refuse writes while the last save failed
    epoch: int = 0  # the state file's start counter (see persistence)
    last_save_at: str | None = None  # wall-clock ISO 8601 of the last successful save
    last_error: str | None = None  # the last failure, kept after a later success
    consecutive_failures: int = 0

    def succeeded(self, at: str) -> None:
        self.last_save_at, self.consecutive_failures = at, 0

    def failed(self, error: str) -> None:
        self.last_error = error
        self.consecutive_failures += 1

    def refusal(self) -> str | None:
        """Why writes are refused now, or None when they are accepted."""
        if not (self.stop_writes and self.consecutive_failures):
            return None
        return (
            f"Writes are refused: the last save of the state file failed ({self.last_error}); "
            "they are accepted again after the next successful save"
        )

    def describe(self) -> dict[str, Any] | None:
        if self.path is None:
            return None
        return {
            "state_file": self.path,
            "epoch": self.epoch,
            "last_save_at": self.last_save_at,
            "last_error": self.last_error,
            "consecutive_failures": self.consecutive_failures,
            "writes_refused": self.refusal() is not None,
        }
