//! Salvage: what a read with [`ReadOptions::salvage`] recovers from a
//! damaged file, and the one wording of what it lost.
//!
//! The parser stops at the first damage (bytes cut short or wrong, a
//! source that broke off) and reads nothing after it. Every list it was
//! inside keeps the elements read whole before it (so a data frame keeps
//! its whole columns); such a list comes back without its attributes
//! (names, class, row names), which R's format stores after the elements,
//! but its names where the damage is in its attributes after them. A
//! `save()` file keeps the objects before the damaged one, and that one
//! too when it is a list that kept a part. A stream that parses but whose
//! checksum or length fails at its end is kept whole, with a warning that
//! its values may be wrong.
//!
//! [`ReadOptions::salvage`]: crate::read::ReadOptions::salvage

use crate::base::error::{Error, ErrorKind};
use crate::tree::make::{self, ObjectMaker};
use crate::tree::{RObject, RefTable, VectorData};
use arrow_buffer::ScalarBuffer;

/// What one list the damage cut short kept.
#[derive(Debug, Clone, Copy)]
pub struct Kept {
    /// Elements read whole, before the damaged one.
    pub whole: u64,
    /// Whether the damaged element is kept too, as a list cut short.
    pub partial: bool,
    /// The list's length, as the stream declared it.
    pub len: u64,
    /// Whether its names were kept (read whole before damage in the
    /// attributes after its elements).
    pub names: bool,
}

impl Kept {
    /// What it kept, of `what` (`object 'df'`).
    fn said(&self, what: &str) -> String {
        if self.whole == self.len && !self.partial {
            let named = if self.names {
                "with their names; its class, row names and other attributes, which R stores after its elements, are lost"
            } else {
                "by position: its names, class and other attributes, which R stores after its elements, are lost"
            };
            return format!("all {} elements of {what} whole, {named}", self.len);
        }
        let mut part = format!("the first {} of the {} elements of {what} whole", self.whole, self.len);
        if self.partial {
            part.push_str(&format!(", and element {} cut short", self.whole + 1));
        }
        part.push_str(
            " (by position: a list cut short comes back without its names, class and other \
             attributes, which R stores after its elements)",
        );
        part
    }
}

/// What a salvaging read lost.
#[derive(Debug, Clone)]
pub struct Loss {
    /// The damage that ended the read.
    pub error: Error,
    /// The top-level objects of a `save()` file read whole.
    pub whole: Vec<String>,
    /// The object the damage is in (empty: an `.rds` file's one object),
    /// and whether part of it is kept.
    pub cut: Option<(String, bool)>,
    /// What each list cut short kept, innermost first.
    pub kept: Vec<Kept>,
}

/// Whether `e` is damage a salvaging read stops at, keeping what came
/// before it: bytes cut short or wrong, or a source that broke off; not
/// a limit, a refusal, an interruption or a usage error.
pub fn is_damage(e: &Error) -> bool {
    matches!(e.kind, ErrorKind::Truncated | ErrorKind::Corrupt | ErrorKind::Io)
}

/// `e`, the damage found in a stream of compression `kind`, said as what
/// it is: a file cut short (its compressed stream ends early, or, where
/// `at_end`, before its trailer), or data that fails its check. How far
/// the data reached is the error's offset.
pub fn said(kind: crate::compression::Compression, e: Error, at_end: bool) -> Error {
    use crate::compression::Compression;
    let codec = !matches!(kind, Compression::None) && !kind.is_qs_container();
    if !codec {
        return e;
    }
    let what = match (e.kind, at_end) {
        (ErrorKind::Truncated, true) => format!(
            "the file is cut short: its {} stream ends before its end (the trailer with its check is missing)",
            kind.name()
        ),
        (ErrorKind::Truncated, false) => {
            format!("the file is cut short: its {} stream ends early", kind.name())
        }
        (ErrorKind::Corrupt, _) => format!("the file is damaged: its {} data fails its check", kind.name()),
        _ => return e,
    };
    Error {
        message: format!("{what} ({})", e.message),
        ..e
    }
}

/// The hint a refused damaged file's error ends with.
pub const HINT: &str = "read it with salvage to recover what is intact";

/// `message` with [`HINT`] naming the host's own way to ask for salvage
/// (`salvage = TRUE`, `salvage=True`, `--salvage`).
pub fn hint_as(message: &str, asked: &str) -> String {
    message.replace(HINT, &format!("read it with {asked} to recover what is intact"))
}

/// `e` with [`HINT`] when it is damage a salvaging read would get past.
pub fn with_hint(mut e: Error) -> Error {
    if is_damage(&e) && !e.message.contains(HINT) {
        e.message = format!("{}; {HINT}", e.message);
    }
    e
}

