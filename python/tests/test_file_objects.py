"""File objects and fsspec URLs are read by the engine through the object
itself (its readinto()), never staged in a temporary file: a seekable one
by range where the file is uncompressed, and again from where it stood
when a read needs a second pass; one that cannot seek in one pass."""

import io
import os
import tempfile
import zipfile

import pyarrow as pa
import pytest

import rdarrow


def read_plain(*args, **kwargs):
    """``read_objects()``'s plain Python values (lists, dicts, scalars)."""
    return rdarrow.read_objects(*args, plain=True, **kwargs)


COMPRESSIONS = ["FALSE", '"gzip"', '"bzip2"', '"xz"']


class Counting(io.RawIOBase):
    """A binary file object over a file that counts the bytes it hands
    out; `seekable` says whether it can move."""

    def __init__(self, path, seekable=True):
        self.f = open(path, "rb")
        self.can_seek = seekable
        self.given = 0
        self.name = os.fspath(path)

    def readable(self):
        return True

    def seekable(self):
        return self.can_seek

    def readinto(self, b):
        n = self.f.readinto(b)
        self.given += n
        return n

    def seek(self, pos, whence=0):
        if not self.can_seek:
            raise io.UnsupportedOperation("seek")
        return self.f.seek(pos, whence)

    def tell(self):
        if not self.can_seek:
            raise io.UnsupportedOperation("tell")
        return self.f.tell()

    def close(self):
        self.f.close()
        super().close()


@pytest.fixture(scope="module")
def saved(tmp_path_factory, run_r):
    """One .RData file per compression, written by R: a data frame, a
    POSIXlt vector, a list and a 16 MB double vector."""
    d = tmp_path_factory.mktemp("fileobj")
    files = {}
    code = """
set.seed(2)
df <- data.frame(i = c(NA, 1:999), d = rnorm(1000), s = sample(c("a", "b", NA), 1000, TRUE),
                 f = factor(sample(c("x", "y"), 1000, TRUE)))
lt <- as.POSIXlt(as.POSIXct("2024-03-01 12:00:00", tz = "UTC") + (0:9) * 3600, tz = "UTC")
lst <- list(a = 1:3, b = 4:9)
big <- runif(2e6)
"""
    for c in COMPRESSIONS:
        tag = c.strip('"') if c != "FALSE" else "none"
        files[tag] = d / f"objs-{tag}.RData"
        code += f'save(df, lt, lst, big, file = "{files[tag]}", compress = {c})\n'
    run_r(code)
    return files


def _plain(rows):
    """Rows with NaN as a string (NaN equals nothing, itself included)."""
    return [{k: "NaN" if isinstance(v, float) and v != v else v for k, v in r.items()} for r in rows]


def same(a, b):
    assert a.schema == b.schema
    assert _plain(a.to_pylist()) == _plain(b.to_pylist())


@pytest.mark.parametrize("tag", ["none", "gzip", "bzip2", "xz"])
def test_file_objects_are_read_in_place_as_files_are(saved, tag, tmp_path, monkeypatch):
    path = saved[tag]
    want = rdarrow.read_table(path, object="df")
    want_lt = rdarrow.read_table(path, object="lt")
    want_objects = read_plain(path, names=["lst", "df"])
    # nothing is staged: the temporary folder stays empty
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    for seekable in (True, False):
        with Counting(path, seekable) as f:
            same(rdarrow.read_table(f, object="df"), want)
        # a POSIXlt converts from its components together: one pass
        # suffices where the stream cannot seek
        with Counting(path, seekable) as f:
            same(rdarrow.read_table(f, object="lt"), want_lt)
        with Counting(path, seekable) as f:
            assert read_plain(f, names=["lst", "df"]) == want_objects
        with Counting(path, seekable) as f:
            names = [o["name"] for o in rdarrow.list_objects(f)]
            assert names == ["df", "lt", "lst", "big"]
            listed = f.given
        size = path.stat().st_size
        if tag == "none" and seekable:
            # the 16 MB vector is passed over, never read
            assert listed < size / 8, (listed, size)
        else:
            assert listed == size
        with Counting(path, seekable) as f:
            out = tmp_path / f"df-{tag}-{seekable}.parquet"
            rdarrow.to_parquet(f, out, object="df")
            import pyarrow.parquet as pq

            same(pq.read_table(out), want)
        with Counting(path, seekable) as f:
            # a list that is not a data frame, its elements left in the
            # stream and read back from it
            out = tmp_path / f"lst-{tag}-{seekable}.arrow"
            rdarrow.to_ipc(f, out, object="lst")
            same(pa.ipc.open_file(out).read_all(), rdarrow.read_table(path, object="lst"))
    assert os.listdir(scratch) == []


