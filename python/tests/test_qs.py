"""Files of qs (.qs) and qs2 (.qs2, .qdata), made by the real packages in
R, read by every Python reader, the DuckDB extension and the command line
without them; .qs2 and .qdata files written from Python, read back by
qs2 in R."""

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import rdarrow
from conftest import KINDS_R, qs_lib

MAKE_R = "n <- 2000L\n" + KINDS_R + r"""
df$l <- NULL  # qd_save() holds no list column of data frames... kept plain
plain <- df[, c("i", "d", "b", "s", "f")]
saveRDS(plain, file.path(out, "plain.rds"))
qs2::qs_save(plain, file.path(out, "plain.qs2"))
qs2::qd_save(plain, file.path(out, "plain.qdata"))
qs::qsave(plain, file.path(out, "plain.qs"))
qs::qsave(plain, file.path(out, "plain_fast.qs"), preset = "fast")
dir.create(file.path(out, "mixed"))
for (k in 1:4) {
  part <- plain[((k - 1) * 100 + 1):(k * 100), ]
  if (k %% 2) saveRDS(part, file.path(out, "mixed", sprintf("p%d.rds", k)))
  else qs2::qs_save(part, file.path(out, "mixed", sprintf("p%d.qs2", k)))
}
suppressPackageStartupMessages(library(SeuratObject))
qs::qsave(pbmc_small, file.path(out, "pbmc.qs"))
qs2::qs_save(pbmc_small, file.path(out, "pbmc.qs2"))
saveRDS(pbmc_small, file.path(out, "pbmc.rds"))
"""


def _r_env():
    return {"R_LIBS": f"{qs_lib()}:{os.environ.get('R_LIBS', '')}"}


