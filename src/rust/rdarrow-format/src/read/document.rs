//! The document: one parsed file or stream (its container, header,
//! objects and reference table), the rules for which of its objects a
//! call takes (by name, by object path, the only data frame), and the
//! parse that makes it from a [`crate::wire::decode::Input`].

use crate::compression::Compression;
use crate::base::error::{Error, Result};
use crate::wire::header::{self, Container, StreamHeader};
use crate::wire::decode::{Format, Input};
use crate::tree::object_path;
use crate::read::{self, ObjectFilter, ObjectSpan, ReadOptions};
use crate::tree::{self, RObject, RefTable};
use crate::checks::trust;
use std::path::Path;

/// A parsed file or stream.
#[derive(Debug, Clone)]
pub struct Document {
    /// How the file was compressed.
    pub compression: Compression,
    /// What wraps the stream.
    pub container: Container,
    /// The stream's header.
    pub header: StreamHeader,
    /// For a `save()` file, the pairlist of objects; otherwise the object.
    pub root: RObject,
    /// The reference table.
    pub refs: RefTable,
    /// Where each top-level object lies in the decompressed stream.
    pub spans: Vec<ObjectSpan>,
    /// Size of the decompressed stream in bytes.
    pub stream_len: u64,
    /// What the objects taken from it may hold (the read's
    /// [`ReadOptions::trust`]), checked over the whole file when any is taken.
    pub trust: trust::Trust,
    /// The kinds of node the trust rule looks at that the parse met
    /// (`None`: not known, so the check walks the objects).
    pub seen: Option<trust::Seen>,
    /// A read with [`ReadOptions::salvage`] of a damaged file: the
    /// warning to give, saying what was lost and what was kept (`None`:
    /// the file is intact).
    pub damage: Option<String>,
    /// A salvaging read that stopped at damage: what it kept (`None`:
    /// every object of the file was read).
    pub salvaged: Option<read::salvage::Salvaged>,
}

