"""Writing R data files from Python: R's own load() and readRDS() read
them back, identical() to the data frames R makes itself."""

import datetime
import os

import pyarrow as pa
import pytest

import rdarrow

# the data frame R should find, made by R
EXPECTED_R = r"""
want <- data.frame(
  i = c(1L, NA, 3L),
  d = c(0.5, NA, -2),
  s = c("a", NA, "日本"),
  b = c(TRUE, FALSE, NA),
  f = factor(c("lo", NA, "hi"), levels = c("lo", "hi")),
  day = as.Date(c("2020-01-01", NA, "2024-02-29")),
  t = as.POSIXct(c("2021-06-01 12:00:00", NA, "2021-06-02 00:00:01"), tz = "UTC"),
  stringsAsFactors = FALSE
)
"""


def arrow_table():
    return pa.table(
        {
            "i": pa.array([1, None, 3], pa.int32()),
            "d": pa.array([0.5, None, -2.0]),
            "s": pa.array(["a", None, "日本"]),
            "b": pa.array([True, False, None]),
            "f": pa.DictionaryArray.from_arrays(
                pa.array([0, None, 1], pa.int32()), pa.array(["lo", "hi"])
            ),
            "day": pa.array([datetime.date(2020, 1, 1), None, datetime.date(2024, 2, 29)]),
            "t": pa.array(
                [
                    datetime.datetime(2021, 6, 1, 12, tzinfo=datetime.timezone.utc),
                    None,
                    datetime.datetime(2021, 6, 2, 0, 0, 1, tzinfo=datetime.timezone.utc),
                ],
                pa.timestamp("s", tz="UTC"),
            ),
        }
    )


def check_in_r(run_r, code):
    out = run_r(EXPECTED_R + code)
    assert out.strip().endswith("TRUE"), out


@pytest.mark.parametrize("compress", ["gzip", "xz", "none"])
def test_pyarrow_table_loads_identical(tmp_path, run_r, compress):
    f = tmp_path / "t.RData"
    rdarrow.write_rdata(arrow_table(), f, name="df", compress=compress)
    check_in_r(run_r, f'e <- new.env(); stopifnot(identical(load("{f}", e), "df")); cat(identical(e$df, want))')


@pytest.mark.parametrize("version", [2, 3])
def test_both_format_versions_load(tmp_path, run_r, version):
    f = tmp_path / f"v{version}.RData"
    rdarrow.write_rdata(arrow_table(), f, name="df", compress="bzip2", version=version)
    assert f.read_bytes()[:3] == b"BZh"
    check_in_r(
        run_r,
        f'e <- new.env(); load("{f}", e); stopifnot(identical(e$df, want)); '
        f'con <- bzfile("{f}", "rb"); magic <- readChar(con, 5, useBytes = TRUE); close(con); '
        f'cat(magic == "RDX{version}\\n")',
    )


def test_rds_reads_back_identical(tmp_path, run_r):
    f = tmp_path / "t.rds"
    rdarrow.write_rds(arrow_table(), f)
    check_in_r(run_r, f'cat(identical(readRDS("{f}"), want))')


def test_polars_duckdb_and_pandas_go_to_r(tmp_path, run_r):
    import duckdb
    import pandas as pd
    import polars as pl

    t = arrow_table()
    f = tmp_path / "many.RData"
    rel = duckdb.sql("select * from t")
    frame = pd.DataFrame({"x": pd.array([1, None, 3], dtype="Int32"), "y": ["p", "q", None]})
    rdarrow.write_rdata({"from_polars": pl.from_arrow(t), "from_duckdb": rel, "from_pandas": frame}, f)
    check_in_r(
        run_r,
        f"""
e <- new.env(); stopifnot(identical(load("{f}", e), c("from_polars", "from_duckdb", "from_pandas")))
p <- e$from_polars; d <- e$from_duckdb
# polars and DuckDB have their own string and time types: the values are R's
stopifnot(identical(as.data.frame(lapply(p, function(c) if (is.factor(c)) as.character(c) else c)),
                    as.data.frame(lapply(want, function(c) if (is.factor(c)) as.character(c) else c))))
stopifnot(identical(d$i, want$i), identical(d$s, want$s), identical(d$d, want$d), identical(d$day, want$day))
stopifnot(identical(e$from_pandas, data.frame(x = c(1L, NA, 3L), y = c("p", "q", NA))))
cat(TRUE)
""",
    )


