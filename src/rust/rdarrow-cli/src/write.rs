//! `rdarrow to-rdata`: Arrow, Parquet, Tensor and R data files written as
//! `.RData`/`.rds` (or `.qs2`/`.qdata`).

use clap::Args;
use crate::progress::Progress;
use rdarrow_arrow::from_arrow::frame::object_from_batches;
use rdarrow_arrow::files::ipc::read_ipc_bytes;
use rdarrow_arrow::write::write_object_file;
use rdarrow_arrow::write::ObjectFileOptions;
use rdarrow_arrow::Error;
use rdarrow_arrow::ReadOptions;
use std::io::Read;
use std::path::{Path, PathBuf};
use crate::failure::*;

#[derive(Args)]
pub(crate) struct ToRdataArgs {
    /// The Arrow IPC file or stream, Parquet file, Arrow Tensor message, or R data file (.rds, .RData, .qs, .qs2, .qdata, .fst), told by its first bytes (- for standard input: IPC)
    pub(crate) arrow_file: PathBuf,
    /// Output file: .RData/.rda (save() format), .rds (saveRDS() format), .qs2 (qs2::qs_read()) or .qdata (qs2::qd_read())
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: PathBuf,
    /// The object's name in the .RData file [default: ARROW_FILE's stem]
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// Compression of the R data file: gzip, bzip2, xz or none (a .qs2 or .qdata file: zstd only; an .fst file: fst's own) [default: gzip; zstd for .qs2/.qdata]
    #[arg(long)]
    pub(crate) compress: Option<String>,
    /// Compression level (gzip 0-9, bzip2 1-9, xz 0-9, zstd of .qs2/.qdata 1-22, .fst 0-100) [default: as R's save(), zstd 3, fst 50]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) level: Option<i64>,
    /// Threads compressing independent blocks [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) threads: Option<u32>,
}

pub(crate) fn to_rdata(a: ToRdataArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
    let from_stdin = a.arrow_file == Path::new("-");
    let rds = rdarrow_arrow::path_is_rds(&a.output.to_string_lossy());
    let name = match (&a.name, from_stdin) {
        (Some(n), _) => n.clone(),
        (None, true) => "data".to_string(),
        (None, false) => rdarrow_arrow::stream_object_name(&a.arrow_file),
    };
    if name.is_empty() {
        return Err(Failure::Usage(
            "the object name (--name) must not be empty".into(),
        ));
    }
    let (compression, level) =
        rdarrow_arrow::compression_for_path(&a.output.to_string_lossy(), a.compress.as_deref(), a.level)
            .map_err(|e| Failure::Usage(e.message))?;
    let threads = a.threads.map(|t| t as usize).unwrap_or_else(|| {
        rdarrow_arrow::batches::rows::all_cores()
    });
    let opts = ObjectFileOptions {
        name: name.clone(),
        compression,
        level,
        threads,
        rds,
        storage: read.storage.clone(),
        ..ObjectFileOptions::default()
    };
    let limit = read.memory_limit();
    if !from_stdin && is_r_data_file(&a.arrow_file) {
        // an R data file of any kind (a .qs file among them), rewritten
        // as R's own
        let spin = progress.spinner(format!("rewriting {}", a.arrow_file.display()));
        let res = rdarrow_arrow::rewrite_file(a.arrow_file.as_path(), &a.output, &opts, read);
        spin.clear();
        let (n, damage) = res.map_err(|e| {
            if e.to_string().contains(&a.output.display().to_string()) {
                data_error(&a.output, e)
            } else {
                data_error(&a.arrow_file, e)
            }
        })?;
        if let Some(damage) = damage {
            warn(&a.arrow_file, &damage);
        }
        progress.note(format!(
            "wrote {} ({n} object{}){}",
            a.output.display(),
            if n == 1 { "" } else { "s" },
            if rds { String::new() } else { format!(" as '{name}'") }
        ));
        return Ok(());
    }
    let spin = progress.spinner(format!("converting {}", a.arrow_file.display()));
    let (rows, columns) = if from_stdin {
        let mut buf = Vec::new();
        let (schema, batches) = std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(&e, "cannot read standard input"))
            .and_then(|_| read_ipc_bytes(buf, "standard input", limit))
            .map_err(|e| {
                spin.clear();
                data_error(&a.arrow_file, e)
            })?;
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let res = object_from_batches(&schema, &batches).and_then(|f| {
            drop(batches);
            write_object_file(&a.output, f.object, f.refs, &opts)
        });
        spin.clear();
        res.map_err(|e| data_error(&a.output, e))?;
        (rows, schema.fields().len())
    } else {
        // a Parquet file is converted one column at a time
        let res = rdarrow_arrow::data_file_to_rdata(&a.arrow_file, &a.output, &opts, limit);
        spin.clear();
        res.map_err(|e| {
            // a write error names the output; any other is the input's
            if e.to_string().contains(&a.output.display().to_string()) {
                data_error(&a.output, e)
            } else {
                data_error(&a.arrow_file, e)
            }
        })?
    };
    progress.note(format!(
        "wrote {} ({} rows, {} columns){}",
        a.output.display(),
        rows,
        columns,
        if rds {
            String::new()
        } else {
            format!(" as '{name}'")
        }
    ));
    Ok(())
}

/// Whether the local file at `path` is an R data file, by its first bytes
/// (the engine's rule); not one that cannot be read (the converter says
/// why).
pub(crate) fn is_r_data_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; rdarrow_arrow::compression::DETECT_LEN];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    rdarrow_arrow::looks_like_r_data(&head[..n])
}
