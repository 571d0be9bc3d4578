//! R data in object stores: `s3://` (and S3-compatible servers), `gs://`
//! and `az://`/`abfs://` URLs, through the `object_store` crate of the
//! arrow-rs project. An object is read as a stream (its body goes straight
//! into the decompressor, as an http(s) URL's does), or by byte range
//! where the format allows it (a lazy-load data base's entries); a prefix
//! is listed to expand a glob; an output is uploaded in parts and appears
//! only complete (a failed upload is aborted, leaving nothing).
//!
//! Credentials come as each cloud's tools take them: the standard
//! environment variables (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`,
//! `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, ...), then the
//! caller's [`StorageOptions`] (the names `object_store` uses, and the
//! s3fs names `key`, `secret`, `token`, `anon`, `endpoint_url` that Python
//! users pass to pandas and Dask). No message carries a secret: errors
//! are stripped of every secret value and of URLs' query strings.
//!
//! The timeout bounds connecting, each request's answer and each wait for
//! the next piece of a body, as for http(s) URLs: a long download that
//! keeps coming is not cut off.

use crate::base::error::{source_failure as failure, Error, ErrorKind, Result};
use bytes::Bytes;
use futures_util::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

/// How long connecting, the response and each read of its body may take
/// unless told otherwise (R's own `timeout` option defaults to 60 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Options of an object store: credentials, region, endpoint, ... as
/// (name, value) pairs, in the names `object_store` uses (see the module
/// notes). Their values are never shown (`Debug` shows the names only).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StorageOptions {
    pairs: Vec<(String, String)>,
}

impl std::fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.pairs.iter().map(|(k, _)| k))
            .finish()
    }
}

impl StorageOptions {
    /// Options from (name, value) pairs.
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        StorageOptions { pairs }
    }

    /// Options from `name=value` words (the command line's
    /// `--storage-option`); a word without `=` is a usage error.
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Result<Self> {
        let mut pairs = Vec::with_capacity(words.len());
        for w in words {
            let w = w.as_ref();
            let (k, v) = w.split_once('=').ok_or_else(|| {
                Error::usage(format!(
                    "a storage option is name=value, not '{}'",
                    w.split(':').next().unwrap_or_default()
                ))
            })?;
            pairs.push((k.trim().to_string(), v.to_string()));
        }
        Ok(StorageOptions { pairs })
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// The URL schemes of object stores.
const SCHEMES: [&str; 8] = [
    "s3://", "s3a://", "gs://", "az://", "azure://", "abfs://", "abfss://", "adl://",
];

/// Whether `s` is an object store URL (`s3://`, `gs://`, `az://`, ...).
pub fn is_store_url(s: &str) -> bool {
    let head = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    SCHEMES.iter().any(|p| head.starts_with(p))
}

/// Whether `path` is an object store URL.
pub fn is_store_path(path: &std::path::Path) -> bool {
    path.to_str().is_some_and(is_store_url)
}

/// Environment variables whose values are secrets (never shown).
const SECRET_ENV: [&str; 9] = [
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_STORAGE_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "AWS_ACCESS_KEY_ID",
];

/// Which cloud a URL is in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cloud {
    S3,
    Gcs,
    Azure,
}

/// An object (or a prefix, for listing) in a store, ready for requests.
#[derive(Clone)]
pub struct Store {
    store: Arc<dyn ObjectStore>,
    /// The key of the object (or the prefix) in its bucket.
    key: ObjectPath,
    /// `scheme://bucket/`, to name listed keys as URLs.
    base: String,
    /// The URL as given (these URLs carry no credentials).
    url: String,
    /// Drives the requests; each call blocks on it.
    rt: Arc<tokio::runtime::Runtime>,
    timeout: Duration,
    /// Values to strip from messages.
    secrets: Arc<Vec<String>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("url", &self.url).finish()
    }
}

