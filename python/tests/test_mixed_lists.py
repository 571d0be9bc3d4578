"""Lists whose elements differ in type and S4 objects, made by real R:
a named list is a struct of one row, an unnamed list (and a list column
whose rows differ in type) a dense union, an S4 object a struct of its
slots, an S4 vector its vector. pyarrow validates each, the values are
R's (R prints them), read_objects() gives the same values, the circle
read_table() -> write_rds() is identical() in R, DuckDB gives STRUCT and
UNION columns, and Polars and Spark name a union column they cannot take."""

import json

import pyarrow as pa
import pytest

import rdarrow

MAKE_R = r"""
setClass("Rec", representation(num = "numeric", chr = "character", lst = "list",
                               mat = "matrix", fac = "factor"))
setClass("Count", contains = "integer", representation(note = "character"))
res <- list(coef = c(a = 1.5, b = -2), n = 10L, method = "ols", ok = TRUE,
            when = as.Date("2020-01-01") + 0:1, none = NULL)
unnamed <- list(1:3, "a", c(2.5, NA), NULL, list(1, "b"), factor(c("q", NA)))
df <- data.frame(id = 1:4)
df$l <- list(1:2, "a", NULL, list(x = 1, y = "z"))
mat_fac <- list(m = matrix(1:6, 2L, dimnames = list(c("r1", "r2"), NULL)),
                f = factor(c("u", "v", "u"), levels = c("v", "u")))
nested <- list(df = data.frame(x = 1:3, y = c("a", "b", NA)), v = c(1.5, 2.5),
               inner = list(d = data.frame(z = TRUE), w = "q", k = list(1L, "x")))
rec <- new("Rec", num = c(1, NA, 3), chr = c("z", NA), lst = list(1L, "a"),
           mat = matrix(c(1.5, 2.5, 3.5, 4.5), 2L), fac = factor(c("p", "q")))
cnt <- new("Count", c(1L, NA, 3L), note = "counts")
dge <- new("dgeMatrix", Dim = c(2L, 3L), x = as.numeric(1:6))
names <- c("res", "unnamed", "df", "mat_fac", "nested", "rec", "cnt", "dge")
save(list = names, file = file.path(out, "mixed.RData"))
"""

NAMES = ["res", "unnamed", "df", "mat_fac", "nested", "rec", "cnt", "dge"]

CLASSES_R = r"""
suppressMessages(library(Matrix))
setClass("Rec", representation(num = "numeric", chr = "character", lst = "list",
                               mat = "matrix", fac = "factor"))
setClass("Count", contains = "integer", representation(note = "character"))
"""


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, run_r):
    d = tmp_path_factory.mktemp("mixed")
    run_r("suppressMessages(library(Matrix)); out <- '" + str(d) + "'\n" + MAKE_R)
    return d / "mixed.RData"


def test_every_array_validates_with_the_layout_of_the_mapping(mixed):
    types = {}
    for name in NAMES:
        t = rdarrow.read_table(mixed, object=name)
        t.validate(full=True)
        types[name] = t.schema.field(t.num_columns - 1).type
    # a named list of mixed types: one row, a field per element
    res = rdarrow.read_table(mixed, object="res")
    assert res.num_rows == 1
    assert [f.name for f in types["res"]] == ["coef", "n", "method", "ok", "when", "none"]
    assert types["res"].field("when").type == pa.list_(pa.date32())
    # an unnamed one: a dense union, one slot per element
    assert pa.types.is_union(types["unnamed"]) and types["unnamed"].mode == "dense"
    # (integer and double elements meet in double, as R coerces them; the
    # metadata gives the integer back)
    assert [types["unnamed"].field(i).name for i in range(types["unnamed"].num_fields)] == [
        "double",
        "character",
        "union",
        "factor",
    ]
    assert rdarrow.read_table(mixed, object="unnamed").num_rows == 6
    # a list column whose rows differ
    assert pa.types.is_union(types["df"])
    # an S4 object: its slots; an S4 vector: its vector
    assert [f.name for f in types["rec"]] == ["num", "chr", "lst", "mat", "fac"]
    assert types["cnt"] == pa.int32()
    assert [f.name for f in types["dge"]] == ["Dim", "Dimnames", "x", "factors"]


