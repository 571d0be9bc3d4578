//! R's serialization written by the decoders of other formats (qdata,
//! qs): they turn their encoding into the stream R's own `serialize()`
//! would write of the same objects, so that the reader, the listing,
//! object paths and every consumer above take those files as they take an
//! `.rds`. The stream is native binary (`"B\n"`) in the file's byte order
//! when that is this machine's, else XDR (`"X\n"`, big-endian, which is
//! byte for byte the binary stream of a big-endian machine), so that
//! payloads are copied as they lie, never byte-swapped.

use crate::tree::{levels, sxp, word};

/// An R serialization stream being written into a buffer.
pub struct Emitter {
    /// The bytes written and not yet handed over.
    pub out: Vec<u8>,
    big: bool,
}

impl Emitter {
    /// A stream whose integers are big-endian (`big`) or little-endian,
    /// its header written.
    pub fn new(big: bool) -> Emitter {
        let mut e = Emitter {
            out: Vec::with_capacity(1 << 16),
            big,
        };
        // native binary is little-endian on the machines R data comes from
        e.out.extend_from_slice(if big { b"X\n" } else { b"B\n" });
        e.int(3);
        e.int(crate::wire::header::DEFAULT_WRITER_VERSION);
        e.int(crate::wire::header::min_reader_version(3));
        e.int(crate::wire::header::UTF8.len() as i32);
        e.out.extend_from_slice(crate::wire::header::UTF8);
        e
    }

    /// A part of a stream (no header), to be placed in one later.
    pub fn part(big: bool) -> Emitter {
        Emitter {
            out: Vec::new(),
            big,
        }
    }

    /// Whether the stream's integers are big-endian.
    pub fn big_endian(&self) -> bool {
        self.big
    }

    /// One integer.
    pub fn int(&mut self, v: i32) {
        if self.big {
            self.out.extend_from_slice(&v.to_be_bytes());
        } else {
            self.out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// A node's flags word: its type, object bit, attributes, tag, levels.
    pub fn flags(&mut self, sxptype: u8, object: bool, has_attr: bool, has_tag: bool, lev: u16) {
        let mut w = u32::from(sxptype) | (u32::from(lev) << word::LEVELS_SHIFT);
        if object {
            w |= word::IS_OBJECT;
        }
        if has_attr {
            w |= word::HAS_ATTR;
        }
        if has_tag {
            w |= word::HAS_TAG;
        }
        self.int(w as i32);
    }

    /// A vector's length (long vectors as R writes them: -1, then the
    /// upper and lower 32 bits).
    pub fn length(&mut self, n: u64) {
        if n > i32::MAX as u64 {
            self.int(-1);
            self.int((n >> 32) as i32);
            self.int(n as u32 as i32);
        } else {
            self.int(n as i32);
        }
    }

    /// `NULL`.
    pub fn null(&mut self) {
        self.int(i32::from(sxp::NILVALUE));
    }

    /// One string element (`CHARSXP`) of `levels` (`None`: `NA`).
    pub fn charsxp(&mut self, bytes: Option<&[u8]>, lev: u16) {
        match bytes {
            None => {
                self.flags(sxp::CHAR, false, false, false, 0);
                self.int(-1);
            }
            Some(b) => {
                let lev = if b.is_ascii() { levels::ASCII } else { lev };
                self.flags(sxp::CHAR, false, false, false, lev);
                self.int(b.len() as i32);
                self.out.extend_from_slice(b);
            }
        }
    }

    /// A symbol of this name (written anew each time: R's reader takes a
    /// repeated symbol as it takes a reference to it).
    pub fn symbol(&mut self, name: &[u8], lev: u16) {
        self.flags(sxp::SYM, false, false, false, 0);
        self.charsxp(Some(name), lev);
    }

    /// The start of one attribute (or pairlist cell) tagged `name`: the
    /// cell's flags and tag; its value follows.
    pub fn tagged_cell(&mut self, name: &[u8], lev: u16) {
        self.flags(sxp::LIST, false, false, true, 0);
        self.symbol(name, lev);
    }
}