impl Store {
    /// The object or prefix `url` names, with the credentials of the
    /// environment and `options`; `timeout` as for http(s) URLs
    /// ([`crate::io::store::DEFAULT_TIMEOUT`] when `None`). No request is made.
    pub fn open(url: &str, options: &StorageOptions, timeout: Option<Duration>) -> Result<Store> {
        let timeout = timeout.unwrap_or(crate::io::store::DEFAULT_TIMEOUT);
        let secrets = Arc::new(secrets_of(options));
        let bad = |why: String| Error::usage(format!("'{url}' is not an object store URL: {why}"));
        let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
        let bucket = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("it names no bucket or container".into()))?;
        let cloud = match parsed.scheme().to_ascii_lowercase().as_str() {
            "s3" | "s3a" => Cloud::S3,
            "gs" => Cloud::Gcs,
            _ => Cloud::Azure,
        };
        let key = ObjectPath::from_url_path(parsed.path())
            .map_err(|e| bad(redact(&e.to_string(), &secrets)))?;
        let base = format!("{}://{}/", parsed.scheme(), bucket);
        // the whole request has no time limit (a long download is fine);
        // each wait is bounded by `timeout` here, connecting by the client
        let mut common: Vec<(String, String)> = vec![
            ("timeout".into(), "3650days".into()),
            (
                "connect_timeout".into(),
                format!("{}ms", timeout.as_millis().max(1)),
            ),
        ];
        common.extend(options.pairs.iter().map(|(k, v)| (k.clone(), v.clone())));
        let retry = object_store::RetryConfig {
            max_retries: 3,
            retry_timeout: timeout,
            backoff: object_store::BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
        };
        install_crypto();
        let option_error = |k: &str, e: object_store::Error| {
            Error::usage(format!(
                "storage option '{k}' is not one of {}: {}",
                cloud.name(),
                redact(&e.to_string(), &secrets)
            ))
        };
        // each cloud's builder: the environment, the URL, the options
        // (an unknown one is an error naming it), the retries
        macro_rules! build {
            ($builder:ty, $key:ty, $pairs:expr) => {{
                let mut b = <$builder>::from_env().with_url(url);
                for (k, v) in $pairs {
                    let key: $key = k.parse().map_err(|e| option_error(&k, e))?;
                    b = b.with_config(key, v);
                }
                b.with_retry(retry).build().map(|s| Arc::new(s) as _)
            }};
        }
        use object_store::{aws, azure, gcp};
        let built: std::result::Result<Arc<dyn ObjectStore>, object_store::Error> = match cloud {
            Cloud::S3 => build!(
                aws::AmazonS3Builder,
                aws::AmazonS3ConfigKey,
                unsigned_over_https(s3fs_names(&common))
            ),
            Cloud::Gcs => build!(gcp::GoogleCloudStorageBuilder, gcp::GoogleConfigKey, common),
            Cloud::Azure => build!(azure::MicrosoftAzureBuilder, azure::AzureConfigKey, common),
        };
        let store = built.map_err(|e| {
            Error::usage(format!(
                "cannot use '{url}': {}",
                redact(&describe(&e), &secrets)
            ))
        })?;
        // one worker: an upload's parts go out while the caller encodes
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("rdarrow-store")
            .enable_all()
            .build()
            .map_err(|e| Error::io(&e, "cannot start the object store client"))?;
        Ok(Store {
            store,
            key,
            base,
            url: url.to_string(),
            rt: Arc::new(rt),
            timeout,
            secrets,
        })
    }

    /// The URL, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Run `f` on the store's runtime, bounded by the timeout.
    fn run<T>(
        &self,
        what: &str,
        f: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> Result<T> {
        self.run_on(&self.rt, what, f)
    }

    /// Run `f` on `rt`, bounded by the timeout.
    fn run_on<T>(
        &self,
        rt: &tokio::runtime::Runtime,
        what: &str,
        f: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> Result<T> {
        let t = self.timeout;
        match rt.block_on(async { tokio::time::timeout(t, f).await }) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.failed(what, &e)),
            Err(_) => Err(Error::new(
                ErrorKind::Io,
                format!(
                    "cannot {what} '{}': timed out after {} s (the timeout option)",
                    self.url,
                    t.as_secs_f64()
                ),
            )),
        }
    }

    /// The error of a request that failed, naming the URL without
    /// credentials.
    fn failed(&self, what: &str, e: &object_store::Error) -> Error {
        use object_store::Error as E;
        let detail = redact(&describe(e), &self.secrets);
        let (kind, why) = match e {
            E::NotFound { .. } if detail.contains("NoSuchBucket") => (
                ErrorKind::Usage,
                "its bucket does not exist (HTTP 404)".to_string(),
            ),
            E::NotFound { .. } => (ErrorKind::Usage, "no such object (HTTP 404)".to_string()),
            E::PermissionDenied { .. } => (
                ErrorKind::Io,
                format!("access denied (HTTP 403); check the credentials: {detail}"),
            ),
            E::Unauthenticated { .. } => (
                ErrorKind::Io,
                format!("the credentials were refused (HTTP 401/403): {detail}"),
            ),
            _ => (ErrorKind::Io, detail),
        };
        Error::new(kind, format!("cannot {what} '{}': {why}", self.url))
    }

    /// The object's size in bytes.
    pub fn len(&self) -> Result<u64> {
        let meta = self.run("read", self.store.head(&self.key))?;
        Ok(meta.size)
    }

    /// The object as a stream that moves ahead by range (see
    /// [`ObjectReader`]).
    pub fn ranged_reader(&self) -> Result<ObjectReader> {
        let rt = own_runtime()?;
        // the first range tells the size and version (no HEAD first)
        let first = object_store::GetOptions {
            range: Some(object_store::GetRange::Bounded(0..FIRST_RANGE)),
            ..Default::default()
        };
        let got = match self.run_on(&rt, "read", self.store.get_opts(&self.key, first)) {
            Ok(got) => got,
            Err(e) => {
                // an empty object has no first byte to ask for
                let meta = self.run_on(&rt, "read", self.store.head(&self.key));
                return match meta {
                    Ok(m) if m.size == 0 => Ok(ObjectReader::new(self.clone(), rt, m.size, None)),
                    _ => Err(e),
                };
            }
        };
        crate::base::cancel::download_started(Some(got.meta.size));
        let mut reader = ObjectReader::new(self.clone(), rt, got.meta.size, got.meta.e_tag.clone());
        reader.body_end = got.range.end;
        reader.body = Some(got.into_stream());
        reader.next_size = FIRST_RANGE * 2;
        Ok(reader)
    }

    /// Bytes `[start, start + len)` of the object (all of them, or an
    /// error).
    pub fn range(&self, start: u64, len: u64) -> Result<Bytes> {
        if len == 0 {
            return Ok(Bytes::new());
        }
        let got = self.run("read", self.store.get_range(&self.key, start..start + len))?;
        crate::base::cancel::downloaded(got.len() as u64);
        if got.len() as u64 != len {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "cannot read '{}': asked for {len} bytes at {start}, got {}",
                    self.url,
                    got.len()
                ),
            ));
        }
        Ok(got)
    }

    /// The URLs of the objects under this prefix (a "folder": all of its
    /// depths) whose key relative to the bucket `keep` accepts, sorted.
    pub fn list(&self, keep: &dyn Fn(&str) -> bool) -> Result<Vec<String>> {
        let prefix = (!self.key.as_ref().is_empty()).then_some(&self.key);
        let listing = async {
            let mut found = Vec::new();
            let mut s = self.store.list(prefix);
            while let Some(meta) = s.next().await {
                let meta = meta?;
                if keep(meta.location.as_ref()) {
                    found.push(meta.location.to_string());
                }
            }
            Ok(found)
        };
        let mut keys = self.run("list", listing)?;
        keys.sort();
        Ok(keys
            .into_iter()
            .map(|k| format!("{}{k}", self.base))
            .collect())
    }

    /// A writer whose bytes become this object: sent in parts as they come
    /// (several in flight, while the caller goes on writing), the object
    /// appearing only at [`Upload::complete`]; dropped before that, the
    /// upload is aborted and nothing appears. Small outputs (under a part)
    /// are sent in one request at the end.
    pub fn upload_writer(&self) -> Upload<'_> {
        Upload {
            store: self,
            buf: Vec::new(),
            upload: None,
            in_flight: std::collections::VecDeque::new(),
            parts: 0,
            done: false,
        }
    }

    /// Remove the object (an output written before a failure).
    pub fn delete(&self) -> Result<()> {
        self.run("remove", self.store.delete(&self.key))
    }
}