impl Document {
    /// The named top-level objects: the cells of a `save()` file, the
    /// elements of a named list at the top of a `save()` file, or the one
    /// object of an RDS stream (with an empty name).
    pub fn objects(&self) -> Vec<(Vec<u8>, &RObject)> {
        match (self.container, &self.root) {
            (Container::RData { .. }, RObject::Pairlist(_)) => {
                tree::pairlist_entries(&self.root, &self.refs)
                    .into_iter()
                    .map(|(n, v)| (n.unwrap_or(b"").to_vec(), v))
                    .collect()
            }
            (Container::RData { .. }, RObject::Vector(v)) => {
                let names = self
                    .root
                    .attribute(&self.refs, "names")
                    .and_then(|n| n.as_strings());
                match (&v.data, names) {
                    (tree::VectorData::List(items), Some(names)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, it)| (names.get(i).unwrap_or(b"").to_vec(), it))
                        .collect(),
                    _ => vec![(Vec::new(), &self.root)],
                }
            }
            (Container::RData { .. }, RObject::Null) => Vec::new(),
            _ => vec![(Vec::new(), &self.root)],
        }
    }
    /// Move the top-level objects out of the document (for building them
    /// elsewhere without holding two copies). The reference table stays.
    pub fn take_objects(&mut self) -> Vec<(Vec<u8>, RObject)> {
        let names: Vec<Vec<u8>> = self.objects().into_iter().map(|(n, _)| n).collect();
        let named_list = matches!(&self.root, RObject::Vector(v) if matches!(v.data, tree::VectorData::List(_)))
            && self
                .root
                .attribute(&self.refs, "names")
                .and_then(|n| n.as_strings())
                .is_some();
        let values: Vec<RObject> = match (self.container, &mut self.root) {
            (Container::RData { .. }, RObject::Pairlist(p)) => p
                .cells
                .iter_mut()
                .map(|c| std::mem::replace(&mut c.car, RObject::Null))
                .collect(),
            (Container::RData { .. }, RObject::Vector(v)) if named_list => match &mut v.data {
                tree::VectorData::List(items) => std::mem::take(items),
                _ => unreachable!(),
            },
            (Container::RData { .. }, RObject::Null) => Vec::new(),
            _ => vec![std::mem::replace(&mut self.root, RObject::Null)],
        };
        names.into_iter().zip(values).collect()
    }

    /// Whether this is a single-object stream (`saveRDS()`/`serialize()`).
    pub fn is_rds(&self) -> bool {
        self.container.is_rds()
    }

    /// The names of the top-level objects as users see them: an `.rds`
    /// stream's one object is named `stream_name` (see
    /// [`stream_object_name`]), as R users name it after the file.
    pub fn object_names(&self, stream_name: &str) -> Vec<String> {
        if self.is_rds() {
            return vec![stream_name.to_string()];
        }
        self.objects()
            .iter()
            .map(|(n, _)| String::from_utf8_lossy(n).into_owned())
            .collect()
    }

    /// The positions of the objects named `wanted`, in the order asked;
    /// an error naming the missing ones and listing what the file holds.
    pub fn find_objects(&self, wanted: &[String], stream_name: &str) -> Result<Vec<usize>> {
        let names = self.object_names(stream_name);
        let missing: Vec<&String> = wanted.iter().filter(|w| !names.contains(w)).collect();
        if !missing.is_empty() {
            let what = if missing.len() == 1 {
                "object"
            } else {
                "objects"
            };
            if let Some(s) = &self.salvaged {
                // salvaged: the object the damage is in, or one after it
                if let Some((cut, false)) = &s.cut {
                    if missing.iter().any(|m| *m == cut) {
                        return Err(Error::usage(format!(
                            "object '{cut}' is where the file is damaged, and nothing of it could be read; {}",
                            self.damage.as_deref().unwrap_or("")
                        )));
                    }
                }
                return Err(Error::usage(format!(
                    "{what} {} not found in the part of the file read before the damage; {}; {}",
                    quoted(&missing),
                    holds(&names),
                    self.damage.as_deref().unwrap_or("")
                )));
            }
            return Err(Error::usage(format!(
                "{what} {} not found in the file; {}",
                quoted(&missing),
                holds(&names)
            )));
        }
        Ok(wanted
            .iter()
            .filter_map(|w| names.iter().position(|n| n == w))
            .collect())
    }

    /// `object` as a place in this file: the top-level object of that
    /// name, else an object path into one (`lst$a`, see [`object_path`]).
    /// In an `.rds` stream, whose one object is named `stream_name`, a
    /// path or name may also start inside that object: `b$c` is
    /// `name$b$c`, `b` is `name$b` (a path that starts with the object's
    /// name starts at the object). `None` for a name the file does not
    /// hold.
    pub fn path_of(&self, object: &str, stream_name: &str) -> Option<object_path::ObjectPath> {
        if self.object_names(stream_name).iter().any(|n| n == object) {
            return Some(object_path::ObjectPath::top(object));
        }
        if !self.is_rds() {
            return object_path::ObjectPath::nested(object);
        }
        let path = object_path::ObjectPath::parse(object).ok()?;
        if path.top == stream_name {
            return Some(path);
        }
        let mut steps = vec![object_path::Step::Name(path.top)];
        steps.extend(path.steps);
        Some(object_path::ObjectPath {
            top: stream_name.to_string(),
            steps,
        })
    }

    /// Where `object` is ([`Document::path_of`]): the position of its
    /// top-level object, and the path inside it where it is an element.
    pub fn locate(
        &self,
        object: &str,
        stream_name: &str,
    ) -> Result<(usize, Option<object_path::ObjectPath>)> {
        let Some(path) = self.path_of(object, stream_name) else {
            return Err(self
                .find_objects(&[object.to_string()], stream_name)
                .unwrap_err());
        };
        let i = self.find_objects(&[path.top.clone()], stream_name)?[0];
        if path.steps.is_empty() {
            return Ok((i, None));
        }
        path.find(self.objects()[i].1, &self.refs)?;
        Ok((i, Some(path)))
    }

    /// Move the objects `wanted` (names or object paths, see
    /// [`Document::locate`]) out of the document, in the order asked,
    /// each with its name as asked; the rest are dropped (the reference
    /// table stays). An element inside an object shares its payloads'
    /// buffers with it.
    pub fn take_paths(
        &mut self,
        wanted: &[String],
        stream_name: &str,
    ) -> Result<Vec<(String, RObject)>> {
        self.check_trust(stream_name)?;
        let names = self.object_names(stream_name);
        // every missing top-level object at once, as find_objects tells them
        let unknown: Vec<String> = wanted
            .iter()
            .map(|w| self.path_of(w, stream_name).map_or_else(|| w.clone(), |p| p.top))
            .filter(|top| !names.contains(top))
            .collect();
        if !unknown.is_empty() {
            return Err(self.find_objects(&unknown, stream_name).unwrap_err());
        }
        let located = wanted
            .iter()
            .map(|w| self.locate(w, stream_name))
            .collect::<Result<Vec<_>>>()?;
        let refs = self.refs.clone();
        let mut objs: Vec<Option<RObject>> = self
            .take_objects()
            .into_iter()
            .map(|(_, o)| Some(o))
            .collect();
        let mut out = Vec::with_capacity(located.len());
        for (k, (i, path)) in located.iter().enumerate() {
            let label = match path {
                None => names[*i].clone(),
                Some(_) => wanted[k].clone(),
            };
            let used_again = located[k + 1..].iter().any(|(j, _)| j == i);
            let obj = match (path, &mut objs[*i]) {
                (_, None) => RObject::Null,
                (None, slot) if !used_again => slot.take().unwrap_or(RObject::Null),
                (None, Some(o)) => o.clone(),
                (Some(p), Some(o)) => p.find(o, &refs)?.clone(),
            };
            out.push((label, obj));
        }
        Ok(out)
    }

    /// The object to turn into one table: the one named `object`, else
    /// the file's only data frame, else its only object for which
    /// `converts` holds ([`Document::convertible`]); an `.rds` stream's one
    /// object.
    pub fn choose_table_object(
        &self,
        object: Option<&str>,
        stream_name: &str,
        converts: &dyn Fn(&RObject, &RefTable) -> bool,
    ) -> Result<(String, usize)> {
        // a file holding code where R keeps none is refused as such, not
        // for holding nothing to convert
        self.check_trust(stream_name)?;
        if let Some(name) = object {
            let at = self.locate(name, stream_name)?.0;
            return Ok((name.to_string(), at));
        }
        if self.is_rds() {
            return Ok((stream_name.to_string(), 0));
        }
        let names = self.object_names(stream_name);
        let frames = self.data_frames();
        if self.salvaged.is_some() && frames.len() < 2 {
            return Err(self.choice_lost(stream_name));
        }
        match frames.len() {
            1 => Ok((names[frames[0]].clone(), frames[0])),
            0 => {
                let conv = self.convertible(converts);
                match conv.len() {
                    1 => Ok((names[conv[0]].clone(), conv[0])),
                    0 => Err(Error::usage(format!("the file holds no object that converts to Arrow (data frames, vectors, factors, dates, times, matrices, arrays and lists of those do); {}", holds(&names)))),
                    n => {
                        let cands: Vec<&String> = conv.iter().map(|&i| &names[i]).collect();
                        Err(Error::usage(format!("the file holds no data frame and {n} objects that convert; choose one by name: {}", quoted(&cands))))
                    }
                }
            }
            n => {
                let cands: Vec<&String> = frames.iter().map(|&i| &names[i]).collect();
                Err(Error::usage(format!(
                    "the file holds {n} data frames; choose one by name: {}",
                    quoted(&cands)
                )))
            }
        }
    }

    /// Salvaged, a `save()` file read without an object named: the error
    /// of a rule that takes the file's only object of a kind, since the
    /// objects after the damage are unknown, and so is the one an intact
    /// file would give.
    pub fn choice_lost(&self, stream_name: &str) -> Error {
        Error::usage(format!(
            "which object the file would give is not known, as the objects after the damage are lost: choose one by name: {}; {}",
            quoted(&self.object_names(stream_name)),
            self.damage.as_deref().unwrap_or("the file is damaged")
        ))
    }

    /// As [`Document::choose_table_object`], moving the object out (the
    /// document keeps its reference table; its other objects are dropped).
    pub fn take_table_object(
        &mut self,
        object: Option<&str>,
        stream_name: &str,
        converts: &dyn Fn(&RObject, &RefTable) -> bool,
    ) -> Result<(String, RObject)> {
        let (name, obj) = if let Some(o) = object {
            self.take_paths(&[o.to_string()], stream_name)?
                .pop()
                .ok_or_else(|| Error::internal("no object taken"))?
        } else {
            // (choosing checked the file: no second walk)
            let (name, at) = self.choose_table_object(object, stream_name, converts)?;
            let obj = self
                .take_checked_at(&[at], stream_name)
                .pop()
                .map(|(_, o)| o)
                .unwrap_or(RObject::Null);
            (name, obj)
        };
        let obj = self.kept_as_table(&name, obj);
        Ok((name, obj))
    }

    /// The object `name` taken from this document as a table takes it:
    /// what salvage kept of a data frame cut short as a data frame of its
    /// whole columns ([`read::salvage::as_table`]); any other as it is.
    fn kept_as_table(&mut self, name: &str, obj: RObject) -> RObject {
        let is_rds = self.is_rds();
        match &self.salvaged {
            Some(s) if s.kept_part_of(name, is_rds) => read::salvage::as_table(obj, &mut self.refs),
            _ => obj,
        }
    }

    /// Salvaged, a `save()` file whose objects after the damage are lost:
    /// the error when its one object is asked for (as `readRDS()` reads),
    /// since how many objects it holds is not known.
    pub fn one_object_unknown(&self, stream_name: &str) -> Option<Error> {
        (self.salvaged.is_some() && !self.is_rds()).then(|| {
            Error::usage(format!(
                "the file is damaged, so how many objects it holds is not known ({} read before the damage), and it is not read as one object: read it with read_rdata()",
                quoted(&self.object_names(stream_name))
            ))
        })
    }

    /// The warning a read that took the object `name` of a damaged file
    /// gives (`None`: the file is intact): what was lost and kept, and
    /// what was returned.
    pub fn damage_for(&self, name: &str) -> Option<String> {
        self.damage_for_all(&[name])
    }

    /// As [`Document::damage_for`], for a read that took the objects
    /// `names` (a dataset takes every data frame of a file).
    pub fn damage_for_all<S: AsRef<str>>(&self, names: &[S]) -> Option<String> {
        let damage = self.damage.as_ref()?;
        let Some(s) = &self.salvaged else {
            return Some(damage.clone());
        };
        let is_rds = self.is_rds();
        let (kept, whole): (Vec<&str>, Vec<&str>) =
            names.iter().map(AsRef::as_ref).partition(|n| s.kept_part_of(n, is_rds));
        let mut returned = Vec::new();
        if is_rds {
            returned.push(if kept.is_empty() { "the object, read whole" } else { "what was kept of the object" }.to_string());
        } else {
            if !whole.is_empty() {
                let what = if whole.len() == 1 { "object" } else { "objects" };
                returned.push(format!("{what} {}, read whole", quoted(&whole)));
            }
            returned.extend(kept.iter().map(|k| format!("what was kept of object '{k}'")));
        }
        if returned.is_empty() {
            returned.push("nothing".to_string());
        }
        Some(format!("{damage}; returned: {}", returned.join(" and ")))
    }

    /// The objects a dataset takes from this file: an `.rds` stream's one
    /// object (whatever `object` says: a dataset's files are named
    /// after their contents), the one named `object`, else every data frame.
    pub fn choose_frames(&self, object: Option<&str>, stream_name: &str) -> Result<Vec<usize>> {
        self.check_trust(stream_name)?;
        if self.is_rds() {
            return Ok(vec![0]);
        }
        if let Some(name) = object {
            return self.find_objects(&[name.to_string()], stream_name);
        }
        let frames = self.data_frames();
        if frames.is_empty() {
            let names = self.object_names(stream_name);
            if let (Some(_), Some(damage)) = (&self.salvaged, &self.damage) {
                return Err(Error::usage(format!(
                    "no data frame was read whole before the damage (one cut short lost its class with its attributes): choose an object by name: {}; {damage}",
                    holds(&names)
                )));
            }
            return Err(no_data_frame(&names));
        }
        Ok(frames)
    }

    /// The objects a dataset takes from this file ([`Document::choose_frames`];
    /// `object` may be a path into an object of a `save()` file), moved
    /// out; what salvage kept of one cut short as its table
    /// ([`Document::take_table_object`] takes it so too).
    pub fn take_frames(&mut self, object: Option<&str>, stream_name: &str) -> Result<Vec<(String, RObject)>> {
        let taken = match object {
            Some(o) if !self.is_rds() => self.take_paths(&[o.to_string()], stream_name)?,
            _ => {
                let at = self.choose_frames(object, stream_name)?;
                self.take_objects_at(&at, stream_name)?
            }
        };
        Ok(taken.into_iter().map(|(name, obj)| {
            let obj = self.kept_as_table(&name, obj);
            (name, obj)
        }).collect())
    }

    /// The positions of the top-level objects for which `converts` holds
    /// (the consumer's rule: for the Arrow bridge, what its type mapping
    /// knows).
    pub fn convertible(&self, converts: &dyn Fn(&RObject, &RefTable) -> bool) -> Vec<usize> {
        let objs = self.objects();
        (0..objs.len())
            .filter(|&i| converts(objs[i].1, &self.refs))
            .collect()
    }

    /// The positions of the top-level data frames.
    fn data_frames(&self) -> Vec<usize> {
        let objs = self.objects();
        (0..objs.len())
            .filter(|&i| objs[i].1.inherits(&self.refs, "data.frame"))
            .collect()
    }

    /// Move the objects at `positions` out of the document (the others
    /// are dropped; the reference table stays), with their names as
    /// [`Document::object_names`] gives them.
    pub fn take_objects_at(
        &mut self,
        positions: &[usize],
        stream_name: &str,
    ) -> Result<Vec<(String, RObject)>> {
        self.check_trust(stream_name)?;
        Ok(self.take_checked_at(positions, stream_name))
    }

    /// [`Document::take_objects_at`] of a file already checked.
    fn take_checked_at(
        &mut self,
        positions: &[usize],
        stream_name: &str,
    ) -> Vec<(String, RObject)> {
        let names = self.object_names(stream_name);
        let mut objs: Vec<Option<RObject>> = self
            .take_objects()
            .into_iter()
            .map(|(_, o)| Some(o))
            .collect();
        positions
            .iter()
            .filter_map(|&i| {
                Some((
                    names.get(i)?.clone(),
                    objs.get_mut(i)?.take().unwrap_or(RObject::Null),
                ))
            })
            .collect()
    }

    /// Whether every object of the file may be handed on as the read
    /// trusts it ([`trust`]): the whole file, whichever objects are taken,
    /// so that a file holding code where R keeps none is refused as such.
    pub fn check_trust(&self, stream_name: &str) -> Result<()> {
        if self.seen.is_some_and(|s| !s.may_refuse(&self.trust)) {
            // nothing the rule looks at: no walk
            return Ok(());
        }
        trust::check_root(
            &self.root,
            &self.refs,
            &self.trust,
            self.is_rds(),
            stream_name,
        )
    }
}

