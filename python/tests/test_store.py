"""Object stores: every reader and writer through s3:// against a real
S3-compatible server (moto's server mode, started here on the loopback
interface and stopped at the end), compared with the same files read and
written locally; globs by listing; a lazy-load data base read by byte
range (the bytes the server sent counted by a proxy); multipart uploads;
faults (missing object and bucket, wrong keys, a server gone) with errors
that name the URL and no secret; Dask on a LocalCluster of worker
processes reading from the bucket and writing Parquet into it."""

import contextlib
import http.client
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rdarrow
from conftest import FRAME_R, cargo_cli


def read_plain(*args, **kwargs):
    """``read_objects()``'s plain Python values (lists, dicts, scalars)."""
    return rdarrow.read_objects(*args, plain=True, **kwargs)

REQUIRE = os.environ.get("RDARROW_REQUIRE_STORE") == "1"


def _same(a, b):
    """Whether two tables hold the same bits (NaN included), schema and
    metadata too."""

    def bits(t):
        t = t.combine_chunks()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, t.schema) as w:
            w.write_table(t)
        return sink.getvalue().to_pybytes()

    return bits(a) == bits(b)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _moto_server():
    exe = Path(sys.executable).with_name("moto_server")
    if not exe.exists():
        found = shutil.which("moto_server")
        if found is None:
            if REQUIRE:
                raise AssertionError("moto_server is not installed (tools/requirements-test.txt)")
            pytest.skip("moto_server is not installed: the object store tests need moto[server]")
        exe = Path(found)
    return exe


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A moto S3 server on the loopback interface, its bucket 'lab', and
    the environment that points the AWS clients at it."""
    exe = _moto_server()
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "server.log"
    proc = subprocess.Popen(
        [str(exe), "-H", "127.0.0.1", "-p", str(port)],
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                raise AssertionError(f"moto_server did not start: {log.read_text()}")
            time.sleep(0.2)
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "topsecretvalue",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="lab")
    try:
        yield {"endpoint": endpoint, "client": client, "proc": proc, "port": port}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def files(run_r, tmp_path_factory, s3):
    """Files written by R (a data frame in each compression, a list of
    objects, a lazy-load data base), uploaded to s3://lab/r/."""
    out = tmp_path_factory.mktemp("rfiles")
    run_r(
        FRAME_R
        + r"""
out <- Sys.getenv("OUT")
for (c in c("gzip", "bzip2", "xz")) save(df, file = file.path(out, paste0("df-", c, ".RData")), compress = c)
save(df, file = file.path(out, "df-none.RData"), compress = FALSE)
saveRDS(df, file.path(out, "df.rds"))
saveRDS(df, file.path(out, "df-plain.rds"), compress = FALSE)
x <- 1:10; y <- list(a = "b", n = c(1.5, NA))
save(df, x, y, file = file.path(out, "several.RData"))
e <- new.env()
assign("small", 1:5, envir = e)
set.seed(2)
assign("big", runif(2e6), envir = e)
tools:::makeLazyLoadDB(e, file.path(out, "Rdata"))
big <- runif(2e6); small <- letters
save(big, small, file = file.path(out, "plain.RData"), compress = FALSE)
""",
        OUT=str(out),
    )
    for p in sorted(out.iterdir()):
        s3["client"].upload_file(str(p), "lab", f"r/{p.name}")
    return out


def test_every_reader_reads_from_the_bucket_as_from_disk(files, s3):
    for name in ["df-gzip.RData", "df-bzip2.RData", "df-xz.RData", "df-none.RData", "df.rds", "df-plain.rds"]:
        url = f"s3://lab/r/{name}"
        local = rdarrow.read_table(files / name)
        remote = rdarrow.read_table(url)
        assert _same(remote, local), name
    url = "s3://lab/r/several.RData"
    assert rdarrow.list_objects(url) == rdarrow.list_objects(files / "several.RData")
    assert rdarrow.list_objects(url, recursive=True) == rdarrow.list_objects(
        files / "several.RData", recursive=True
    )
    assert read_plain(url, ["x", "y"]) == read_plain(files / "several.RData", ["x", "y"])
    import pandas.testing as pdt

    pdt.assert_frame_equal(
        rdarrow.read_pandas(url, object="df"), rdarrow.read_pandas(files / "several.RData", object="df")
    )
    # a column selection and an object path too
    got = rdarrow.read_table(url, object="df", columns=["s", "i"])
    assert got.column_names == ["s", "i"]
    assert read_plain(url, ["y$n"]) == {"y$n": [1.5, None]}