/// An output being uploaded (see [`Store::upload_writer`]).
pub struct Upload<'s> {
    store: &'s Store,
    buf: Vec<u8>,
    upload: Option<Box<dyn object_store::MultipartUpload>>,
    in_flight: std::collections::VecDeque<tokio::task::JoinHandle<object_store::Result<()>>>,
    parts: usize,
    done: bool,
}

/// The size of the part after `parts` parts: 16 MiB, 16 MiB more after
/// each thousand parts, so that S3's 10,000 parts hold about 860 GiB (the
/// size of an output is not known while it is written; memory holds a few
/// parts).
fn part_size_after(parts: usize) -> usize {
    (16usize << 20) * (1 + parts / 1000)
}

/// Parts an upload keeps in flight at once.
const PARTS_IN_FLIGHT: usize = 4;

impl Upload<'_> {
    fn part_size(&self) -> usize {
        part_size_after(self.parts)
    }

    /// Wait for the oldest part in flight.
    fn wait_oldest(&mut self) -> Result<()> {
        let Some(h) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let t = self.store.timeout;
        match self
            .store
            .rt
            .block_on(async { tokio::time::timeout(t, h).await })
        {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(self.store.failed("write", &e)),
            Ok(Err(e)) => Err(Error::internal(format!("an upload task failed: {e}"))),
            Err(_) => Err(Error::new(
                ErrorKind::Io,
                format!(
                    "cannot write '{}': a part was not taken within {} s (the timeout option)",
                    self.store.url,
                    t.as_secs_f64()
                ),
            )),
        }
    }

    /// Send what is buffered as the next part.
    fn send_part(&mut self) -> Result<()> {
        if self.upload.is_none() {
            let started = self
                .store
                .run("write", self.store.store.put_multipart(&self.store.key))?;
            self.upload = Some(started);
        }
        while self.in_flight.len() >= PARTS_IN_FLIGHT {
            self.wait_oldest()?;
        }
        let part = std::mem::take(&mut self.buf);
        let upload = self.upload.as_mut().expect("a multipart upload");
        let sending = upload.put_part(Bytes::from(part).into());
        self.in_flight.push_back(self.store.rt.spawn(sending));
        self.parts += 1;
        Ok(())
    }

    /// Finish: the object appears, complete.
    pub fn complete(mut self) -> Result<()> {
        if self.upload.is_none() {
            let body = Bytes::from(std::mem::take(&mut self.buf));
            self.store
                .run("write", self.store.store.put(&self.store.key, body.into()))?;
            self.done = true;
            return Ok(());
        }
        if !self.buf.is_empty() {
            self.send_part()?;
        }
        while !self.in_flight.is_empty() {
            self.wait_oldest()?;
        }
        let mut upload = self.upload.take().expect("a multipart upload");
        let res = self.store.run("write", upload.complete());
        if res.is_err() {
            let _ = self.store.run("abort the upload of", upload.abort());
        }
        self.done = true;
        res.map(|_| ())
    }
}

