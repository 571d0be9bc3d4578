"""The errors every reader and writer raises (the engine's, by kind) and the
warning of what a conversion changed; ``note()``, the one way a module says
so."""

from __future__ import annotations

import warnings

from ._rdarrow import (
    CorruptError,
    LimitError,
    NotRDataError,
    RDataError,
    RDataIOError,
    UnsafeError,
    UnsupportedError,
    UsageError,
)

__all__ = [
    "CorruptError",
    "LimitError",
    "NotRDataError",
    "RDataError",
    "RDataIOError",
    "RDataWarning",
    "UnsafeError",
    "UnsupportedError",
    "UsageError",
    "note",
]


class RDataWarning(UserWarning):
    """Something the conversion changed and the user should know of (it went on)."""


def note(text: str, stacklevel: int = 3) -> None:
    """Warn of what a conversion changed (an :class:`RDataWarning`), pointing
    ``stacklevel`` frames up from here (3: the caller of the function that
    notes)."""
    warnings.warn(text, RDataWarning, stacklevel=stacklevel)
