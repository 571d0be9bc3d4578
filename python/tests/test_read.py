"""Reading R data files into Arrow: values against R itself and arrow R,
the Arrow C stream taken by pyarrow, Polars and DuckDB, and errors."""

import datetime
import math

import pyarrow as pa
import pytest

import rdarrow

from conftest import FRAME_R, plain


def read_plain(*args, **kwargs):
    """``read_objects()``'s plain Python values (lists, dicts, scalars)."""
    return rdarrow.read_objects(*args, plain=True, **kwargs)


def test_list_objects_tells_what_r_saved(tmp_path, run_r):
    f = tmp_path / "several.RData"
    run_r(
        f"""
x <- 1:10; m <- matrix(0, 3, 4); df <- data.frame(a = 1:5, b = letters[1:5])
fit <- list(coef = c(a = 1), call = quote(f(x)))
save(x, m, df, fit, file = "{f}")
"""
    )
    objs = {o["name"]: o for o in rdarrow.list_objects(f)}
    assert list(objs) == ["x", "m", "df", "fit"]
    assert objs["x"]["type"] == "integer" and objs["x"]["length"] == 10
    assert objs["m"]["class"] == ["matrix", "array"]
    assert (objs["m"]["rows"], objs["m"]["columns"]) == (3, 4)
    assert objs["df"]["class"] == ["data.frame"]
    assert (objs["df"]["rows"], objs["df"]["columns"]) == (5, 2)
    assert objs["fit"]["type"] == "list" and objs["fit"]["rows"] is None


def test_rds_object_is_named_after_the_file(frame_files):
    (o,) = rdarrow.list_objects(frame_files["rds"])
    assert o["name"] == "frame" and o["rows"] == 1000


@pytest.mark.parametrize("kind", ["rdata", "rds"])
def test_values_are_those_r_saved(frame_files, run_r, kind):
    t = rdarrow.read_table(frame_files[kind])
    assert t.column_names == ["i", "d", "b", "s", "f", "day", "t"]
    assert t.num_rows == 1000
    assert t.schema.field("i").type == pa.int32()
    assert t.schema.field("d").type == pa.float64()
    assert t.schema.field("b").type == pa.bool_()
    assert t.schema.field("s").type == pa.string()
    assert pa.types.is_dictionary(t.schema.field("f").type)
    assert t.schema.field("day").type == pa.date32()
    # R's values, printed by R itself
    out = run_r(
        FRAME_R
        + 'cat(sum(df$i, na.rm = TRUE), sprintf("%.17g", sum(df$d[1:998])), sum(df$b, na.rm = TRUE),'
        + ' sum(nchar(df$s, type = "bytes"), na.rm = TRUE), table(df$f)[["hi"]], "\\n")'
    )
    i_sum, d_sum, b_sum, s_bytes, hi = out.split()
    col = {n: t.column(n).to_pylist() for n in t.column_names}
    assert sum(x for x in col["i"] if x is not None) == int(i_sum)
    assert col["i"][0] is None
    assert math.fsum(col["d"][:998]) == pytest.approx(float(d_sum), rel=0, abs=1e-9)
    assert col["d"][998] is None  # NA is null
    assert math.isnan(col["d"][999])  # NaN stays NaN
    assert sum(1 for x in col["b"] if x) == int(b_sum) and col["b"][0] is None
    assert sum(len(x.encode()) for x in col["s"] if x is not None) == int(s_bytes)
    assert col["f"].count("hi") == int(hi) and col["f"][0] is None
    assert t.column("f").chunk(0).dictionary.to_pylist() == ["lo", "mid", "hi", "unused"]
    assert col["day"][1] == datetime.date(2020, 1, 2) and col["day"][0] is None


def test_same_values_as_arrow_r(frame_files):
    if not frame_files["feather"].exists():
        pytest.skip("the arrow R package is not installed: nothing to compare with")
    import pyarrow.feather as feather

    ours = rdarrow.read_table(frame_files["rdata"])
    theirs = feather.read_table(frame_files["feather"])
    assert ours.column_names == theirs.column_names
    for name in ours.column_names:
        a, b = ours.column(name).combine_chunks(), theirs.column(name).combine_chunks()
        if pa.types.is_dictionary(a.type):
            # the same levels, in the same order, and the same values
            assert a.dictionary.equals(b.dictionary), name
            a, b = a.cast(pa.string()), b.cast(pa.string())
        if a.type != b.type:
            # a coarser unit where it keeps every value (seconds here)
            assert pa.types.is_timestamp(a.type) and a.type.tz == b.type.tz, name
            a = a.cast(b.type)
        assert plain(a) == plain(b), name


