"""Optional packages (NumPy, pandas, scipy, anndata, DuckDB, ...): imported
when a value first needs them, never when rdarrow is imported, so that
reading and writing plain Python values needs pyarrow alone; a missing one
is named in one line with the ``pip install`` that brings it."""

from __future__ import annotations

import importlib
from typing import Any

# module -> what pip installs (rdarrow's extras where there is one)
_PIP = {
    "numpy": "numpy",
    "pandas": "rdarrow[pandas]",
    "scipy": "rdarrow[sparse]",
    "scipy.sparse": "rdarrow[sparse]",
    "anndata": "anndata",
    "duckdb": "duckdb",
    "polars": "polars",
    "xarray": "xarray",
}


def pip_line(module: str) -> str:
    """The ``pip install`` that brings ``module``."""
    return f"pip install {_PIP.get(module, module.split('.')[0])}"


def need(module: str, what: str, instead: str = "") -> Any:
    """``module``, imported; if it is missing, an :class:`ImportError` of one
    line saying that ``what`` needs it, how to install it, and (``instead``)
    what else would do."""
    try:
        return importlib.import_module(module)
    except ImportError:
        tail = f" ({instead})" if instead else ""
        raise ImportError(f"{what} needs {module.split('.')[0]}: {pip_line(module)}{tail}") from None


def have(module: str) -> Any:
    """``module``, imported, or ``None`` if it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


class Lazy:
    """A module imported at its first use (``np = Lazy("numpy", "...")``):
    the modules of values that need NumPy use it as they would the module."""

    __slots__ = ("_name", "_what", "_instead", "_module")

    def __init__(self, name: str, what: str, instead: str = "") -> None:
        self._name = name
        self._what = what
        self._instead = instead
        self._module = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = need(self._name, self._what, self._instead)
            object.__setattr__(self, "_module", module)
        return getattr(module, attr)