def test_storage_options_name_the_endpoint_and_keys(files, s3, monkeypatch):
    # without the environment: everything from storage_options, in
    # object_store's names and in s3fs's
    for k in ["AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ALLOW_HTTP"]:
        monkeypatch.delenv(k)
    local = rdarrow.read_table(files / "df.rds")
    opts = {
        "endpoint_url": s3["endpoint"],
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "topsecretvalue",
        "allow_http": True,
    }
    assert _same(rdarrow.read_table("s3://lab/r/df.rds", storage_options=opts), local)
    fsspec_style = {
        "key": "testing",
        "secret": "topsecretvalue",
        "client_kwargs": {"endpoint_url": s3["endpoint"], "region_name": "us-east-1"},
        "allow_http": "true",
    }
    assert _same(rdarrow.read_table("s3://lab/r/df.rds", storage_options=fsspec_style), local)
    with pytest.raises(rdarrow.RDataError, match="storage option 'colour'") as e:
        rdarrow.read_table("s3://lab/r/df.rds", storage_options={**opts, "colour": "red"})
    assert "topsecretvalue" not in str(e.value)


def test_globs_and_prefixes_are_expanded_by_listing(files, s3):
    import rdarrow.dask

    for i in range(3):
        s3["client"].upload_file(str(files / "df-gzip.RData"), "lab", f"archive/{2020 + i}/df.RData")
    s3["client"].upload_file(str(files / "df.rds"), "lab", "archive/top.rds")
    s3["client"].put_object(Bucket="lab", Key="archive/notes.txt", Body=b"hello")
    assert rdarrow.dask.files_of("s3://lab/archive/*.rds") == ["s3://lab/archive/top.rds"]
    assert rdarrow.dask.files_of("s3://lab/archive/*/df.RData") == [
        f"s3://lab/archive/{y}/df.RData" for y in (2020, 2021, 2022)
    ]
    assert rdarrow.dask.files_of("s3://lab/archive/**/*.RData") == [
        f"s3://lab/archive/{y}/df.RData" for y in (2020, 2021, 2022)
    ]
    assert rdarrow.dask.files_of("s3://lab/archive/") == [
        f"s3://lab/archive/{y}/df.RData" for y in (2020, 2021, 2022)
    ] + ["s3://lab/archive/top.rds"]
    with pytest.raises(rdarrow.RDataError, match="no object matches 's3://lab/archive/\\*.csv'"):
        rdarrow.dask.files_of("s3://lab/archive/*.csv")


