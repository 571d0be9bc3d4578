//! fst files (`fst::write_fst()`), read: the table fst's container holds
//! (`compression::fst`) turned into the R serialization of the data frame
//! `fst::read_fst()` gives ([`crate::read::emit`]), column by column as the
//! file is read, so that everything above reads `.fst` files as `.rds`
//! files.
//!
//! Each column's type and attribute codes say what R object it is, as
//! fst's reader makes it: character (its encoding kept), factor and
//! ordered factor (levels, then class), integer, double and logical,
//! `integer64` and `nanotime` (bit64's and nanotime's classes over the
//! 64-bit integers), raw; `Date`, data.table's `IDate` (an integer
//! `Date`) and `ITime`, `POSIXct` with its `tzone` where the file has
//! one, `difftime` with its units. The data frame has names, class
//! `data.frame` and automatic row names (past R's row limit, a named list,
//! as fst's reader gives it).

use std::io::{self, Read};

use crate::compression::fst::{damaged, FstTable, StringColumn, StringEncoding, Tracked, ValueColumn};
use crate::tree::{levels, sxp};

use super::emit::Emitter;

/// fst's column types (its `colTypes` codes).
mod kind {
    pub const CHARACTER: u16 = 6;
    pub const FACTOR: u16 = 7;
    pub const INTEGER: u16 = 8;
    pub const DOUBLE: u16 = 9;
    pub const LOGICAL: u16 = 10;
    pub const INTEGER64: u16 = 11;
    pub const BYTE: u16 = 12;
}

/// fst's column attributes (what a column's values mean).
mod attribute {
    pub const FACTOR_ORDERED: u16 = 4;
    pub const INT_TIMESTAMP: u16 = 6;
    pub const INT_INTERVAL: u16 = 7;
    pub const INT_DATE: u16 = 8;
    pub const INT_TIME_OF_DAY: u16 = 9;
    pub const DOUBLE_DATE: u16 = 11;
    pub const DOUBLE_TIMESTAMP: u16 = 12;
    pub const DOUBLE_INTERVAL: u16 = 13;
    pub const DOUBLE_TIME_OF_DAY: u16 = 14;
    pub const INT64_TIME: u16 = 17;
}

/// fst's time scales (`colScales`) R has units for.
mod scale {
    pub const NANOSECONDS: u16 = 1;
    pub const SECONDS: u16 = 4;
    pub const MINUTES: u16 = 5;
    pub const HOURS: u16 = 6;
    pub const DAYS: u16 = 7;
}

/// The level R marks a string of `encoding` with.
fn level_of(encoding: StringEncoding) -> u16 {
    match encoding {
        StringEncoding::Utf8 => levels::UTF8,
        StringEncoding::Latin1 => levels::LATIN1,
        StringEncoding::Native => 0,
    }
}

/// What is being written.
enum Step {
    /// The next column to start.
    Column(usize),
    /// A column's values, then `tail` (its attributes), then column `next`.
    Values { col: ValueColumn, tail: Vec<u8>, next: usize },
    /// A character column's strings, likewise.
    Strings { col: StringColumn, level: u16, next: usize },
    /// A factor without levels: `left` codes, all `NA`.
    NaCodes { left: u64, tail: Vec<u8>, next: usize },
    Done,
}

/// The R serialization of an fst file, written as it is read.
pub struct FstReader {
    r: Tracked,
    table: FstTable,
    out: Vec<u8>,
    served: usize,
    step: Step,
    failed: Option<(io::ErrorKind, String)>,
}

impl FstReader {
    /// Read `src`'s headers (each hash checked) and column names; the
    /// columns are read as the stream is.
    pub fn new(src: Box<dyn Read + Send>) -> io::Result<FstReader> {
        let mut r = Tracked::new(src);
        let table = FstTable::read(&mut r)?;
        let mut e = Emitter::new(false);
        // past R's row limit fst's reader gives a plain named list
        let frame = table.rows <= i32::MAX as u64;
        e.flags(sxp::VEC, frame, true, false, 0);
        e.length(table.columns.len() as u64);
        Ok(FstReader {
            r,
            table,
            out: e.out,
            served: 0,
            step: Step::Column(0),
            failed: None,
        })
    }

    /// The table the headers describe.
    pub fn table(&self) -> &FstTable {
        &self.table
    }

    fn name_of(&self, c: usize) -> String {
        let shown = match &self.table.columns[c].name {
            Some(n) => format!("'{}'", String::from_utf8_lossy(n)),
            None => "NA".into(),
        };
        format!("column {shown} ({} of {})", c + 1, self.table.columns.len())
    }