impl Write for Upload<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if crate::base::cancel::interrupted() {
            return Err(std::io::Error::other("interrupted by the user"));
        }
        if self.buf.capacity() == 0 {
            // the whole part at once: growing by doubling would copy most
            // of each part again (an allocation this large is mapped, so a
            // small output touches only the pages it fills)
            self.buf.reserve_exact(self.part_size());
        }
        let room = self.part_size() - self.buf.len();
        let n = data.len().min(room);
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() >= self.part_size() {
            self.send_part()
                .map_err(|e| std::io::Error::other(e.message))?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Upload<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // not completed: nothing may appear
        for h in self.in_flight.drain(..) {
            h.abort();
        }
        if let Some(mut upload) = self.upload.take() {
            let _ = self.store.run("abort the upload of", upload.abort());
        }
    }
}

/// A runtime of the calling thread's own, for a read it drives itself
/// (an object's, an http(s) URL's).
pub(crate) fn own_runtime() -> Result<Arc<tokio::runtime::Runtime>> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| Error::io(&e, "cannot start the object store client"))
}

impl Cloud {
    fn name(self) -> &'static str {
        match self {
            Cloud::S3 => "Amazon S3's",
            Cloud::Gcs => "Google Cloud Storage's",
            Cloud::Azure => "Azure Blob Storage's",
        }
    }
}