def test_the_values_are_rs(mixed, run_r):
    got = {n: rdarrow.read_table(mixed, object=n).to_pylist() for n in NAMES}
    assert got["res"] == [
        {
            "res": {
                "coef": [1.5, -2.0],
                "n": [10],
                "method": ["ols"],
                "ok": [True],
                "when": [pa.scalar(18262, pa.date32()).as_py(), pa.scalar(18263, pa.date32()).as_py()],
                "none": None,
            }
        }
    ]
    assert [r["unnamed"] for r in got["unnamed"]] == [[1.0, 2.0, 3.0], ["a"], [2.5, None], None, [[1.0], ["b"]], ["q", None]]
    assert [r["l"] for r in got["df"]] == [[1, 2], ["a"], None, [{"x": [1.0], "y": ["z"]}]]
    assert got["rec"][0]["rec"]["num"] == [1.0, None, 3.0]
    assert got["rec"][0]["rec"]["mat"] == [1.5, 2.5, 3.5, 4.5]
    assert [r["cnt"] for r in got["cnt"]] == [1, None, 3]
    assert got["dge"][0]["dge"]["x"] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # R's own values, printed by R
    said = json.loads(
        run_r(
            CLASSES_R
            + f"""
            load("{mixed}")
            cat(jsonlite::toJSON(list(coef = unname(res$coef), num = rec@num, x = dge@x,
                                      dim = dge@Dim, cnt = cnt@.Data, note = cnt@note),
                                 digits = NA, na = "null"))
            """
        )
    )
    assert said["coef"] == got["res"][0]["res"]["coef"]
    assert said["num"] == [1.0, None, 3.0]
    assert said["x"] == got["dge"][0]["dge"]["x"] and said["dim"] == got["dge"][0]["dge"]["Dim"]
    assert said["cnt"] == [r["cnt"] for r in got["cnt"]]


def test_read_objects_gives_the_same_values(mixed):
    v = rdarrow.read_objects(mixed, plain=True)
    t = {n: rdarrow.read_table(mixed, object=n).to_pylist()[0] for n in ("res", "rec")}
    assert list(v["res"]["coef"].values()) == t["res"]["res"]["coef"]
    assert v["res"]["method"] == t["res"]["res"]["method"]
    assert v["unnamed"][0] == [1, 2, 3] and v["unnamed"][1] == ["a"] and v["unnamed"][3] is None
    assert v["rec"]["num"] == t["rec"]["rec"]["num"]
    assert v["rec"]["chr"] == ["z", None]
    # the data frame's union column: each row's value
    frame = rdarrow.read_objects(mixed, ["df"])["df"]
    assert list(frame["l"]) == [[1, 2], ["a"], None, [{"x": [1.0], "y": ["z"]}]]


def test_read_table_then_write_rds_is_identical_in_r(mixed, run_r, tmp_path):
    for name in NAMES:
        rdarrow.write_rds(rdarrow.read_table(mixed, object=name), tmp_path / f"{name}.rds")
    out = run_r(
        CLASSES_R
        + f"""
        load("{mixed}")
        for (n in c({", ".join(repr(n) for n in NAMES)})) {{
          cat(n, identical(readRDS(file.path("{tmp_path}", paste0(n, ".rds"))), get(n)), "\\n")
        }}
        """
    )
    assert out.split() == [w for n in NAMES for w in (n, "TRUE")], out