def test_columns_and_objects_are_chosen(tmp_path, run_r):
    f = tmp_path / "two.RData"
    run_r(f'a <- data.frame(x = 1:3, y = c("p", "q", "r")); b <- data.frame(z = 4:6); save(a, b, file = "{f}")')
    with pytest.raises(rdarrow.UsageError):
        rdarrow.read_table(f)  # two data frames: which one?
    t = rdarrow.read_table(f, object="a", columns=["y", "x"])
    assert t.column_names == ["y", "x"] and t.column("x").to_pylist() == [1, 2, 3]
    assert rdarrow.read_table(f, object="b").column("z").to_pylist() == [4, 5, 6]
    with pytest.raises(rdarrow.UsageError, match="nope"):
        rdarrow.read_table(f, object="nope")


def test_consumers_take_the_stream(frame_files):
    import duckdb
    import polars as pl

    reader = rdarrow.RDataReader(frame_files["rdata"], chunk_size=300)
    batches = list(pa.RecordBatchReader.from_stream(reader))
    assert [b.num_rows for b in batches] == [300, 300, 300, 100]
    df = pl.DataFrame(rdarrow.RDataReader(frame_files["rdata"]))
    assert df.height == 1000 and df["i"].null_count() == 1
    r = rdarrow.RDataReader(frame_files["rdata"], columns=["f"])
    got = duckdb.sql("select f, count(*) from r group by f order by f").fetchall()
    assert sum(n for _, n in got) == 1000
    # a reader taken twice reads the file again
    again = pa.table(reader)
    assert again.num_rows == 1000


def test_errors_say_what_and_where(tmp_path, frame_files):
    with pytest.raises(rdarrow.RDataIOError, match="missing.RData"):
        rdarrow.read_table(tmp_path / "missing.RData")
    text = tmp_path / "notes.txt"
    text.write_text("not R data\n")
    with pytest.raises(rdarrow.NotRDataError, match="notes.txt"):
        rdarrow.list_objects(text)
    cut = tmp_path / "cut.RData"
    cut.write_bytes(frame_files["rdata"].read_bytes()[:3000])
    with pytest.raises(rdarrow.CorruptError):
        rdarrow.read_table(cut)
    with pytest.raises(TypeError):
        rdarrow.read_table(tmp_path / "x.RData", columns=[1, 2])


def test_hostile_bytes_raise_errors_never_crash(tmp_path, frame_files):
    """A mutation sweep through the Python API: truncations and bit flips of
    the stream, in every compression R writes, and of the compressed bytes
    themselves, are read back or refused with an RDataError."""
    import bz2
    import gzip
    import lzma
    import random

    data = lzma.decompress(frame_files["rds"].read_bytes())
    envelopes = [
        lambda b: b,
        lambda b: gzip.compress(b, 1),
        lambda b: bz2.compress(b, 1),
        lambda b: lzma.compress(b, preset=0),
    ]
    rng = random.Random(7)
    spots = sorted(rng.sample(range(len(data)), 150)) + list(range(0, 64))
    bad = tmp_path / "bad.rds"
    outcomes = {"read": 0, "refused": 0}

    def attempt(blob):
        bad.write_bytes(blob)
        try:
            rdarrow.list_objects(bad)
            read_plain(bad)
            rdarrow.read_table(bad)
            outcomes["read"] += 1
        except rdarrow.RDataError:
            outcomes["refused"] += 1

    for k, at in enumerate(spots):
        mutated = bytearray(data)
        if k % 3 == 0:
            mutated = mutated[:at]
        else:
            mutated[at] ^= 1 << (k % 8)
        attempt(envelopes[k % 4](bytes(mutated)))
    # the compressed bytes mutated: each decompressor meets damage
    for wrap in envelopes[1:]:
        packed = wrap(data)
        for k, at in enumerate(sorted(rng.sample(range(len(packed)), 40))):
            mutated = bytearray(packed)
            if k % 4 == 0:
                mutated = mutated[:at]
            else:
                mutated[at] ^= 1 << (k % 8)
            attempt(bytes(mutated))
    assert outcomes["refused"] > 0 and sum(outcomes.values()) == len(spots) + 3 * 40


def test_same_values_as_pyreadr_where_it_reads_the_file(frame_files):
    pyreadr = pytest.importorskip("pyreadr", reason="pyreadr is not installed (tools/setup.sh installs it)")
    import pandas as pd

    theirs = pyreadr.read_r(str(frame_files["rdata"]))["df"]
    ours = rdarrow.read_pandas(frame_files["rdata"])
    assert list(ours.columns) == list(theirs.columns)
    for name in ["i", "b", "s"]:
        # pyreadr has no nullable types: NA is NaN or None there
        a = [None if pd.isna(x) else x for x in ours[name]]
        b = [None if pd.isna(x) else x for x in theirs[name]]
        assert a == b, name
    # doubles: pyreadr loses NA against NaN (both NaN); the values agree
    a = ours["d"].to_numpy(dtype=float, na_value=float("nan"))
    b = theirs["d"].to_numpy(dtype=float)
    assert ((a == b) | (pd.isna(a) & pd.isna(b))).all()
    assert list(ours["f"].astype(object).where(ours["f"].notna(), None)) == list(
        theirs["f"].astype(object).where(theirs["f"].notna(), None)
    )
    assert list(ours["f"].cat.categories) == list(theirs["f"].cat.categories)