def test_what_rdarrow_read_goes_back_as_itself(tmp_path, run_r, frame_files):
    back = tmp_path / "back.RData"
    rdarrow.write_rdata(rdarrow.RDataReader(frame_files["rdata"]), back, name="df")
    check_in_r(
        run_r,
        f'e <- new.env(); load("{back}", e); o <- new.env(); load("{frame_files["rdata"]}", o); cat(identical(e$df, o$df))',
    )


def test_bad_arguments_and_sinks(tmp_path):
    with pytest.raises(TypeError):
        rdarrow.write_rdata({1, 2, 3}, tmp_path / "x.RData")
    with pytest.raises(rdarrow.UsageError, match="unknown compression 'lz4'"):
        rdarrow.write_rdata(arrow_table(), tmp_path / "x.RData", compress="lz4")
    with pytest.raises(rdarrow.UsageError, match="bzip2 takes 1 to 9"):
        rdarrow.write_rds(arrow_table(), tmp_path / "x.rds", compress="bzip2", compression_level=0)
    with pytest.raises(rdarrow.RDataIOError, match="no-such-folder"):
        rdarrow.write_rdata(arrow_table(), tmp_path / "no-such-folder" / "x.RData")
    old = tmp_path / "old.RData"
    old.write_bytes(b"keep me")
    # an interval of months, days and nanoseconds: R has no type for it
    interval = pa.table({"u": pa.array([(1, 2, 3), None], pa.month_day_nano_interval())})
    with pytest.raises(rdarrow.UnsupportedError, match="'u'"):
        rdarrow.write_rdata(interval, old)
    assert old.read_bytes() == b"keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["old.RData"]


# --- a pandas index as R's row names (rdarrow-arrow's mapping/pandas_index.rs) ---------


