"""Damaged files never read as different data, through every Python route
(values, Arrow tables, pandas, Polars, file objects, bytes, DuckDB and the
``rdarrow`` command): files made by R's saveRDS() and save() with bits
flipped and cut short fail with an error or give back exactly the
original; ``salvage=True`` recovers what is intact, with an RDataWarning
saying what was lost."""

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


def test_polars_and_duckdb_refuse_a_damaged_file(files, tmp_path):
    b = (files / "df_gzip.rds").read_bytes()
    bad = tmp_path / "bad.rds"
    bad.write_bytes(b[:-4])
    pl = pytest.importorskip("polars")
    import rdarrow.polars  # noqa: F401

    with pytest.raises(Exception, match="cut short") as e:
        rdarrow.polars.scan_rdata(str(bad)).collect()
    # a scan does not salvage: its error suggests none
    assert "salvage" not in str(e.value)
    from test_duckdb import connect

    con = connect()
    with pytest.raises(Exception, match="cut short"):
        con.execute(f"SELECT count(*) FROM read_rds('{bad}')").fetchall()
    assert pl is not None


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


def test_the_command_refuses_salvage_where_it_writes_only_from_intact_files(files, tmp_path):
    """to-dataset and to-tensor are written only from intact files:
    --salvage with them is a usage error (exit 2) saying where to salvage,
    never a flag taken and ignored."""
    exe = str(Path(sys.executable).parent / "rdarrow")
    src = str(files / "three.RData")
    for args in (["to-dataset", src, "-o", str(tmp_path / "lake")], ["to-tensor", src, "-o", str(tmp_path / "t.arrow")]):
        r = subprocess.run([exe, "--salvage", *args], capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        assert f"--salvage does not apply to {args[0]}" in r.stderr and "to-parquet --salvage" in r.stderr
    assert list(tmp_path.iterdir()) == []


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
