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
//! ([`crate::base::cancel::download`]).

use crate::base::error::{with_causes, Error, ErrorKind, Result};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// Whether `path` is an `http://` or `https://` URL.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(|s| {
        let s = s.get(..8).unwrap_or(s).to_ascii_lowercase();
        s.starts_with("http://") || s.starts_with("https://")
    })
}

/// The body of `url`, as a stream, and its length when the server says it.
pub fn open(url: &str, timeout: Option<Duration>) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    let timeout = timeout.unwrap_or(crate::io::store::DEFAULT_TIMEOUT);
    let (fetch, url) = (url, shown(url));
    let url = url.as_str();
    // the object stores' HTTP client (reqwest, rustls with ring), driven by
    // a runtime of the reading thread's own; the timeout bounds connecting
    // and each wait, for the response and for each piece of its body
    crate::io::store::install_crypto();
    let rt = crate::io::store::own_runtime()?;
    // the client and its connection live in this runtime
    let response = rt.block_on(async {
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .build()
            .map_err(|e| failed(url, e))?;
        match tokio::time::timeout(timeout, client.get(fetch).send()).await {
            Err(_) => Err(timed_out(url, timeout)),
            Ok(r) => r.map_err(|e| failed(url, e)),
        }
    })?;
    // a response dropped here (an error below) goes back to the runtime
    let held = rt.clone();
    let _inside = held.enter();
    let status = response.status();
    if !status.is_success() {
        let code = status.as_u16();
        return Err(Error::new(
            if code == 404 || code == 410 {
                ErrorKind::Usage
            } else {
                ErrorKind::Io
            },
            format!("cannot read '{url}': the server answered HTTP {code}"),
        ));
    }
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
    let len = response.content_length();
    crate::base::cancel::download_started(len);
    let body = Body {
        rt,
        response: Some(response),
        piece: bytes::Bytes::new(),
        timeout,
    };
    Ok((Box::new(Counted::new(body, url, len)), len))
}

/// A response's body as a reader, each piece awaited at most `timeout`.
struct Body {
    rt: std::sync::Arc<tokio::runtime::Runtime>,
    /// (`None` once dropped, inside the runtime)
    response: Option<reqwest::Response>,
    piece: bytes::Bytes,
    timeout: Duration,
}

impl Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.piece.is_empty() {
            let Some(response) = self.response.as_mut() else {
                return Ok(0);
            };
            let t = self.timeout;
            // (the timer made inside the runtime)
            let next = self
                .rt
                .block_on(async { tokio::time::timeout(t, response.chunk()).await });
            match next {
                Err(_) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no data for {} s (the timeout)", self.timeout.as_secs_f64()),
                    ))
                }
                Ok(Err(e)) => {
                    let e = e.without_url();
                    let why = with_causes(e.to_string(), std::error::Error::source(&e));
                    return Err(std::io::Error::other(why));
                }
                Ok(Ok(None)) => return Ok(0),
                Ok(Ok(Some(b))) => self.piece = b,
            }
        }
        let n = buf.len().min(self.piece.len());
        buf[..n].copy_from_slice(&self.piece[..n]);
        bytes::Buf::advance(&mut self.piece, n);
        Ok(n)
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        // the connection goes back to its runtime
        let _inside = self.rt.enter();
        self.response.take();
    }
}

fn timed_out(url: &str, t: Duration) -> Error {
    Error::new(
        ErrorKind::Io,
        format!(
            "cannot read '{url}': timed out (no answer in {} s)",
            t.as_secs_f64()
        ),
    )
}

/// `url` as messages show it: without a password, and without its query
/// (a signed URL's signature is a credential).
pub(crate) fn shown(url: &str) -> String {
    let Ok(mut u) = url::Url::parse(url) else {
        return url.to_string();
    };
    if u.password().is_some() {
        let _ = u.set_password(Some("***"));
    }
    if u.query().is_some() {
        u.set_query(Some("***"));
    }
    u.to_string()
}

/// The error of a request that failed (its own text without the URL,
/// which the message names as [`shown`] gives it).
fn failed(url: &str, e: reqwest::Error) -> Error {
    let e = e.without_url();
    let why = with_causes(e.to_string(), std::error::Error::source(&e));
    let what = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_builder() {
        format!("it is not a valid URL ({why})")
    } else if e.is_connect() && why.to_ascii_lowercase().contains("dns") {
        "the host is not known".to_string()
    } else if e.is_connect() {
        format!("cannot connect to the server ({why})")
    } else {
        why
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
        if crate::base::cancel::interrupted() {
            // not ErrorKind::Interrupted, which readers retry
            return Err(std::io::Error::other("interrupted by the user"));
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.got += n as u64;
                crate::base::cancel::downloaded(n as u64);
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
        crate::base::error::source_failure(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "the download of '{}' stopped after {} bytes{of}: {why}",
                self.url, self.got
            ),
        )
    }
}