@pytest.fixture(scope="module")
def made(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("qs")
    run_r(MAKE_R, OUT=str(out), **_r_env())
    return out


def test_read_table_pandas_and_objects_of_every_format_equal_the_rds(made):
    want = rdarrow.read_table(made / "plain.rds")
    for name in ["plain.qs2", "plain.qdata", "plain.qs", "plain_fast.qs"]:
        got = rdarrow.read_table(made / name)
        assert got.equals(want), name
        assert rdarrow.read_pandas(made / name).equals(rdarrow.read_pandas(made / "plain.rds")), name
        objs = rdarrow.read_objects(made / name)
        assert list(objs) == [name.split(".")[0]]
    # bytes and file objects
    data = (made / "plain.qs2").read_bytes()
    assert rdarrow.read_table(data).equals(want)
    with open(made / "plain.qs", "rb") as f:
        assert rdarrow.read_table(f).equals(want)


def test_the_command_lists_qs_files_and_rescues_one_as_rds(made, tmp_path, run_r):
    out = subprocess.run(
        [sys.executable, "-m", "rdarrow", "ls", str(made / "plain.qs2"), str(made / "plain.qs")],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "data.frame" in out and "plain" in out
    subprocess.run(
        [sys.executable, "-m", "rdarrow", "to-rdata", str(made / "plain.qs"), "-o", str(tmp_path / "old.rds")],
        check=True,
    )
    got = run_r(
        f"""cat(identical(readRDS("{tmp_path / 'old.rds'}"), readRDS("{made / 'plain.rds'}")))"""
    )
    assert got.strip() == "TRUE"


def test_polars_dask_and_globs_over_mixed_rds_and_qs2(made):
    pl = pytest.importorskip("polars")
    import rdarrow.polars as rp

    lf = rp.scan_rdata(str(made / "plain.qs2"))
    assert lf.collect().equals(pl.from_arrow(rdarrow.read_table(made / "plain.rds")))
    mixed = rp.scan_rdata(str(made / "mixed" / "*")).collect()
    assert mixed.height == 400
    pytest.importorskip("dask.dataframe")
    from rdarrow import dask as rdask

    ddf = rdask.read_rdata(str(made / "plain.qdata"))
    assert len(ddf.compute()) == 2000


def test_spark_reads_a_qs_file(made, spark):
    df = spark.read.format("rdata").load(str(made / "plain.qs"))
    assert df.count() == 2000


def test_a_seurat_object_saved_by_qsave_and_qs_save_becomes_anndata(made, run_r):
    pytest.importorskip("anndata")
    want = rdarrow.read_anndata(made / "pbmc.rds")
    for name in ["pbmc.qs", "pbmc.qs2"]:
        got = rdarrow.read_anndata(made / name)
        assert list(got.obs_names) == list(want.obs_names), name
        assert list(got.var_names) == list(want.var_names), name
        assert (got.X != want.X).nnz == 0, name
        assert got.obs.equals(want.obs), name


def test_duckdb_reads_qs2_qdata_and_qs_files(made):
    from test_duckdb import connect

    con = connect()
    want = con.execute(f"SELECT * FROM read_rds('{made / 'plain.rds'}')").to_arrow_table()
    for name in ["plain.qs2", "plain.qdata", "plain.qs"]:
        got = con.execute(f"SELECT * FROM read_rds('{made / name}')").to_arrow_table()
        assert got.equals(want), name
        got = con.execute(f"SELECT * FROM '{made / name}'").to_arrow_table()
        assert got.equals(want), name
    listed = con.execute(f"SELECT name FROM rdata_objects('{made / 'plain.qs'}')").fetchall()
    assert listed == [("plain",)]
    n = con.execute(f"SELECT count(*) FROM read_rdata('{made / 'mixed' / '*'}')").fetchone()[0]
    assert n == 400


def test_damaged_files_are_rdata_errors_everywhere(made, tmp_path):
    from test_duckdb import connect

    data = bytearray((made / "plain.qs2").read_bytes())
    data[len(data) // 2] ^= 0x5A
    bad = tmp_path / "bad.qs2"
    bad.write_bytes(bytes(data))
    with pytest.raises(rdarrow.RDataError, match="damaged|decompress"):
        rdarrow.read_table(bad)
    cut = tmp_path / "cut.qs"
    cut.write_bytes((made / "plain.qs").read_bytes()[:200])
    with pytest.raises(rdarrow.RDataError):
        rdarrow.read_table(cut)
    con = connect()
    import duckdb

    with pytest.raises(duckdb.Error, match="damaged|decompress"):
        con.execute(f"SELECT * FROM read_rds('{bad}')").fetchall()


def test_qs2_and_qdata_written_from_python_are_read_back_by_qs2(made, tmp_path, run_r):
    t = pa.table({"a": [1, None, 3], "s": ["x", None, "\u00e9"], "d": [0.5, 1.5, None]})
    rdarrow.write_rds(t, tmp_path / "t.qs2")
    rdarrow.write_rds(t, tmp_path / "t.qdata", compress="zstd", compression_level=9)
    with pytest.raises(rdarrow.UsageError, match="compressed with zstd"):
        rdarrow.write_rds(t, tmp_path / "u.qs2", compress="xz")
    out = run_r(
        f"""
a <- qs2::qs_read("{tmp_path / 't.qs2'}", validate_checksum = TRUE)
b <- qs2::qd_read("{tmp_path / 't.qdata'}", validate_checksum = TRUE)
want <- data.frame(a = c(1L, NA, 3L), s = c("x", NA, "\\u00e9"), d = c(0.5, 1.5, NA))
cat(identical(a, want), identical(b, want))
""",
        **_r_env(),
    )
    assert out.strip() == "TRUE TRUE"
    # a Seurat object as AnnData, written back as .qs2 without R
    pytest.importorskip("anndata")
    adata = rdarrow.read_anndata(made / "pbmc.qs2")
    rdarrow.write_seurat(adata, tmp_path / "back.qs2")
    rdarrow.write_seurat(adata, tmp_path / "back.rds")
    out = run_r(
        f"""
suppressPackageStartupMessages(library(SeuratObject))
x <- qs2::qs_read("{tmp_path / 'back.qs2'}", validate_checksum = TRUE)
cat(class(x), identical(x, readRDS("{tmp_path / 'back.rds'}")), length(x@meta.data[[1]]))
""",
        **_r_env(),
    )
    assert out.split() == ["Seurat", "TRUE", "80"]


SALVAGE_R = r"""
set.seed(6)
x <- data.frame(p = rnorm(2e5), q = rnorm(2e5), r = rnorm(2e5), s = rnorm(2e5))
saveRDS(x, file.path(Sys.getenv("OUT"), "x.rds"))
qs2::qs_save(x, file.path(Sys.getenv("OUT"), "x.qs2"))
qs2::qd_save(x, file.path(Sys.getenv("OUT"), "x.qdata"))
"""


def test_qs2_and_qdata_files_cut_short_salvage_their_leading_columns(tmp_path, run_r):
    import pyarrow.parquet as pq

    run_r(SALVAGE_R, OUT=str(tmp_path), **_r_env())
    want = rdarrow.read_table(tmp_path / "x.rds")
    exe = str(Path(sys.executable).parent / "rdarrow")
    for ext in ("qs2", "qdata"):
        b = (tmp_path / f"x.{ext}").read_bytes()
        bad = tmp_path / f"cut.{ext}"
        bad.write_bytes(b[: len(b) // 2])
        with pytest.raises(rdarrow.CorruptError, match="salvage=True"):
            rdarrow.read_table(bad)
        with pytest.warns(rdarrow.RDataWarning, match="returned: what was kept of the object"):
            t = rdarrow.read_table(bad, salvage=True)
        assert 0 < t.num_columns < 4, ext
        for i in range(t.num_columns):
            assert t.column(i).equals(want.column(i)), (ext, i)
        out = tmp_path / f"{ext}.parquet"
        r = subprocess.run([exe, "--salvage", "to-parquet", str(bad), "-o", str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        back = pq.read_table(out)
        assert back.num_columns == t.num_columns
        for i in range(back.num_columns):
            assert back.column(i).equals(want.column(i)), (ext, i)