/// The name R users give the one object of an `.rds` file: the file's
/// base name without its extension.
pub fn stream_object_name(path: &Path) -> String {
    object_name_of(&path.to_string_lossy())
}

/// The name an object read from, or saved without a name to, `source`
/// takes: the last part of the path or URL (without a URL's query and
/// fragment), without its last extension (`x.tar.gz` is `x.tar`; a name
/// that only starts with a dot, `.rds`, stays whole). The one rule of
/// every front end: R's readers and writers, Python's, the command line's
/// and DuckDB's.
pub fn object_name_of(source: &str) -> String {
    let path = if source.contains("://") {
        source.split(['?', '#']).next().unwrap_or(source)
    } else {
        source
    };
    let base = path.rsplit(['/', std::path::MAIN_SEPARATOR]).next().unwrap_or(path);
    match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_string(),
        _ => base.to_string(),
    }
}

/// The error when a file read as holding one object (as `readRDS()`
/// reads) holds `names`, not one.
pub fn not_one_object(names: &[String]) -> Error {
    Error::usage(format!(
        "the file holds {} objects ({}), not one: read it with read_rdata()",
        names.len(),
        quoted(names)
    ))
}

/// `'a', 'b'`: objects named in a message.
pub fn quoted<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|s| format!("'{}'", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The error when a file holds no data frame and none was named.
fn no_data_frame(names: &[String]) -> Error {
    Error::usage(format!(
        "the file holds no data frame; choose an object by name: {}",
        holds(names)
    ))
}

/// What a file holds, for error messages.
fn holds(names: &[String]) -> String {
    if names.is_empty() {
        "it holds no objects".to_string()
    } else {
        format!("it holds {}", quoted(names))
    }
}

/// Which top-level objects a read decodes: all of them, or those named.
/// An `.rds` stream offers its one object with an empty name: it is
/// always decoded (its name is the file's, checked after reading).
#[derive(Debug, Clone, Default)]
pub struct Wanted(pub Option<Vec<String>>);

impl Wanted {
    /// Only the object `name` (every object when `None`).
    pub fn one(name: Option<&str>) -> Self {
        Wanted(name.map(|n| vec![n.to_string()]))
    }
}

impl ObjectFilter for Wanted {
    fn decode(&mut self, name: &[u8]) -> bool {
        // an object named as asked, or the top of an object path
        let top = |n: &str| object_path::ObjectPath::parse(n).map(|p| p.top).ok();
        name.is_empty()
            || self.0.as_ref().is_none_or(|w| {
                w.iter()
                    .any(|n| n.as_bytes() == name || top(n).is_some_and(|t| t.as_bytes() == name))
            })
    }

    /// Objects not asked for are passed over unread where the source
    /// allows it (a lazy-load data base's entries, which for a base in an
    /// object store would each be a download).
    fn parse_declined(&self) -> bool {
        false
    }
}

/// Stack for the parsing thread: deep (but bounded) nesting recurses.
const PARSE_STACK: usize = 1 << 30;

pub(crate) fn parse(
    kind: Compression,
    inp: Input,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    if opts.parse_here {
        return parse_here(kind, inp, opts, filter);
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("rdarrow-parse".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, move || parse_here(kind, inp, opts, filter));
        match handle {
            Ok(h) => h
                .join()
                .unwrap_or_else(|_| Err(Error::internal("the parser panicked"))),
            Err(e) => Err(Error::io(&e, "cannot start the parsing thread")),
        }
    })
}