def test_objects_as_plain_python_values(tmp_path, run_r):
    f = tmp_path / "objects.RData"
    run_r(
        f"""
v <- c(1.5, NA, NaN); n <- c(a = 1L, b = NA); s <- c("x", NA, "ü")
fac <- factor(c("lo", NA, "hi"), levels = c("lo", "hi"))
when <- as.Date(c("2024-02-29", NA)); at <- as.POSIXct("2021-06-01 12:00:00", tz = "UTC")
cfg <- list(name = "run", sizes = 1:3, nested = list(ok = TRUE, raw = as.raw(c(1, 255))))
df <- data.frame(x = 1:2, y = c("p", "q"))
f <- function(x) x + 1
save(v, n, s, fac, when, at, cfg, df, f, file = "{f}")
"""
    )
    with pytest.warns(rdarrow.RDataWarning, match="closure"):
        o = read_plain(f)
    assert list(o) == ["v", "n", "s", "fac", "when", "at", "cfg", "df", "f"]
    assert o["v"][0] == 1.5 and o["v"][1] is None and math.isnan(o["v"][2])
    assert o["n"] == {"a": 1, "b": None}
    assert o["s"] == ["x", None, "ü"]
    assert o["fac"] == ["lo", None, "hi"]
    assert o["when"] == [datetime.date(2024, 2, 29), None]
    assert o["at"] == [datetime.datetime(2021, 6, 1, 12, tzinfo=datetime.timezone.utc)]
    assert o["cfg"] == {"name": ["run"], "sizes": [1, 2, 3], "nested": {"ok": [True], "raw": b"\x01\xff"}}
    assert o["df"] == {"x": [1, 2], "y": ["p", "q"]}
    assert o["f"] is None
    assert read_plain(f, names=["n"]) == {"n": {"a": 1, "b": None}}
    with pytest.raises(rdarrow.UsageError, match="nope"):
        read_plain(f, names=["nope"])


def test_consumers_see_the_buffers_the_engine_decoded(frame_files):
    """No copy: the values buffers pyarrow imports from the stream are at
    the addresses where the engine decoded them."""
    reader = rdarrow.RDataReader(frame_files["rdata"], columns=["i", "d", "s", "day"])
    engine = reader._addresses
    batch = pa.RecordBatchReader.from_stream(reader).read_next_batch()
    for k in range(batch.num_columns):
        seen = [b.address for b in batch.column(k).buffers()[1:] if b is not None]
        assert seen == engine[k], batch.schema.field(k).name


def test_nested_objects_by_path(tmp_path, run_r):
    f = tmp_path / "nested.RData"
    run_r(
        f"""
lst <- list(a = data.frame(x = 1:3, y = c("p", NA, "r")), b = list(c = c(1.5, NA)), 7L)
save(lst, file = "{f}")
"""
    )
    names = [o["name"] for o in rdarrow.list_objects(f, recursive=True)]
    assert names == ["lst", "lst$a", "lst$b", "lst$b$c", "lst[[3]]"]
    assert [o["name"] for o in rdarrow.list_objects(f)] == ["lst"]
    a = rdarrow.read_table(f, object="lst$a")
    assert a.column("x").to_pylist() == [1, 2, 3]
    assert a.column("y").to_pylist() == ["p", None, "r"]
    assert rdarrow.read_table(f, object=("lst", 1)).equals(a)
    assert rdarrow.read_pandas(f, object=["lst", "a"])["y"].isna().tolist() == [False, True, False]
    vals = read_plain(f, ["lst$b$c", ("lst", 3)])
    assert vals["lst$b$c"] == [1.5, None]
    assert vals["lst[[3]]"] == [7]
    with pytest.raises(rdarrow.UsageError, match=r"'lst\$z' not found: 'lst' holds 'a', 'b', \[\[3\]\]"):
        rdarrow.read_table(f, object="lst$z")
    with pytest.raises(ValueError):
        rdarrow.read_table(f, object=("lst", 0))
    with pytest.raises(TypeError):
        rdarrow.read_table(f, object=("lst", 1.5))
    out = tmp_path / "a.parquet"
    rdarrow.to_parquet(f, out, object="lst$a")
    import pyarrow.parquet as pq

    assert pq.read_table(out).column("x").to_pylist() == [1, 2, 3]


