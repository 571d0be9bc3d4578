"""fst files (.fst), made by the real fst package in R, read by every
Python reader, the DuckDB extension and the command line without it; .fst
files written from Python and the command line, read back by fst in R."""

import os
import subprocess
import sys

import pyarrow as pa
import pytest

import rdarrow
from conftest import KINDS_R, fst_lib

MAKE_R = "n <- 5000L\n" + KINDS_R + r"""
plain <- df[, c("i", "d", "b", "s", "f")]
plain$day <- as.Date("2020-01-01") + seq_len(n)
plain$ct <- as.POSIXct(1.6e9 + seq_len(n) * 0.5, origin = "1970-01-01", tz = "UTC")
saveRDS(plain, file.path(out, "plain.rds"))
fst::write_fst(plain, file.path(out, "plain.fst"))
fst::write_fst(plain, file.path(out, "plain_raw.fst"), compress = 0)
fst::write_fst(plain, file.path(out, "plain_zstd.fst"), compress = 100)
dir.create(file.path(out, "parts"))
for (k in 1:4) fst::write_fst(plain[((k - 1) * 100 + 1):(k * 100), ], file.path(out, "parts", sprintf("p%d.fst", k)))
"""


def _r_env():
    return {"R_LIBS": f"{fst_lib()}:{os.environ.get('R_LIBS', '')}"}


@pytest.fixture(scope="module")
def made(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("fst")
    run_r(MAKE_R, OUT=str(out), **_r_env())
    return out


def test_read_table_pandas_and_objects_of_fst_files_equal_the_rds(made):
    want = rdarrow.read_table(made / "plain.rds")
    for name in ["plain.fst", "plain_raw.fst", "plain_zstd.fst"]:
        got = rdarrow.read_table(made / name)
        assert got.equals(want), name
        assert rdarrow.read_pandas(made / name).equals(rdarrow.read_pandas(made / "plain.rds")), name
        assert list(rdarrow.read_objects(made / name)) == [name.split(".")[0]]
    assert rdarrow.read_table((made / "plain.fst").read_bytes()).equals(want)
    with open(made / "plain.fst", "rb") as f:
        assert rdarrow.read_table(f).equals(want)


def test_polars_dask_duckdb_and_the_command_read_fst(made, tmp_path):
    want = rdarrow.read_table(made / "plain.rds")
    out = subprocess.run(
        [sys.executable, "-m", "rdarrow", "ls", str(made / "plain.fst")], capture_output=True, text=True, check=True
    ).stdout
    assert "data.frame" in out and "plain" in out
    subprocess.run(
        [sys.executable, "-m", "rdarrow", "to-parquet", str(made / "plain.fst"), "-o", str(tmp_path / "p.parquet")],
        check=True,
    )
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "p.parquet").num_rows == 5000
    from test_duckdb import connect

    con = connect()
    got = con.sql(f"SELECT * FROM '{made / 'plain.fst'}'").to_arrow_table()
    assert got.equals(con.sql(f"SELECT * FROM read_rds('{made / 'plain.rds'}')").to_arrow_table())
    n = con.execute(f"SELECT count(*) FROM read_rdata('{made / 'parts' / '*'}')").fetchone()[0]
    assert n == 400
    pl = pytest.importorskip("polars")
    import rdarrow.polars as rp

    assert rp.scan_rdata(str(made / "plain.fst")).collect().equals(pl.from_arrow(want))
    assert rp.scan_rdata(str(made / "parts" / "*.fst")).collect().height == 400
    pytest.importorskip("dask.dataframe")
    from rdarrow import dask as rdask

    assert len(rdask.read_rdata(str(made / "plain.fst")).compute()) == 5000


def test_spark_reads_an_fst_file(made, spark):
    df = spark.read.format("rdata").load(str(made / "plain.fst"))
    assert df.count() == 5000


def test_damaged_fst_files_are_errors(made, tmp_path):
    data = bytearray((made / "plain.fst").read_bytes())
    data[20] ^= 0x01  # inside the table header, which carries a hash
    bad = tmp_path / "bad.fst"
    bad.write_bytes(bytes(data))
    with pytest.raises(rdarrow.CorruptError, match="fails its check"):
        rdarrow.read_table(bad)
    cut = tmp_path / "cut.fst"
    cut.write_bytes((made / "plain.fst").read_bytes()[:-10])
    with pytest.raises(rdarrow.RDataError):
        rdarrow.read_table(cut)


def test_fst_written_from_python_and_the_command_is_read_back_by_fst(made, tmp_path, run_r):
    t = pa.table({"a": [1, None, 3], "s": ["x", None, "\u00e9"], "d": [0.5, 1.5, None]})
    rdarrow.write_rds(t, tmp_path / "t.fst")
    rdarrow.write_rds(t, tmp_path / "t100.fst", compression_level=100)
    rdarrow.write_rds(rdarrow.read_pandas(made / "plain.fst"), tmp_path / "pandas.fst", compression_level=0)
    with pytest.raises(rdarrow.UsageError, match="0 to 100"):
        rdarrow.write_rds(t, tmp_path / "u.fst", compression_level=101)
    with pytest.raises(rdarrow.UsageError, match="fst holds data frames|holds a data frame"):
        rdarrow.write_rds([1, 2, 3], tmp_path / "v.fst")
    subprocess.run(
        [sys.executable, "-m", "rdarrow", "to-rdata", str(made / "plain.rds"), "-o", str(tmp_path / "cli.fst")],
        check=True,
    )
    out = run_r(
        f"""
want <- data.frame(a = c(1L, NA, 3L), s = c("x", NA, "\\u00e9"), d = c(0.5, 1.5, NA))
a <- fst::read_fst("{tmp_path / 't.fst'}")
b <- fst::read_fst("{tmp_path / 't100.fst'}")
p <- fst::read_fst("{tmp_path / 'pandas.fst'}")
c <- fst::read_fst("{tmp_path / 'cli.fst'}")
theirs <- fst::read_fst("{made / 'plain.fst'}")
cat(identical(a, want), identical(b, want), identical(p, theirs), identical(c, theirs))
""",
        **_r_env(),
    )
    assert out.strip() == "TRUE TRUE TRUE TRUE"
