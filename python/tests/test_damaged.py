"""Damaged files never read as different data, through every Python route
(values, Arrow tables, pandas, Polars, file objects, bytes, DuckDB and the
``rdarrow`` command): files made by R's saveRDS() and save() with bits
flipped and cut short fail with an error or give back exactly the
original; ``salvage=True`` recovers what is intact, with an RDataWarning
saying what was lost."""

import importlib
import io
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import rdarrow
from rdarrow import CorruptError, RDataError, RDataWarning

MAKE = r"""
set.seed(70)
n <- 3000L
df <- data.frame(
  id = seq_len(n), x = sin(seq_len(n) / 7),
  day = as.Date("2020-01-01") + seq_len(n) %% 1000L,
  g = factor(sample(c("a", "b", "c"), n, TRUE)),
  s = sprintf("item %05d", seq_len(n)), stringsAsFactors = FALSE
)
for (comp in c("gzip", "bzip2", "xz")) saveRDS(df, file.path(out, paste0("df_", comp, ".rds")), compress = comp)
saveRDS(df, file.path(out, "df_none.rds"), compress = FALSE)
a <- 1:3
b <- list(p = letters, q = sin(1:3000), r = "last")
save(a, df, b, file = file.path(out, "three.RData"), compress = FALSE)
set.seed(3)
big <- data.frame(a = 1:1e5, b = rnorm(1e5))
saveRDS(big, file.path(out, "big_none.rds"), compress = FALSE)
saveRDS(big, file.path(out, "big_gzip.rds"))
counts <- matrix(1:20, 4)
meta <- data.frame(id = 1:10, g = letters[1:10])
design <- data.frame(x = sin(1:50), y = 1:50)
save(counts, meta, design, df, file = file.path(out, "four.RData"))
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("damaged")
    run_r(f'out <- "{out}"\n' + MAKE)
    return out


def variants(b, flips=24):
    n = len(b)
    out = {}
    for i in range(flips):
        at = 2 + (n - 2) * i // flips
        x = bytearray(b)
        x[at] ^= 1 << (i % 8)
        out[f"bit {i % 8} of byte {at} flipped"] = bytes(x)
    for back in range(1, 9):
        x = bytearray(b)
        x[n - back] ^= 0x10
        out[f"byte {n - back} (trailer) flipped"] = bytes(x)
    for cut in (1, 4, 8, 100, n // 2):
        out[f"cut short by {cut} bytes"] = b[: n - cut]
    return out


READERS = {
    "read_table": lambda src: rdarrow.read_table(src),
    "bytes": lambda src: rdarrow.read_table(Path(src).read_bytes()),
    "file object": lambda src: rdarrow.read_table(io.BytesIO(Path(src).read_bytes())),
    "read_objects": lambda src: pa.Table.from_pandas(
        list(rdarrow.read_objects(src).values())[0], preserve_index=False
    ),
}


@pytest.mark.parametrize("comp", ["gzip", "bzip2", "xz"])
def test_damaged_files_never_read_as_different_data(files, tmp_path, comp):
    src = files / f"df_{comp}.rds"
    whole = {name: read(str(src)) for name, read in READERS.items()}
    errors = 0
    for what, b in variants(src.read_bytes()).items():
        bad = tmp_path / "bad.rds"
        bad.write_bytes(b)
        for name, read in READERS.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = read(str(bad))
            except RDataError:
                errors += 1
                continue
            assert not what.startswith("cut"), f"{comp}, {what}, {name}: a file cut short read without an error"
            assert got.equals(whole[name]), f"{comp}, {what}, {name}: different data without an error"
    assert errors > 0


def test_scans_refuse_a_damaged_file_and_salvage_it_when_asked(files, tmp_path):
    """Polars, Dask and DuckDB: a damaged file is an error pointing to the
    host's own salvage; with it, the whole columns an intact file's part
    gives (Polars and Dask with an RDataWarning; DuckDB without a word, as
    it has no channel for one)."""
    src = files / "big_gzip.rds"
    intact = rdarrow.read_table(str(src))
    bad = tmp_path / "bad.rds"
    bad.write_bytes(src.read_bytes()[:-12])  # in the trailing attributes
    pl = pytest.importorskip("polars")
    polars_reader = importlib.import_module("rdarrow.polars")

    with pytest.raises(Exception, match="cut short") as e:
        polars_reader.scan_rdata(str(bad)).collect()
    assert "salvage=True" in str(e.value)
    with pytest.warns(RDataWarning, match="returned: what was kept of the object"):
        got = polars_reader.scan_rdata(str(bad), salvage=True).collect()
    assert got.to_arrow().select(["a", "b"]).equals(intact.select(["a", "b"]))
    with pytest.warns(RDataWarning, match="all 2 elements"):
        got = polars_reader.read_rdata(str(bad), columns=["b"], salvage=True)
    assert got["b"].to_list() == intact.column("b").to_pylist()
    with pytest.raises(RDataError, match="salvage must be True or False"):
        polars_reader.scan_rdata(str(bad), salvage="yes")
    from test_duckdb import connect

    con = connect()
    for fn in ("read_rds", "read_rdata"):
        with pytest.raises(Exception, match="cut short") as e:
            con.execute(f"SELECT count(*) FROM {fn}('{bad}')").fetchall()
        assert "salvage := true" in str(e.value)
        got = con.sql(f"SELECT a, b FROM {fn}('{bad}', salvage := true)").to_arrow_table()
        assert got.column("a").to_pylist() == intact.column("a").to_pylist()
        assert got.column("b").to_pylist() == intact.column("b").to_pylist()
    # cut in the middle of the columns: only the leading one, by position
    mid = tmp_path / "mid.rds"
    mid.write_bytes((files / "big_none.rds").read_bytes()[:600_000])
    got = con.sql(f"SELECT * FROM read_rds('{mid}', salvage := true)").to_arrow_table()
    assert got.column_names == ["V1"] and got.column(0).to_pylist() == intact.column("a").to_pylist()
    assert pl is not None


def test_dask_salvages_when_asked(files, tmp_path):
    pytest.importorskip("dask.dataframe")
    dask_reader = importlib.import_module("rdarrow.dask")

    src = files / "big_none.rds"
    intact = rdarrow.read_table(str(src))
    bad = tmp_path / "bad.rds"
    bad.write_bytes(src.read_bytes()[:-30])
    with pytest.raises(CorruptError, match="salvage=True"):
        dask_reader.read_rdata([str(bad)])
    with pytest.warns(RDataWarning, match="all 2 elements of the object whole"):
        got = dask_reader.read_rdata([str(src), str(bad)], salvage=True).compute(scheduler="sync")
    assert len(got) == 2 * intact.num_rows
    assert got["b"].tolist() == intact.column("b").to_pylist() * 2


def test_spark_salvages_with_the_option(files, tmp_path, spark):
    src = files / "big_gzip.rds"
    intact = rdarrow.read_table(str(src))
    bad = tmp_path / "bad.rds"
    bad.write_bytes(src.read_bytes()[:-12])
    with pytest.raises(Exception, match="cut short"):
        spark.read.format("rdata").load(str(bad)).count()
    df = spark.read.format("rdata").option("salvage", "true").load(str(bad))
    got = df.toPandas()
    assert got["b"].tolist() == intact.column("b").to_pylist()
    with pytest.raises(Exception, match="salvage must be true or false"):
        spark.read.format("rdata").option("salvage", "yes").load(str(bad)).count()


def test_to_tensor_salvages_an_array_only_whole(files, tmp_path, run_r):
    out = tmp_path / "arrays"
    out.mkdir()
    run_r(f'out <- "{out}"\n' + r"""
