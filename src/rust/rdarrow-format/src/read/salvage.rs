//! Salvage: what a read with [`ReadOptions::salvage`] recovers from a
//! damaged file, and the one wording of what it lost.
//!
//! The parser stops at the first damage (bytes cut short or wrong, a
//! source that broke off) and reads nothing after it. Every list it was
//! inside keeps the elements read whole before it (so a data frame keeps
//! its whole columns); such a list comes back without its attributes
//! (names, class, row names), which R's format stores after the elements.
//! A `save()` file keeps the objects before the damaged one, and that one
//! too when it is a list that kept a part. A stream that parses but whose
//! checksum or length fails at its end is kept whole, with a warning that
//! its values may be wrong.
//!
//! [`ReadOptions::salvage`]: crate::read::ReadOptions::salvage

use crate::base::error::{Error, ErrorKind};

/// What one list the damage cut short kept.
#[derive(Debug, Clone, Copy)]
pub struct Kept {
    /// Elements read whole, before the damaged one.
    pub whole: u64,
    /// Whether the damaged element is kept too, as a list cut short.
    pub partial: bool,
    /// The list's length, as the stream declared it.
    pub len: u64,
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
                (true, Some(k)) if k.whole > 0 || k.partial => {
                    let mut part = format!(
                        "the first {} of the {} elements of {what} whole",
                        k.whole, k.len
                    );
                    if k.partial {
                        part.push_str(", and element ");
                        part.push_str(&(k.whole + 1).to_string());
                        part.push_str(" cut short");
                    }
                    part.push_str(
                        " (a list cut short comes back without its names, class and other \
                         attributes, which R stores after its elements)",
                    );
                    kept.push(part);
                }
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
