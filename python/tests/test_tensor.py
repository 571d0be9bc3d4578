"""R arrays as Arrow tensors from Python: ``rdarrow.to_tensor()`` (a file
pyarrow maps, or a ``pyarrow.Tensor`` over the engine's buffer) and
``read_objects(as_tensor=True)``, checked against what R itself saved and
what R reads back."""

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import rdarrow


@pytest.fixture(scope="module")
def arrays(run_r, tmp_path_factory):
    out = tmp_path_factory.mktemp("tensor")
    run_r(
        f"""
        d <- array(c(1.5, NA, NaN, -Inf, 5:24), c(2, 3, 4), dimnames = list(a = NULL, b = NULL, c = NULL))
        i <- matrix(c(1:5, NA), 2)
        l <- matrix(c(TRUE, NA, FALSE, TRUE), 2)
        z <- matrix(complex(real = 1:4, imaginary = c(NA, 2, 3, 4)), 2)
        r <- array(as.raw(1:24), 2:4)
        e <- matrix(numeric(0), 0, 3)
        df <- data.frame(x = 1)
        save(d, i, l, z, r, e, df, file = "{out}/arrays.RData")
        saveRDS(volcano, "{out}/volcano.rds")
        """
    )
    return out


def same_bits(a, b):
    """Two tensors hold the same elements, bit for bit (NaN's included)."""
    x, y = a.to_numpy(), b.to_numpy()
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes(order="F") == y.tobytes(order="F")


def test_values_are_r_s_own_bits_in_r_s_order(arrays):
    f = arrays / "arrays.RData"
    t = rdarrow.to_tensor(f, object="d")
    assert isinstance(t, pa.Tensor)
    assert t.shape == (2, 3, 4) and t.strides == (8, 16, 48) and t.dim_names == ["a", "b", "c"]
    a = t.to_numpy()
    # R's x[1, 2, 3] is NumPy's a[0, 1, 2]: column-major, no transpose
    assert a[0, 1, 2] == 15.0 and a.ravel(order="F")[14] == a[0, 1, 2]
    assert a.ravel(order="F")[0] == 1.5
    # R's NA keeps its payload (1954); NaN stays NaN
    bits = a.ravel(order="F").view(np.uint64)
    assert bits[1] == 0x7FF00000000007A2
    assert np.isnan(a.ravel(order="F")[2]) and bits[2] != bits[1]
    i = rdarrow.to_tensor(f, object="i").to_numpy()
    assert i.dtype == np.int32 and i.shape == (2, 3) and i[1, 2] == -(2**31)
    assert i.ravel(order="F").tolist()[:5] == [1, 2, 3, 4, 5]
    lg = rdarrow.to_tensor(f, object="l").to_numpy()
    assert lg.dtype == np.int32 and lg.ravel(order="F").tolist() == [1, -(2**31), 0, 1]
    z = rdarrow.to_tensor(f, object="z").to_numpy().view(np.complex128)[..., 0]
    assert z.shape == (2, 2) and z[0, 1] == 3 + 3j and z[1, 1] == 4 + 4j
    r = rdarrow.to_tensor(f, object="r").to_numpy()
    assert r.dtype == np.uint8 and r.shape == (2, 3, 4) and r[1, 2, 3] == 24
    e = rdarrow.to_tensor(f, object="e")
    assert e.shape == (0, 3)


def test_no_copy_of_the_values(arrays):
    t = rdarrow.to_tensor(arrays / "volcano.rds")
    a = t.to_numpy()
    assert not a.flags["OWNDATA"] and a.flags["F_CONTIGUOUS"]
    assert a.shape == (87, 61)


def test_read_objects_as_tensor(arrays):
    got = rdarrow.read_objects(arrays / "arrays.RData", as_tensor=True)
    assert {k for k, v in got.items() if isinstance(v, pa.Tensor)} == {"d", "i", "l", "z", "r", "e"}
    # a data frame is what it always is
    assert not isinstance(got["df"], pa.Tensor)
    same = rdarrow.to_tensor(arrays / "arrays.RData", object="d")
    assert same_bits(got["d"], same) and got["d"].dim_names == same.dim_names