def test_a_pandas_index_becomes_r_row_names_and_comes_back(tmp_path, run_r):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"x": range(10), "s": list("abcdefghij")})
    named = pd.DataFrame({"v": [1.5, 2.5]}, index=pd.Index(["r1", "r2"], name="id"))
    frames = {
        "tail": df.tail(3),  # a RangeIndex 7..9
        "whole": df,  # 0..n-1: automatic row names
        "named": named,
        "ints": pd.DataFrame({"v": [1, 2, 3]}, index=[5, -2, 9]),
        "stepped": pd.DataFrame({"v": [1, 2, 3]}, index=pd.RangeIndex(0, 6, 2, name="k")),
        "zero_named": pd.DataFrame({"v": [1, 2]}, index=pd.RangeIndex(2, name="n")),
        "big": pd.DataFrame({"v": [1, 2]}, index=[1, 2**40]),
    }
    for name, frame in frames.items():
        rdarrow.write_rds(frame, tmp_path / f"{name}.rds")
    # the same rule for every writer of a frame: write_rdata(), a frame
    # inside a list, a pyarrow table carrying pandas' metadata
    rdarrow.write_rdata({"tail": df.tail(3), "in_list": [df.tail(3)], "table": pa.Table.from_pandas(df.tail(3))}, tmp_path / "all.RData")
    out = check_in_r(
        run_r,
        f"""
r <- function(n) readRDS(file.path("{tmp_path}", paste0(n, ".rds")))
x <- r("tail")
stopifnot(identical(rownames(x), c("7", "8", "9")), .row_names_info(x) == 3L,
          identical(attr(x, "row.names"), 7:9), identical(x$x, 7:9), identical(x$s, c("h", "i", "j")))
w <- r("whole")
stopifnot(identical(w, data.frame(x = 0:9, s = letters[1:10])), .row_names_info(w) == -10L)
n <- r("named")
stopifnot(identical(rownames(n), c("r1", "r2")), identical(attr(n, "pandas.index.name"), "id"), identical(n$v, c(1.5, 2.5)))
stopifnot(identical(attr(r("ints"), "row.names"), c(5L, -2L, 9L)))
s <- r("stepped")
stopifnot(identical(attr(s, "row.names"), c(0L, 2L, 4L)), identical(attr(s, "pandas.index.name"), "k"))
z <- r("zero_named")
stopifnot(.row_names_info(z) == -2L, identical(attr(z, "pandas.index.name"), "n"))
stopifnot(identical(rownames(r("big")), c("1", "1099511627776")))
e <- new.env(); load(file.path("{tmp_path}", "all.RData"), e)
stopifnot(identical(e$tail, x), identical(e$in_list[[1]], x), identical(e$table, x))
cat(TRUE)
""",
    )
    # and back: read_pandas() gives the index the frame had (integers
    # beyond R's as their text)
    assert rdarrow.read_pandas(tmp_path / "big.rds").index.tolist() == ["1", "1099511627776"]
    for name, frame in frames.items():
        if name == "big":
            continue
        back = rdarrow.read_pandas(tmp_path / f"{name}.rds")
        pd.testing.assert_index_equal(back.index, frame.index, exact=False)
        assert back.index.name == frame.index.name
    assert isinstance(rdarrow.read_pandas(tmp_path / "whole.rds").index, pd.RangeIndex)
    assert rdarrow.read_objects(tmp_path / "tail.rds")["tail"].index.tolist() == [7, 8, 9]
    assert rdarrow.read_objects(tmp_path / "named.rds")["named"].index.name == "id"


def test_index_labels_r_row_names_cannot_be_are_errors(tmp_path):
    pd = pytest.importorskip("pandas")
    f = tmp_path / "x.rds"
    with pytest.raises(rdarrow.UsageError, match=r"the label 3 twice \(rows 1 and 3\), and R's row names are unique"):
        rdarrow.write_rds(pd.DataFrame({"v": [1, 2, 3]}, index=[3, 4, 3]), f)
    with pytest.raises(rdarrow.UsageError, match="the label 'a' twice"):
        rdarrow.write_rdata({"df": pd.DataFrame({"v": [1, 2]}, index=["a", "a"])}, f)
    with pytest.raises(rdarrow.UsageError, match="missing label at row 2, and R's row names cannot be NA"):
        rdarrow.write_rds(pd.DataFrame({"v": [1, 2]}, index=["a", None]), f)
    with pytest.raises(rdarrow.UsageError, match="missing label at row 1"):
        rdarrow.write_rds(pd.DataFrame({"v": [1, 2]}, index=pd.Index([None, 3], dtype="Int64")), f)
    assert not f.exists()