/// S3's options with `UNSIGNED-PAYLOAD` over HTTPS unless told otherwise
/// (as the AWS command line and boto3 do): TLS keeps a body intact, so
/// hashing every byte of an upload for its signature costs CPU for
/// nothing; over plain HTTP (`allow_http`) bodies stay signed.
fn unsigned_over_https(mut pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    let given = |names: &[&str]| {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| names.contains(&k.to_ascii_lowercase().as_str()))
            .map(|(_, v)| v.clone())
    };
    let told = given(&["aws_unsigned_payload", "unsigned_payload"]).is_some()
        || std::env::var_os("AWS_UNSIGNED_PAYLOAD").is_some();
    let endpoint = given(&[
        "aws_endpoint_url",
        "aws_endpoint",
        "endpoint_url",
        "endpoint",
    ])
    .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
    .or_else(|| std::env::var("AWS_ENDPOINT").ok());
    let https = endpoint.is_none_or(|e| e.to_ascii_lowercase().starts_with("https://"));
    if !told && https {
        pairs.insert(0, ("aws_unsigned_payload".into(), "true".into()));
    }
    pairs
}

/// The s3fs names of S3 options (`key`, `secret`, `token`, `anon`) as
/// `object_store` names them; the others as they are.
fn s3fs_names(pairs: &[(String, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| {
            let k = match k.as_str() {
                "key" => "aws_access_key_id",
                "secret" => "aws_secret_access_key",
                "anon" => "aws_skip_signature",
                other => other,
            };
            let v = if k == "aws_skip_signature" {
                v.to_ascii_lowercase()
            } else {
                v.clone()
            };
            (k.to_string(), v)
        })
        .collect()
}

/// The secret values of `options` and of the environment.
fn secrets_of(options: &StorageOptions) -> Vec<String> {
    let secret_name = |k: &str| {
        let k = k.to_ascii_lowercase();
        [
            "secret",
            "key",
            "token",
            "password",
            "sas",
            "credential",
            "signature",
        ]
        .iter()
        .any(|s| k.contains(s))
    };
    let mut out: Vec<String> = options
        .pairs
        .iter()
        .filter(|(k, _)| secret_name(k))
        .map(|(_, v)| v.clone())
        .collect();
    out.extend(SECRET_ENV.iter().filter_map(|k| std::env::var(k).ok()));
    out.retain(|v| v.len() >= 4);
    // the longest first, so that no part of one is left by a shorter one
    out.sort_by_key(|v| std::cmp::Reverse(v.len()));
    out
}

/// `message` without the `secrets` and without the query strings of the
/// URLs in it (signatures, SAS tokens).
pub fn redact(message: &str, secrets: &[String]) -> String {
    let mut out = message.to_string();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    // a URL's query string, up to the next blank
    let mut clean = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.find("http") {
        let (before, from) = rest.split_at(i);
        clean.push_str(before);
        let end = from
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ')')
            .unwrap_or(from.len());
        let url = &from[..end];
        match url.find('?') {
            Some(q) => {
                clean.push_str(&url[..q]);
                clean.push_str("?***");
            }
            None => clean.push_str(url),
        }
        rest = &from[end..];
    }
    clean.push_str(rest);
    clean
}

/// A store's XML error body (`<Error><Code>..</Code><Message>..</Message>`)
/// in `text` as "Code: Message", the rest of `text` kept.
fn xml_errors_read(text: &str) -> String {
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text.to_string();
    };
    let tag = |t: &str| {
        let open = format!("<{t}>");
        let from = text[start..].find(&open)? + start + open.len();
        let to = text[from..].find(&format!("</{t}>"))? + from;
        Some(text[from..to].trim().to_string())
    };
    let said = match (tag("Code"), tag("Message")) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c,
        (None, Some(m)) => m,
        (None, None) => return text.to_string(),
    };
    let end = text[start..]
        .find("</Error>")
        .map_or(text.len(), |i| start + i + "</Error>".len());
    format!("{}{said}{}", &text[..start], &text[end..])
}

