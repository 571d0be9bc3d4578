"""What a new user trips over, from Python: a compression level is used
(or refused) for every sink, a ``.qs`` sink is refused before anything is
written, and ``read_objects()`` takes ``object=`` as every reader does."""

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import rdarrow
from rdarrow import UsageError


def table(n=100_000):
    import numpy as np

    rng = np.random.default_rng(1)
    return pa.table({"a": rng.normal(size=n), "b": rng.integers(0, 26, size=n).astype("int32")})


@pytest.mark.parametrize("ext", [".qs2", ".qdata"])
def test_a_qs2_or_qdata_sink_uses_the_level_given(tmp_path, ext):
    t = table()
    sizes = []
    for level in (1, 9, 19):
        p = tmp_path / f"x{level}{ext}"
        rdarrow.write_rds(t, p, compression_level=level)
        assert rdarrow.read_table(p).equals(t)
        sizes.append(p.stat().st_size)
    # the level is used (it was ignored: the same bytes at every level)
    assert len(set(sizes)) > 1
    for bad in (0, 23):
        with pytest.raises(UsageError, match="out of range"):
            rdarrow.write_rds(t, tmp_path / f"bad{ext}", compression_level=bad)
    with pytest.raises(UsageError, match="compressed with zstd"):
        rdarrow.write_rds(t, tmp_path / f"bad{ext}", compress="gzip")
    assert not (tmp_path / f"bad{ext}").exists()