def test_parquet_keeps_the_union_as_a_struct_and_comes_back(mixed, run_r, tmp_path):
    import subprocess

    import pyarrow.parquet as pq
    from conftest import cargo_cli

    cli = cargo_cli()
    names = ("unnamed", "df", "rec", "nested")
    for name in names:
        f = tmp_path / f"{name}.parquet"
        subprocess.run([cli, "to-parquet", str(mixed), "--object", name, "-o", str(f)], check=True)
        pq.read_table(f).validate(full=True)
        subprocess.run([cli, "to-rdata", str(f), "-o", str(tmp_path / f"{name}_pq.rds")], check=True)
    # Parquet's readers see the documented layout: the type ids, then the
    # children, null where a slot is another child's
    t = pq.read_table(tmp_path / "unnamed.parquet").schema.field("unnamed").type
    assert pa.types.is_struct(t) and t.field(0).name == "__union_type" and t.field(0).type == pa.int8()
    rows = pq.read_table(tmp_path / "unnamed.parquet").column("unnamed").to_pylist()
    assert rows[1] == {"__union_type": 1, "double": None, "character": ["a"], "union": None, "factor": None}
    # Polars and DuckDB read the layout as the struct it is
    pl = pytest.importorskip("polars")
    assert pl.read_parquet(tmp_path / "unnamed.parquet")["unnamed"].to_list()[1]["character"] == ["a"]
    duckdb = pytest.importorskip("duckdb")
    got = duckdb.sql(f"SELECT l.__union_type, l.character FROM '{tmp_path / 'df.parquet'}' ORDER BY id").fetchall()
    assert got == [(0, None), (1, ["a"]), (0, None), (2, None)]
    out = run_r(
        CLASSES_R
        + f"""
        load("{mixed}")
        for (n in c({", ".join(repr(n) for n in names)})) cat(n, identical(readRDS(file.path("{tmp_path}", paste0(n, "_pq.rds"))), get(n)), "\\n")
        """
    )
    assert out.split() == [w for n in names for w in (n, "TRUE")], out


def test_duckdb_gives_struct_and_union_columns(mixed):
    duckdb = pytest.importorskip("duckdb")
    from test_duckdb import connect

    con = connect()
    f = str(mixed)
    res = con.execute(f"SELECT res.coef, res.method, res.n FROM read_rdata('{f}', object := 'res')").fetchall()
    assert res == [([1.5, -2.0], ["ols"], [10])]
    kinds = con.execute(f"SELECT typeof(l), union_tag(l) FROM read_rdata('{f}', object := 'df')").fetchall()
    assert kinds[0][0].startswith("UNION(")
    assert [k[1] for k in kinds] == ["integer", "character", "integer", "struct"]
    rows = con.execute(f"SELECT l FROM read_rdata('{f}', object := 'df')").fetchall()
    assert rows[0][0] == [1, 2] and rows[1][0] == ["a"] and rows[2][0] is None
    assert rows[3][0] == [{"x": [1.0], "y": ["z"]}]
    slots = con.execute(f"SELECT rec.num, rec.chr FROM read_rdata('{f}', object := 'rec')").fetchall()
    assert slots == [([1.0, None, 3.0], ["z", None])]
    assert con.execute(f"SELECT * FROM read_rdata('{f}', object := 'cnt')").fetchall() == [(1,), (None,), (3,)]
    un = con.execute(f"SELECT union_tag(unnamed) FROM read_rdata('{f}', object := 'unnamed')").fetchall()
    assert [u[0] for u in un] == ["double", "character", "double", "double", "union", "factor"]


def test_polars_names_the_union_column_it_cannot_take(mixed):
    pytest.importorskip("polars")
    import rdarrow.polars

    with pytest.raises(TypeError, match="column 'l' holds lists whose elements differ in type"):
        rdarrow.polars.scan_rdata(mixed, object="df")


