//! The decompressed byte stream and the three encodings of R's primitives
//! (XDR big-endian, native little-endian binary, ASCII text).
//!
//! Vector payloads are read straight from the decompressor into their final
//! buffers and byte-swapped in place; allocation grows only as data really
//! arrives, so a hostile declared length cannot reserve memory it does not
//! back with bytes.

use crate::base::error::{Error, ErrorKind, Result};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// How primitives are encoded in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Big-endian binary (R's default).
    Xdr,
    /// Native binary.
    Binary,
    /// ASCII.
    Ascii,
}

impl Format {
    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Xdr => "xdr",
            Format::Binary => "binary",
            Format::Ascii => "ascii",
        }
    }
}

/// Where the bytes come from: a plain file can skip by seeking.
pub enum ByteSource {
    /// A file, read in place.
    File {
        /// The file, at the stream's start.
        file: File,
        /// Its length.
        len: u64,
    },
    /// A stream, read to its end.
    Stream(Box<dyn Read + Send>),
    /// A stream that can move ahead without receiving what it passes (an
    /// object in a store, read by range): long skips move it.
    Ranged(Box<dyn Seekable>),
}

pub use crate::io::store::Seekable;

/// Skips at least this long move a [`ByteSource::Ranged`] stream (a new
/// request); shorter ones are read through.
const RANGED_SKIP_MIN: u64 = 1 << 20;

const BUF_SIZE: usize = 1 << 18;
/// The smallest buffer (a header, a number and a short string fit).
const MIN_BUF_SIZE: usize = 1 << 12;
/// Elements added per growth step of a vector whose bytes are not yet seen.
const GROW_CHUNK: usize = 1 << 16;

/// A buffered reader over the decompressed stream, tracking the offset.
pub struct Input {
    src: ByteSource,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    /// The stream's format (from its header).
    pub format: Format,
    /// Set when an ASCII stream wrote a double in hex (`%a`), so a writer can
    /// reproduce it.
    pub saw_hex_double: bool,
    word: Vec<u8>,
}

/// How an error from the decompressor (or a container's reader) below the
/// parser begins: the reader says such damage in its codec's words
/// ([`crate::read::salvage::said`]).
pub const DECOMPRESSOR_FAILED: &str = "cannot decompress or read the data";

fn truncated(offset: u64) -> Error {
    Error::new(
        ErrorKind::Truncated,
        "unexpected end of data: the file is truncated or the stream is incomplete",
    )
    .at(offset)
}

impl Input {
    /// An input over `src`.
    pub fn new(src: ByteSource) -> Input {
        Input::with_buffer(src, BUF_SIZE)
    }

    /// An input over `src` whose stream is about `size` bytes long (or
    /// longer): its buffer is no larger than that needs, so that a small
    /// file's read does not pay for a large buffer.
    pub fn sized(src: ByteSource, size: u64) -> Input {
        let size = usize::try_from(size).unwrap_or(BUF_SIZE);
        Input::with_buffer(src, size.clamp(MIN_BUF_SIZE, BUF_SIZE))
    }

    fn with_buffer(src: ByteSource, size: usize) -> Input {
        Input {
            src,
            buf: vec![0u8; size].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            format: Format::Xdr,
            saw_hex_double: false,
            word: Vec::with_capacity(64),
        }
    }