/// An error with its causes, in one line.
fn describe(e: &object_store::Error) -> String {
    let text = xml_errors_read(&describe_raw(e)).replace('\n', " ");
    text.trim_end_matches([' ', ':']).to_string()
}

fn describe_raw(e: &object_store::Error) -> String {
    use object_store::Error as E;
    let s = match e {
        E::Generic { source, .. }
        | E::NotFound { source, .. }
        | E::PermissionDenied { source, .. }
        | E::Unauthenticated { source, .. }
        | E::Precondition { source, .. }
        | E::AlreadyExists { source, .. }
        | E::NotSupported { source } => source.to_string(),
        other => other.to_string(),
    };
    crate::base::error::with_causes(
        s,
        std::error::Error::source(e).and_then(std::error::Error::source),
    )
}

/// rustls's cryptography (ring), for the HTTP client of object stores and
/// of http(s) URLs ([`crate::io::http`]); once per process, as rustls asks.
pub(crate) fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A stream that can continue from a later byte without receiving the
/// bytes between (an object in a store, read by byte range); the parser's
/// input moves it over long skips ([`crate::wire::decode::ByteSource::Ranged`]).
pub trait Seekable: Read + Send {
    /// Continue from byte `pos` of the stream, ahead of the bytes read.
    fn seek_to(&mut self, pos: u64) -> std::io::Result<()>;
    /// The stream's length.
    fn len(&self) -> u64;
    /// What follows is read to the end, skipping nothing (compressed
    /// data): a stream that fetches by range may ask for all of it at once.
    fn whole_rest(&mut self) {}
}

/// The first range an [`ObjectReader`] asks for; each next one is twice
/// as long, up to [`MAX_RANGE`].
pub const FIRST_RANGE: u64 = 1 << 20;
const MAX_RANGE: u64 = 64 << 20;
/// A move ahead shorter than this, within the range being received, is
/// read through rather than asked for anew.
const READ_THROUGH: u64 = 1 << 20;

/// An object read as a stream of ranges, each twice the last (so a whole
/// object costs a few requests), that moves ahead to any later byte by
/// asking for a range from there ([`Seekable`]): a reader
/// that skips payloads never downloads them. Every range is pinned to
/// the object's version at the start (an object replaced meanwhile is an
/// error, never a mix of two).
pub struct ObjectReader {
    store: Store,
    rt: Arc<tokio::runtime::Runtime>,
    len: u64,
    e_tag: Option<String>,
    /// The next byte handed out.
    pos: u64,
    /// Bytes from `pos` on, received and not yet handed out.
    held: Held,
    /// The range being received, up to `body_end`.
    body: Option<futures_util::stream::BoxStream<'static, object_store::Result<Bytes>>>,
    body_end: u64,
    next_size: u64,
}

impl ObjectReader {
    fn new(
        store: Store,
        rt: Arc<tokio::runtime::Runtime>,
        len: u64,
        e_tag: Option<String>,
    ) -> ObjectReader {
        ObjectReader {
            store,
            rt,
            len,
            e_tag,
            pos: 0,
            held: Held::default(),
            body: None,
            body_end: 0,
            next_size: FIRST_RANGE,
        }
    }

    /// The end of the bytes received: the first one not yet received.
    fn fetched(&self) -> u64 {
        self.pos + self.held.len()
    }