fn parse_here(
    kind: Compression,
    mut inp: Input,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    let hinted = |e: Error| if opts.salvage { e } else { read::salvage::with_hint(e) };
    // a compressed stream's decompressor said what failed, and where
    let from_codec = |e: Error, at_end: bool| {
        if e.message.starts_with(crate::wire::decode::DECOMPRESSOR_FAILED) {
            read::salvage::said(kind, e, at_end)
        } else {
            e
        }
    };
    let (container, mut header) = header::read_header(&mut inp).map_err(hinted)?;
    let (root, refs, spans, seen, loss) =
        read::body::read_body(&mut inp, container, &header, opts, filter, kind == Compression::Qs)
            .map_err(|e| hinted(from_codec(e, false)))?;
    header.ascii_hex = inp.saw_hex_double;
    let salvaged = loss.as_ref().map(|l| read::salvage::Salvaged { cut: l.cut.clone() });
    let mut damage = loss.map(|mut l| {
        l.error = from_codec(l.error, false);
        l.message()
    });
    if damage.is_none() && header.format == Format::Ascii {
        // the line end after the last token belongs to the stream
        inp.skip_ascii_whitespace().map_err(hinted)?;
    }
    let stream_len = inp.offset();
    if damage.is_none() {
        // the rest of a compressed stream read, so that its checksums and
        // length are checked before anything is returned
        match inp.finish() {
            Ok(()) => {}
            Err(e) if opts.salvage && read::salvage::is_damage(&e) => {
                damage = Some(read::salvage::unchecked(&from_codec(e, true)));
            }
            Err(e) => return Err(hinted(from_codec(e, true))),
        }
    }
    Ok(Document {
        compression: kind,
        container,
        header,
        root,
        refs,
        spans,
        stream_len,
        trust: opts.trust.clone(),
        seen: Some(seen),
        damage,
        salvaged,
    })
}

#[cfg(test)]
mod tests {
    use super::object_name_of;

    #[test]
    fn an_object_takes_the_name_of_its_file_without_the_last_extension() {
        for (source, name) in [
            ("x.rds", "x"),
            ("/a/b/x.tar.gz", "x.tar"),
            ("dir/.rds", ".rds"),
            ("x.", "x"),
            ("x", "x"),
            ("a b #1.RData", "a b #1"),
            ("https://host/d/x.rds?v=1.2#f", "x"),
            ("s3://bucket/p/x.rds", "x"),
            ("dir.d/x", "x"),
        ] {
            assert_eq!(object_name_of(source), name, "{source}");
        }
    }
}