    /// Start column `c`: its node's header written, its data next.
    fn start_column(&mut self, c: usize) -> io::Result<Step> {
        let info = self.table.columns[c].clone();
        let what = self.name_of(c);
        let rows = self.table.rows;
        self.r.seek_ahead(info.pos, &what)?;
        let mut e = Emitter::part(false);
        let next = c + 1;
        match info.kind {
            kind::CHARACTER => {
                e.flags(sxp::STR, false, false, false, 0);
                e.length(rows);
                self.out = e.out;
                if rows == 0 {
                    return Ok(Step::Column(next));
                }
                let start = self.r.pos();
                let col = StringColumn::open(&mut self.r, rows, start, &what)?;
                let level = level_of(col.encoding);
                Ok(Step::Strings { col, level, next })
            }
            kind::FACTOR => {
                let head = self.r.take(16, &what)?;
                let version = u32::from_le_bytes(head[0..4].try_into().expect("4"));
                let nlevels = u32::from_le_bytes(head[4..8].try_into().expect("4"));
                let codes_at = u64::from_le_bytes(head[8..16].try_into().expect("8"));
                if version > 1 {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        format!("{what} is a factor of a newer fst's version {version}"),
                    ));
                }
                // the levels, read now, are written after the codes
                let mut tail = Emitter::part(false);
                tail.tagged_cell(b"levels", 0);
                tail.flags(sxp::STR, false, false, false, 0);
                tail.length(u64::from(nlevels));
                if nlevels > 0 {
                    let start = self.r.pos();
                    let mut levels = StringColumn::open(&mut self.r, u64::from(nlevels), start, &format!("the levels of {what}"))?;
                    let level = level_of(levels.encoding);
                    while let Some(block) = levels.next_block(&mut self.r)? {
                        for i in 0..block.len() {
                            tail.charsxp(block.get(i), level);
                        }
                    }
                }
                tail.tagged_cell(b"class", 0);
                if info.attribute == attribute::FACTOR_ORDERED {
                    strings(&mut tail, &[b"ordered", b"factor"]);
                } else {
                    strings(&mut tail, &[b"factor"]);
                }
                tail.null();
                e.flags(sxp::INT, true, true, false, 0);
                e.length(rows);
                self.out = e.out;
                if nlevels == 0 {
                    return Ok(Step::NaCodes {
                        left: rows,
                        tail: tail.out,
                        next,
                    });
                }
                self.r.seek_ahead(codes_at, &format!("the codes of {what}"))?;
                let col = ValueColumn::open(&mut self.r, rows, 4, what)?;
                Ok(Step::Values { col, tail: tail.out, next })
            }
            kind::INTEGER | kind::DOUBLE | kind::LOGICAL | kind::INTEGER64 | kind::BYTE => {
                let (sxptype, width) = match info.kind {
                    kind::INTEGER => (sxp::INT, 4),
                    kind::LOGICAL => (sxp::LGL, 4),
                    kind::BYTE => (sxp::RAW, 1),
                    _ => (sxp::REAL, 8),
                };
                let col = ValueColumn::open(&mut self.r, rows, width, what.clone())?;
                let mut tail = Emitter::part(false);
                let s4 = attributes(&mut tail, info.kind, info.attribute, info.scale, col.annotation.as_deref(), &what)?;
                let has_attr = !tail.out.is_empty();
                if has_attr {
                    tail.null();
                }
                e.flags(sxptype, has_attr, has_attr, false, if s4 { levels::S4_OBJECT } else { 0 });
                e.length(rows);
                self.out = e.out;
                Ok(Step::Values { col, tail: tail.out, next })
            }
            13 => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{what} holds byte blocks (fst type 13), which R's fst does not write"),
            )),
            other => Err(damaged(format!("{what} is of fst type {other}, which fst does not have: the file is damaged"))),
        }
    }

    /// The data frame's attributes: names, class, automatic row names.
    fn frame(&self) -> Vec<u8> {
        let mut e = Emitter::part(false);
        e.tagged_cell(b"names", 0);
        e.flags(sxp::STR, false, false, false, 0);
        e.length(self.table.columns.len() as u64);
        let level = level_of(self.table.names_encoding);
        for c in &self.table.columns {
            e.charsxp(c.name.as_deref(), level);
        }
        if self.table.rows > i32::MAX as u64 {
            // a plain list, as fst's reader gives it past R's row limit
            e.null();
            return e.out;
        }
        e.tagged_cell(b"class", 0);
        strings(&mut e, &[b"data.frame"]);
        e.tagged_cell(b"row.names", 0);
        e.flags(sxp::INT, false, false, false, 0);
        if self.table.rows == 0 {
            e.length(0);
        } else {
            e.length(2);
            e.int(i32::MIN);
            e.int(-(self.table.rows as i32));
        }
        e.null();
        e.out
    }

    /// The next bytes of the stream into `self.out`.
    fn advance(&mut self) -> io::Result<()> {
        let step = std::mem::replace(&mut self.step, Step::Done);
        self.step = match step {
            Step::Column(c) if c == self.table.columns.len() => {
                self.out = self.frame();
                Step::Done
            }
            Step::Column(c) => self.start_column(c)?,
            Step::Values { mut col, tail, next } => match col.next_block(&mut self.r)? {
                Some(bytes) => {
                    self.out = bytes;
                    Step::Values { col, tail, next }
                }
                None => {
                    self.out = tail;
                    Step::Column(next)
                }
            },
            Step::Strings { mut col, level, next } => match col.next_block(&mut self.r)? {
                Some(block) => {
                    let mut e = Emitter::part(false);
                    for i in 0..block.len() {
                        e.charsxp(block.get(i), level);
                    }
                    self.out = e.out;
                    Step::Strings { col, level, next }
                }
                None => Step::Column(next),
            },
            Step::NaCodes { left, tail, next } => {
                if left == 0 {
                    self.out = tail;
                    Step::Column(next)
                } else {
                    let n = left.min(1 << 18);
                    self.out = i32::MIN.to_le_bytes().repeat(n as usize);
                    Step::NaCodes {
                        left: left - n,
                        tail,
                        next,
                    }
                }
            }
            Step::Done => Step::Done,
        };
        Ok(())
    }
}