    /// Receive the next piece after `fetched()` into `held`; false at the
    /// object's end.
    fn receive(&mut self) -> std::io::Result<bool> {
        let fetched = self.fetched();
        if fetched >= self.len {
            return Ok(false);
        }
        if crate::base::cancel::interrupted() {
            return Err(std::io::Error::other("interrupted by the user"));
        }
        if self.body.is_none() || fetched >= self.body_end {
            let end = fetched.saturating_add(self.next_size).min(self.len);
            let opts = object_store::GetOptions {
                range: Some(object_store::GetRange::Bounded(fetched..end)),
                if_match: self.e_tag.clone(),
                ..Default::default()
            };
            let got = self
                .store
                .run_on(
                    &self.rt,
                    "read",
                    self.store.store.get_opts(&self.store.key, opts),
                )
                .map_err(|e| failure(std::io::ErrorKind::Other, e.message))?;
            self.body = Some(got.into_stream());
            self.body_end = end;
            self.next_size = self.next_size.saturating_mul(2).min(MAX_RANGE);
        }
        let t = self.store.timeout;
        let body = self.body.as_mut().expect("a range being received");
        let next = self
            .rt
            .block_on(async { tokio::time::timeout(t, body.next()).await });
        let piece = match next {
            Err(_) => {
                return Err(failure(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "cannot read '{}': no data for {} s (the timeout option)",
                        self.store.url,
                        t.as_secs_f64()
                    ),
                ))
            }
            Ok(None) => {
                return Err(failure(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "the download of '{}' stopped at byte {} of {}",
                        self.store.url, fetched, self.len
                    ),
                ))
            }
            Ok(Some(Err(e))) => {
                return Err(failure(
                    std::io::ErrorKind::Other,
                    format!(
                        "cannot read '{}': {}",
                        self.store.url,
                        redact(&describe(&e), &self.store.secrets)
                    ),
                ))
            }
            Ok(Some(Ok(b))) => b,
        };
        crate::base::cancel::downloaded(piece.len() as u64);
        self.held.push(piece);
        Ok(true)
    }

    /// Hand out (drop) the next `n` held bytes.
    fn drop_held(&mut self, n: u64) {
        self.held.advance(n);
        self.pos += n;
    }
}

/// Bytes received and not yet handed out: the pieces as they came, never
/// copied together.
#[derive(Default)]
struct Held {
    pieces: std::collections::VecDeque<Bytes>,
    len: u64,
}

impl Held {
    fn push(&mut self, piece: Bytes) {
        self.len += piece.len() as u64;
        if !piece.is_empty() {
            self.pieces.push_back(piece);
        }
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// The next bytes, as many as one piece has together.
    fn front(&self) -> &[u8] {
        self.pieces.front().map_or(&[], |p| &p[..])
    }

    /// Drop the first `n` bytes (all of them, if fewer are held).
    fn advance(&mut self, mut n: u64) {
        self.len -= n.min(self.len);
        while n > 0 {
            let Some(front) = self.pieces.front_mut() else {
                return;
            };
            if (front.len() as u64) <= n {
                n -= front.len() as u64;
                self.pieces.pop_front();
            } else {
                let _ = front.split_to(n as usize);
                n = 0;
            }
        }
    }

    fn clear(&mut self) {
        self.pieces.clear();
        self.len = 0;
    }
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.held.len() == 0 {
            if !self.receive()? {
                return Ok(0);
            }
        }
        let front = self.held.front();
        let n = buf.len().min(front.len());
        buf[..n].copy_from_slice(&front[..n]);
        self.drop_held(n as u64);
        Ok(n)
    }
}

