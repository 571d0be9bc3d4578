//! Errors of the engine: every failure says what went wrong and where
//! (byte offset in the decompressed stream, and the object being read).

use std::fmt;

/// What kind of failure this is; the R layer turns each into a condition class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be opened, read or written.
    Io,
    /// The bytes are not R data (unknown magic, unknown format).
    NotRData,
    /// The stream ended before the object was complete.
    Truncated,
    /// The stream is malformed: impossible flags, lengths, references.
    Corrupt,
    /// A limit that protects the session was reached (nesting depth, sizes).
    Limit,
    /// Valid R data that this operation cannot provide (e.g. a persistent
    /// reference without a hook, or an unknown ALTREP class whose value is needed).
    Unsupported,
    /// The caller asked for something that is not there (unknown object name).
    Usage,
    /// The file holds what would run code when read or used, beyond what
    /// the read trusts (see `trust`).
    Unsafe,
    /// The user interrupted the work.
    Interrupted,
    /// A broken invariant of rdarrow itself (a bug, not the input's fault).
    Internal,
}

/// Which setting a [`ErrorKind::Limit`] error ran into, so that each front
/// end can say how to raise it (an R option, a command-line flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// How deeply objects may nest (`ReadOptions::max_depth`).
    Depth,
    /// How much vector data one read may decode (`ReadOptions::max_memory`).
    Memory,
}

impl ErrorKind {
    /// A short stable name, used as the R condition subclass.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::NotRData => "not_rdata",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Limit => "limit",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Usage => "usage",
            ErrorKind::Unsafe => "unsafe",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Internal => "internal",
        }
    }
}

/// An engine error with its location.
#[derive(Debug, Clone)]
pub struct Error {
    /// What went wrong, in kind.
    pub kind: ErrorKind,
    /// What went wrong, in words.
    pub message: String,
    /// Byte offset in the decompressed stream where the problem was seen.
    pub offset: Option<u64>,
    /// Name of the top-level object being read, when known.
    pub object: Option<String>,
    /// For a limit error: which limit.
    pub limit: Option<LimitKind>,
    /// The error this one wraps, when there is one (`source()`).
    pub cause: Option<std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

/// A result with this crate's error.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            offset: None,
            object: None,
            limit: None,
            cause: None,
        }
    }
    /// This error, caused by `cause` (what `source()` gives).
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(std::sync::Arc::new(cause));
        self
    }
    /// The error at byte `offset` of the decompressed stream.
    pub fn at(mut self, offset: u64) -> Self {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }
    /// The error inside the object `name`.
    pub fn in_object(mut self, name: &str) -> Self {
        if self.object.is_none() {
            self.object = Some(name.to_string());
        }
        self
    }
    /// The input is damaged.
    pub fn corrupt(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Corrupt, message)
    }
    /// The input is valid but not supported.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unsupported, message)
    }
    /// A limit was reached.
    pub fn limit(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Limit, message)
    }
    /// A limit that protects the session, naming which one.
    pub fn limit_of(limit: LimitKind, message: impl Into<String>) -> Self {
        Error {
            limit: Some(limit),
            ..Error::new(ErrorKind::Limit, message)
        }
    }
    /// The call was wrong.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Usage, message)
    }
    /// A broken invariant of rdarrow itself.
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(
            ErrorKind::Internal,
            format!("internal error: {}", message.into()),
        )
    }
    /// An I/O error while doing `what`.
    pub fn io(err: &std::io::Error, what: &str) -> Self {
        let e = if err.kind() == std::io::ErrorKind::Interrupted && crate::base::flag::interrupted() {
            Error::new(ErrorKind::Interrupted, "interrupted by the user")
        } else if err.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::new(
                ErrorKind::Truncated,
                format!("{what}: unexpected end of data (the file is truncated)"),
            )
        } else {
            Error::new(ErrorKind::Io, format!("{what}: {err}"))
        };
        // the wrapped error as it reads (std's I/O errors are not Clone)
        e.caused_by(std::io::Error::new(err.kind(), err.to_string()))
    }
}