/// A character vector of `values`, ASCII.
fn strings(e: &mut Emitter, values: &[&[u8]]) {
    e.flags(sxp::STR, false, false, false, 0);
    e.length(values.len() as u64);
    for v in values {
        e.charsxp(Some(v), 0);
    }
}

/// The attributes fst's reader gives a column of fixed-width values
/// (tagged cells, not yet ended); whether the column is an S4 object.
fn attributes(
    e: &mut Emitter,
    kind: u16,
    attr: u16,
    scale: u16,
    annotation: Option<&[u8]>,
    what: &str,
) -> io::Result<bool> {
    let units = |scale: u16| -> &'static [u8] {
        match scale {
            scale::MINUTES => b"mins",
            scale::HOURS => b"hours",
            scale::DAYS => b"days",
            // fst's reader says "Unknown time unit, defaulting to seconds"
            _ => b"secs",
        }
    };
    let time_of_day = |scale: u16| -> io::Result<()> {
        if scale != scale::SECONDS {
            return Err(damaged(format!("{what} is an ITime column of unknown scale {scale}")));
        }
        Ok(())
    };
    match (kind, attr) {
        (kind::INTEGER, attribute::INT_TIMESTAMP) | (kind::DOUBLE, attribute::DOUBLE_TIMESTAMP) => {
            e.tagged_cell(b"class", 0);
            strings(e, &[b"POSIXct", b"POSIXt"]);
            if let Some(zone) = annotation {
                e.tagged_cell(b"tzone", 0);
                e.flags(sxp::STR, false, false, false, 0);
                e.length(1);
                e.charsxp(Some(zone), 0);
            }
        }
        (kind::INTEGER, attribute::INT_INTERVAL) | (kind::DOUBLE, attribute::DOUBLE_INTERVAL) => {
            e.tagged_cell(b"class", 0);
            strings(e, &[b"difftime"]);
            e.tagged_cell(b"units", 0);
            strings(e, &[units(scale)]);
        }
        (kind::INTEGER, attribute::INT_DATE) => {
            e.tagged_cell(b"class", 0);
            strings(e, &[b"IDate", b"Date"]);
        }
        (kind::DOUBLE, attribute::DOUBLE_DATE) => {
            e.tagged_cell(b"class", 0);
            strings(e, &[b"Date"]);
        }
        (kind::INTEGER, attribute::INT_TIME_OF_DAY) | (kind::DOUBLE, attribute::DOUBLE_TIME_OF_DAY) => {
            time_of_day(scale)?;
            e.tagged_cell(b"class", 0);
            strings(e, &[b"ITime"]);
        }
        (kind::INTEGER64, attribute::INT64_TIME) => {
            if scale != scale::NANOSECONDS {
                return Err(damaged(format!("{what} is a nanotime column of unknown scale {scale}")));
            }
            // nanotime's S4 class over integer64, as fst's reader makes it
            e.tagged_cell(b"class", 0);
            e.flags(sxp::STR, false, true, false, 0);
            e.length(1);
            e.charsxp(Some(b"nanotime"), 0);
            e.tagged_cell(b"package", 0);
            strings(e, &[b"nanotime"]);
            e.null();
            e.tagged_cell(b".S3Class", 0);
            strings(e, &[b"integer64"]);
            return Ok(true);
        }
        (kind::INTEGER64, _) => {
            e.tagged_cell(b"class", 0);
            strings(e, &[b"integer64"]);
        }
        _ => {}
    }
    Ok(false)
}

impl Read for FstReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.served < self.out.len() {
                let k = buf.len().min(self.out.len() - self.served);
                buf[..k].copy_from_slice(&self.out[self.served..self.served + k]);
                self.served += k;
                return Ok(k);
            }
            if let Some((kind, why)) = &self.failed {
                return Err(io::Error::new(*kind, why.clone()));
            }
            if matches!(self.step, Step::Done) {
                return Ok(0);
            }
            self.out.clear();
            self.served = 0;
            if let Err(e) = self.advance() {
                self.failed = Some((e.kind(), e.to_string()));
            }
        }
    }
}