impl Loss {
    /// The warning a salvaging read gives: what was lost, where and why,
    /// and what was kept.
    pub fn message(&self) -> String {
        let mut kept = Vec::new();
        if !self.whole.is_empty() {
            let names: Vec<String> = self.whole.iter().map(|n| format!("'{n}'")).collect();
            kept.push(format!(
                "{} whole ({})",
                plural(names.len() as u64, "object"),
                names.join(", ")
            ));
        }
        if let Some((object, partial)) = &self.cut {
            let what = if object.is_empty() {
                "the object".to_string()
            } else {
                format!("object '{object}'")
            };
            // the outermost list is the object itself
            let outer = self.kept.last();
            match (partial, outer) {
                (true, Some(k)) if k.whole > 0 || k.partial => kept.push(k.said(&what)),
                _ => kept.push(format!("nothing of {what}")),
            }
        }
        let kept = if kept.is_empty() {
            "nothing was read before the damage".to_string()
        } else {
            format!("kept: {}", kept.join("; "))
        };
        format!("{}; {kept}; the rest is lost", damaged(&self.error))
    }
}

/// The warning for a stream read whole whose check at its end failed.
pub fn unchecked(e: &Error) -> String {
    format!(
        "{}; its objects parsed and are given as read, but their values may be wrong",
        damaged(e)
    )
}

/// `e` as the damage of a file: said so once.
fn damaged(e: &Error) -> String {
    let text = e.to_string();
    if text.starts_with("the file is") {
        text
    } else {
        format!("the file is damaged: {text}")
    }
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// What a salvaging read kept of a damaged file, for the rules that
/// choose objects ([`crate::Document::choose_table_object`]): its objects
/// after the damage are unknown.
#[derive(Debug, Clone, Default)]
pub struct Salvaged {
    /// The object the damage is in (empty: an `.rds` file's one object),
    /// and whether part of it is kept.
    pub cut: Option<(String, bool)>,
}

impl Salvaged {
    /// Whether `name` is the object the damage cut short, part of it kept.
    pub fn kept_part_of(&self, name: &str, is_rds: bool) -> bool {
        matches!(&self.cut, Some((cut, true)) if is_rds || cut == name)
    }
}

/// A salvaged list `obj` (see [`Salvaged::kept_part_of`]) taken as a
/// table: a data frame of its whole elements where they are atomic
/// vectors of one length (named as it kept them, else `V1`, `V2`, ... by
/// position), as a data frame cut short is; anything else as it is.
pub fn as_table(obj: RObject, refs: &mut RefTable) -> RObject {
    let rows = match &obj {
        RObject::Vector(v) if !v.flags.object => match &v.data {
            VectorData::List(items) => column_rows(items, refs),
            _ => None,
        },
        _ => None,
    };
    let (Some(rows), RObject::Vector(v)) = (rows, &obj) else {
        return obj;
    };
    let n = match &v.data {
        VectorData::List(items) => items.len(),
        _ => return obj,
    };
    let names: Vec<Option<Vec<u8>>> = match obj.attribute(refs, "names").and_then(|n| n.as_strings()) {
        Some(s) if s.len() == n => (0..n).map(|i| s.get(i).map(<[u8]>::to_vec)).collect(),
        _ => (1..=n).map(|i| Some(format!("V{i}").into_bytes())).collect(),
    };
    let RObject::Vector(v) = obj else { unreachable!() };
    let mut maker = ObjectMaker::with_refs(std::mem::take(refs));
    // compact row names: c(NA, -rows)
    let row_names = maker.vector(VectorData::Integer(ScalarBuffer::from(vec![i32::MIN, -rows])), vec![]);
    let frame = maker.vector(
        v.data,
        vec![
            ("names", make::strings(names.iter().map(|s| s.as_deref()))),
            ("class", make::strings([Some(&b"data.frame"[..])])),
            ("row.names", row_names),
        ],
    );
    *refs = maker.refs;
    frame
}

/// The rows of `items` as a data frame's columns: atomic vectors (no
/// dimensions) all of one length.
fn column_rows(items: &[RObject], refs: &RefTable) -> Option<i32> {
    let mut rows = None;
    for c in items {
        let atomic = match c {
            RObject::Vector(x) => !matches!(x.data, VectorData::List(_) | VectorData::Expression(_)),
            RObject::Altrep(_) => true,
            _ => false,
        };
        if !atomic || c.attribute(refs, "dim").is_some() {
            return None;
        }
        let len = match c {
            RObject::Vector(x) => x.data.len(),
            RObject::Altrep(a) => crate::tree::altrep::length(a, refs)?,
            _ => return None,
        };
        let len = i32::try_from(len).ok()?;
        if rows.is_some_and(|r| r != len) {
            return None;
        }
        rows = Some(len);
    }
    rows
}
