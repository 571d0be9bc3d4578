"""The Spark data source (rdarrow.spark) in Spark's local mode: files
written by R itself read through spark.read.format("rdata") (every column
kind, many files with differing columns, a large file split by row range,
small files packed, an object path, an object store), the schema as
documented, values equal to rdarrow.read_table(); data written by Spark
read back by R (identical() to the frame R builds from the same rows); a
hostile file and a missing object fail with rdarrow's message. Spark starts
once for the module."""

import re

import pyarrow as pa
import pytest

import rdarrow
from conftest import KINDS_R

MAKE_R = "n <- 5000L\n" + KINDS_R + r"""
saveRDS(df, file.path(out, "kinds.rds"))
saveRDS(df[, c("i", "d", "s")], file.path(out, "plain.rds"), compress = FALSE)
for (k in 1:30) saveRDS(df[((k - 1) * 10 + 1):(k * 10), c("i", "d", "s")], file.path(out, "small", sprintf("s%02d.rds", k)))
saveRDS(data.frame(i = 1:3, extra = c("x", "y", "z")), file.path(out, "small", "s99.rds"))
lst <- list(inner = df[1:20, c("i", "s")], other = 1:3)
save(df, lst, file = file.path(out, "two.RData"))
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("spark")
    (out / "small").mkdir()
    run_r(MAKE_R, OUT=str(out))
    return out


def _table(df):
    return pa.Table.from_batches(df._collect_as_arrow()) if hasattr(df, "_collect_as_arrow") else pa.Table.from_pandas(df.toPandas())


def test_every_column_kind_and_the_schema(spark, made):
    from pyspark.sql import types as T

    df = spark.read.format("rdata").load(str(made / "kinds.rds"))
    want = {
        "i": T.IntegerType(), "d": T.DoubleType(), "b": T.BooleanType(), "s": T.StringType(),
        "f": T.StringType(), "o": T.StringType(), "day": T.DateType(), "t": T.TimestampType(),
        "big": T.LongType(), "dt": T.DayTimeIntervalType(0, 3), "l": T.ArrayType(T.IntegerType()),
        "m": T.ArrayType(T.IntegerType()),
    }
    assert [f.name for f in df.schema.fields] == list(want)
    for f in df.schema.fields:
        assert f.dataType == want[f.name], f.name
    got = df.toPandas()
    ref = rdarrow.read_table(made / "kinds.rds").to_pandas()
    assert len(got) == 5000
    assert got["i"].isna().tolist() == ref["i"].isna().tolist()
    assert got["d"].fillna(0).tolist() == ref["d"].fillna(0).tolist()
    assert got["s"].tolist() == ref["s"].tolist()
    assert got["f"].tolist() == [None if x is None or x != x else str(x) for x in ref["f"].astype(object)]
    assert got["big"].tolist() == ref["big"].tolist()
    assert [list(x) for x in got["l"]] == [list(x) for x in ref["l"]]
    assert str(got["day"][0]) == "2020-01-02"
    assert got["t"][0] == ref["t"][0].tz_convert("UTC").tz_localize(None)
    assert got["dt"][1].total_seconds() == 120.0  # 2 mins
    assert list(got["m"][0]) == [1, 5001]  # a matrix column's row


def test_a_large_file_is_split_by_row_range(spark, made):
    path = str(made / "plain.rds")
    one = spark.read.format("rdata").load(path)
    small = {"maxPartitionBytes": "4096", "openCostInBytes": "1024"}
    split = spark.read.format("rdata").options(**small).load(path)
    assert split.rdd.getNumPartitions() > 1
    assert sorted(split.select("i").toPandas()["i"].fillna(-1).tolist()) == sorted(one.select("i").toPandas()["i"].fillna(-1).tolist())
    assert split.count() == 5000
    # a compressed file is not split (each piece would inflate it whole)
    gz = spark.read.format("rdata").options(**small).load(str(made / "kinds.rds"))
    assert gz.rdd.getNumPartitions() == 1 and gz.count() == 5000


def test_small_files_are_packed_and_matched_by_column_name(spark, made):
    df = spark.read.format("rdata").load(str(made / "small"))
    assert df.rdd.getNumPartitions() < 31
    assert [f.name for f in df.schema.fields] == ["i", "d", "s", "extra"]
    pdf = df.toPandas()
    assert len(pdf) == 303
    assert sorted(pdf["extra"].dropna().tolist()) == ["x", "y", "z"]
    assert sorted(pdf["i"].dropna().astype(int).tolist())[:3] == [1, 1, 2]
    glob = spark.read.format("rdata").load(str(made / "small" / "s0*.rds"))
    assert glob.count() == 90


def test_a_schema_selects_columns_and_an_object_path(spark, made):
    df = spark.read.format("rdata").schema("s string, i int").option("object", "df").load(str(made / "two.RData"))
    assert df.columns == ["s", "i"]
    assert df.count() == 5000
    inner = spark.read.format("rdata").option("object", "lst$inner").load(str(made / "two.RData"))
    assert inner.count() == 20 and inner.columns == ["i", "s"]
    cols = spark.read.format("rdata").option("columns", "d,i").load(str(made / "kinds.rds"))
    assert cols.columns == ["d", "i"]


def test_writing_from_spark_is_read_back_by_r(spark, made, tmp_path, run_r):
    src = spark.read.format("rdata").schema("i int, d double, s string, day date").load(str(made / "kinds.rds"))
    out = tmp_path / "out"
    src.repartition(3).write.format("rdata").mode("overwrite").save(str(out))
    parts = sorted(p.name for p in out.iterdir())
    assert len(parts) == 3 and all(p.endswith(".rds") for p in parts)
    assert not (out / "_temporary").exists()
    got = run_r(
        f"""
