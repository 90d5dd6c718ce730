"""Per-project rate limiting (gaps.md "Limits": off unless the option is set)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """``rate`` calls per second on average, bursts up to ``max(rate, 1)`` calls."""

    rate: float
    tokens: float = -1.0
    stamp: float = field(default_factory=time.monotonic)

    def allow(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        burst = max(self.rate, 1.0)
        if self.tokens < 0:
            self.tokens = burst
        self.tokens = min(burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def wait_seconds(self) -> int:
        """Whole seconds until the next token (``Retry-After``; at least 1)."""
        return max(1, math.ceil((1 - self.tokens) / self.rate))