def test_a_multi_index_and_labels_of_other_types_are_leading_columns(tmp_path, run_r):
    pd = pytest.importorskip("pandas")
    multi = pd.DataFrame({"v": [1.5, 2.5]}, index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", None]))
    floats = pd.DataFrame({"v": [1, 2]}, index=[0.5, 1.5])
    days = pd.DataFrame({"v": [1, 2]}, index=pd.DatetimeIndex(["2024-01-01", "2024-01-02"], name="day"))
    rdarrow.write_rdata({"multi": multi, "floats": floats, "days": days}, tmp_path / "x.RData")
    check_in_r(
        run_r,
        f"""
e <- new.env(); load("{tmp_path}/x.RData", e)
# as df.reset_index() makes them
stopifnot(identical(e$multi, data.frame(k = c("a", "b"), level_1 = 1:2, v = c(1.5, 2.5))))
stopifnot(identical(e$floats, data.frame(index = c(0.5, 1.5), v = 1:2)))
stopifnot(identical(names(e$days), c("day", "v")), inherits(e$days$day, "POSIXct"), .row_names_info(e$days) == -2L)
cat(TRUE)
""",
    )


def test_a_frame_read_from_r_goes_back_with_the_index_it_has_now(tmp_path, run_r):
    pd = pytest.importorskip("pandas")
    f = tmp_path / "x.rds"
    run_r(f'saveRDS(data.frame(v = 1:3, row.names = c("a", "b", "c")), "{f}")')
    df = rdarrow.read_pandas(f)
    rdarrow.write_rds(df, tmp_path / "same.rds")
    df.index = pd.Index([10, 20, 30], name="n")
    rdarrow.write_rds(df, tmp_path / "moved.rds")
    check_in_r(
        run_r,
        f"""
stopifnot(identical(readRDS("{tmp_path}/same.rds"), readRDS("{f}")))
m <- readRDS("{tmp_path}/moved.rds")
stopifnot(identical(attr(m, "row.names"), c(10L, 20L, 30L)), identical(attr(m, "pandas.index.name"), "n"), identical(m$v, 1:3))
cat(TRUE)
""",
    )


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="a system without /proc")
def test_a_killed_writer_leaves_the_old_file_or_the_new_one_and_nothing_else(tmp_path):
    """A Python writer SIGKILLed in the middle of write_rds() leaves the
    target as it was or as it was to be, whole, and (with unnamed files,
    Linux's O_TMPFILE) no other file; the next write into the folder leaves
    only its own file whatever a writer left."""
    import signal
    import subprocess
    import sys
    import time

    import numpy as np

    target = tmp_path / "x.rds"
    n = 20_000_000
    code = (
        "import numpy as np, rdarrow, pathlib, sys; "
        f"x = np.arange({n}, dtype='float64') / 7; "
        "pathlib.Path(sys.argv[1]).touch(); "
        "rdarrow.write_rds(x, sys.argv[2])"
    )
    new = np.arange(n, dtype="float64") / 7
    killed_mid_write = 0
    for delay in (0.0, 0.1, 0.4):
        rdarrow.write_rds(np.array([1.0, 2.0]), target)
        ready = tmp_path / "ready"
        ready.unlink(missing_ok=True)
        p = subprocess.Popen([sys.executable, "-c", code, str(ready), str(target)])
        holding = []
        # the write is under way once the writer holds a new file in the
        # folder (a bounded wait: a writer that ends first has written it)
        for _ in range(2400):
            if p.poll() is not None:
                break
            fds = f"/proc/{p.pid}/fd"
            links = []
            for fd in os.listdir(fds) if os.path.isdir(fds) else []:
                try:
                    links.append(os.readlink(os.path.join(fds, fd)))
                except OSError:
                    pass
            holding = [
                link for link in links
                if link.startswith(str(tmp_path) + "/") and link not in (str(target), str(ready))
            ]
            if holding:
                break
            time.sleep(0.025)
        ready.unlink(missing_ok=True)
        unnamed = bool(holding) and all(os.path.basename(h).startswith("#") and h.endswith("(deleted)") for h in holding)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        back = rdarrow.read_objects(target)
        value = np.asarray(next(iter(back.values())))
        if value.shape == (2,):
            assert value.tolist() == [1.0, 2.0]
            killed_mid_write += 1
        else:
            assert np.array_equal(value, new)
        if unnamed:
            assert sorted(os.listdir(tmp_path)) == ["x.rds"]
        rdarrow.write_rds(np.array([3.0]), tmp_path / "other.rds")
        assert sorted(os.listdir(tmp_path)) == ["other.rds", "x.rds"]
        (tmp_path / "other.rds").unlink()
    assert killed_mid_write > 0