src <- readRDS("{made / 'kinds.rds'}")[, c("i", "d", "s", "day")]
parts <- lapply(list.files("{out}", full.names = TRUE), readRDS)
back <- do.call(rbind, parts)
back <- back[order(back$day), ]
rownames(back) <- NULL
cat(identical(back, src))
"""
    )
    assert got == "TRUE"
    # append adds, an .RData with the object's name
    src.limit(10).coalesce(1).write.format("rdata").mode("append").option("format", "RData").option("object", "rows").save(str(out))
    rdata = [p for p in out.iterdir() if p.suffix == ".RData"]
    assert len(rdata) == 1
    assert run_r(f'load("{rdata[0]}"); cat(nrow(rows))') == "10"


def test_a_hostile_file_and_a_missing_object_fail_with_the_message(spark, made, tmp_path):
    bad = tmp_path / "bad.rds"
    raw = (made / "kinds.rds").read_bytes()
    bad.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(Exception, match="rdarrow|truncated|corrupt|unexpected end"):
        spark.read.format("rdata").load(str(bad)).count()
    with pytest.raises(Exception, match="nope"):
        spark.read.format("rdata").option("object", "nope").load(str(made / "two.RData")).count()



def test_a_promise_is_refused_with_the_message(spark, crafted):
    """Spark never runs R code: a file holding a promise where R keeps
    none fails the read with the engine's message."""
    d, places = crafted
    for name in ("element.rds", "binding.RData"):
        with pytest.raises(Exception, match=re.escape(places[name]) + " is a promise"):
            spark.read.format("rdata").load(str(d / name)).count()
    assert not (d / "ran").exists()

SLOTS_R = r"""
setClass("Holder", representation(df = "data.frame", note = "character"))
h <- new("Holder", df = data.frame(i = 1:3, s = c("a", NA, "c")), note = "n")
mixed <- data.frame(id = 1:3)
mixed$l <- list(1:2, "a", NULL)
save(h, mixed, file = file.path(Sys.getenv("OUT"), "slots.RData"))
"""


def test_an_at_path_reads_a_slot_and_a_union_column_is_named(spark, tmp_path, run_r):
    run_r(SLOTS_R, OUT=str(tmp_path))
    f = str(tmp_path / "slots.RData")
    rows = spark.read.format("rdata").option("object", "h@df").load(f).orderBy("i").collect()
    assert [(r.i, r.s) for r in rows] == [(1, "a"), (2, None), (3, "c")]
    # Spark has no union type: the column is named, never changed
    with pytest.raises(Exception, match="column 'l' holds lists whose elements differ in type"):
        spark.read.format("rdata").option("object", "mixed").load(f).count()
    ids = spark.read.format("rdata").option("object", "mixed").option("columns", "id").load(f)
    assert sorted(r.id for r in ids.collect()) == [1, 2, 3]
