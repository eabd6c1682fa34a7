"""Read-only properties that forward to an attribute of an attribute (``self.inner.name``)."""

from __future__ import annotations

from operator import attrgetter

__all__ = ["forwarded"]


def forwarded(path: str, doc: str | None = None) -> property:
    """A read-only property returning ``self.<path>`` (a dotted path such as
    ``"mechanism.sigma"``), documented by ``doc``.

    >>> class Box:
    ...     def __init__(self, inner):
    ...         self.inner = inner
    ...     real = forwarded("inner.real", "The real part of the inner value.")
    >>> Box(3 + 4j).real
    3.0
    """
    return property(attrgetter(path), doc=doc)
