"""A base for small classes equal, hashed and shown by their fields, as a frozen dataclass.

A dataclass generates ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and more) as
source and compiles each when its module is imported: for the classes a first use of the
fixtures loads, that compiling was a visible share of the first use (issue 37). These
classes write their ``__init__`` themselves and take the comparing and showing from here,
written once.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar


class ByValue:
    """Equal to another of its class with equal ``FIELDS``, hashed by them (a class that
    changes its fields sets ``__hash__ = None``), shown as ``Name(field=value, ...)``.
    Read-only by convention."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()
    _VALUES: ClassVar[Any]  # the fields' values as a tuple, in one C call

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if len(cls.FIELDS) < 2:  # one name: attrgetter gives the value, not a tuple
            raise TypeError(f"{cls.__name__}.FIELDS names fewer than two fields")
        cls._VALUES = attrgetter(*cls.FIELDS)

    def _values(self) -> tuple[Any, ...]:
        return self._VALUES(self)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.FIELDS, self._values(), strict=True))
        return f"{type(self).__name__}({shown})"
