"""Many R data files converted on a real Dask cluster (worker processes
over loopback): the lake equals the one-process conversion."""

import warnings

import pyarrow as pa
import pytest

import rdarrow
from conftest import plain

dask = pytest.importorskip("dask", reason="dask is not installed (tools/setup.sh installs it)")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")


@pytest.fixture(scope="module")
def archive(tmp_path_factory, run_r):
    d = tmp_path_factory.mktemp("archive")
    run_r(
        f"""
for (k in 1:6) {{
  set.seed(k)
  n <- 200L * k
  survey <- data.frame(
    id = seq_len(n) + 10000L * k,
    score = c(NA, rnorm(n - 1L)),
    answer = factor(sample(c("yes", "no", "maybe"), n, replace = TRUE), levels = c("yes", "no", "maybe")),
    note = sample(c("a", NA, "b"), n, replace = TRUE),
    stringsAsFactors = FALSE
  )
  other <- 1:3
  if (k %% 2 == 0) save(survey, other, file = file.path("{d}", sprintf("wave%d.RData", k)))
  else saveRDS(survey, file.path("{d}", sprintf("wave%d.rds", k)))
}}
"""
    )
    return d


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def read_lake(lake):
    """A lake's parts in the order of their partitions (part.10 after
    part.9)."""
    import pyarrow.parquet as pq

    parts = sorted(lake.glob("part.*.parquet"), key=lambda p: int(p.name.split(".")[1]))
    return pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")


def same_tables(got, want, key=None):
    assert got.num_rows == want.num_rows
    got = got.select(want.column_names)
    if key:
        got, want = got.sort_by(key), want.sort_by(key)
    for name in want.column_names:
        a, b = want.column(name).combine_chunks(), got.column(name).combine_chunks()
        if pa.types.is_dictionary(a.type):
            a = a.cast(pa.string())
        if pa.types.is_dictionary(b.type):
            b = b.cast(pa.string())
        if pa.types.is_timestamp(a.type) and a.type.unit == "s":
            # Parquet has no seconds: the writer stores milliseconds
            assert b.type == pa.timestamp("ms", a.type.tz), name
            a = a.cast(b.type)
        assert a.type == b.type, name
        assert plain(a) == plain(b), name


def test_the_corpus_frames_of_a_schema_convert_on_the_cluster(tmp_path, client):
    """Every data frame of the peer corpus (files written by many R
    versions) whose schema another file shares: each such group is read on
    the cluster and written as one lake, equal to the one-process
    conversion."""
    import os

    import pyarrow.parquet as pq
    import rdarrow.dask

    root = os.environ.get("RDARROW_PEERS_DIR")
    if not root or not os.path.isdir(root):
        pytest.skip("RDARROW_PEERS_DIR is not set to the peer corpus (tools/test.sh sets it)")
    groups = {}
    for dp, _, fn in os.walk(root):
        for f in sorted(fn):
            if not f.lower().endswith((".rda", ".rdata", ".rds")):
                continue
            p = os.path.join(dp, f)
            try:
                objs = rdarrow.list_objects(p)
                if sum("data.frame" in o["class"] for o in objs) != 1:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = rdarrow.read_table(p)
            except rdarrow.RDataError:
                continue
            groups.setdefault(str(t.schema.remove_metadata()), []).append((p, t))
    shared = [g for g in groups.values() if len(g) > 1]
    assert len(shared) >= 5, "the corpus has groups of frames with one schema"
    converted = 0
    for k, group in enumerate(shared):
        files = [p for p, _ in group]
        want = pa.concat_tables([t for _, t in group], promote_options="permissive")
        lake = tmp_path / f"lake{k}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rdarrow.dask.read_rdata(files).to_parquet(str(lake), write_index=False)
        same_tables(read_lake(lake), want)
        converted += len(files)
    assert converted >= 20


def test_a_cluster_converts_the_archive_as_one_process_does(tmp_path, archive, client):
    import pyarrow.parquet as pq
    import rdarrow.dask

    files = rdarrow.dask.files_of([str(archive / "*.RData"), str(archive / "*.rds")])
    assert len(files) == 6
    # what one process makes of them
    want = pa.concat_tables(
        [rdarrow.read_table(f, object="survey" if f.endswith(".RData") else None) for f in files]
    )

    # the .RData files hold two objects: name the data frame
    rdata = rdarrow.dask.read_rdata(str(archive / "*.RData"), object="survey")
    rds = rdarrow.dask.read_rdata(str(archive / "*.rds"))
    assert rdata.npartitions == 3 and rds.npartitions == 3
    lake = tmp_path / "lake"
    dask.dataframe.concat([rdata, rds]).to_parquet(str(lake), write_index=False)
    # the work ran on the two worker processes (on a loaded machine the
    # scheduler may be between a worker's heartbeats: wait for both)
    client.wait_for_workers(2, timeout=120)
    assert len(client.scheduler_info()["workers"]) == 2
    same_tables(read_lake(lake), want, key=[("id", "ascending")])


def test_files_of_refuses_patterns_that_match_nothing(tmp_path):
    import rdarrow.dask

    with pytest.raises(rdarrow.UsageError, match="no file matches"):
        rdarrow.dask.files_of(str(tmp_path / "*.RData"))