def test_an_s4_object_without_slots_is_an_empty_struct_everywhere(tmp_path, run_r):
    from rdarrow._values import S4Value

    f = tmp_path / "empty.rds"
    rdarrow.write_rds(S4Value({"class": "Empty", "package": ".GlobalEnv"}), f)
    t = rdarrow.read_table(f)
    assert t.schema.field(0).type == pa.struct([]) and t.num_rows == 1
    import subprocess

    import pyarrow.parquet as pq
    from conftest import cargo_cli

    cli = cargo_cli()
    subprocess.run([cli, "to-parquet", str(f), "-o", str(tmp_path / "e.parquet")], check=True)
    assert pq.read_table(tmp_path / "e.parquet").schema.field(0).type == pa.struct([("__empty_struct", pa.bool_())])
    subprocess.run([cli, "to-rdata", str(tmp_path / "e.parquet"), "-o", str(tmp_path / "back.rds")], check=True)
    out = run_r(
        f"""
        x <- readRDS("{f}"); y <- readRDS("{tmp_path / 'back.rds'}")
        cat(isS4(x), identical(x, y), class(x))
        """
    )
    assert out.split() == ["TRUE", "TRUE", "Empty"]
    duckdb = pytest.importorskip("duckdb")
    from test_duckdb import connect

    assert connect().execute(f"SELECT count(*) FROM read_rds('{f}')").fetchall() == [(1,)]


def test_a_damaged_union_layout_in_parquet_is_a_clear_error(tmp_path):
    import subprocess

    import pyarrow.parquet as pq
    from conftest import cargo_cli

    # a type id (7) that names no child
    st = pa.StructArray.from_arrays(
        [pa.array([0, 7], pa.int8()), pa.array([[1.0], None], pa.list_(pa.float64()))],
        names=["__union_type", "double"],
    )
    pq.write_table(pa.table({"u": st}), tmp_path / "bad.parquet")
    r = subprocess.run([cargo_cli(), "to-rdata", str(tmp_path / "bad.parquet"), "-o", str(tmp_path / "bad.rds")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "a union stored in Parquet names type id 7, which it does not have" in r.stderr
    assert "panicked" not in r.stderr
    assert not (tmp_path / "bad.rds").exists()


def test_at_paths_into_a_single_cell_experiment(tmp_path, run_r):
    """An SCE made by SingleCellExperiment: its counts and colData by @
    paths in read_objects(), read_table() and the command line, equal to
    what R gives for the same slots, and every slot listed."""
    import subprocess

    from conftest import cargo_cli, need_single_cell_r

    need_single_cell_r(run_r)
    f = tmp_path / "sce.rds"
    said = json.loads(
        run_r(
            f"""
            suppressMessages(library(SingleCellExperiment))
            counts <- matrix(c(0L, 3L, 1L, 0L, 5L, 2L), 2L, dimnames = list(c("g1", "g2"), paste0("c", 1:3)))
            sce <- SingleCellExperiment(assays = list(counts = counts),
                                        colData = S4Vectors::DataFrame(group = c("a", "b", "a")))
            saveRDS(sce, "{f}")
            cat(jsonlite::toJSON(list(counts = sce@assays@data@listData$counts,
                                      group = sce@colData@listData$group,
                                      cls = class(sce@colData)[[1]])))
            """
        )
    )
    got = rdarrow.read_objects(f, ["sce@assays@data@listData$counts", "sce@colData@listData$group"])
    assert got["sce@assays@data@listData$counts"].to_numpy().tolist() == said["counts"]
    assert got["sce@colData@listData$group"] == said["group"]
    t = rdarrow.read_table(f, object="sce@colData")
    t.validate(full=True)
    # (listData: a named list of one element, list<T> as any list of one type)
    assert t.column(0).to_pylist()[0]["listData"] == [said["group"]]
    names = {o["name"]: o for o in rdarrow.list_objects(f, recursive=True)}
    assert names["sce@colData"]["class"] == said["cls"]
    cli = cargo_cli()
    out = subprocess.run([cli, "ls", str(f), "--recursive"], capture_output=True, text=True, check=True).stdout
    assert "sce@colData@listData$group" in out
    pq = tmp_path / "group.parquet"
    subprocess.run([cli, "to-parquet", str(f), "--object", "sce@colData@listData$group", "-o", str(pq)], check=True)
    import pyarrow.parquet as pq_

    assert pq_.read_table(pq).column(0).to_pylist() == said["group"]