    /// An input over bytes in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Input {
        let len = bytes.len() as u64;
        Input::sized(ByteSource::Stream(Box::new(std::io::Cursor::new(bytes))), len)
    }

    /// Offset of the next byte in the decompressed stream.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left, when the source is a plain file (otherwise unknown).
    pub fn remaining_hint(&self) -> Option<u64> {
        match &self.src {
            ByteSource::File { len, .. } => Some(len.saturating_sub(self.offset())),
            ByteSource::Ranged(s) => Some(s.len().saturating_sub(self.offset())),
            ByteSource::Stream(_) => None,
        }
    }

    fn read_src(&mut self, out: &mut [u8]) -> Result<usize> {
        loop {
            let r = match &mut self.src {
                ByteSource::File { file, .. } => file.read(out),
                ByteSource::Stream(s) => s.read(out),
                ByteSource::Ranged(s) => s.read(out),
            };
            match r {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let off = self.offset();
                    if crate::base::error::is_source_failure(&e) {
                        return Err(Error::new(
                            ErrorKind::Io,
                            format!("cannot read the data: {e}"),
                        )
                        .at(off));
                    }
                    let kind = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        ErrorKind::Truncated
                    } else {
                        ErrorKind::Corrupt
                    };
                    return Err(Error::new(
                        kind,
                        format!("{DECOMPRESSOR_FAILED}: {e}"),
                    )
                    .at(off));
                }
            }
        }
    }

    /// Refill the buffer, keeping unread bytes. Returns false at end of data.
    fn fill(&mut self) -> Result<bool> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            return Ok(true);
        }
        crate::base::cancel::check().map_err(|e| e.at(self.offset()))?;
        let mut tmp = std::mem::take(&mut self.buf);
        let n = self.read_src(&mut tmp[self.end..]);
        self.buf = tmp;
        let n = n?;
        self.end += n;
        crate::base::cancel::advance(n as u64);
        Ok(n > 0)
    }

    /// Make at least `n` (<= buffer size) bytes available.
    #[inline]
    fn ensure(&mut self, n: usize) -> Result<()> {
        while self.end - self.pos < n {
            if !self.fill()? {
                return Err(truncated(self.offset()));
            }
        }
        Ok(())
    }

    /// True when no byte is left.
    pub fn at_end(&mut self) -> Result<bool> {
        if self.pos < self.end {
            return Ok(false);
        }
        Ok(!self.fill()?)
    }

    /// Read a decompressed stream to its end, once the object is read: a
    /// decompressor checks what its format carries after the data (gzip's
    /// CRC-32 and length, bzip2's stream CRC, xz's index and checks, a
    /// zstd frame's checksum, qs's and qs2's hashes) only when it reaches
    /// the end, and a stream cut short says so only there. Bytes after
    /// the serialization are passed over, as R passes over them. A file or
    /// a ranged object read in place is not compressed: nothing to check.
    pub fn finish(&mut self) -> Result<()> {
        if !matches!(self.src, ByteSource::Stream(_)) {
            return Ok(());
        }
        loop {
            self.pos = self.end;
            if !self.fill()? {
                return Ok(());
            }
        }
    }

    /// Read exactly `out.len()` bytes.
    pub fn read_exact(&mut self, out: &mut [u8]) -> Result<()> {
        let avail = (self.end - self.pos).min(out.len());
        out[..avail].copy_from_slice(&self.buf[self.pos..self.pos + avail]);
        self.pos += avail;
        let mut done = avail;
        while done < out.len() {
            let left = out.len() - done;
            if left >= self.buf.len() / 2 {
                // large remainder: straight from the source into its destination
                crate::base::cancel::check().map_err(|e| e.at(self.offset()))?;
                let chunk = (out.len() - done).min(1 << 22);
                let n = self.read_src(&mut out[done..done + chunk])?;
                crate::base::cancel::advance(n as u64);
                if n == 0 {
                    return Err(truncated(self.offset()));
                }
                done += n;
                self.base += n as u64;
            } else {
                self.ensure(1)?;
                let k = (self.end - self.pos).min(left);
                out[done..done + k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
                self.pos += k;
                done += k;
            }
        }
        Ok(())
    }

    /// Append `k` elements read from the stream (raw bytes, no byte swap)
    /// to `v`, which has room for them, without zero-filling first.
    fn read_into_spare<T: Copy>(&mut self, v: &mut Vec<T>, k: usize) -> Result<()> {
        let start = v.len();
        debug_assert!(v.capacity() - start >= k);
        // SAFETY: the spare capacity holds at least k elements; T is a plain
        // numeric type for which every byte pattern is valid; read_exact only
        // writes into the slice, and set_len happens after it is fully written.
        unsafe {
            let dst = std::slice::from_raw_parts_mut(
                v.as_mut_ptr().add(start) as *mut u8,
                k * std::mem::size_of::<T>(),
            );
            self.read_exact(dst)?;
            v.set_len(start + k);
        }
        Ok(())
    }

    /// Skip `n` bytes (seeking in a plain file).
    pub fn skip(&mut self, n: u64) -> Result<()> {
        let avail = (self.end - self.pos) as u64;
        if n <= avail {
            self.pos += n as usize;
            return Ok(());
        }
        let mut left = n - avail;
        self.base += self.end as u64;
        self.pos = 0;
        self.end = 0;
        if let ByteSource::File { file, len } = &mut self.src {
            if self.base + left > *len {
                return Err(truncated(*len));
            }
            file.seek(SeekFrom::Start(self.base + left))
                .map_err(|e| Error::io(&e, "seek"))?;
            self.base += left;
            return Ok(());
        }
        if let ByteSource::Ranged(s) = &mut self.src {
            if left >= RANGED_SKIP_MIN {
                let len = s.len();
                if self.base + left > len {
                    return Err(truncated(len));
                }
                s.seek_to(self.base + left)
                    .map_err(|e| Error::io(&e, "cannot move ahead in the stream"))?;
                self.base += left;
                return Ok(());
            }
        }
        while left > 0 {
            if !self.fill()? {
                return Err(truncated(self.offset()));
            }
            let k = (self.end as u64).min(left) as usize;
            self.pos = k;
            left -= k as u64;
        }
        Ok(())
    }

    /// Read up to `n` raw bytes (for magic detection), as many as the
    /// buffer holds.
    pub fn peek(&mut self, n: usize) -> Result<&[u8]> {
        let n = n.min(self.buf.len());
        while self.end - self.pos < n {
            if !self.fill()? {
                break;
            }
        }
        let k = (self.end - self.pos).min(n);
        Ok(&self.buf[self.pos..self.pos + k])
    }

    /// Consume `n` bytes already peeked at.
    pub fn consume(&mut self, n: usize) {
        self.pos += n.min(self.end - self.pos);
    }

    // ---- ASCII words -------------------------------------------------

    /// Consume whitespace up to the next token or the end of the stream.
    pub fn skip_ascii_whitespace(&mut self) -> Result<()> {
        loop {
            if self.pos == self.end && !self.fill()? {
                return Ok(());
            }
            let c = self.buf[self.pos];
            if !(c.is_ascii_whitespace() || c == 0x0b) {
                return Ok(());
            }
            self.pos += 1;
        }
    }

    /// The next whitespace-delimited word (as R's InWord).
    fn read_word(&mut self) -> Result<&[u8]> {
        loop {
            self.ensure(1)?;
            let c = self.buf[self.pos];
            if c.is_ascii_whitespace() || c == 0x0b {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.word.clear();
        loop {
            if self.pos == self.end && !self.fill()? {
                break;
            }
            let c = self.buf[self.pos];
            if c.is_ascii_whitespace() || c == 0x0b {
                break;
            }
            if self.word.len() >= 127 {
                return Err(
                    Error::corrupt("ASCII token longer than 127 characters").at(self.offset())
                );
            }
            self.word.push(c);
            self.pos += 1;
        }
        Ok(&self.word)
    }

    fn get_char(&mut self) -> Result<u8> {
        self.ensure(1)?;
        let c = self.buf[self.pos];
        self.pos += 1;
        Ok(c)
    }

    // ---- primitives --------------------------------------------------

    /// Read one integer.
    pub fn read_int(&mut self) -> Result<i32> {
        match self.format {
            Format::Xdr => {
                self.ensure(4)?;
                let v = i32::from_be_bytes(self.buf[self.pos..self.pos + 4].try_into().unwrap());
                self.pos += 4;
                Ok(v)
            }
            Format::Binary => {
                self.ensure(4)?;
                let v = i32::from_le_bytes(self.buf[self.pos..self.pos + 4].try_into().unwrap());
                self.pos += 4;
                Ok(v)
            }
            Format::Ascii => {
                let off = self.offset();
                let w = self.read_word()?;
                parse_ascii_int(w).ok_or_else(|| {
                    Error::corrupt(format!(
                        "expected an integer, found '{}'",
                        String::from_utf8_lossy(w)
                    ))
                    .at(off)
                })
            }
        }
    }

    /// Read one double.
    pub fn read_double(&mut self) -> Result<f64> {
        match self.format {
            Format::Xdr => {
                self.ensure(8)?;
                let v = f64::from_be_bytes(self.buf[self.pos..self.pos + 8].try_into().unwrap());
                self.pos += 8;
                Ok(v)
            }
            Format::Binary => {
                self.ensure(8)?;
                let v = f64::from_le_bytes(self.buf[self.pos..self.pos + 8].try_into().unwrap());
                self.pos += 8;
                Ok(v)
            }
            Format::Ascii => {
                let off = self.offset();
                let w = self.read_word()?;
                let hex = w.starts_with(b"0x") || w.starts_with(b"-0x") || w.starts_with(b"+0x");
                let v = parse_ascii_double(w).ok_or_else(|| {
                    Error::corrupt(format!(
                        "expected a number, found '{}'",
                        String::from_utf8_lossy(w)
                    ))
                    .at(off)
                })?;
                if hex {
                    self.saw_hex_double = true;
                }
                Ok(v)
            }
        }
    }

    /// Check (for plain files) that `bytes` more bytes can exist.
    fn check_remaining(&self, bytes: u64, what: &str) -> Result<()> {
        if let Some(rem) = self.remaining_hint() {
            if self.format != Format::Ascii && bytes > rem {
                return Err(Error::new(
                    ErrorKind::Truncated,
                    format!("{what} declares {bytes} bytes but only {rem} remain in the file"),
                )
                .at(self.offset()));
            }
        }
        Ok(())
    }

    /// Read `n` 32-bit integers into a new vector, little-endian in memory.
    pub fn read_ints(&mut self, n: u64) -> Result<Vec<i32>> {
        self.check_remaining(n.saturating_mul(4), "an integer vector")?;
        let n = to_usize(n, self.offset())?;
        let mut v: Vec<i32> = Vec::with_capacity(n.min(GROW_CHUNK));
        while v.len() < n {
            let start = v.len();
            let k = (n - start).min(start.max(GROW_CHUNK));
            match self.format {
                Format::Ascii => {
                    v.reserve_exact(k);
                    for _ in 0..k {
                        let x = self.read_int()?;
                        v.push(x);
                    }
                }
                Format::Xdr | Format::Binary => {
                    v.reserve_exact(k);
                    self.read_into_spare(&mut v, k)?;
                    if self.format == Format::Xdr {
                        for x in &mut v[start..] {
                            *x = i32::from_be(*x);
                        }
                    }
                }
            }
        }
        Ok(v)
    }

    /// Read `n` doubles into a new vector, little-endian in memory.
    pub fn read_doubles(&mut self, n: u64) -> Result<Vec<f64>> {
        self.check_remaining(n.saturating_mul(8), "a double vector")?;
        let n = to_usize(n, self.offset())?;
        let mut v: Vec<f64> = Vec::with_capacity(n.min(GROW_CHUNK));
        while v.len() < n {
            let start = v.len();
            let k = (n - start).min(start.max(GROW_CHUNK));
            v.reserve_exact(k);
            match self.format {
                Format::Ascii => {
                    for _ in 0..k {
                        let x = self.read_double()?;
                        v.push(x);
                    }
                }
                Format::Xdr | Format::Binary => {
                    self.read_into_spare(&mut v, k)?;
                    if self.format == Format::Xdr {
                        for x in &mut v[start..] {
                            *x = f64::from_bits(u64::from_be(x.to_bits()));
                        }
                    }
                }
            }
        }
        Ok(v)
    }

    /// Read `n` raw bytes (RAWSXP payload).
    pub fn read_raw(&mut self, n: u64) -> Result<Vec<u8>> {
        self.check_remaining(n, "a raw vector")?;
        let n = to_usize(n, self.offset())?;
        let mut v: Vec<u8> = Vec::with_capacity(n.min(GROW_CHUNK * 8));
        while v.len() < n {
            let start = v.len();
            let k = (n - start).min(start.max(GROW_CHUNK * 8));
            v.reserve_exact(k);
            match self.format {
                Format::Ascii => {
                    for _ in 0..k {
                        let b = self.read_hex_byte()?;
                        v.push(b);
                    }
                }
                _ => self.read_into_spare(&mut v, k)?,
            }
        }
        Ok(v)
    }

    /// Fill `out` with integers read from the stream, little-endian in
    /// memory (a payload decoded straight into its consumer's memory).
    pub fn read_ints_into(&mut self, out: &mut [i32]) -> Result<()> {
        self.check_remaining(out.len() as u64 * 4, "an integer vector")?;
        self.numbers_into(out, Self::read_int, i32::from_be)
    }

    /// Fill `out` with doubles read from the stream, little-endian in
    /// memory.
    pub fn read_doubles_into(&mut self, out: &mut [f64]) -> Result<()> {
        self.check_remaining(out.len() as u64 * 8, "a double vector")?;
        self.numbers_into(out, Self::read_double, |x| {
            f64::from_bits(u64::from_be(x.to_bits()))
        })
    }

    /// Fill `out` with numbers: each read as a word (ASCII), or as bytes
    /// then put in native order by `from_xdr` (XDR).
    fn numbers_into<T: Copy>(
        &mut self,
        out: &mut [T],
        word: impl Fn(&mut Self) -> Result<T>,
        from_xdr: impl Fn(T) -> T,
    ) -> Result<()> {
        for part in out.chunks_mut(GROW_CHUNK) {
            match self.format {
                Format::Ascii => {
                    for x in part.iter_mut() {
                        *x = word(self)?;
                    }
                }
                Format::Xdr | Format::Binary => {
                    // SAFETY: numbers, for which any byte pattern is valid
                    self.read_exact(unsafe { as_bytes_mut(part) })?;
                    if self.format == Format::Xdr {
                        part.iter_mut().for_each(|x| *x = from_xdr(*x));
                    }
                }
            }
        }
        Ok(())
    }

    /// Fill `out` with raw bytes read from the stream.
    pub fn read_raw_into(&mut self, out: &mut [u8]) -> Result<()> {
        self.check_remaining(out.len() as u64, "a raw vector")?;
        match self.format {
            Format::Ascii => {
                for x in out.iter_mut() {
                    *x = self.read_hex_byte()?;
                }
                Ok(())
            }
            _ => self.read_exact(out),
        }
    }

    /// One byte of an ASCII raw vector, written as two hex digits.
    fn read_hex_byte(&mut self) -> Result<u8> {
        let off = self.offset();
        let w = self.read_word()?;
        std::str::from_utf8(w)
            .ok()
            .and_then(|s| u8::from_str_radix(s, 16).ok())
            .ok_or_else(|| Error::corrupt("expected a hex byte in a raw vector").at(off))
    }

    /// Skip the payload of a vector of `n` elements of `width` bytes.
    pub fn skip_fixed(&mut self, n: u64, width: u64, is_double: bool) -> Result<()> {
        match self.format {
            Format::Ascii => {
                for _ in 0..n {
                    if is_double {
                        self.read_double()?;
                    } else {
                        self.read_word()?;
                    }
                }
                Ok(())
            }
            _ => {
                let bytes = n
                    .checked_mul(width)
                    .ok_or_else(|| Error::corrupt("vector length overflows").at(self.offset()))?;
                self.check_remaining(bytes, "a vector")?;
                self.skip(bytes)
            }
        }
    }

    /// Read the bytes of a CHARSXP (or primitive name) of `len` bytes,
    /// appending them to `out` (ASCII escapes decoded as R's InString does).
    pub fn read_string_into(&mut self, len: usize, out: &mut Vec<u8>) -> Result<()> {
        match self.format {
            Format::Ascii => {
                if len == 0 {
                    return Ok(());
                }
                loop {
                    self.ensure(1)?;
                    let c = self.buf[self.pos];
                    if c.is_ascii_whitespace() || c == 0x0b {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                for _ in 0..len {
                    let c = self.get_char()?;
                    if c != b'\\' {
                        out.push(c);
                        continue;
                    }
                    let e = self.get_char()?;
                    let b = match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'v' => 0x0b,
                        b'b' => 0x08,
                        b'r' => b'\r',
                        b'f' => 0x0c,
                        b'a' => 0x07,
                        b'\\' => b'\\',
                        b'?' => b'?',
                        b'\'' => b'\'',
                        b'"' => b'"',
                        b'0'..=b'7' => {
                            let mut d: u32 = 0;
                            let mut c = e;
                            let mut j = 0;
                            loop {
                                d = d * 8 + (c - b'0') as u32;
                                j += 1;
                                if j == 3 {
                                    break;
                                }
                                self.ensure(1)?;
                                let nc = self.buf[self.pos];
                                if !(b'0'..=b'7').contains(&nc) {
                                    break;
                                }
                                self.pos += 1;
                                c = nc;
                            }
                            d as u8
                        }
                        other => other,
                    };
                    out.push(b);
                }
                Ok(())
            }
            _ => {
                if len <= self.buf.len() / 2 {
                    self.ensure(len)?;
                    out.extend_from_slice(&self.buf[self.pos..self.pos + len]);
                    self.pos += len;
                    Ok(())
                } else {
                    self.check_remaining(len as u64, "a string")?;
                    let start = out.len();
                    // grow as the bytes arrive
                    let mut done = 0;
                    while done < len {
                        let k = (len - done).min(BUF_SIZE.max(done));
                        out.resize(start + done + k, 0);
                        self.read_exact(&mut out[start + done..start + done + k])?;
                        done += k;
                    }
                    Ok(())
                }
            }
        }
    }

    /// Skip a string of `len` bytes.
    pub fn skip_string(&mut self, len: usize) -> Result<()> {
        match self.format {
            Format::Ascii => {
                let mut sink = Vec::new();
                self.read_string_into(len, &mut sink)
            }
            _ => {
                self.check_remaining(len as u64, "a string")?;
                self.skip(len as u64)
            }
        }
    }

    /// Read the next CHARSXP of a character vector: its flags and length,
    /// appending its bytes to `data` (nothing for NA). The common case (an
    /// XDR string wholly in the buffer) takes no call.
    #[inline(always)]
    pub fn next_charsxp(&mut self, data: &mut Vec<u8>) -> Result<(i32, i32)> {
        if self.format == Format::Xdr && self.end - self.pos >= 8 {
            let p = self.pos;
            let flags = i32::from_be_bytes(self.buf[p..p + 4].try_into().unwrap());
            let len = i32::from_be_bytes(self.buf[p + 4..p + 8].try_into().unwrap());
            if flags & 0xff == 9 && len >= 0 && (len as usize) <= self.end - p - 8 {
                data.extend_from_slice(&self.buf[p + 8..p + 8 + len as usize]);
                self.pos = p + 8 + len as usize;
                return Ok((flags, len));
            }
            if flags & 0xff == 9 && len == -1 {
                self.pos = p + 8;
                return Ok((flags, len));
            }
        }
        let (flags, len) = self.read_two_ints()?;
        if flags & 0xff == 9 && len >= 0 {
            self.read_string_into(len as usize, data)?;
        }
        Ok((flags, len))
    }

    /// [`Self::skip_charsxp`], also saying whether the string is plain
    /// text that comes back from Arrow as it is: ASCII, or valid UTF-8
    /// flagged neither as bytes nor as Latin-1 (false when that is not
    /// known cheaply).
    #[inline(always)]
    pub fn skip_charsxp_text(&mut self) -> Result<(i32, i32, bool)> {
        if self.format == Format::Xdr && self.end - self.pos >= 8 {
            let p = self.pos;
            let flags = i32::from_be_bytes(self.buf[p..p + 4].try_into().unwrap());
            let len = i32::from_be_bytes(self.buf[p + 4..p + 8].try_into().unwrap());
            if flags & 0xff == 9 && len >= -1 && (len.max(0) as usize) <= self.end - p - 8 {
                let lv = crate::tree::unpack(flags).flags.levels;
                let bytes = &self.buf[p + 8..p + 8 + len.max(0) as usize];
                // (Latin-1 strings are not: they come back from their
                // Arrow text as UTF-8, and travel as R held them)
                let plain = lv & crate::tree::levels::ASCII != 0
                    || (lv & (crate::tree::levels::BYTES | crate::tree::levels::LATIN1) == 0
                        && std::str::from_utf8(bytes).is_ok());
                self.pos = p + 8 + len.max(0) as usize;
                return Ok((flags, len, plain));
            }
        }
        let (flags, len) = self.skip_charsxp()?;
        Ok((flags, len, false))
    }

    /// Skip the next CHARSXP of a character vector, returning its flags
    /// and length.
    #[inline(always)]
    pub fn skip_charsxp(&mut self) -> Result<(i32, i32)> {
        if self.format == Format::Xdr && self.end - self.pos >= 8 {
            let p = self.pos;
            let flags = i32::from_be_bytes(self.buf[p..p + 4].try_into().unwrap());
            let len = i32::from_be_bytes(self.buf[p + 4..p + 8].try_into().unwrap());
            if flags & 0xff == 9 && len >= -1 && (len.max(0) as usize) <= self.end - p - 8 {
                self.pos = p + 8 + len.max(0) as usize;
                return Ok((flags, len));
            }
        }
        let (flags, len) = self.read_two_ints()?;
        if flags & 0xff == 9 && len >= 0 {
            self.skip_string(len as usize)?;
        }
        Ok((flags, len))
    }

    /// Fast path for the common case of a CHARSXP inside a character vector
    /// in a binary format: returns (flags, length) without a second lookup.
    #[inline]
    pub fn read_two_ints(&mut self) -> Result<(i32, i32)> {
        match self.format {
            Format::Xdr => {
                self.ensure(8)?;
                let p = self.pos;
                let a = i32::from_be_bytes(self.buf[p..p + 4].try_into().unwrap());
                let b = i32::from_be_bytes(self.buf[p + 4..p + 8].try_into().unwrap());
                self.pos += 8;
                Ok((a, b))
            }
            _ => {
                let a = self.read_int()?;
                let b = self.read_int()?;
                Ok((a, b))
            }
        }
    }
}

/// The bytes of a slice of plain numbers, to be written.
///
/// # Safety
/// `T` must be a type for which every byte pattern is a valid value.
unsafe fn as_bytes_mut<T: Copy>(x: &mut [T]) -> &mut [u8] {
    std::slice::from_raw_parts_mut(x.as_mut_ptr() as *mut u8, std::mem::size_of_val(x))
}

fn to_usize(n: u64, offset: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::limit("vector too long for this platform").at(offset))
}

/// Parse an ASCII integer as R's `sscanf("%d")` after the `NA` check.
pub fn parse_ascii_int(w: &[u8]) -> Option<i32> {
    if w == b"NA" {
        return Some(crate::tree::na::INTEGER);
    }
    let s = std::str::from_utf8(w).ok()?;
    let v: i64 = s.parse().ok()?;
    i32::try_from(v).ok()
}

/// Parse an ASCII double: `NA`, `NaN`, `Inf`, `-Inf`, decimal or C99 hex.
pub fn parse_ascii_double(w: &[u8]) -> Option<f64> {
    match w {
        b"NA" => return Some(crate::tree::na::real()),
        b"NaN" => return Some(f64::from_bits(crate::tree::na::NAN_BITS)),
        b"Inf" => return Some(f64::INFINITY),
        b"-Inf" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let s = std::str::from_utf8(w).ok()?;
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let v = parse_hex_float(hex)?;
        return Some(if neg { -v } else { v });
    }
    let v: f64 = body.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Parse the part after `0x` of a C99 hex float such as `1.8p+1`.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mant, exp) = match s.find(['p', 'P']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    let mut bits: u64 = 0;
    let mut shift: i32 = 0;
    let mut any = false;
    for c in int_part.chars() {
        let d = c.to_digit(16)? as u64;
        any = true;
        if bits >> 56 == 0 {
            bits = bits * 16 + d;
        } else {
            shift += 4;
        }
    }
    for c in frac_part.chars() {
        let d = c.to_digit(16)? as u64;
        any = true;
        if bits >> 56 == 0 {
            bits = bits * 16 + d;
            shift -= 4;
        }
    }
    if !any {
        return None;
    }
    Some(ldexp(bits as f64, exp + shift))
}

/// `x * 2^e` without under- or overflowing in the intermediate power
/// (denormals need exponents below -1022).
fn ldexp(mut x: f64, mut e: i32) -> f64 {
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    x * 2f64.powi(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_doubles() {
        assert_eq!(parse_ascii_double(b"0x1.8p+1"), Some(3.0));
        assert_eq!(parse_ascii_double(b"-0x1p-2"), Some(-0.25));
        assert_eq!(
            parse_ascii_double(b"0x0.0000000000001p-1022"),
            Some(f64::from_bits(1))
        );
        for x in [-1e-310, 5e-324, 2.2250738585072014e-308, 0.1, -1.0 / 3.0] {
            let hex = crate::wire::encode::ascii_double(x, true);
            assert_eq!(parse_ascii_double(hex.trim().as_bytes()), Some(x), "{hex}");
        }
        assert_eq!(
            parse_ascii_double(b"0x1.fffffffffffffp+1023"),
            Some(f64::MAX)
        );
        assert_eq!(parse_ascii_double(b"1e-05"), Some(1e-5));
        assert_eq!(
            parse_ascii_double(b"NA").unwrap().to_bits(),
            crate::tree::na::REAL_BITS
        );
        assert_eq!(parse_ascii_double(b"-Inf"), Some(f64::NEG_INFINITY));
        assert!(parse_ascii_double(b"abc").is_none());
    }

    #[test]
    fn xdr_ints_are_swapped_in_place() {
        let mut bytes = Vec::new();
        for i in [1i32, -2, i32::MIN] {
            bytes.extend(i.to_be_bytes());
        }
        let mut inp = Input::from_bytes(bytes);
        assert_eq!(inp.read_ints(3).unwrap(), vec![1, -2, i32::MIN]);
        assert!(inp.read_int().is_err());
    }

    #[test]
    fn ascii_strings_unescape() {
        let mut inp = Input::from_bytes(b"  a\\040b\\n\\\\\\303\\251x".to_vec());
        inp.format = Format::Ascii;
        let mut out = Vec::new();
        inp.read_string_into(8, &mut out).unwrap();
        assert_eq!(out, b"a b\n\\\xc3\xa9x");
    }
}