impl Seekable for ObjectReader {
    fn seek_to(&mut self, pos: u64) -> std::io::Result<()> {
        if pos < self.pos {
            return Err(std::io::Error::other(format!(
                "cannot go back in '{}' (from byte {} to {pos})",
                self.store.url, self.pos
            )));
        }
        if pos <= self.fetched() {
            self.drop_held(pos - self.pos);
            return Ok(());
        }
        if self.body.is_some() && pos < self.body_end && pos - self.fetched() < READ_THROUGH {
            while self.fetched() < pos {
                self.drop_held(self.held.len());
                if !self.receive()? {
                    break;
                }
            }
            self.drop_held(pos.min(self.fetched()) - self.pos);
            self.pos = pos;
            return Ok(());
        }
        // a new range from there, small again (what is read after a
        // skip is often short)
        self.body = None;
        self.held.clear();
        self.pos = pos;
        self.next_size = FIRST_RANGE;
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// All the rest in the next request: one streamed request, not a
    /// range per step.
    fn whole_rest(&mut self) {
        self.next_size = u64::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_of_stores_are_told_apart() {
        for u in [
            "s3://b/k.rds",
            "S3://b/k",
            "gs://b/x",
            "az://c/x",
            "abfss://c@a/x",
        ] {
            assert!(is_store_url(u), "{u}");
        }
        for u in ["https://x/y.rds", "data/s3://x", "s3:/x", "file.rds", ""] {
            assert!(!is_store_url(u), "{u}");
        }
    }

    #[test]
    fn payloads_are_unsigned_over_https_only_unless_told() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let unsigned = |p: &[(String, String)]| {
            p.iter()
                .any(|(k, v)| k == "aws_unsigned_payload" && v == "true")
        };
        // plain HTTP keeps the body signed
        let plain = unsigned_over_https(vec![pair("endpoint_url", "http://127.0.0.1:9000")]);
        assert!(!unsigned(&plain));
        // told: as told
        let told = vec![
            pair("endpoint", "https://s3.example"),
            pair("unsigned_payload", "false"),
        ];
        assert_eq!(unsigned_over_https(told.clone()), told);
        if std::env::var_os("AWS_UNSIGNED_PAYLOAD").is_none() {
            let tls = unsigned_over_https(vec![pair("endpoint", "HTTPS://s3.example")]);
            assert!(unsigned(&tls));
        }
    }

    #[test]
    fn messages_lose_secrets_and_query_strings() {
        let secrets = vec!["S3CRETvalue".to_string()];
        let m = redact(
            "Error GET http://127.0.0.1:9/b/k?X-Amz-Signature=abc (key S3CRETvalue) done",
            &secrets,
        );
        assert_eq!(m, "Error GET http://127.0.0.1:9/b/k?*** (key ***) done");
    }

    #[test]
    fn options_name_their_store_and_hide_their_values() {
        let opts = StorageOptions::new(vec![("no_such_option".into(), "hush-hush".into())]);
        for (url, cloud) in [
            ("s3://bucket/x.rds", "Amazon S3's"),
            ("gs://bucket/x.rds", "Google Cloud Storage's"),
            ("az://container/x.rds", "Azure Blob Storage's"),
        ] {
            let e = Store::open(url, &opts, None).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Usage);
            assert!(e.message.contains("'no_such_option'"), "{}", e.message);
            assert!(e.message.contains(cloud), "{}", e.message);
            assert!(!e.message.contains("hush-hush"), "{}", e.message);
        }
        assert_eq!(format!("{opts:?}"), "[\"no_such_option\"]");
        let e = StorageOptions::from_words(&["region:us-east-1"]).unwrap_err();
        assert!(e.message.contains("name=value"), "{}", e.message);
    }

    #[test]
    fn a_stores_xml_error_reads_as_its_code_and_message() {
        let got = xml_errors_read(
            "status 403 Forbidden: <?xml version=\"1.0\"?>\n<Error><Code>InvalidAccessKeyId</Code><Message>No such key.</Message><RequestId>x</RequestId></Error>",
        );
        assert_eq!(
            got,
            "status 403 Forbidden: InvalidAccessKeyId: No such key."
        );
        assert_eq!(xml_errors_read("plain"), "plain");
    }

    #[test]
    fn ten_thousand_parts_hold_more_than_800_gib() {
        assert_eq!(part_size_after(0), 16 << 20);
        assert_eq!(part_size_after(999), 16 << 20);
        assert_eq!(part_size_after(1000), 32 << 20);
        let held: u64 = (0..10_000).map(|p| part_size_after(p) as u64).sum();
        assert!(held > 800 << 30, "{held}");
    }

    #[test]
    fn held_pieces_hand_out_their_bytes_in_order_across_pieces() {
        let mut held = Held::default();
        held.push(Bytes::from_static(b"ab"));
        held.push(Bytes::new());
        held.push(Bytes::from_static(b"cdef"));
        held.push(Bytes::from_static(b"g"));
        assert_eq!(held.len(), 7);
        assert_eq!(held.front(), b"ab");
        held.advance(3);
        assert_eq!((held.len(), held.front()), (4, &b"def"[..]));
        held.advance(3);
        assert_eq!((held.len(), held.front()), (1, &b"g"[..]));
        held.advance(5);
        assert_eq!((held.len(), held.front()), (0, &b""[..]));
        held.push(Bytes::from_static(b"xy"));
        held.clear();
        assert_eq!(held.len(), 0);
    }
}
