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
