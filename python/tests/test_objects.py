"""Objects as real R data files hold them, read from Python: sparse
matrices as scipy.sparse matrices, other S4 objects as dicts of their
slots, strings that are not valid text (a warning, valid text)."""

import math

import pytest

import rdarrow

SPARSE_R = """
library(Matrix)
sp <- sparseMatrix(i = c(1, 3, 2), j = c(2, 3, 3), x = c(1.5, 2, NA), dims = c(3, 4))
dimnames(sp) <- list(c("a", "b", "c"), NULL)
spT <- as(sp, "TsparseMatrix")
spR <- as(sp, "RsparseMatrix")
lg <- sp > 1
pat <- as(sp != 0, "nMatrix")
zero <- sparseMatrix(i = integer(0), j = integer(0), x = numeric(0), dims = c(2, 5))
setClass("Pt", representation(x = "numeric", label = "character"))
pt <- new("Pt", x = c(1, 2), label = "p")
save(sp, spT, spR, lg, pat, zero, pt, file = "{path}")
"""


@pytest.fixture(scope="module")
def s4_file(tmp_path_factory, run_r):
    path = tmp_path_factory.mktemp("s4") / "s4.RData"
    run_r(SPARSE_R.replace("{path}", str(path)))
    return path


def _dense(m):
    return [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in m.toarray().tolist()]


def test_sparse_matrices_are_scipy_sparse_matrices(s4_file):
    sp = pytest.importorskip("scipy.sparse")
    v = rdarrow.read_objects(s4_file)
    want = [[0.0, 1.5, 0.0, 0.0], [0.0, 0.0, None, 0.0], [0.0, 0.0, 2.0, 0.0]]
    assert isinstance(v["sp"], sp.csc_matrix)
    assert isinstance(v["spT"], sp.coo_matrix)
    assert isinstance(v["spR"], sp.csr_matrix)
    for k in ("sp", "spT", "spR"):
        assert v[k].shape == (3, 4)
        assert _dense(v[k]) == want
        assert v[k].dimnames == [["a", "b", "c"], None]
    assert v["lg"].dtype == bool
    assert v["lg"].toarray().tolist() == [[False, True, False, False], [False, False, True, False], [False, False, True, False]]
    assert v["pat"].dtype == bool
    assert v["pat"].nnz == 3
    assert v["zero"].shape == (2, 5) and v["zero"].nnz == 0


def test_other_s4_objects_are_dicts_of_their_slots(s4_file):
    with _no_warning():
        v = rdarrow.read_objects(s4_file, ["pt"])
    pt = v["pt"]
    assert set(pt) == {"class", "package", "x", "label"}
    assert (pt["class"], pt["package"], pt["label"]) == ("Pt", ".GlobalEnv", ["p"])
    assert pt["x"].dtype == "float64" and pt["x"].tolist() == [1.0, 2.0]
    with _no_warning():
        plain = rdarrow.read_objects(s4_file, ["pt"], plain=True)
    assert plain["pt"] == {"class": "Pt", "package": ".GlobalEnv", "x": [1.0, 2.0], "label": ["p"]}


class _no_warning:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings(record=True)
        self.caught = self._w.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._w.__exit__(*exc)
        assert not [w for w in self.caught if issubclass(w.category, rdarrow.RDataWarning)]


def test_strings_that_are_not_valid_text_warn_and_are_valid_for_every_consumer(tmp_path, run_r):
    path = tmp_path / "bad.rds"
    run_r(
        f"""
x <- c("ok", "a\\xcc_b", "Jos\\xe9 \\x93q\\x94", "cut \\xe2\\x82", NA)
Encoding(x) <- "UTF-8"
saveRDS(data.frame(notes = x, n = 1:5), "{path}")
"""
    )
    with pytest.warns(rdarrow.RDataWarning, match="column 'notes': 3 strings are not valid text \\(the first is in row 2\\)"):
        t = rdarrow.read_table(path)
    t.validate(full=True)
    assert t.column("notes").to_pylist() == ["ok", "a\u00cc_b", "Jos\u00e9 \u201cq\u201d", "cut \ufffd", None]
    pl = pytest.importorskip("polars")
    assert pl.from_arrow(t)["notes"].to_list()[1] == "a\u00cc_b"
    duckdb = pytest.importorskip("duckdb")
    assert duckdb.sql("select count(notes) from t").fetchall() == [(4,)]
    # the original bytes come back in R
    out = tmp_path / "back.RData"
    with pytest.warns(rdarrow.RDataWarning):
        rdarrow.write_rdata(rdarrow.RDataReader(path), out, name="d")
    got = run_r(
        f"""
x <- c("ok", "a\\xcc_b", "Jos\\xe9 \\x93q\\x94", "cut \\xe2\\x82", NA)
Encoding(x) <- "UTF-8"
load("{out}")
cat(identical(d$notes, x))
"""
    )
    assert got == "TRUE"


def test_slots_of_s4_objects_by_at_paths(tmp_path, run_r):
    """pbmc@assays$RNA@counts-style paths in read_objects(), read_table()
    and list_objects(recursive=True), on an S4 object R made."""
    run_r(
        f"""
        setClass("Pt", representation(x = "numeric", df = "data.frame", parts = "list"))
        pt <- new("Pt", x = c(1.5, NA), df = data.frame(a = 1:3, s = c("u", NA, "w")),
                  parts = list(m = matrix(1:4, 2)))
        save(pt, file = "{tmp_path}/pt.RData")
        """
    )
    f = tmp_path / "pt.RData"
    got = rdarrow.read_objects(f, ["pt@x", "pt@parts$m"])
    assert list(got) == ["pt@x", "pt@parts$m"]
    assert got["pt@x"][0] == 1.5 and got["pt@x"].mask.tolist() == [False, True]
    assert got["pt@parts$m"].tolist() == [[1, 3], [2, 4]]
    t = rdarrow.read_table(f, object="pt@df")
    assert t.column("a").to_pylist() == [1, 2, 3] and t.column("s").to_pylist() == ["u", None, "w"]
    names = [o["name"] for o in rdarrow.list_objects(f, recursive=True)]
    assert {"pt", "pt@x", "pt@df", "pt@parts", "pt@parts$m"} <= set(names)
    with pytest.raises(rdarrow.UsageError, match="'pt@y' not found: 'pt' \\(class Pt\\) has the slots"):
        rdarrow.read_objects(f, ["pt@y"])
