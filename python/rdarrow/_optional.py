"""Optional packages (NumPy, pandas, scipy, anndata, DuckDB, Polars, Dask,
Spark, ...): imported when a value first needs them, never when rdarrow is
imported, so that reading and writing plain Python values needs pyarrow
alone; what is missing is named in one line with the ``pip install`` of
the rdarrow extra that brings all of it (``python/pyproject.toml``)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Sequence

# module -> rdarrow's extra that installs it (the extras in pyproject.toml)
_EXTRA = {
    "numpy": "numpy",
    "pandas": "pandas",
    "scipy": "sparse",
    "scipy.sparse": "sparse",
    "anndata": "anndata",
    "duckdb": "duckdb",
    "polars": "polars",
    "dask": "dask",
    "dask.dataframe": "dask",
    "pyspark": "spark",
    "pyspark.sql.datasource": "spark",
    "xarray": "xarray",
}


def pip_line(module: str, extra: str = "") -> str:
    """The ``pip install`` that brings ``module`` (``extra``: the rdarrow
    extra that brings it with the others a call needs)."""
    extra = extra or _EXTRA.get(module, "")
    return f"pip install 'rdarrow[{extra}]'" if extra else f"pip install {module.split('.')[0]}"


def need_all(what: str, modules: Sequence[str], extra: str, instead: str = "") -> list:
    """``modules``, imported; if any is missing, one :class:`ImportError`
    of one line saying that ``what`` needs the missing ones, the
    ``pip install`` of rdarrow's ``extra`` that brings them all, and
    (``instead``) what else would do."""
    got, failed = [], []
    for m in modules:
        try:
            got.append(importlib.import_module(m))
        except ImportError as e:
            # the package that is missing (NumPy, when scipy cannot be
            # imported without it)
            top = (getattr(e, "name", None) or m).split(".")[0]
            if top not in failed:
                failed.append(top)
    # a package that is installed but failed for another one's absence
    # (pandas without NumPy) is not named
    missing = [m for m in failed if not _installed(m)] or failed
    if missing:
        tail = f" ({instead})" if instead else ""
        names = " and ".join(missing) if len(missing) < 3 else ", ".join(missing[:-1]) + " and " + missing[-1]
        raise ImportError(f"{what} needs {names}: {pip_line(missing[0], extra)}{tail}") from None
    return got


def _installed(top: str) -> bool:
    """Whether package ``top`` is installed (importable or not)."""
    if top in sys.modules:
        return sys.modules[top] is not None
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def need(module: str, what: str, instead: str = "") -> Any:
    """``module``, imported; if it is missing, an :class:`ImportError` of one
    line saying that ``what`` needs it, how to install it, and (``instead``)
    what else would do."""
    return need_all(what, [module], _EXTRA.get(module, ""), instead)[0]


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
