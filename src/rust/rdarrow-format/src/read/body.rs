//! The body of a stream after its header: an `.rds` stream's one object,
//! or a `save()` file's top-level pairlist of objects, each offered to
//! an [`ObjectFilter`], and what a salvaging read kept of them.

use crate::base::error::Result;
use crate::wire::header::{Container, StreamHeader};
use crate::wire::decode::Input;
use crate::tree::*;
use crate::read::{is_pairlist_type, salvage, ObjectFilter, ObjectSpan, Parser, ReadOptions};

/// Read the body of a stream after its header.
///
/// For a `save()` file, each top-level object is offered to `filter`:
/// objects it declines are read with their payloads skipped. Returns the
/// root, the reference table and the span of each top-level object.
pub(crate) fn read_body(
    inp: &mut Input,
    container: Container,
    header: &StreamHeader,
    opts: &ReadOptions,
    filter: &mut dyn ObjectFilter,
    class_rule: bool,
) -> Result<(RObject, RefTable, Vec<ObjectSpan>, crate::checks::trust::Seen, Option<salvage::Loss>)> {
    let mut p = Parser::new(inp, opts);
    p.class_rule = class_rule;
    p.consumer = opts
        .consumer
        .clone()
        .filter(|c| c.takes_columns())
        .map(|c| (c, header.clone()));
    if p.allocator.is_some() {
        p.header = Some(header.clone());
    }
    let mut spans = Vec::new();
    let start = p.inp.offset();
    let first = p.inp.read_int()?;
    let t = unpack(first).sxptype;
    let root = if matches!(container, Container::RData { .. }) && t == sxp::LIST {
        // the top-level pairlist of a save() file: one cell per object
        let mut cells = Vec::new();
        let mut flags = first;
        // salvaging: the object the damage is in, and whether it kept part
        let mut cut: Option<(String, bool)> = None;
        let tail = loop {
            let NodeWord {
                sxptype: t,
                flags: fl,
                has_attr,
                has_tag,
            } = unpack(flags);
            p.seen.note(t, fl.levels);
            let head = p.opt_attributes(has_attr).and_then(|a| {
                let tag = if has_tag { Some(p.item()?) } else { None };
                Ok((a, tag))
            });
            let (attributes, tag) = match head {
                Ok(h) => h,
                Err(e) => {
                    p.lose(e)?;
                    break RObject::Null;
                }
            };
            let name: Vec<u8> = match &tag {
                Some(RObject::Ref(id)) => p.refs.symbol_name(*id).unwrap_or(b"").to_vec(),
                _ => Vec::new(),
            };
            let shown = String::from_utf8_lossy(&name).into_owned();
            let decode = filter.decode(&name);
            p.skipping = !decode;
            p.object = Some(shown.clone());
            let obj_start = p.inp.offset();
            let car = match p.item() {
                Ok(car) => car,
                Err(e) => {
                    p.lose(e.in_object(&shown))?;
                    cut = Some((shown, false));
                    break RObject::Null;
                }
            };
            spans.push(ObjectSpan {
                name,
                start: obj_start,
                end: p.inp.offset(),
                decoded: decode,
            });
            p.skipping = false;
            p.object = None;
            cells.push(Cell {
                sxptype: t,
                flags: fl,
                attributes,
                tag,
                car,
            });
            if let Some(e) = p.lost.take() {
                // a list the damage cut short: kept with its whole part
                p.lost = Some(e.in_object(&shown));
                cut = Some((shown, true));
                break RObject::Null;
            }
            let next = match p.inp.read_int() {
                Ok(next) => next,
                Err(e) => {
                    p.lose(e)?;
                    break RObject::Null;
                }
            };
            if is_pairlist_type(unpack(next).sxptype) {
                flags = next;
                continue;
            }
            match p.item_with_flags(next) {
                Ok(tail) => break tail,
                Err(e) => {
                    p.lose(e)?;
                    break RObject::Null;
                }
            }
        };
        let root = if cells.is_empty() {
            RObject::Null
        } else {
            RObject::Pairlist(Box::new(Pairlist { cells, tail }))
        };
        let loss = p.lost.take().map(|error| salvage::Loss {
            error,
            whole: spans
                .iter()
                .take(spans.len() - usize::from(matches!(cut, Some((_, true)))))
                .map(|s| String::from_utf8_lossy(&s.name).into_owned())
                .collect(),
            cut,
            kept: std::mem::take(&mut p.kept),
        });
        return Ok((root, p.refs, spans, p.seen, loss));
    } else {
        let decode = filter.decode(b"");
        p.skipping = !decode;
        let root = p.item_with_flags(first)?;
        spans.push(ObjectSpan {
            name: Vec::new(),
            start,
            end: p.inp.offset(),
            decoded: decode,
        });
        root
    };
    // an .rds stream's one object: salvaged when it is a list the damage
    // cut short (an object lost whole is the error itself)
    let loss = p.lost.take().map(|error| salvage::Loss {
        error,
        whole: Vec::new(),
        cut: Some((String::new(), true)),
        kept: std::mem::take(&mut p.kept),
    });
    Ok((root, p.refs, spans, p.seen, loss))
}