a <- matrix(1:20, 4)
b <- array(as.double(1:6000), c(10, 20, 30))
save(a, b, file = file.path(out, "ab.RData"), compress = FALSE)
saveRDS(b, file.path(out, "b.rds"))
""")
    src = out / "ab.RData"
    bad = tmp_path / "ab_cut.RData"
    bad.write_bytes(src.read_bytes()[:-20000])  # inside b's data
    with pytest.raises(CorruptError, match="salvage=True"):
        rdarrow.to_tensor(str(bad), object="a")
    with pytest.warns(RDataWarning, match="returned: object 'a', read whole"):
        t = rdarrow.to_tensor(str(bad), object="a", salvage=True)
    assert t.to_numpy().tolist() == rdarrow.to_tensor(str(src), object="a").to_numpy().tolist()
    with pytest.warns(RDataWarning, match="returned: object 'a', read whole"):
        assert rdarrow.to_tensor(str(bad), tmp_path / "a.tensor", object="a", salvage=True) is None
    assert pa.ipc.read_tensor(pa.memory_map(str(tmp_path / "a.tensor"))).equals(t)
    # the array the damage is in, or none named: an error, never a tensor
    with pytest.raises(RDataError, match="'b'"):
        rdarrow.to_tensor(str(bad), object="b", salvage=True)
    with pytest.raises(RDataError, match="which object the file would give is not known"):
        rdarrow.to_tensor(str(bad), salvage=True)
    # an .rds array cut short: an error with salvage too; a failed gzip
    # check after it parsed: the array with a warning
    b = (out / "b.rds").read_bytes()
    cut = tmp_path / "b_cut.rds"
    cut.write_bytes(b[:-12])
    with pytest.raises(CorruptError):
        rdarrow.to_tensor(str(cut), salvage=True)
    flip = bytearray(b)
    flip[-6] ^= 0x10
    crc = tmp_path / "b_crc.rds"
    crc.write_bytes(bytes(flip))
    with pytest.warns(RDataWarning, match="values may be wrong"):
        t = rdarrow.to_tensor(str(crc), salvage=True)
    assert t.equals(rdarrow.to_tensor(str(out / "b.rds")))
    # read_objects(as_tensor=True) takes the arrays read whole
    with pytest.warns(RDataWarning, match="in object 'b'"):
        got = rdarrow.read_objects(str(bad), as_tensor=True, salvage=True)
    assert got["a"].equals(rdarrow.read_objects(str(src), as_tensor=True)["a"])
    assert "b" not in got


def test_a_cut_file_is_an_error_naming_salvage_and_salvage_keeps_whole_columns(files, tmp_path):
    src = files / "df_none.rds"
    b = src.read_bytes()
    whole = rdarrow.read_objects(str(src), plain=True)
    (name,) = whole
    columns = list(whole[name].values())
    bad = tmp_path / "cut.rds"
    kept = set()
    for frac in (0.3, 0.6, 0.9):
        bad.write_bytes(b[: int(len(b) * frac)])
        with pytest.raises(CorruptError, match="salvage=True"):
            rdarrow.read_objects(str(bad))
        with pytest.warns(RDataWarning, match="the file is"):
            got = rdarrow.read_objects(str(bad), plain=True, salvage=True)
        part = got["cut"]
        assert isinstance(part, list) and len(part) < 5
        assert part == columns[: len(part)]
        kept.add(len(part))
    assert max(kept) > 0 and len(kept) > 1


def test_salvage_keeps_the_objects_before_the_damaged_one(files, tmp_path):
    src = files / "three.RData"
    b = src.read_bytes()
    listing = rdarrow.list_objects(str(src))
    assert [o["name"] for o in listing] == ["a", "df", "b"]
    bad = tmp_path / "cut.RData"
    bad.write_bytes(b[: len(b) - 5000])  # inside b's second element
    with pytest.raises(CorruptError):
        rdarrow.list_objects(str(bad))
    with pytest.warns(RDataWarning, match="in object 'b'"):
        got = rdarrow.read_objects(str(bad), plain=True, salvage=True)
    intact = rdarrow.read_objects(str(src), plain=True)
    assert got["a"] == intact["a"]
    assert got["df"] == intact["df"]
    assert got["b"] == [intact["b"]["p"]]
    with pytest.warns(RDataWarning, match="in object 'b'"):
        listed = rdarrow.list_objects(str(bad), salvage=True)
    assert [o["name"] for o in listed] == ["a", "df", "b"]
    with pytest.warns(RDataWarning, match="in object 'b'"):
        t = rdarrow.read_table(str(bad), object="df", salvage=True)
    assert t.equals(rdarrow.read_table(str(src), object="df"))
    with pytest.raises(RDataError, match="salvage must be True or False"):
        rdarrow.read_objects(str(bad), salvage="yes")


def test_a_failed_checksum_is_given_as_read_only_with_salvage(files, tmp_path):
    src = files / "df_gzip.rds"
    b = bytearray(src.read_bytes())
    b[-6] ^= 4  # the CRC-32
    bad = tmp_path / "crc.rds"
    bad.write_bytes(bytes(b))
    with pytest.raises(CorruptError, match="fails its check"):
        rdarrow.read_table(str(bad))
    with pytest.warns(RDataWarning, match="values may be wrong"):
        t = rdarrow.read_table(str(bad), salvage=True)
    assert t.equals(rdarrow.read_table(str(src)))


def test_the_command_refuses_and_salvages(files, tmp_path):
    src = files / "three.RData"
    b = src.read_bytes()
    bad = tmp_path / "cut.RData"
    bad.write_bytes(b[: len(b) - 5000])
    out = tmp_path / "out.RData"
    exe = str(Path(sys.executable).parent / "rdarrow")
    r = subprocess.run([exe, "to-rdata", str(bad), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1 and "--salvage" in r.stderr, r.stderr
    assert not out.exists()
    r = subprocess.run([exe, "--salvage", "to-rdata", str(bad), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning" in r.stderr and "object 'b'" in r.stderr
    got = rdarrow.read_objects(str(out), plain=True)
    assert got["a"] == [1, 2, 3]


def test_the_command_salvages_datasets_and_tensors(files, tmp_path):
    """to-dataset and to-tensor: a damaged input is an error naming it and
    --salvage; with --salvage, what is intact of it and a warning naming
    the file on standard error."""
    import pyarrow.dataset as ds

    exe = str(Path(sys.executable).parent / "rdarrow")
    src = files / "big_gzip.rds"
    bad = tmp_path / "bad.rds"
    bad.write_bytes(src.read_bytes()[:-12])
    lake = tmp_path / "lake"
    args = ["to-dataset", str(files / "big_none.rds"), str(bad), "-o", str(lake)]
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    assert r.returncode == 1 and str(bad) in r.stderr and "--salvage" in r.stderr, r.stderr
    assert not lake.exists() or list(lake.iterdir()) == []
    r = subprocess.run([exe, "--salvage", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"warning: {bad}: the file is cut short" in r.stderr
    intact = rdarrow.read_table(str(src))
    got = ds.dataset(str(lake / "part-1.parquet")).to_table()
    for c in ("a", "b"):
        assert got.column(c).to_pylist() == intact.column(c).to_pylist()
    four = files / "four.RData"
    cut = tmp_path / "four.RData"
    cut.write_bytes(four.read_bytes()[: four.stat().st_size // 2])
    out = tmp_path / "m.tensor"
    r = subprocess.run([exe, "--salvage", "to-tensor", str(cut), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1 and "not known" in r.stderr, r.stderr
    r = subprocess.run(
        [exe, "--salvage", "to-tensor", str(cut), "--object", "counts", "-o", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 0 and "returned: object 'counts', read whole" in r.stderr, r.stderr
    assert pa.ipc.read_tensor(pa.memory_map(str(out))).equals(rdarrow.to_tensor(str(four), object="counts"))


def _cut(src, n, to):
    b = src.read_bytes()
    to.write_bytes(b[: len(b) - n])
    return str(to)


def test_a_salvaged_data_frame_is_a_table_of_its_whole_columns(files, tmp_path):
    import pyarrow.parquet as pq

    for comp, cut in (("none", 4), ("none", 30), ("gzip", 12), ("gzip", 40)):
        src = files / f"big_{comp}.rds"
        intact = rdarrow.read_table(str(src))
        bad = _cut(src, cut, tmp_path / f"cut_{comp}_{cut}.rds")
        with pytest.raises(CorruptError, match="salvage=True"):
            rdarrow.read_table(bad)
        with pytest.raises(CorruptError, match="salvage=True"):
            rdarrow.to_parquet(bad, tmp_path / "x.parquet")
        with pytest.warns(RDataWarning, match="all 2 elements of the object whole, with their names") as w:
            t = rdarrow.read_table(bad, salvage=True)
        assert any("returned: what was kept of the object" in str(x.message) for x in w)
        assert t.num_rows == 100000 and t.column_names == ["a", "b"]
        for c in ("a", "b"):
            assert t.column(c).equals(intact.column(c))
        with pytest.warns(RDataWarning):
            p = rdarrow.read_pandas(bad, salvage=True)
        want = rdarrow.read_pandas(str(src))
        assert list(p.columns) == ["a", "b"] and len(p) == 100000
        assert (p["a"] == want["a"]).all() and (p["b"] == want["b"]).all()
        sink = tmp_path / "salvaged.parquet"
        with pytest.warns(RDataWarning, match="all 2 elements"):
            rdarrow.to_parquet(bad, sink, salvage=True)
        back = pq.read_table(sink)
        for c in ("a", "b"):
            assert back.column(c).equals(intact.column(c))


def test_salvage_never_takes_another_object(files, tmp_path):
    src = files / "four.RData"
    with pytest.raises(RDataError, match="choose one"):
        rdarrow.read_table(str(src))
    bad = _cut(src, src.stat().st_size // 2, tmp_path / "half.RData")
    for read in (
        lambda: rdarrow.read_table(bad, salvage=True),
        lambda: rdarrow.read_pandas(bad, salvage=True),
        lambda: rdarrow.to_parquet(bad, tmp_path / "x.parquet", salvage=True),
    ):
        with pytest.raises(RDataError, match="choose one by name"):
            read()
    assert not (tmp_path / "x.parquet").exists()
    with pytest.warns(RDataWarning, match="returned: object 'meta', read whole"):
        t = rdarrow.read_table(bad, object="meta", salvage=True)
    assert t.equals(rdarrow.read_table(str(src), object="meta"))
    # the damaged one: what was kept of it, by position
    with pytest.warns(RDataWarning, match="returned: what was kept of object 'df'"):
        t = rdarrow.read_table(bad, object="df", salvage=True)
    intact = rdarrow.read_table(str(src), object="df")
    assert 0 < t.num_columns < 5 and t.num_rows == intact.num_rows
    assert t.column_names == [f"V{i + 1}" for i in range(t.num_columns)]
    for i in range(t.num_columns):
        assert t.column(i).equals(intact.column(i))
    exe = str(Path(sys.executable).parent / "rdarrow")
    out = tmp_path / "cmd.parquet"
    r = subprocess.run([exe, "--salvage", "to-parquet", bad, "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1 and "choose one by name" in r.stderr, r.stderr
    assert not out.exists()
    big = files / "big_gzip.rds"
    r = subprocess.run(
        [exe, "--salvage", "to-parquet", _cut(big, 12, tmp_path / "big.rds"), "-o", str(out)],
        capture_output=True, text=True,
    )
    assert r.returncode == 0 and "returned: what was kept of the object" in r.stderr, r.stderr
    import pyarrow.parquet as pq

    back = pq.read_table(out)
    intact = rdarrow.read_table(str(big))
    assert back.column_names == ["a", "b"]
    for c in ("a", "b"):
        assert back.column(c).equals(intact.column(c))
