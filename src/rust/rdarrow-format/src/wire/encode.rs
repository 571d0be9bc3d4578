//! Primitive encoding, the writer's mirror of [`crate::wire::decode`]: ints,
//! doubles, strings and raw bytes in XDR, ASCII or native binary, buffered
//! for a byte stream. The serializer ([`crate::write`]) and the header
//! ([`crate::wire::header`]) write through it.

use crate::base::error::{Error, Result};
use crate::wire::decode::Format;
use crate::tree::*;
use std::io::Write;

const OUT_BUF: usize = 1 << 18;

/// Buffered primitive output in one of the three encodings.
pub struct Output<W: Write> {
    sink: W,
    buf: Vec<u8>,
    format: Format,
    hex_doubles: bool,
    written: u64,
    /// ASCII doubles written whose bits the text does not keep (NaNs with
    /// payloads other than `NA_real_`'s and R's `NaN`'s).
    inexact: u64,
}

fn io_err(e: std::io::Error) -> Error {
    Error::io(&e, "cannot write")
}

impl<W: Write> Output<W> {
    /// An output to `sink` in `format` (`hex_doubles`: ASCII doubles as `%a`).
    pub fn new(sink: W, format: Format, hex_doubles: bool) -> Self {
        Output {
            sink,
            buf: Vec::with_capacity(OUT_BUF),
            format,
            hex_doubles,
            written: 0,
            inexact: 0,
        }
    }

    #[inline]
    pub(crate) fn bytes(&mut self, b: &[u8]) -> Result<()> {
        if self.buf.len() + b.len() > OUT_BUF {
            self.flush_buf()?;
            if b.len() > OUT_BUF {
                crate::base::cancel::check()?;
                self.written += b.len() as u64;
                return self.sink.write_all(b).map_err(io_err);
            }
        }
        self.buf.extend_from_slice(b);
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<()> {
        crate::base::cancel::check()?;
        crate::base::cancel::advance(self.buf.len() as u64);
        self.written += self.buf.len() as u64;
        self.sink.write_all(&self.buf).map_err(io_err)?;
        self.buf.clear();
        Ok(())
    }

    /// How many ASCII doubles were written whose bits the text does not
    /// keep.
    pub fn inexact(&self) -> u64 {
        self.inexact
    }

    /// Flush and return the sink.
    pub fn finish(mut self) -> Result<W> {
        self.flush_buf()?;
        self.sink.flush().map_err(io_err)?;
        Ok(self.sink)
    }

    /// Write one integer.
    pub fn int(&mut self, i: i32) -> Result<()> {
        match self.format {
            Format::Xdr => self.bytes(&i.to_be_bytes()),
            Format::Binary => self.bytes(&i.to_le_bytes()),
            Format::Ascii => {
                if i == na::INTEGER {
                    self.bytes(b"NA\n")
                } else {
                    let s = format!("{i}\n");
                    self.bytes(s.as_bytes())
                }
            }
        }
    }

    /// Write one double.
    pub fn double(&mut self, d: f64) -> Result<()> {
        match self.format {
            Format::Xdr => self.bytes(&d.to_be_bytes()),
            Format::Binary => self.bytes(&d.to_le_bytes()),
            Format::Ascii => {
                if d.is_nan() && !matches!(d.to_bits(), na::REAL_BITS | na::NAN_BITS) {
                    self.inexact += 1;
                }
                let s = ascii_double(d, self.hex_doubles);
                self.bytes(s.as_bytes())
            }
        }
    }

    pub(crate) fn int_slice(&mut self, v: &[i32]) -> Result<()> {
        match self.format {
            Format::Xdr => {
                for chunk in v.chunks(4096) {
                    if self.buf.len() + chunk.len() * 4 > OUT_BUF {
                        self.flush_buf()?;
                    }
                    for x in chunk {
                        self.buf.extend_from_slice(&x.to_be_bytes());
                    }
                }
                Ok(())
            }
            Format::Binary => self.bytes(as_bytes(v)),
            Format::Ascii => v.iter().try_for_each(|&x| self.int(x)),
        }
    }

    pub(crate) fn double_slice(&mut self, v: &[f64]) -> Result<()> {
        match self.format {
            Format::Xdr => {
                for chunk in v.chunks(4096) {
                    if self.buf.len() + chunk.len() * 8 > OUT_BUF {
                        self.flush_buf()?;
                    }
                    for x in chunk {
                        self.buf.extend_from_slice(&x.to_be_bytes());
                    }
                }
                Ok(())
            }
            Format::Binary => self.bytes(as_bytes(v)),
            Format::Ascii => v.iter().try_for_each(|&x| self.double(x)),
        }
    }

    pub(crate) fn raw_slice(&mut self, v: &[u8]) -> Result<()> {
        match self.format {
            Format::Ascii => v
                .iter()
                .try_for_each(|b| self.bytes(format!("{b:02x}\n").as_bytes())),
            _ => self.bytes(v),
        }
    }

    /// String bytes (CHARSXP payload, primitive names, encoding name).
    pub fn string(&mut self, s: &[u8]) -> Result<()> {
        match self.format {
            Format::Ascii => {
                let mut out = Vec::with_capacity(s.len() + 1);
                for &c in s {
                    match c {
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        0x0b => out.extend_from_slice(b"\\v"),
                        0x08 => out.extend_from_slice(b"\\b"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        0x0c => out.extend_from_slice(b"\\f"),
                        0x07 => out.extend_from_slice(b"\\a"),
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'?' => out.extend_from_slice(b"\\?"),
                        b'\'' => out.extend_from_slice(b"\\'"),
                        b'"' => out.extend_from_slice(b"\\\""),
                        c if c <= 32 || c > 126 => {
                            out.extend_from_slice(format!("\\{c:03o}").as_bytes())
                        }
                        c => out.push(c),
                    }
                }
                out.push(b'\n');
                self.bytes(&out)
            }
            _ => self.bytes(s),
        }
    }
}

pub(crate) fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain numeric types without padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// Format a double as R's ASCII serializer does (`%.16g`, or `%a`).
pub fn ascii_double(d: f64, hex: bool) -> String {
    if !d.is_finite() {
        return if d.is_nan() {
            if na::is_na_real(d) {
                "NA\n".into()
            } else {
                "NaN\n".into()
            }
        } else if d < 0.0 {
            "-Inf\n".into()
        } else {
            "Inf\n".into()
        };
    }
    let fmt: &[u8] = if hex { b"%a\n\0" } else { b"%.16g\n\0" };
    let mut buf = [0u8; 64];
    // SAFETY: the format takes exactly one double; buf is large enough for
    // any %.16g or %a rendering and snprintf NUL-terminates within it.
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr() as *mut libc::c_char,
            buf.len(),
            fmt.as_ptr() as *const libc::c_char,
            d,
        )
    };
    String::from_utf8_lossy(&buf[..(n.max(0) as usize).min(buf.len() - 1)]).into_owned()
}
