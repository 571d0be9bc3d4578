"""pandas with R's meaning, and R data files to Parquet and Arrow IPC files
from Python, read back by pyarrow and by R."""

import math

import pyarrow as pa
import pytest

import rdarrow
from conftest import plain


def test_pandas_keeps_r_meaning(frame_files):
    import pandas as pd

    df = rdarrow.read_pandas(frame_files["rdata"])
    assert list(df.columns) == ["i", "d", "b", "s", "f", "day", "t"]
    assert str(df["i"].dtype) == "Int32" and df["i"].isna().tolist()[:2] == [True, False]
    assert str(df["d"].dtype) == "Float64"
    assert df["d"][998] is pd.NA  # R's NA
    assert math.isnan(df["d"][999]) and df["d"][999] is not pd.NA  # R's NaN
    assert str(df["b"].dtype) == "boolean" and df["b"][0] is pd.NA
    assert isinstance(df["s"].dtype, pd.StringDtype) and df["s"][0] is pd.NA
    assert isinstance(df["f"].dtype, pd.CategoricalDtype)
    assert list(df["f"].cat.categories) == ["lo", "mid", "hi", "unused"]
    assert str(df["t"].dtype) == "datetime64[ns, UTC]"
    assert df["t"][1] == pd.Timestamp("2021-06-01 00:01:00", tz="UTC")


def test_parquet_goes_to_pyarrow_and_back_to_r(tmp_path, run_r, frame_files):
    import pyarrow.parquet as pq

    out = tmp_path / "frame.parquet"
    rdarrow.to_parquet(frame_files["rdata"], out, row_group_size=300)
    f = pq.ParquetFile(out)
    assert f.metadata.num_row_groups == 4
    t = pq.read_table(out)
    t.validate(full=True)
    ours = rdarrow.read_table(frame_files["rdata"])
    for name in ours.column_names:
        a, b = ours.column(name).combine_chunks(), t.column(name).combine_chunks()
        if pa.types.is_dictionary(a.type):
            a, b = a.cast(pa.string()), b.cast(pa.string())
        assert plain(a) == plain(b), name
    back = tmp_path / "back.RData"
    out_r = run_r(
        f"""
if (!requireNamespace("rdarrow", quietly = TRUE)) {{ cat("SKIP"); quit() }}
rdarrow::parquet_to_rdata("{out}", "{back}", name = "df")
a <- new.env(); load("{back}", a); b <- new.env(); load("{frame_files['rdata']}", b)
cat(identical(a$df, b$df))
"""
    )
    if out_r.strip() == "SKIP":
        pytest.skip("the rdarrow R package is not installed: R cannot read the file back here")
    assert out_r.strip().endswith("TRUE")


def test_ipc_file_and_stream(tmp_path, frame_files):
    import pyarrow.ipc as ipc

    f = tmp_path / "frame.arrow"
    rdarrow.to_ipc(frame_files["rds"], f, compression="zstd", chunk_size=400)
    r = ipc.open_file(f)
    assert r.num_record_batches == 3
    assert r.read_all().num_rows == 1000
    s = tmp_path / "frame.arrows"
    rdarrow.to_ipc(frame_files["rds"], s, format="stream", columns=["s", "i"])
    t = ipc.open_stream(s).read_all()
    assert t.column_names == ["s", "i"]


def test_a_sink_named_for_the_other_format_is_refused(tmp_path, frame_files):
    with pytest.raises(rdarrow.UsageError, match="to_ipc"):
        rdarrow.to_parquet(frame_files["rdata"], tmp_path / "x.arrow")
    with pytest.raises(rdarrow.UsageError, match="to_parquet"):
        rdarrow.to_ipc(frame_files["rdata"], tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []


def test_row_names_are_the_pandas_index(tmp_path, run_r):
    f = tmp_path / "cars.RData"
    run_r(f'cars <- head(mtcars[, c("mpg", "cyl")], 3); plain <- data.frame(x = 1:2); save(cars, plain, file = "{f}")')
    df = rdarrow.read_pandas(f, object="cars")
    assert list(df.index) == ["Mazda RX4", "Mazda RX4 Wag", "Datsun 710"]
    assert df["mpg"].tolist() == [21.0, 21.0, 22.8]
    assert list(rdarrow.read_pandas(f, object="plain").index) == [0, 1]