def test_the_file_is_what_r_reads_back(arrays, run_r, tmp_path):
    t = tmp_path / "d.tensor"
    assert rdarrow.to_tensor(arrays / "arrays.RData", t, object="d") is None
    m = ipc.read_tensor(pa.memory_map(str(t)))
    assert same_bits(m, rdarrow.to_tensor(arrays / "arrays.RData", object="d"))
    out = run_r(
        f"""
        library(rdarrow)
        load("{arrays}/arrays.RData")
        tensor_to_rdata("{t}", "{tmp_path}/back.rds")
        cat(identical(readRDS("{tmp_path}/back.rds"), d))
        """
    )
    assert out.strip() == "TRUE"


def test_errors_name_the_objects(arrays):
    with pytest.raises(rdarrow.UsageError, match="the file holds 6 arrays; choose one by name"):
        rdarrow.to_tensor(arrays / "arrays.RData")
    with pytest.raises(rdarrow.UsageError, match="a data frame has no tensor"):
        rdarrow.to_tensor(arrays / "arrays.RData", object="df")


@pytest.fixture(scope="module")
def stacks(run_r, tmp_path_factory):
    """A data frame with a column of 2 x 3 x 4 integer arrays (dimension
    names) and a list of 2 x 2 double matrices (NA in one)."""
    out = tmp_path_factory.mktemp("stacks")
    run_r(
        f"""
        df <- data.frame(id = 1:4)
        df$m <- lapply(1:4, function(i) array(i * 1:24, c(2, 3, 4), dimnames = list(a = NULL, b = NULL, c = NULL)))
        saveRDS(df, "{out}/df.rds")
        saveRDS(list(matrix(c(1, NA, 3, 4), 2), matrix(5:8 + 0.5, 2)), "{out}/mats.rds")
        """
    )
    return out


def r_array(i):
    """R's array(i * 1:24, c(2, 3, 4)) as NumPy holds it."""
    return (i * np.arange(1, 25)).reshape((2, 3, 4), order="F")


def test_tensor_columns_stack_as_r_holds_them(stacks):
    t = rdarrow.read_table(stacks / "df.rds")
    col = t.column("m").combine_chunks()
    assert col.type.extension_name == "arrow.fixed_shape_tensor"
    assert col.type.shape == [4, 3, 2] and col.type.permutation == [2, 1, 0]
    assert col.type.dim_names == ["c", "b", "a"]
    a = col.to_numpy_ndarray()
    assert a.shape == (4, 2, 3, 4)
    for k in range(4):
        assert np.array_equal(a[k], r_array(k + 1))
    m = rdarrow.read_table(stacks / "mats.rds").column(0).combine_chunks().to_numpy_ndarray()
    assert m.shape == (2, 2, 2) and m[0, 0, 1] == 3 and m[1, 1, 1] == 8.5
    # R's NA under Arrow's null: R's own bits
    assert m[0].ravel(order="F").view(np.uint64)[1] == 0x7FF00000000007A2


def test_polars_reads_the_fixed_size_lists(stacks):
    pl = pytest.importorskip("polars")
    import rdarrow.polars as rp

    d = pl.from_arrow(rdarrow.read_table(stacks / "df.rds"))
    scanned = rp.scan_rdata(stacks / "df.rds").collect()
    for frame in (d, scanned):
        row = frame["m"][1]
        values = list(row) if not hasattr(row, "to_list") else row.to_list()
        assert values == (2 * np.arange(1, 25)).tolist()
    assert scanned.height == 4


def test_duckdb_reads_the_fixed_size_lists(stacks):
    from test_duckdb import connect

    con = connect()
    rows = con.execute(f"select id, m from read_rds('{stacks / 'df.rds'}') order by id").fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    assert list(rows[2][1]) == (3 * np.arange(1, 25)).tolist()
    assert "INTEGER[24]" in str(con.execute(f"describe select m from read_rds('{stacks / 'df.rds'}')").fetchall())


def test_spark_reads_the_fixed_size_lists(stacks, spark):
    from pyspark.sql import types as T

    df = spark.read.format("rdata").load(str(stacks / "df.rds"))
    assert df.schema["m"].dataType == T.ArrayType(T.IntegerType())
    rows = sorted(df.collect(), key=lambda r: r["id"])
    assert rows[3]["m"] == (4 * np.arange(1, 25)).tolist()
