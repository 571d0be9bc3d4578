"""DuckDB from pip reading R's data files: rdarrow's DuckDB extension,
shipped inside this package (built from ``src/rust/rdarrow-duckdb``), loaded
into a connection. After that, SQL reads ``.RData``/``.rda``/``.rds``,
``.qs2``, ``.qdata`` and ``.qs`` files as it reads Parquet files::

    import rdarrow.duckdb
    con = rdarrow.duckdb.connect()
    con.sql("FROM 'survey.RData'")                      # the file's data frame
    con.sql("FROM read_rdata('survey.RData', object = 'answers')")

The extension is not signed by DuckDB's maintainers, so DuckDB loads it only
into a database started with ``allow_unsigned_extensions``; ``connect()``
starts one so, and ``load()`` loads it into a connection the caller started
so."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ._optional import need

__all__ = ["connect", "extension_path", "load"]


def extension_path() -> str:
    """The path of the DuckDB extension shipped in this package."""
    path = Path(__file__).with_name("rdarrow.duckdb_extension")
    if not path.is_file():
        raise FileNotFoundError(
            f"rdarrow's DuckDB extension is not in this installation ({path}); "
            "reinstall rdarrow from a wheel (tools/python-wheel.sh builds it with the extension)"
        )
    return str(path)


def _duckdb() -> Any:
    return need("duckdb", "reading R data files with DuckDB")


def load(con: Any) -> Any:
    """Load the extension into ``con``, a ``duckdb`` connection started with
    ``config={"allow_unsigned_extensions": "true"}``; returns ``con``."""
    path = extension_path().replace("'", "''")
    try:
        con.execute(f"LOAD '{path}'")
    except Exception as e:
        if "unsigned" in str(e).lower() or "signature" in str(e).lower():
            raise RuntimeError(
                "DuckDB loads rdarrow's extension only into a database started with "
                'allow_unsigned_extensions: use rdarrow.duckdb.connect(), or duckdb.connect(config={"allow_unsigned_extensions": "true"})'
            ) from e
        raise
    return con


def connect(database: str = ":memory:", read_only: bool = False, config: Optional[dict] = None) -> Any:
    """A ``duckdb`` connection (as ``duckdb.connect()`` takes its arguments)
    with rdarrow's extension loaded. ``duckdb.set_default_connection()``
    makes ``duckdb.sql()`` use it."""
    duckdb = _duckdb()
    config = dict(config or {})
    config["allow_unsigned_extensions"] = "true"
    return load(duckdb.connect(database, read_only=read_only, config=config))
