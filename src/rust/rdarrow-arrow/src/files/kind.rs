//! The kinds of file rdarrow reads and writes besides R's own, told from
//! a name or the first bytes.

/// The kinds of file rdarrow reads and writes besides R's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFileKind {
    /// Arrow IPC (file or stream format; Feather version 2).
    Ipc,
    Parquet,
    /// One Arrow Tensor message ([`crate::files::tensor`]).
    Tensor,
}

impl DataFileKind {
    /// The kind a file name's extension names, if any.
    pub fn of_name(path: &std::path::Path) -> Option<DataFileKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(DataFileKind::Parquet),
            "arrow" | "feather" | "ipc" | "arrows" => Some(DataFileKind::Ipc),
            _ => None,
        }
    }

    /// The kind a file's first bytes say (IPC when not Parquet).
    pub fn of_bytes(prefix: &[u8]) -> DataFileKind {
        if crate::files::parquet::is_parquet(prefix) {
            DataFileKind::Parquet
        } else {
            DataFileKind::Ipc
        }
    }

    /// The kind of the file at `path`, by its first bytes (an IPC
    /// message's header tells a Tensor from a stream's Schema).
    pub fn of_file(path: &std::path::Path) -> rdarrow_format::Result<DataFileKind> {
        use std::io::Read;
        let mut head = [0u8; 4];
        let f = std::fs::File::open(path)
            .map_err(|e| rdarrow_format::Error::io(&e, &format!("cannot read '{}'", path.display())))?;
        let n = (&f)
            .read(&mut head)
            .map_err(|e| rdarrow_format::Error::io(&e, &format!("cannot read '{}'", path.display())))?;
        Ok(match DataFileKind::of_bytes(&head[..n]) {
            DataFileKind::Ipc if crate::files::tensor::is_tensor_message(&f) => DataFileKind::Tensor,
            k => k,
        })
    }

    /// Check by its first bytes that the file at `path` (`label`: as the
    /// user named it) is of kind `want`; else an error naming
    /// `right_function`, the caller's function for the kind it is.
    pub fn expect_file(
        path: &std::path::Path,
        label: &str,
        want: DataFileKind,
        right_function: &str,
    ) -> rdarrow_format::Result<()> {
        let found = DataFileKind::of_file(path)?;
        if found == want {
            return Ok(());
        }
        Err(rdarrow_format::Error::usage(format!(
            "'{label}' is not a {} file (its first bytes are not {}'s); use {right_function} for {} files",
            want.name(),
            want.name(),
            found.name()
        )))
    }

    /// The kind by its name: `"parquet"` or `"ipc"`.
    pub fn from_name(name: &str) -> Option<DataFileKind> {
        match name {
            "parquet" => Some(DataFileKind::Parquet),
            "ipc" => Some(DataFileKind::Ipc),
            "tensor" => Some(DataFileKind::Tensor),
            _ => None,
        }
    }

    /// The kind's name for people.
    pub fn name(self) -> &'static str {
        match self {
            DataFileKind::Ipc => "Arrow IPC",
            DataFileKind::Parquet => "Parquet",
            DataFileKind::Tensor => "Arrow Tensor",
        }
    }
}

/// The rule for a sink's name: writing `writing` to a file whose
/// extension names the other kind is an error that names `right_function`
/// (the caller's function for the kind the name asks for), never a file of
/// the wrong format under a misleading name.
pub fn check_sink_name(
    sink: &std::path::Path,
    writing: DataFileKind,
    right_function: &str,
) -> rdarrow_format::Result<()> {
    match DataFileKind::of_name(sink) {
        Some(k) if k != writing => Err(rdarrow_format::Error::usage(format!(
            "'{}' names a {} file but this writes {}; use {right_function} to write {}",
            sink.display(),
            k.name(),
            writing.name(),
            k.name()
        ))),
        _ => Ok(()),
    }
}