def test_urls_and_lazy_load_bases(tmp_path, frame_files):
    """R data behind an http URL (a web server on the loopback interface)
    and a package's lazy-load data base are read as files are."""
    import functools
    import http.server
    import shutil
    import threading

    shutil.copy(frame_files["rds"], tmp_path / "frame.rds")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/frame.rds"
        got, want = rdarrow.read_table(url), rdarrow.read_table(frame_files["rds"])
        assert got.schema == want.schema
        assert all(plain(got.column(n)) == plain(want.column(n)) for n in want.column_names)
        assert rdarrow.list_objects(url)[0]["name"] == "frame"
        with pytest.raises(rdarrow.RDataError, match="HTTP 404"):
            rdarrow.read_table(url.replace("frame.rds", "missing.rds"))
    finally:
        server.shutdown()
        server.server_close()
    import subprocess

    library = subprocess.run(
        ["Rscript", "-e", "cat(system.file('data', 'Rdata.rdb', package = 'datasets'))"],
        capture_output=True,
        text=True,
    ).stdout
    if not library:
        pytest.skip("R's datasets package is not installed")
    names = [o["name"] for o in rdarrow.list_objects(library)]
    assert "mtcars" in names and "iris" in names
    iris = rdarrow.read_table(library, object="iris")
    assert iris.num_rows == 150 and iris.column_names[-1] == "Species"


def test_bytes_and_file_objects(tmp_path, frame_files, run_r):
    """Bytes (a file's, or serialize() output, compressed or not) and
    binary file objects are read as files are."""
    import gzip
    import io

    want = rdarrow.read_table(frame_files["rds"])
    data = frame_files["rds"].read_bytes()
    with open(frame_files["rds"], "rb") as f:
        for source in (data, bytearray(data), io.BytesIO(data), f):
            got = rdarrow.read_table(source)
            assert got.schema == want.schema
            assert all(plain(got.column(n)) == plain(want.column(n)) for n in want.column_names)
    # an .rds stream's object is named "value", as for R's raw vectors
    assert rdarrow.list_objects(data)[0]["name"] == "value"
    raw = tmp_path / "raw.bin"
    run_r(f'writeBin(memCompress(serialize(list(a = 1:3, b = "x"), NULL), "gzip"), "{raw}")')
    assert read_plain(raw.read_bytes()) == {"value": {"a": [1, 2, 3], "b": ["x"]}}
    out = tmp_path / "out.parquet"
    rdarrow.to_parquet(gzip.compress(rdarrow_rds_bytes(frame_files)), out)
    import pyarrow.parquet as pq

    assert pq.read_table(out).num_rows == want.num_rows
    with pytest.raises(rdarrow.RDataError):
        rdarrow.read_table(b"hello, world")


def rdarrow_rds_bytes(frame_files):
    """The frame's .rds stream, uncompressed."""
    import lzma

    return lzma.decompress(frame_files["rds"].read_bytes())


def test_an_rds_path_may_start_inside_its_one_object(tmp_path, run_r):
    """In an .rds file, whose one object is named after the file, a path
    may start inside that object (``b$c``) as well as at it (``obj$b$c``):
    the engine's one rule, in every reader and the command line."""
    f = tmp_path / "obj.rds"
    run_r(
        f"""
saveRDS(list(a = 1, b = list(c = 1:3, d = "x"), frame = data.frame(x = 1:3, y = c("p", NA, "r"))),
        "{f}")
"""
    )
    inside = read_plain(f, ["b$c", "obj$b$c", "b[[2]]", ("b", "c")])
    assert inside["b$c"] == [1, 2, 3]
    assert inside["obj$b$c"] == [1, 2, 3]
    assert inside["b[[2]]"] == ["x"]
    frame = rdarrow.read_table(f, object="frame")
    assert frame.column("y").to_pylist() == ["p", None, "r"]
    assert rdarrow.read_table(f, object="obj$frame").equals(frame)
    assert rdarrow.read_table(f, object=("frame",)).equals(frame)
    assert rdarrow.read_pandas(f, object="frame")["x"].tolist() == [1, 2, 3]
    with pytest.raises(rdarrow.UsageError, match=r"'obj\$b\$zz' not found: 'obj\$b' holds 'c', 'd'"):
        rdarrow.read_table(f, object="b$zz")
    out = tmp_path / "frame.parquet"
    rdarrow.to_parquet(f, out, object="frame")
    import pyarrow.parquet as pq

    assert pq.read_table(out).column("x").to_pylist() == [1, 2, 3]
    # the command line takes the same paths
    import subprocess
    import sys

    out2 = tmp_path / "frame2.parquet"
    subprocess.run(
        [sys.executable, "-m", "rdarrow", "to-parquet", str(f), "-o", str(out2), "--object", "frame"],
        check=True,
    )
    assert pq.read_table(out2).column("x").to_pylist() == [1, 2, 3]
