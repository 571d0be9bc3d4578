# rdarrow benchmark: R data in an object store (S3), against the same work
# on disk, measured in the same run.
#
# What it measures (the bench/ frame of bench.R, median of --reps K):
#   1. read_rds("s3://...") of a gzip .rds of --rows N rows (default 4e6:
#      about 100 MB) from an S3-compatible server on the loopback interface
#      (moto's server mode), against read_rds() of the file on disk; target
#      at most 1.2x.
#   2. rdata_to_parquet() from a bucket into a bucket, against disk to
#      disk; target at most 1.3x.
#   3. The floor this server sets: the waits it alone causes (time to the
#      first bytes of a read, CompleteMultipartUpload of the output) and
#      the CPU it takes from the same cores, measured in the same run; the
#      last column says how far rdarrow is above it.
# The server (moto, in the Python environment of tools/setup.sh) is
# started here and stopped at the end.
#
# How to run (from the repository root, rdarrow installed):
#   Rscript bench/store.R                  # about two minutes
#   Rscript bench/store.R --rows 1e6       # quick run

source(file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "common.R"))
suppressPackageStartupMessages(library(rdarrow))

rows <- bench_opt("rows", 4e6)
reps <- bench_opt("reps", 3)

python <- Sys.getenv("RETICULATE_PYTHON", file.path(getwd(), ".venv", "bin", "python"))
moto <- file.path(dirname(python), "moto_server")
if (!file.exists(moto)) stop("moto_server not found beside ", python, " (run tools/setup.sh)")