def test_a_qs_sink_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "x.qs"
    with pytest.raises(UsageError, match=r"\.qs2"):
        rdarrow.write_rds(table(10), out)
    with pytest.raises(UsageError, match=r"\.qs2"):
        rdarrow.write_rdata({"x": table(10)}, out)
    assert not out.exists()
    src = tmp_path / "x.rds"
    rdarrow.write_rds(table(10), src)
    exe = str(Path(sys.executable).parent / "rdarrow")
    r = subprocess.run([exe, "to-rdata", str(src), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and ".qs2" in r.stderr, r.stderr
    assert not out.exists()


def test_read_objects_takes_object_as_every_reader_does(tmp_path):
    p = tmp_path / "two.RData"
    rdarrow.write_rdata({"a": [1, 2], "b": "x"}, p)
    assert list(rdarrow.read_objects(p, object="a")) == ["a"]
    assert list(rdarrow.read_objects(p, object=["b", "a"])) == ["b", "a"]
    assert list(rdarrow.read_objects(p, names=["b"])) == ["b"]
    with pytest.raises(UsageError, match="not both"):
        rdarrow.read_objects(p, object="a", names=["b"])


# --- a pandas index is R's row.names -------------------------------------------------


def test_a_pandas_index_is_written_as_r_row_names_and_read_back_as_the_index(tmp_path, run_r):
    pd = pytest.importorskip("pandas", reason="pandas is in the test environment (tools/requirements-test.txt)")
    frames = {
        "chars": pd.DataFrame({"v": [1, 2, 3], "s": pd.array(["x", None, "z"], dtype="string")}, index=["a", "b", "c"]),
        "ints": pd.DataFrame({"v": [1.5, 2.5]}, index=[10, 20]),
        "range": pd.DataFrame({"v": [1.5, 2.5]}),
        # a RangeIndex that does not start at 0: its labels are kept
        "sliced": pd.DataFrame({"v": [1.5, 2.5, 3.5, 4.5]}).iloc[2:],
    }
    for name, df in frames.items():
        rdarrow.write_rds(df, tmp_path / f"{name}.rds")
    rdarrow.write_rdata(frames, tmp_path / "all.RData")
    out = run_r(
        f"""
        d <- "{tmp_path.as_posix()}"
        want <- list(
          chars = data.frame(v = 1:3, s = c("x", NA, "z"), row.names = c("a", "b", "c")),
          ints = structure(list(v = c(1.5, 2.5)), class = "data.frame", row.names = c(10L, 20L)),
          range = data.frame(v = c(1.5, 2.5)),
          sliced = structure(list(v = c(3.5, 4.5)), class = "data.frame", row.names = 2:3))
        e <- new.env(); load(file.path(d, "all.RData"), envir = e)
        for (n in names(want)) {{
          cat(n, identical(readRDS(file.path(d, paste0(n, ".rds"))), want[[n]]),
              identical(e[[n]], want[[n]]), "\\n")
        }}
        """
    )
    assert out.split() == ["chars", "TRUE", "TRUE", "ints", "TRUE", "TRUE", "range", "TRUE", "TRUE", "sliced", "TRUE", "TRUE"], out
    back = rdarrow.read_pandas(tmp_path / "chars.rds")
    assert list(back.index) == ["a", "b", "c"]
    pd.testing.assert_frame_equal(back, frames["chars"], check_dtype=False)
    back = rdarrow.read_pandas(tmp_path / "ints.rds")
    pd.testing.assert_frame_equal(back, frames["ints"], check_dtype=False, check_index_type=False)
    assert isinstance(rdarrow.read_pandas(tmp_path / "range.rds").index, pd.RangeIndex)
    # an index R's row names cannot be (repeated labels) is an error naming it
    dup = pd.DataFrame({"v": [1, 2]}, index=["a", "a"])
    with pytest.raises(UsageError, match="the label 'a' twice"):
        rdarrow.write_rds(dup, tmp_path / "dup.rds")


# --- plain Python values with pyarrow alone --------------------------------------------


def _without(modules, code, *args):
    """Run ``code`` in a fresh interpreter where ``modules`` cannot be
    imported (as in an environment without them)."""
    block = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    return subprocess.run([sys.executable, "-c", block + code, *args], capture_output=True, text=True)


def test_plain_values_are_read_and_written_with_pyarrow_alone(tmp_path, run_r):
    p = tmp_path / "plain.rds"
    code = f"""
import rdarrow
rdarrow.write_rds({{"a": [1, 2], "b": "x", "c": 2.5, "d": True, "e": 3 + 1j, "f": b"ab", "g": 2**40, "h": None}}, {str(p)!r})
got = rdarrow.read_objects({str(p)!r}, plain=True)["plain"]
print(repr(got))
assert sys.modules["numpy"] is None and sys.modules["pandas"] is None
try:
    rdarrow.read_objects({str(p)!r})
except ImportError as e:
    print("ERROR", e)
"""
    r = _without(["numpy", "pandas"], code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert eval(lines[0]) == {"a": [[1], [2]], "b": ["x"], "c": [2.5], "d": [True], "e": [3 + 1j], "f": b"ab", "g": [2**40], "h": None}
    # a value that needs NumPy says so in one line, with the install that fixes it
    assert lines[1].startswith("ERROR ") and "pip install 'rdarrow[numpy]'" in lines[1] and len(lines) == 2
    out = run_r(
        f"""x <- readRDS("{p.as_posix()}")
        want <- list(a = list(1L, 2L), b = "x", c = 2.5, d = TRUE, e = 3+1i, f = as.raw(c(0x61, 0x62)))
        # bit64's integer64: 2^40 in the double's bits (low word 0, high word 256)
        cat(identical(x[names(want)], want), identical(class(x$g), "integer64"),
            identical(writeBin(unclass(x$g), raw(), endian = "little"), writeBin(c(0L, 256L), raw(), endian = "little")),
            "h" %in% names(x) && is.null(x$h))"""
    )
    assert out.split() == ["TRUE"] * 4, out


# --- a missing optional package: one line with the pip install -------------------------


def test_a_sparse_matrix_without_scipy_warns_once_with_the_install(tmp_path, run_r):
    f = tmp_path / "m.rds"
    run_r(f'saveRDS(Matrix::sparseMatrix(i = c(1L, 3L), j = c(2L, 2L), x = c(1.5, 2), dims = c(3L, 2L)), "{f.as_posix()}")')
    code = f"""
import warnings, rdarrow
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    v = rdarrow.read_objects({str(f)!r})["m"]
print(type(v).__name__, v["class"])
print(len(w), w[0].message if w else "")
"""
    r = _without(["scipy"], code)
    assert r.returncode == 0, r.stderr
    kind, warned = r.stdout.splitlines()
    assert kind == "S4Value dgCMatrix"
    assert warned.startswith("1 ") and "pip install 'rdarrow[sparse]'" in warned


def test_a_sparse_matrix_with_pyarrow_alone_names_numpy_and_scipy_once(tmp_path, run_r):
    f = tmp_path / "m.rds"
    run_r(f'saveRDS(Matrix::sparseMatrix(i = c(1L, 3L), j = c(2L, 2L), x = c(1.5, 2), dims = c(3L, 2L)), "{f.as_posix()}")')
    code = f"""
import warnings, rdarrow
warnings.simplefilter("error")
try:
    rdarrow.read_objects({str(f)!r})
except ImportError as e:
    print(e)
"""
    r = _without(["numpy", "scipy", "pandas"], code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "a dgCMatrix (a sparse matrix) as scipy.sparse needs numpy and scipy: pip install 'rdarrow[sparse]' "
        "(or read_objects(..., plain=True) for plain values)"
    ]


@pytest.mark.parametrize(
    "hidden, call, line",
    [
        (["anndata"], "rdarrow.read_anndata('x.rds')", "read_anndata() needs anndata: pip install 'rdarrow[anndata]'"),
        (["numpy", "anndata"], "rdarrow.read_anndata('x.rds')",
         "read_anndata() needs numpy and anndata: pip install 'rdarrow[anndata]'"),
        (["scipy"], "rdarrow.write_seurat(None, 'x.rds')", "write_seurat() needs scipy: pip install 'rdarrow[anndata]'"),
        (["polars"], "import rdarrow.polars", "rdarrow.polars needs polars: pip install 'rdarrow[polars]'"),
        (["dask"], "import rdarrow.dask", "rdarrow.dask needs dask: pip install 'rdarrow[dask]'"),
        (["pyspark"], "import rdarrow.spark", "rdarrow.spark needs pyspark: pip install 'rdarrow[spark]'"),
        (["duckdb"], "import rdarrow.duckdb; rdarrow.duckdb.connect()",
         "reading R data files with DuckDB needs duckdb: pip install 'rdarrow[duckdb]'"),
        (["pandas"], "rdarrow.read_pandas('x.rds')",
         "a data frame as a pandas DataFrame needs pandas: pip install 'rdarrow[pandas]' "
         "(or read_objects(..., plain=True) for plain values)"),
    ],
)
def test_a_missing_package_is_one_line_naming_the_extra(tmp_path, hidden, call, line):
    rdarrow.write_rds(pa.table({"a": [1]}), tmp_path / "x.rds")
    code = f"""
import os, rdarrow
os.chdir({str(tmp_path)!r})
try:
    {call}
except ImportError as e:
    print(e)
"""
    r = _without(hidden, code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [line]


def test_every_extra_the_messages_name_is_in_pyproject():
    import tomllib

    from rdarrow import _optional

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(_optional._EXTRA.values()) <= set(extras)


def test_to_h5ad_without_anndata_is_one_line_with_the_install(tmp_path):
    src = tmp_path / "x.rds"
    rdarrow.write_rds([1, 2], src)
    code = "from rdarrow.__main__ import main\nsys.exit(main(sys.argv[1:]))"
    r = _without(["anndata"], code, "to-h5ad", str(src), "-o", str(tmp_path / "x.h5ad"))
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0, r.stderr
    assert "pip install 'rdarrow[anndata]'" in r.stderr and "Traceback" not in r.stderr


# --- DuckDB from pip -------------------------------------------------------------------


def test_duckdb_from_pip_reads_r_files_as_the_python_readme_shows(tmp_path):
    duckdb = pytest.importorskip("duckdb", reason="duckdb is in the test environment (tools/requirements-test.txt)")
    import rdarrow.duckdb

    t = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "s": ["a", None, "c"]})
    for ext in ("rds", "qs2", "qdata", "RData"):
        if ext == "RData":
            rdarrow.write_rdata({"answers": t}, tmp_path / f"survey.{ext}")
        else:
            rdarrow.write_rds(t, tmp_path / f"survey.{ext}")
    con = rdarrow.duckdb.connect()
    for ext in ("rds", "qs2", "qdata", "RData"):
        got = con.sql(f"FROM '{(tmp_path / f'survey.{ext}').as_posix()}' ORDER BY id").to_arrow_table()
        assert got.column("id").to_pylist() == [1, 2, 3], ext
        assert got.column("s").to_pylist() == ["a", None, "c"], ext
    got = con.sql(f"FROM read_rdata('{(tmp_path / 'survey.RData').as_posix()}', object = 'answers')").fetchall()
    assert got == [(1, "a"), (2, None), (3, "c")]
    # duckdb.sql() once it is the default connection
    duckdb.set_default_connection(con)
    try:
        assert duckdb.sql(f"SELECT count(*) FROM '{(tmp_path / 'survey.qs2').as_posix()}'").fetchall() == [(3,)]
    finally:
        duckdb.set_default_connection(duckdb.connect())
    # a connection without unsigned extensions: told what to do
    with pytest.raises(RuntimeError, match="allow_unsigned_extensions"):
        rdarrow.duckdb.load(duckdb.connect())
