"""Polars lazy scans (rdarrow.polars.scan_rdata): projection, row limits,
predicates and globs give what pl.from_arrow(rdarrow.read_table()) followed
by the same query gives, on files R wrote with every column kind; the
projection reaches the engine (only the columns a query needs are
converted); batches of the asked size; many files as one frame."""

import polars as pl
import pytest

import rdarrow
import rdarrow.polars as rp
from conftest import KINDS_R

MAKE_R = "n <- 20000L\n" + KINDS_R + r"""
saveRDS(df, file.path(out, "kinds.rds"))
save(df, file = file.path(out, "kinds.RData"), compress = "xz")
for (k in 1:3) saveRDS(df[((k - 1) * 100 + 1):(k * 100), c("i", "s", "f")], file.path(out, sprintf("part%d.rds", k)))
saveRDS(data.frame(i = 1:2, extra = c("x", "y")), file.path(out, "part9.rds"))
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("polars")
    run_r(MAKE_R, OUT=str(out))
    return out


def _eager(path):
    return pl.from_arrow(rdarrow.read_table(path))


QUERIES = [
    lambda q: q,
    lambda q: q.select("d", "i"),
    lambda q: q.select(pl.col("d").sum(), pl.col("i").max()),
    lambda q: q.head(7),
    lambda q: q.filter(pl.col("i") > 19990).select("i", "f"),
    lambda q: q.filter((pl.col("f") == "hi") & pl.col("b")).select("s", "day", "t"),
    lambda q: q.select("l", "m", "dt").tail(3),
    lambda q: q.group_by("o").agg(pl.len()).sort("o"),
    lambda q: q.filter(pl.col("s").is_null()).select(pl.len()),
    lambda q: q.select(pl.len()),
]


@pytest.mark.parametrize("name", ["kinds.rds", "kinds.RData"])
def test_queries_equal_the_eager_frame_queried(made, name):
    path = made / name
    eager = _eager(path)
    lazy = rp.scan_rdata(path)
    assert lazy.collect_schema() == eager.schema
    for k, q in enumerate(QUERIES):
        got = q(lazy).collect()
        want = q(eager.lazy()).collect()
        assert got.equals(want), k


def test_only_the_columns_a_query_needs_are_converted(made):
    lazy = rp.scan_rdata(made / "kinds.rds")
    (table, _), = lazy._rdarrow_opened
    names = list(lazy.collect_schema())
    out = lazy.filter(pl.col("i") > 5).select("d").collect()
    assert out.height == 19994
    assert sorted(names[j] for j in table.converted) == ["d", "i"]


def test_a_row_limit_stops_reading(made):
    lazy = rp.scan_rdata(made / "kinds.rds")
    (table, _), = lazy._rdarrow_opened
    from polars.io.plugins import register_io_source  # noqa: F401  (the API this relies on)

    got = lazy.select("s").head(5).collect()
    assert got["s"].to_list() == _eager(made / "kinds.rds")["s"].head(5).to_list()
    assert table.converted == [3]


def test_globs_and_lists_scan_as_one_frame(made):
    lazy = rp.scan_rdata(str(made / "part*.rds"))
    assert list(lazy.collect_schema()) == ["i", "s", "f", "extra"]
    df = lazy.collect()
    assert df.height == 302
    assert df["extra"].drop_nulls().to_list() == ["x", "y"]
    want = pl.concat([_eager(made / f"part{k}.rds") for k in (1, 2, 3)], how="vertical")
    assert df.head(300).select("i", "s").equals(want.select("i", "s"))
    two = rp.scan_rdata([made / "part1.rds", made / "part2.rds"]).filter(pl.col("i") > 150).collect()
    assert two["i"].to_list() == list(range(151, 200))  # i is NA, 1, 2, ...: rows 101-200 hold 100-199
    assert rp.read_rdata(made / "part3.rds", columns=["s"]).equals(_eager(made / "part3.rds").select("s"))


def test_a_missing_object_or_file_is_an_error(made):
    with pytest.raises(rdarrow.RDataError, match="nope"):
        rp.scan_rdata(made / "kinds.RData", object="nope")
    with pytest.raises((rdarrow.RDataError, FileNotFoundError)):
        rp.scan_rdata(made / "absent*.rds")