class _CountingProxy(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the S3 server and counts the body bytes
    it sends back, by path."""

    upstream = None
    sent = None

    def _forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(*self.upstream)
        headers = {k: v for k, v in self.headers.items()}
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.sent.append((self.command, self.path.split("?")[0], len(data)))
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        length = resp.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        conn.close()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _counting_proxy(s3):
    """A proxy in front of the S3 server that counts what it sends: the
    storage options that go through it, and the list of (method, path,
    bytes)."""
    sent = []
    handler = type("H", (_CountingProxy,), {"upstream": ("127.0.0.1", s3["port"]), "sent": sent})
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield {"endpoint_url": f"http://127.0.0.1:{proxy.server_address[1]}"}, sent
    finally:
        proxy.shutdown()


def test_a_lazy_load_base_is_read_by_range(files, s3):
    with _counting_proxy(s3) as (opts, sent):
        got = read_plain("s3://lab/r/Rdata.rdb", ["small"], storage_options=opts)
        assert got == {"small": [1, 2, 3, 4, 5]}
        rdb = (files / "Rdata.rdb").stat().st_size
        from_rdb = sum(n for m, p, n in sent if p.endswith("Rdata.rdb"))
        # the index and the small entry: a tiny part of the 16 MB base
        assert rdb > 10_000_000
        assert from_rdb < 1000, sent
        assert any(p.endswith("Rdata.rdx") for _, p, _ in sent)
        listed = rdarrow.list_objects("s3://lab/r/Rdata.rdx", storage_options=opts)
        assert {o["name"] for o in listed} == {"small", "big"}
        big = read_plain("s3://lab/r/Rdata.rdb", ["big"], storage_options=opts)["big"]
        assert big == read_plain(files / "Rdata", ["big"])["big"]


def test_an_uncompressed_file_is_listed_without_its_payloads(files, s3):
    with _counting_proxy(s3) as (opts, sent):
        url = "s3://lab/r/plain.RData"
        size = (files / "plain.RData").stat().st_size
        assert size > 16_000_000
        assert rdarrow.list_objects(url, storage_options=opts) == rdarrow.list_objects(files / "plain.RData")
        got = sum(n for m, p, n in sent if p.endswith("plain.RData"))
        assert got < 3_000_000, sent
        sent.clear()
        assert read_plain(url, ["small"], storage_options=opts) == {"small": list("abcdefghijklmnopqrstuvwxyz")}
        assert sum(n for m, p, n in sent if p.endswith("plain.RData")) < 3_000_000, sent
        # read whole, it is the file
        whole = read_plain(url, storage_options=opts)
        assert whole["big"] == read_plain(files / "plain.RData", ["big"])["big"]


def test_fsspec_files_and_urls_are_read_through_them_by_range(files, s3):
    """An s3fs file object, and a chained URL that fsspec opens, read
    through the file object itself (never staged): an uncompressed file is
    listed from the ranges the engine asks for."""
    s3fs = pytest.importorskip("s3fs", reason="s3fs is in the test requirements")
    with _counting_proxy(s3) as (opts, sent):
        fs = s3fs.S3FileSystem(
            key="testing", secret="topsecretvalue", client_kwargs={"endpoint_url": opts["endpoint_url"]}
        )
        want = rdarrow.list_objects(files / "plain.RData")
        with fs.open("lab/r/plain.RData", "rb", block_size=1 << 16, cache_type="none") as f:
            assert rdarrow.list_objects(f) == want
        got = sum(n for m, p, n in sent if m == "GET" and p.endswith("plain.RData"))
        assert got < 3_000_000, sent
        # a compressed one, read whole through the file object
        with fs.open("lab/r/df-xz.RData", "rb") as f:
            got = rdarrow.read_table(f)
        assert _same(got, rdarrow.read_table(files / "df-xz.RData"))
        # an fsspec URL the engine does not read itself: a file in a zip
        # archive in the bucket, with s3fs's options for the bucket
        import zipfile

        archive = files / "archive.zip"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.write(files / "df.rds", "df.rds")
        s3["client"].upload_file(str(archive), "lab", "zips/archive.zip")
        so = {"s3": {"key": "testing", "secret": "topsecretvalue", "client_kwargs": {"endpoint_url": s3["endpoint"]}}}
        got = rdarrow.read_table("zip://df.rds::s3://lab/zips/archive.zip", storage_options=so)
        assert _same(got, rdarrow.read_table(files / "df.rds"))


def test_writers_upload_complete_objects(files, s3, tmp_path):
    import boto3

    client = s3["client"]
    local = rdarrow.read_table(files / "df.rds")
    # Parquet and IPC from a bucket into the bucket, as from disk to disk
    rdarrow.to_parquet("s3://lab/r/df-xz.RData", "s3://lab/out/df.parquet")
    rdarrow.to_parquet(files / "df-xz.RData", tmp_path / "df.parquet")
    client.download_file("lab", "out/df.parquet", str(tmp_path / "got.parquet"))
    assert (tmp_path / "got.parquet").read_bytes() == (tmp_path / "df.parquet").read_bytes()
    rdarrow.to_ipc("s3://lab/r/df.rds", "s3://lab/out/df.arrow")
    client.download_file("lab", "out/df.arrow", str(tmp_path / "got.arrow"))
    assert _same(pa.ipc.open_file(tmp_path / "got.arrow").read_all(), local)
    # R data files: the bytes a local write gives
    rdarrow.write_rds(local, "s3://lab/out/df.rds")
    rdarrow.write_rds(local, tmp_path / "df.rds")
    client.download_file("lab", "out/df.rds", str(tmp_path / "got.rds"))
    assert (tmp_path / "got.rds").read_bytes() == (tmp_path / "df.rds").read_bytes()
    rdarrow.write_rdata({"a": local, "b": local}, "s3://lab/out/two.RData")
    assert [o["name"] for o in rdarrow.list_objects("s3://lab/out/two.RData")] == ["a", "b"]
    # larger than a part (16 MiB): a multipart upload, whose ETag says so
    big = pa.table({"x": pa.array(range(6_000_000), pa.float64())})
    rdarrow.write_rds(big, "s3://lab/out/big.rds", compress="none")
    etag = client.head_object(Bucket="lab", Key="out/big.rds")["ETag"]
    assert "-" in etag, etag
    assert rdarrow.read_table("s3://lab/out/big.rds").column(0).equals(big.column(0))


def test_faults_are_clear_and_keep_secrets(files, s3):
    s3["client"].put_object(Bucket="lab", Key="r/empty.rds", Body=b"")
    with pytest.raises(rdarrow.RDataError, match="'s3://lab/r/empty.rds' is empty"):
        rdarrow.read_table("s3://lab/r/empty.rds")
    with pytest.raises(rdarrow.RDataError, match=r"cannot read 's3://lab/r/nothing.rds': no such object \(HTTP 404\)"):
        rdarrow.read_table("s3://lab/r/nothing.rds")
    with pytest.raises(rdarrow.RDataError, match="s3://no-bucket/x.rds"):
        rdarrow.read_table("s3://no-bucket/x.rds")
    # a writer to a missing bucket leaves nothing and says where
    with pytest.raises(rdarrow.RDataError, match="s3://no-bucket/out.parquet") as e:
        rdarrow.to_parquet(files / "df.rds", "s3://no-bucket/out.parquet")
    assert "topsecretvalue" not in str(e.value)


def test_a_server_that_is_gone_is_an_error_not_a_hang(files, tmp_path):
    port = _free_port()
    opts = {"endpoint_url": f"http://127.0.0.1:{port}", "allow_http": True}
    t0 = time.time()
    with pytest.raises(rdarrow.RDataError, match="cannot read 's3://lab/r/df.rds'"):
        rdarrow.read_table("s3://lab/r/df.rds", storage_options=opts)
    assert time.time() - t0 < 60


def test_a_download_cut_short_is_an_error(files, s3, tmp_path):
    """A server that sends part of the body, then closes the connection
    (each time, so retries do not help): an error, never a short object."""
    whole = (files / "df-none.RData").read_bytes()

    class Cut(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(whole)))
            self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
            self.send_header("ETag", '"abc"')
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Cut)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        opts = {"endpoint_url": f"http://127.0.0.1:{server.server_address[1]}"}
        with pytest.raises(rdarrow.RDataError, match="s3://lab/r/df-none.RData"):
            rdarrow.read_table("s3://lab/r/df-none.RData", storage_options=opts)
    finally:
        server.shutdown()


def test_other_clouds_parse_their_urls_and_options():
    with pytest.raises(rdarrow.RDataError, match="storage option 'colour' is not one of Google Cloud Storage's"):
        rdarrow.read_table("gs://bucket/x.rds", storage_options={"colour": "red"})
    with pytest.raises(rdarrow.RDataError, match="storage option 'colour' is not one of Azure Blob Storage's"):
        rdarrow.read_table("az://container/x.rds", storage_options={"colour": "red", "account_key": "hush-hush"})
    with pytest.raises(rdarrow.RDataError) as e:
        rdarrow.read_table(
            "az://container/x.rds",
            storage_options={"account_name": "acct", "account_key": "aGlkZGVu", "endpoint": "http://127.0.0.1:9", "allow_http": True},
        )
    assert "aGlkZGVu" not in str(e.value)
    assert "az://container/x.rds" in str(e.value)


def test_dask_reads_from_the_bucket_on_worker_processes(files, s3, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    import rdarrow.dask

    for i in range(3):
        s3["client"].upload_file(str(files / "df-gzip.RData"), "lab", f"dask/in/{i}.RData")
    env = {k: os.environ[k] for k in os.environ if k.startswith("AWS_")}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, env=env) as cluster:
        with distributed.Client(cluster):
            df = rdarrow.dask.read_rdata("s3://lab/dask/in/*.RData", object="df")
            assert df.npartitions == 3
            so = {
                "key": "testing",
                "secret": "topsecretvalue",
                "client_kwargs": {"endpoint_url": s3["endpoint"], "region_name": "us-east-1"},
            }
            df.to_parquet("s3://lab/dask/lake/", storage_options=so, write_index=False)
    listed = s3["client"].list_objects_v2(Bucket="lab", Prefix="dask/lake/")["Contents"]
    assert sum(o["Key"].endswith(".parquet") for o in listed) == 3
    for o in listed:
        if o["Key"].endswith(".parquet"):
            s3["client"].download_file("lab", o["Key"], str(tmp_path / Path(o["Key"]).name))
    got = pq.read_table(tmp_path, columns=["i", "d", "s"])
    one = rdarrow.read_table(files / "df-gzip.RData").select(["i", "d", "s"])
    assert got.num_rows == 3 * one.num_rows
    nan_safe = lambda xs: ["nan" if x != x else x for x in xs]  # noqa: E731
    assert nan_safe(got.slice(0, one.num_rows).column("d").to_pylist()) == nan_safe(one.column("d").to_pylist())


def test_a_stalled_server_times_out(files):
    """A server that accepts connections and never answers: an error once
    the timeout passes (here 1 s, an object_store option), never a hang."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held = []

    def accept():
        while True:
            try:
                held.append(srv.accept())
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    opts = {"endpoint_url": f"http://127.0.0.1:{srv.getsockname()[1]}", "allow_http": True, "timeout": "1s"}
    t0 = time.time()
    try:
        with pytest.raises(rdarrow.RDataError, match="cannot read 's3://lab/r/df.rds'"):
            rdarrow.read_table("s3://lab/r/df.rds", storage_options=opts)
        assert time.time() - t0 < 30
    finally:
        srv.close()


def test_duckdb_reads_from_the_bucket(files, s3, monkeypatch):
    from test_duckdb import connect

    con = connect()
    local = rdarrow.read_table(files / "df.rds")
    assert con.sql("select count(*) from read_rds('s3://lab/r/df.rds')").fetchall()[0][0] == local.num_rows
    got = con.sql("select sum(i), count(s) from read_rdata('s3://lab/r/df-*.RData')").fetchall()[0]
    col = local.column("i").to_pylist()
    assert got == (4 * sum(x for x in col if x is not None), 4 * sum(x is not None for x in local.column("s").to_pylist()))
    with pytest.raises(Exception, match="s3://lab/r/missing.rds"):
        con.sql("select * from read_rds('s3://lab/r/missing.rds')").fetchall()

    # storage_options instead of the environment, in each function
    for k in ["AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP"]:
        monkeypatch.delenv(k)
    so = f"storage_options := MAP {{'endpoint_url': '{s3['endpoint']}', 'allow_http': 'true'}}"
    assert con.sql(f"select count(*) from read_rds('s3://lab/r/df.rds', {so})").fetchall()[0][0] == local.num_rows
    assert con.sql(f"select count(*) from read_rdata('s3://lab/r/df-*.RData', {so})").fetchall()[0][0] == 4 * local.num_rows
    names = con.sql(f"select name from rdata_objects('s3://lab/r/several.RData', {so})").fetchall()
    assert [n for (n,) in names] == ["df", "x", "y"]
    with pytest.raises(Exception, match="storage option 'colour'"):
        con.sql("select * from read_rds('s3://lab/r/df.rds', storage_options := MAP {'colour': 'red'})").fetchall()


def test_the_command_line_takes_storage_options(files, s3, tmp_path, monkeypatch):
    exe = cargo_cli()
    for k in ["AWS_ENDPOINT_URL", "AWS_ALLOW_HTTP"]:
        monkeypatch.delenv(k)
    so = ["--storage-option", f"endpoint_url={s3['endpoint']}", "--storage-option", "allow_http=true"]
    res = subprocess.run([exe, "ls", "s3://lab/r/several.RData", *so], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "df" in res.stdout and "x" in res.stdout
    res = subprocess.run(
        [exe, "to-parquet", "s3://lab/r/df.rds", "-o", "s3://lab/cli/df.parquet", *so], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    s3["client"].download_file("lab", "cli/df.parquet", str(tmp_path / "df.parquet"))
    assert pq.read_table(tmp_path / "df.parquet").num_rows == 1000
    res = subprocess.run([exe, "ls", "s3://lab/r/df.rds", "--storage-option", "nonsense"], capture_output=True, text=True)
    assert res.returncode == 2 and "name=value" in res.stderr


def test_wrong_keys_are_refused_without_showing_them(tmp_path, monkeypatch):
    """A server that checks credentials (moto with authentication on):
    unknown keys are an access error naming the URL, never the secret."""
    exe = _moto_server()
    port = _free_port()
    proc = subprocess.Popen(
        [str(exe), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "0"},
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        opts = {
            "endpoint_url": f"http://127.0.0.1:{port}",
            "allow_http": True,
            "aws_access_key_id": "AKIAWRONGKEYID",
            "aws_secret_access_key": "wrongsecretvalue123",
            "region": "us-east-1",
        }
        with pytest.raises(rdarrow.RDataError, match=r"cannot read 's3://lab/x.rds': access denied \(HTTP 403\)") as e:
            rdarrow.read_table("s3://lab/x.rds", storage_options=opts)
        assert "wrongsecretvalue123" not in str(e.value) and "AKIAWRONGKEYID" not in str(e.value)
        assert "<Error>" not in str(e.value)
        with pytest.raises(rdarrow.RDataError, match="s3://lab/out.rds") as e:
            rdarrow.write_rds(pa.table({"x": [1, 2]}), "s3://lab/out.rds", storage_options=opts)
        # the server's own words, read from its XML
        assert "InvalidAccessKeyId" in str(e.value) and "<Error>" not in str(e.value)
        assert "wrongsecretvalue123" not in str(e.value)
    finally:
        proc.terminate()
        proc.wait(10)


def test_single_cell_samples_from_the_bucket_concatenate_by_cell(run_r, tmp_path, s3):
    pytest.importorskip("anndata", reason="anndata is not installed (tools/setup.sh installs it)")
    try:
        run_r("if (!requireNamespace('SingleCellExperiment', quietly = TRUE)) quit(status = 3)")
    except AssertionError:
        pytest.skip("SingleCellExperiment is not installed in R (tools/setup.sh installs it)")
    run_r(
        r"""
suppressMessages({library(SingleCellExperiment); library(Matrix)})
set.seed(3)
for (k in 1:2) {
  m <- rsparsematrix(6, 4, 0.5, rand.x = function(n) rpois(n, 3) + 1)
  dimnames(m) <- list(paste0("g", 1:6), paste0("s", k, "_c", 1:4))
  sce <- SingleCellExperiment(list(counts = m), colData = DataFrame(batch = factor(rep(k, 4), levels = 1:2)))
  saveRDS(sce, file.path(Sys.getenv("OUT"), sprintf("sample%d.rds", k)))
}
""",
        OUT=str(tmp_path),
    )
    for k in (1, 2):
        s3["client"].upload_file(str(tmp_path / f"sample{k}.rds"), "lab", f"sc/sample{k}.rds")
    remote = rdarrow.read_anndata("s3://lab/sc/sample*.rds")
    local = rdarrow.read_anndata([str(tmp_path / "sample1.rds"), str(tmp_path / "sample2.rds")])
    assert remote.shape == local.shape == (8, 6)
    assert list(remote.obs_names) == [f"s{k}_c{i}" for k in (1, 2) for i in range(1, 5)]
    assert list(remote.obs["sample"]) == ["sample1"] * 4 + ["sample2"] * 4
    assert list(remote.obs["batch"].cat.categories) == ["1", "2"]
    assert (remote.X != local.X).nnz == 0
    one = rdarrow.read_anndata("s3://lab/sc/sample2.rds")
    assert (one.X != local.X[4:]).nnz == 0


def test_spark_reads_from_the_bucket(spark, files, s3):
    # the store's options as the data source's options (the workers need
    # no environment of their own)
    df = (
        spark.read.format("rdata")
        .option("endpoint_url", s3["endpoint"])
        .option("aws_access_key_id", "testing")
        .option("aws_secret_access_key", "topsecretvalue")
        .option("region", "us-east-1")
        .option("allow_http", "true")
        .load("s3://lab/r/df-*.RData")
    )
    local = rdarrow.read_table(files / "df-gzip.RData")
    assert df.count() == 4 * local.num_rows
    assert df.columns == local.column_names
    assert sorted(df.select("i").distinct().toPandas()["i"].dropna().astype(int).tolist())[:3] == [1, 2, 3]
