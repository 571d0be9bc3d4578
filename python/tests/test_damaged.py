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

    with pytest.raises(Exception, match="cut short"):
        rdarrow.polars.scan_rdata(str(bad)).collect()
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
