//! R data behind an `http://` or `https://` URL, read as a stream: the
//! response body goes straight into the decompressor and the parser (no
//! temporary copy of the file), as `readRDS(url(...))` reads it. A
//! conversion that reads payloads back by row range spills the
//! decompressed stream as it does for any compressed file.
//!
//! Network failures are errors that name the URL and what failed
//! (resolving, connecting, an HTTP status, a timeout, a body cut short).
//! The timeout bounds connecting, waiting for the response and each read
//! of the body, so a server that stalls ends in an error while a long
//! download that keeps coming does not. A server that answers with a web
//! page (an error page under status 200) is told apart from R data. The
//! bytes received so far are counted for progress
//! ([`crate::cancel::download`]).

use crate::error::{Error, ErrorKind, Result};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// How long connecting, the response and each read of its body may take
/// unless told otherwise (R's own `timeout` option defaults to 60 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether `path` is an `http://` or `https://` URL.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(|s| {
        let s = s.get(..8).unwrap_or(s).to_ascii_lowercase();
        s.starts_with("http://") || s.starts_with("https://")
    })
}

/// The body of `url`, as a stream, and its length when the server says it.
pub fn open(url: &str, timeout: Option<Duration>) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(timeout))
        .timeout_recv_response(Some(timeout))
        .timeout_per_read(Some(timeout))
        .build()
        .into();
    let response = agent.get(url).call().map_err(|e| failed(url, e))?;
    let is_page = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/html"));
    if is_page {
        return Err(Error::new(
            ErrorKind::NotRData,
            format!("'{url}' is a web page (text/html), not an R data file"),
        ));
    }
    let len = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    crate::cancel::download_started(len);
    let body = response.into_body().into_reader();
    Ok((Box::new(Counted::new(body, url, len)), len))
}

/// The error of a request that failed.
fn failed(url: &str, e: ureq::Error) -> Error {
    let what = match &e {
        ureq::Error::StatusCode(code) => {
            return Error::new(
                if *code == 404 || *code == 410 {
                    ErrorKind::Usage
                } else {
                    ErrorKind::Io
                },
                format!("cannot read '{url}': the server answered HTTP {code}"),
            )
        }
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::HostNotFound => "the host is not known".to_string(),
        ureq::Error::ConnectionFailed => "cannot connect to the server".to_string(),
        ureq::Error::BadUri(why) => format!("it is not a valid URL ({why})"),
        ureq::Error::Io(e) => e.to_string(),
        other => other.to_string(),
    };
    Error::new(ErrorKind::Io, format!("cannot read '{url}': {what}"))
}

/// A body that counts what it has received, checks for interrupts, and
/// says where a body cut short ended (an http(s) URL's, an object's).
pub(crate) struct Counted<R> {
    inner: R,
    url: String,
    got: u64,
    len: Option<u64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if crate::cancel::interrupted() {
            // not ErrorKind::Interrupted, which readers retry
            return Err(std::io::Error::other("interrupted by the user"));
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.got += n as u64;
                crate::cancel::downloaded(n as u64);
                if n == 0 && self.len.is_some_and(|l| self.got < l) && !buf.is_empty() {
                    return Err(self.cut_short("the connection closed"));
                }
                Ok(n)
            }
            // a signal: the caller reads again
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(self.cut_short(&e.to_string())),
        }
    }
}

impl<R> Counted<R> {
    /// `inner`, the body of `url`, `len` bytes long where known.
    pub(crate) fn new(inner: R, url: &str, len: Option<u64>) -> Self {
        Counted {
            inner,
            url: url.to_string(),
            got: 0,
            len,
        }
    }

    fn cut_short(&self, why: &str) -> std::io::Error {
        let of = self.len.map(|l| format!(" of {l}")).unwrap_or_default();
        crate::error::source_failure(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "the download of '{}' stopped after {} bytes{of}: {why}",
                self.url, self.got
            ),
        )
    }
}