dir <- tempfile("rdarrow-bench-store-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
df <- bench_frame(rows)
rds <- file.path(dir, "frame.rds")
saveRDS(df, rds)

port <- 20000L + sample.int(30000L, 1L)
server <- processx::process$new(moto, c("-H", "127.0.0.1", "-p", port), stdout = NULL, stderr = NULL,
                                cleanup = TRUE)
on.exit(server$kill(), add = TRUE)
endpoint <- sprintf("http://127.0.0.1:%d", port)
# uploads unsigned, as they are by default over HTTPS (a real store); this
# server speaks plain HTTP, where the default signs every byte
Sys.setenv(AWS_ACCESS_KEY_ID = "bench", AWS_SECRET_ACCESS_KEY = "bench", AWS_REGION = "us-east-1",
           AWS_ENDPOINT_URL = endpoint, AWS_ALLOW_HTTP = "true", AWS_UNSIGNED_PAYLOAD = "true")
for (i in 1:300) {
  ok <- tryCatch({
    close(socketConnection("127.0.0.1", port, open = "r+b", timeout = 1))
    TRUE
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (ok) break
  Sys.sleep(0.1)
}
# run Python `code` with `c`, a boto3 client of the server; what it printed
boto <- function(code) {
  res <- system2(python, c("-c", shQuote(paste0(
    "import boto3\nc = boto3.client('s3', endpoint_url='", endpoint, "', region_name='us-east-1')\n", code
  ))), stdout = TRUE, stderr = TRUE)
  if (!is.null(attr(res, "status"))) stop(paste(res, collapse = "\n"))
  invisible(res)
}
boto(sprintf("c.create_bucket(Bucket='lab')\nc.upload_file('%s', 'lab', 'frame.rds')", rds))

# the server's CPU seconds so far (utime + stime of its process)
server_cpu <- function() {
  st <- strsplit(readLines(sprintf("/proc/%d/stat", server$get_pid())), " ")[[1]]
  (as.numeric(st[14]) + as.numeric(st[15])) / 100
}
cpu <- new.env()
timed <- function(f, what) {
  out <- vapply(seq_len(reps), function(i) {
    gc()
    s0 <- server_cpu()
    t <- system.time(f())
    cpu[[what]] <- c(cpu[[what]], t[["user.self"]] + t[["sys.self"]] + t[["user.child"]] + t[["sys.child"]],
                     server_cpu() - s0)
    t[["elapsed"]]
  }, 0)
  out
}

cat("# rdarrow object store benchmark\n\n")
cat(sprintf("- R %s; rdarrow %s; %s rows; .rds %.1f MB (gzip); S3 server: moto on the loopback interface; median of %d\n\n",
            getRversion(), utils::packageVersion("rdarrow"), format(rows, big.mark = ","),
            file.size(rds) / 1e6, reps))

url <- "s3://lab/frame.rds"
stopifnot(identical(read_rds(url), df))
disk <- timed(function() read_rds(rds), "disk")
s3 <- timed(function() read_rds(url), "s3")
pq_disk <- timed(function() rdata_to_parquet(rds, file.path(dir, "frame.parquet")), "pq_disk")
pq_s3 <- timed(function() rdata_to_parquet(url, "s3://lab/lake/frame.parquet"), "pq_s3")
# each side alone: where the time of bucket -> bucket goes
pq_in <- timed(function() rdata_to_parquet(url, file.path(dir, "from-s3.parquet")), "pq_in")
pq_out <- timed(function() rdata_to_parquet(rds, "s3://lab/lake/from-disk.parquet"), "pq_out")

# What the server alone makes a caller wait for, measured on the same
# objects (Python's http.client and boto3, beside the server): the time to
# the first byte of the engine's two requests for a compressed object (its
# first 1 MiB, then the rest), and the CompleteMultipartUpload of an object
# the size of the Parquet output, sent in the engine's 16 MiB parts. Nothing
# the client does can start before the first, or end before the second.
server_waits <- function() {
  code <- sprintf(paste(sep = "\n",
    "import http.client, statistics, time",
    "def first_byte(rng):",
    "    c = http.client.HTTPConnection('127.0.0.1', %d)",
    "    t = time.perf_counter()",
    "    c.request('GET', '/lab/frame.rds', headers={'Range': rng})",
    "    r = c.getresponse(); r.read(1); t = time.perf_counter() - t",
    "    r.read(); c.close(); return t",
    "out = c.get_object(Bucket='lab', Key='lake/frame.parquet')['Body'].read()",
    "reads, completes = [], []",
    "for _ in range(%d):",
    "    reads.append(first_byte('bytes=0-1048575') + first_byte('bytes=1048576-'))",
    "    u = c.create_multipart_upload(Bucket='lab', Key='timing.bin')['UploadId']",
    "    parts = []",
    "    for i in range(0, len(out), 16 << 20):",
    "        r = c.upload_part(Bucket='lab', Key='timing.bin', UploadId=u, PartNumber=len(parts) + 1, Body=out[i:i + (16 << 20)])",
    "        parts.append({'PartNumber': len(parts) + 1, 'ETag': r['ETag']})",
    "    t = time.perf_counter()",
    "    c.complete_multipart_upload(Bucket='lab', Key='timing.bin', UploadId=u, MultipartUpload={'Parts': parts})",
    "    completes.append(time.perf_counter() - t)",
    "print(statistics.median(reads), statistics.median(completes))"), port, reps)
  as.numeric(strsplit(utils::tail(boto(code), 1), " ")[[1]])
}
waits <- server_waits()

row <- function(what, ours, anchor, target) {
  ratio <- stats::median(ours) / stats::median(anchor)
  sprintf("| %s | %.3f | %.3f | %.2f | %s |", what, stats::median(ours), stats::median(anchor), ratio, target)
}
cat("| ratio (medians) | ours (s) | anchor (s) | value | target |\n|---|---:|---:|---:|---|\n")
cat(row("read_rds(s3://) / read_rds(file)", s3, disk, "<= 1.2"), "\n")
cat(row("rdata_to_parquet(s3:// -> s3://) / (file -> file)", pq_s3, pq_disk, "<= 1.3"), "\n")
cat(row("rdata_to_parquet(s3:// -> file) / (file -> file)", pq_in, pq_disk, "(one side)"), "\n")
cat(row("rdata_to_parquet(file -> s3://) / (file -> file)", pq_out, pq_disk, "(one side)"), "\n")

# The least any client could take against this server, from what was
# measured in this run. The server shares this machine's cores; while it
# makes the caller wait (the first bytes of a read, the completion of an
# upload) it is busy alone, and the rest of both sides' CPU shares the
# cores:
#   floor = waits + max(anchor, (rdarrow CPU + server CPU - waits) / cores)
cores <- parallel::detectCores()
per_rep <- function(what) {
  x <- matrix(cpu[[what]], nrow = 2)
  c(ours = stats::median(x[1, ]), server = stats::median(x[2, ]))
}
cat(sprintf("\nThe server's own waits (median of %d): the first bytes of the two reads %.3f s; completing the upload %.3f s\n",
            reps, waits[1], waits[2]))
cat(sprintf("CPU seconds: median per run; %d cores, the server on the same ones\n\n", cores))
cat("| work | ours (s) | rdarrow CPU (s) | server CPU (s) | server waits (s) | floor (s) | floor / anchor | ours / floor |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|\n")
for (w in list(list("disk", disk, 0, "read_rds(file)"), list("s3", disk, waits[1], "read_rds(s3://)"),
               list("pq_disk", pq_disk, 0, "rdata_to_parquet(file -> file)"),
               list("pq_s3", pq_disk, waits[1] + waits[2], "rdata_to_parquet(s3:// -> s3://)"),
               list("pq_in", pq_disk, waits[1], "rdata_to_parquet(s3:// -> file)"),
               list("pq_out", pq_disk, waits[2], "rdata_to_parquet(file -> s3://)"))) {
  u <- per_rep(w[[1]])
  ours <- stats::median(get(w[[1]]))
  anchor <- stats::median(w[[2]])
  floor <- w[[3]] + max(anchor, (sum(u) - w[[3]]) / cores)
  cat(sprintf("| %s | %.3f | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f |\n", w[[4]], ours, u[["ours"]], u[["server"]],
              w[[3]], floor, floor / anchor, ours / floor))
}
