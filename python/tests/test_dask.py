"""Many R data files converted on a real Dask cluster (worker processes
over loopback): the lake equals the one-process conversion."""

import pyarrow as pa
import pytest

import rdarrow

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


def test_a_cluster_converts_the_archive_as_one_process_does(tmp_path, archive):
    import pyarrow.parquet as pq
    import rdarrow.dask

    files = rdarrow.dask.files_of([str(archive / "*.RData"), str(archive / "*.rds")])
    assert len(files) == 6
    # what one process makes of them
    want = pa.concat_tables(
        [rdarrow.read_table(f, object="survey" if f.endswith(".RData") else None) for f in files]
    )

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        # the .RData files hold two objects: name the data frame
        rdata = rdarrow.dask.read_rdata(str(archive / "*.RData"), object="survey")
        rds = rdarrow.dask.read_rdata(str(archive / "*.rds"))
        assert rdata.npartitions == 3 and rds.npartitions == 3
        lake = tmp_path / "lake"
        dask.dataframe.concat([rdata, rds]).to_parquet(str(lake), write_index=False)
        # the work ran on the workers
        assert len(client.scheduler_info()["workers"]) == 2

    got = pq.read_table(lake)
    assert got.num_rows == want.num_rows
    key = [("id", "ascending")]
    got = got.select(want.column_names).sort_by(key)
    want = want.sort_by(key)
    for name in want.column_names:
        a, b = want.column(name).combine_chunks(), got.column(name).combine_chunks()
        if pa.types.is_dictionary(a.type):
            a = a.cast(pa.string())
        if pa.types.is_dictionary(b.type):
            b = b.cast(pa.string())
        assert a.type == b.type, name
        assert a.equals(b), name


def test_files_of_refuses_patterns_that_match_nothing(tmp_path):
    import rdarrow.dask

    with pytest.raises(FileNotFoundError):
        rdarrow.dask.files_of(str(tmp_path / "*.RData"))