def test_a_file_object_is_read_from_where_it_stands(saved):
    data = saved["gzip"].read_bytes()
    buf = io.BytesIO(b"HEADER" + data)
    buf.seek(6)
    same(rdarrow.read_table(buf, object="df"), rdarrow.read_table(saved["gzip"], object="df"))
    # memoryviews and bytearrays are bytes too
    same(rdarrow.read_table(memoryview(data), object="df"), rdarrow.read_table(bytearray(data), object="df"))


def test_a_stream_is_taken_again_where_it_can_seek(saved):
    want = rdarrow.read_table(saved["xz"], object="df")
    with open(saved["xz"], "rb") as f:
        reader = rdarrow.RDataReader(f, object="df")
        same(pa.table(reader), want)
        same(pa.table(reader), want)
    with Counting(saved["xz"], seekable=False) as f:
        reader = rdarrow.RDataReader(f, object="df")
        same(pa.table(reader), want)
        with pytest.raises(rdarrow.UsageError, match="taken once"):
            pa.table(reader)


class Failing(io.RawIOBase):
    """Hands out `good` bytes of a file, then fails as a lost disk or
    connection does."""

    def __init__(self, path, good):
        self.data = open(path, "rb").read()[:good]
        self.pos = 0

    def readable(self):
        return True

    def readinto(self, b):
        if self.pos >= len(self.data):
            raise OSError("the connection was reset")
        n = min(len(b), len(self.data) - self.pos)
        b[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


def test_file_object_faults_are_clear_errors(saved, tmp_path):
    size = saved["gzip"].stat().st_size
    with pytest.raises(rdarrow.RDataIOError, match="OSError: the connection was reset"):
        rdarrow.read_table(Failing(saved["gzip"], size // 2), object="big")
    with pytest.raises(rdarrow.RDataIOError, match="OSError: the connection was reset"):
        rdarrow.read_table(Failing(saved["none"], 1000), object="big")
    with open(saved["gzip"], encoding="latin-1") as text:
        with pytest.raises(rdarrow.RDataError, match="binary mode"):
            rdarrow.read_table(text)
    with pytest.raises(rdarrow.NotRDataError, match="empty"):
        rdarrow.read_table(io.BytesIO(b""))
    with pytest.raises(rdarrow.RDataError):
        rdarrow.read_table(io.BytesIO(b"RDX3\nnot R data at all"))


def test_fsspec_urls_are_read_through_fsspec(saved, frame_files, tmp_path):
    fsspec = pytest.importorskip("fsspec", reason="fsspec is in the test requirements")
    mem = fsspec.filesystem("memory")
    mem.pipe("/lab/frame.rds", frame_files["rds"].read_bytes())
    mem.pipe("/lab/objs.RData", saved["bzip2"].read_bytes())
    want = rdarrow.read_table(frame_files["rds"])
    same(rdarrow.read_table("memory://lab/frame.rds"), want)
    # an .rds stream's object is named after the file, as from a path
    assert rdarrow.list_objects("memory://lab/frame.rds")[0]["name"] == "frame"
    same(rdarrow.read_table("memory://lab/objs.RData", object="df"), rdarrow.read_table(saved["bzip2"], object="df"))
    out = tmp_path / "from-memory.parquet"
    rdarrow.to_parquet("memory://lab/objs.RData", out, object="df")
    import pyarrow.parquet as pq

    same(pq.read_table(out), rdarrow.read_table(saved["bzip2"], object="df"))
    # R files inside a zip archive, through fsspec's chained URLs
    archive = tmp_path / "archive.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.write(frame_files["rds"], "frame.rds")
        z.write(saved["none"], "objs.RData")
    same(rdarrow.read_table(f"zip://frame.rds::{archive}"), want)
    assert [o["name"] for o in rdarrow.list_objects(f"zip://objs.RData::file://{archive}")] == [
        "df",
        "lt",
        "lst",
        "big",
    ]
    with pytest.raises(FileNotFoundError):
        rdarrow.read_table("memory://lab/missing.rds")
    mem.rm("/lab", recursive=True)


def test_dask_reads_fsspec_urls(saved, tmp_path):
    pytest.importorskip("dask", reason="dask is in the test requirements")
    import dask

    import rdarrow.dask

    archive = tmp_path / "parts.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for tag in ("gzip", "xz"):
            z.write(saved[tag], f"part-{tag}.RData")
    url = f"zip://*.RData::{archive}"
    files = rdarrow.dask.files_of(url)
    assert [f.split("::")[0] for f in files] == ["zip://part-gzip.RData", "zip://part-xz.RData"]
    with dask.config.set(scheduler="threads"):
        got = rdarrow.dask.read_rdata(url, object="df").compute()
    want = rdarrow.read_table(saved["gzip"], object="df").to_pandas()
    assert len(got) == 2 * len(want)
    assert got["d"].astype(float).tolist() == want["d"].tolist() * 2