impl From<std::io::Error> for Error {
    /// An I/O error without more context: `?` on an `io::Result`.
    fn from(err: std::io::Error) -> Self {
        let mut e = Error::io(&err, "input/output");
        e.cause = Some(std::sync::Arc::new(err));
        e
    }
}

impl From<std::str::Utf8Error> for Error {
    /// Bytes that should have been UTF-8 text and are not.
    fn from(err: std::str::Utf8Error) -> Self {
        Error::corrupt(format!("text that is not UTF-8: {err}")).caused_by(err)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        match (&self.object, self.offset) {
            (Some(o), Some(off)) => write!(
                f,
                " (in object '{o}', at byte {off} of the decompressed stream)"
            ),
            (Some(o), None) => write!(f, " (in object '{o}')"),
            (None, Some(off)) => write!(f, " (at byte {off} of the decompressed stream)"),
            (None, None) => Ok(()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

thread_local! {
    /// Set while this thread runs code whose panics are caught and turned
    /// into errors (see [`catch_quietly`]).
    static PANICS_CAUGHT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f`, catching a panic (a dependency's answer to malformed input)
/// without its message reaching standard error: the caller reports it as
/// an error instead. Panics elsewhere are reported as before.
pub fn catch_quietly<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    static QUIET_HOOK: std::sync::Once = std::sync::Once::new();
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !PANICS_CAUGHT.with(|c| c.get()) {
                previous(info)
            }
        }));
    });
    let was = PANICS_CAUGHT.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    PANICS_CAUGHT.with(|c| c.set(was));
    result
}

/// Run a third-party reader that can panic on malformed input instead of
/// returning an error (arrow's IPC reader, the Parquet reader): such a
/// panic is a corrupt-input error saying `what` failed on, never an
/// unwinding into the host.
pub fn guard_reader<T>(what: &str, reader: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_quietly(f) {
        Ok(r) => r,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("malformed data");
            Err(Error::corrupt(format!(
                "cannot read {what}: the {reader} failed ({detail})"
            )))
        }
    }
}

/// The failure of a source itself (a connection closed, a host's file
/// object raising), told apart from bad bytes: it reaches the reader,
/// through any decompressor, as an I/O error.
#[derive(Debug)]
struct SourceFailure(String);

impl std::fmt::Display for SourceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SourceFailure {}

/// An error a source's stream returns when the source itself fails (not
/// its bytes): the read ends with an I/O error saying `message`.
pub fn source_failure(kind: std::io::ErrorKind, message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(kind, SourceFailure(message.into()))
}

pub(crate) fn is_source_failure(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<SourceFailure>())
}

/// `head` followed by the texts of `cause` and the causes under it, each
/// after ": " unless `head` says it already (a client's error, then the
/// resolver's or the socket's).
pub(crate) fn with_causes(
    mut head: String,
    mut cause: Option<&(dyn std::error::Error + 'static)>,
) -> String {
    while let Some(c) = cause {
        let text = c.to_string();
        if !head.contains(&text) {
            head.push_str(": ");
            head.push_str(&text);
        }
        cause = c.source();
    }
    head
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    #[test]
    fn an_error_says_what_it_wraps_and_converts_from_io() {
        fn open() -> super::Result<std::fs::File> {
            Ok(std::fs::File::open("/no/such/rdarrow/file")?)
        }
        let e = open().unwrap_err();
        assert_eq!(e.kind, super::ErrorKind::Io);
        let cause = e.source().expect("the I/O error it wraps");
        let io = cause.downcast_ref::<std::io::Error>().expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        let truncated = super::Error::io(&std::io::ErrorKind::UnexpectedEof.into(), "reading 'x'");
        assert_eq!(truncated.kind, super::ErrorKind::Truncated);
        assert!(truncated.source().is_some());
        assert!(super::Error::usage("plain").source().is_none());
    }

    #[test]
    fn a_caught_panic_is_an_err_and_values_pass_through() {
        assert_eq!(super::catch_quietly(|| 7).unwrap(), 7);
        let caught = super::catch_quietly(|| -> i32 { panic!("malformed input") });
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"malformed input"));
        // the flag is cleared afterwards: a later panic is reported again
        assert!(!super::PANICS_CAUGHT.with(|c| c.get()));
    }
}
