//! `rdarrow to-tensor`: an R array as an Arrow Tensor message.

use clap::Args;
use crate::progress::Progress;
use rdarrow_arrow::ReadOptions;
use std::path::PathBuf;
use crate::failure::*;

#[derive(Args)]
pub(crate) struct ToTensorArgs {
    /// The R data file (.RData/.rda/.rds/.qs/.qs2/.qdata/.fst, told by its bytes)
    pub(crate) file: PathBuf,
    /// Output file [default: FILE with the extension .tensor]
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// The array to write [default: the file's only array]
    #[arg(long, value_name = "NAME")]
    pub(crate) object: Option<String>,
}

pub(crate) fn to_tensor(a: ToTensorArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| a.file.with_extension("tensor"));
    if out == a.file {
        return Err(Failure::Usage(format!(
            "the output would overwrite the input '{}'; choose another with -o",
            a.file.display()
        )));
    }
    let spin = progress.spinner(format!("converting {}", a.file.display()));
    let res = rdarrow_arrow::files::tensor::rdata_to_tensor(
        &a.file,
        a.object.as_deref(),
        &stream_name(&a.file),
        read.clone(),
        &out,
    );
    spin.clear();
    let written = res.map_err(|e| data_error(&a.file, e))?;
    if let Some(damage) = &written.damage {
        warn(&a.file, damage);
    }
    let shape: Vec<String> = written.shape.iter().map(|d| d.to_string()).collect();
    progress.note(format!(
        "wrote {} ({}) to {}",
        written.name,
        shape.join(" x "),
        out.display()
    ));
    Ok(())
}
