"""Every data frame of the peer corpus (files written by real R, 2.7 to 4.6,
named by RDARROW_PEERS_DIR), read through the Python package: its values
against what R itself loads from the same file, printed by Rscript, and
against pyreadr where pyreadr reads the file."""

import math
import os

import pyarrow as pa
import pytest

import rdarrow


def _num(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Inf" if x > 0 else "-Inf"
    return "%.17g" % x


_UNIT = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}


def _values(arr, kind):
    """The column's values as the R dump writes them, and its NA positions."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_timestamp(t):
        # seconds, correctly rounded from the integer
        raw = arr.cast(pa.int64()).to_pylist()
        vals = [None if v is None else _num(v / _UNIT[t.unit]) for v in raw]
    elif pa.types.is_date32(t):
        vals = [None if v is None else _num(float(v)) for v in arr.cast(pa.int32()).to_pylist()]
    elif pa.types.is_boolean(t):
        vals = [None if v is None else ("TRUE" if v else "FALSE") for v in arr.to_pylist()]
    elif pa.types.is_floating(t):
        vals = [None if v is None else _num(v) for v in arr.to_pylist()]
    elif pa.types.is_integer(t):
        vals = [
            None if v is None else (_num(float(v)) if kind in ("double", "Date", "POSIXct") else str(v))
            for v in arr.to_pylist()
        ]
    else:
        vals = arr.to_pylist()
    na = [i for i, v in enumerate(vals) if v is None]
    return [("" if v is None else v) for v in vals], na


def _label(fr, root):
    return f"{os.path.relpath(fr['file'], root)} [{fr['object']}]"


def check_frames_against_r(r_frames, read, errors, timestamps_hold_nan=True):
    """Read every convertible corpus data frame with `read(file, object)`
    (a pyarrow Table; `errors` are the reader's exceptions) and compare its
    rows, names, values, NA positions and factor levels with what R loads.
    `timestamps_hold_nan=False`: a reader whose timestamps hold no NaN or
    infinite instant (DuckDB's), which are then NULL."""
    root = os.environ["RDARROW_PEERS_DIR"]
    failures, checked, columns = [], 0, 0
    for fr in r_frames:
        if not fr["convertible"]:
            continue
        label = _label(fr, root)
        try:
            t = read(fr["file"], fr["object"])
        except errors as e:
            failures.append(f"{label}: {type(e).__name__}: {e}")
            continue
        t.validate(full=True)
        checked += 1
        if t.num_rows != fr["rows"] or t.column_names != fr["names"]:
            failures.append(
                f"{label}: {t.num_rows} rows {t.column_names}, R has {fr['rows']} rows {fr['names']}"
            )
            continue
        for j, (name, col) in enumerate(zip(fr["names"], fr["columns"])):
            kind = col["kind"]
            if kind == "other":
                continue
            columns += 1
            vals, na = _values(t.column(j), kind)
            want_na, want = col["na"], col["values"]
            if kind == "POSIXct" and not timestamps_hold_nan:
                odd = {i for i, v in enumerate(want) if v in ("NaN", "Inf", "-Inf")}
                want_na = sorted(set(want_na) | odd)
                want = ["" if i in odd else v for i, v in enumerate(want)]
            if na != want_na:
                failures.append(f"{label} column {name!r}: NA at {na[:5]}..., R has {want_na[:5]}...")
            elif vals != want:
                k = next(i for i, (a, b) in enumerate(zip(vals, want)) if a != b)
                failures.append(
                    f"{label} column {name!r} ({kind}, {t.schema.field(j).type}): "
                    f"row {k} is {vals[k]!r}, R has {want[k]!r}"
                )
            elif kind == "factor":
                levels = t.column(j).combine_chunks().dictionary.to_pylist()
                if levels != col["levels"]:
                    failures.append(f"{label} column {name!r}: levels {levels}, R has {col['levels']}")
    assert checked > 50 and columns > 200, (checked, columns)
    assert not failures, f"{len(failures)} of {checked} data frames differ:\n" + "\n".join(failures)


def test_every_corpus_frame_has_the_values_r_loads(r_frames):
    check_frames_against_r(
        r_frames, lambda f, obj: rdarrow.read_table(f, object=obj), rdarrow.RDataError
    )


def test_corpus_frames_agree_with_pyreadr_where_it_reads_them(r_frames):
    pyreadr = pytest.importorskip("pyreadr", reason="pyreadr is not installed (tools/setup.sh installs it)")
    import pandas as pd

    root = os.environ["RDARROW_PEERS_DIR"]
    failures, compared = [], 0
    read = {}
    for fr in r_frames:
        if not fr["convertible"]:
            continue
        if fr["file"] not in read:
            try:
                read[fr["file"]] = pyreadr.read_r(fr["file"])
            except Exception:
                read[fr["file"]] = None
        theirs_all = read[fr["file"]]
        if not theirs_all:
            continue
        key = fr["object"] if fr["object"] is not None else None
        theirs = theirs_all.get(key) if key is not None else next(iter(theirs_all.values()))
        if theirs is None or len(theirs) != fr["rows"]:
            continue  # pyreadr dropped or reshaped it
        ours = rdarrow.read_pandas(fr["file"], object=fr["object"])
        compared += 1
        label = _label(fr, root)
        for name, col in zip(fr["names"], fr["columns"]):
            if col["kind"] not in ("integer", "double", "character", "logical") or name not in theirs:
                continue
            if list(ours.columns).count(name) != 1:
                continue
            # pyreadr has no nullable types and no NA apart from NaN
            a = [None if pd.isna(x) else x for x in ours[name]]
            b = [None if pd.isna(x) else x for x in theirs[name]]
            if col["kind"] in ("integer", "double"):
                same = all(
                    (x is None and y is None) or (x is not None and y is not None and float(x) == float(y))
                    for x, y in zip(a, b)
                )
            else:
                same = a == b
            if not same:
                failures.append(f"{label} column {name!r}: differs from pyreadr")
    assert compared > 20, compared
    assert not failures, "\n".join(failures)
