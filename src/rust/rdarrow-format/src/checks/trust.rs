//! What a read may hand on: the one rule for code inside R files, for
//! every consumer (R, Arrow, Python, DuckDB).
//!
//! R's format can carry code that runs without being called: a *promise*
//! (an unevaluated argument, `PROMSXP`) runs its code as soon as its value
//! is used, so a file holding one outside an environment runs the file's
//! code when a script merely prints what it read (CVE-2024-27322; R 4.4
//! refuses a promise at the top of `readRDS()`). Two levels:
//!
//! - [`Trust::Code`], the default: R's meaning, less loose promises. A
//!   promise is allowed only where R itself puts one when it saves a
//!   closure's unevaluated arguments: as the value of a binding in an
//!   environment's frame (or an element of a `...` bound there), and, as
//!   R's method dispatch makes them, inside such a promise (its value, its
//!   code, calls in its code). A promise anywhere else (the object itself,
//!   a list element, an attribute or slot, an `.RData` binding, inside a
//!   call or byte code) refuses the whole file, on every R version.
//! - [`Trust::DataOnly`], for files from strangers (`trusted = FALSE` in
//!   R): nothing that runs code, or changes the session, by being read or
//!   used. Refused besides: promises anywhere, active bindings, closures,
//!   byte code, references to namespaces that are not loaded and package
//!   environments that are not attached (rebuilding them loads the
//!   package, running its code), ALTREP objects of classes outside base R
//!   (their package's code rebuilds them) and persistent references (a
//!   hook's code rebuilds them). What remains is data: vectors, lists,
//!   attributes, S4 objects, calls and formulas (inert until evaluated),
//!   environments of such data, null external pointers, the global, base
//!   and empty environments, loaded namespaces and attached packages, base
//!   R's ALTREP classes, builtins. Rebuilding any of it runs no R code.
//!
//! No level makes a reader a sandbox for code the user calls later: a
//! closure in a trusted file is still code. The check walks nodes, not
//! payloads, and only files whose parse met a node it looks at
//! ([`Seen`]): a file of data is not walked at all.

use crate::tree::altrep;
use crate::base::error::{Error, ErrorKind, Result};
use crate::tree::object_path::quote_name;
use crate::tree::*;

/// How far a read trusts its file; see the module's documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Trust {
    /// R's meaning, with promises only as bindings in environments' frames.
    #[default]
    Code,
    /// Data only: what the host already has may be referred to.
    DataOnly(Host),
}

/// What the host session already has loaded, which a file of data may
/// refer to without loading anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Host {
    /// The namespaces loaded (R's `loadedNamespaces()`).
    pub namespaces: Vec<String>,
    /// The environments on the search path (R's `search()`:
    /// `"package:stats"`, ...).
    pub attached: Vec<String>,
}

/// The kinds of node the rule looks at that a parse met ([`Seen::note`]
/// for each node's type): a document without any needs no walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen(u8);

impl Seen {
    const PROMISE: u8 = 1;
    /// Functions, byte code, active bindings.
    const CODE: u8 = 2;
    /// Namespaces, package environments, persistent references.
    const NAMED: u8 = 4;
    const ALTREP: u8 = 8;

    /// Note a node of type `sxptype` (a binding cell's `levels` too).
    #[inline]
    pub fn note(&mut self, sxptype: u8, levels: u16) {
        self.0 |= match sxptype {
            sxp::PROM => Self::PROMISE,
            sxp::CLO | sxp::BCODE => Self::CODE,
            sxp::LIST if levels & crate::tree::levels::ACTIVE_BINDING != 0 => Self::CODE,
            sxp::NAMESPACE | sxp::PACKAGE | sxp::PERSIST => Self::NAMED,
            sxp::ALTREP => Self::ALTREP,
            _ => 0,
        };
    }

    /// What two parses met.
    pub fn and(self, other: Seen) -> Seen {
        Seen(self.0 | other.0)
    }

    /// Whether a file whose parse met these may hold what `trust` refuses
    /// (else it holds nothing the rule looks at).
    pub fn may_refuse(self, trust: &Trust) -> bool {
        match trust {
            Trust::Code => self.0 & Self::PROMISE != 0,
            Trust::DataOnly(_) => self.0 != 0,
        }
    }
}

/// Check `obj`, the object a read hands on under the name `name` (a
/// top-level name or an object path), against `trust`; the error names
/// the place of the first refused node as R code reaches it.
pub fn check<'a>(obj: &'a RObject, refs: &'a RefTable, trust: &'a Trust, name: &str) -> Result<()> {
    Walk::new(refs, trust).top(obj, name)
}

/// Check every object of a document's root as [`check`] does: the objects
/// of a `save()` file (named by their bindings), or the one object of a
/// stream (named `stream_name`). What the objects share is walked once.
pub fn check_root<'a>(
    root: &'a RObject,
    refs: &'a RefTable,
    trust: &'a Trust,
    is_rds: bool,
    stream_name: &str,
) -> Result<()> {
    let mut w = Walk::new(refs, trust);
    match root {
        // the bindings of a save() file: each value is an object of its own
        RObject::Pairlist(p) if !is_rds && p.cells.iter().all(|c| c.sxptype == sxp::LIST) => {
            for c in &p.cells {
                let name = String::from_utf8_lossy(tag_name(c.tag.as_ref(), refs));
                if let Some(t) = &c.tag {
                    w.top(t, &name)?;
                }
                w.top(&c.car, &name)?;
                if let Some(a) = &c.attributes {
                    w.top(a, &name)?;
                }
            }
            w.top(&p.tail, stream_name)
        }
        _ => w.top(root, stream_name),
    }
}

/// The name a cell's tag gives it (empty when none).
fn tag_name<'a>(tag: Option<&RObject>, refs: &'a RefTable) -> &'a [u8] {
    match tag {
        Some(RObject::Ref(id)) => refs.symbol_name(*id),
        _ => None,
    }
    .unwrap_or_default()
}

/// The message for a promise found where R does not keep one (one
/// wording for every consumer).
pub fn promise_message(place: &str) -> String {
    format!(
        "{place} is a promise, which would run code from the file when its value is used; \
         rdarrow refuses promises outside environments' frames on every R version, as R 4.4 does"
    )
}

/// One step from an object into what it holds, for naming a place (the
/// names borrowed from the tree: only an error makes text of them).
#[derive(Debug, Clone)]
enum Step<'a> {
    /// `$name`.
    Name(&'a [u8]),
    /// `[[i]]` (from 1).
    Position(usize),
    /// `@slot`.
    Slot(&'a [u8]),
    /// `attr(, "name")`.
    Attribute(&'a [u8]),
    /// `environment()` of a function or promise.
    Environment,
    /// `parent.env()`.
    Parent,
    /// Inside a promise, call or function (named by the object).
    Code,
}

/// Why a node is refused.
enum Refused {
    Promise,
    DataOnly(String),
}

impl Refused {
    fn error(&self, top: &str, path: &[Step<'_>]) -> Error {
        let place = display(top, path);
        match self {
            Refused::Promise => Error::new(ErrorKind::Unsafe, promise_message(&format!("'{place}'"))),
            Refused::DataOnly(what) => Error::new(
                ErrorKind::Unsafe,
                format!(
                    "'{place}' is {what}; an untrusted file is read as data only (read a file you trust with trusted = TRUE)"
                ),
            ),
        }
    }
}

/// The place `path` leads to from `top`, as R code reaches it.
fn display(top: &str, path: &[Step<'_>]) -> String {
    let text = |n: &[u8]| String::from_utf8_lossy(n).into_owned();
    let mut s = if top.is_empty() {
        "the object".to_string()
    } else {
        quote_name(top)
    };
    for step in path {
        match step {
            Step::Name(n) => s = format!("{s}${}", quote_name(&text(n))),
            Step::Position(i) => s.push_str(&format!("[[{i}]]")),
            Step::Slot(n) => s = format!("{s}@{}", quote_name(&text(n))),
            Step::Attribute(n) => s = format!("attr({s}, \"{}\")", text(n)),
            Step::Environment => s = format!("environment({s})"),
            Step::Parent => s = format!("parent.env({s})"),
            // a node inside a call, function or promise: named by it
            Step::Code => {}
        }
    }
    s
}

struct Walk<'r> {
    refs: &'r RefTable,
    trust: &'r Trust,
    seen: Vec<bool>,
    path: Vec<Step<'r>>,
    /// Inside a promise R keeps (its value and code): R's own, and run only
    /// as R runs the promise, so the promises it holds are kept too (method
    /// dispatch puts promises in promises' values and calls).
    in_kept: bool,
}

type Walked = std::result::Result<(), Refused>;

impl<'r> Walk<'r> {
    fn new(refs: &'r RefTable, trust: &'r Trust) -> Self {
        Walk {
            refs,
            trust,
            seen: vec![false; refs.entries.len()],
            path: Vec::new(),
            in_kept: false,
        }
    }

    /// A top-level object (or object path) `name`.
    fn top(&mut self, obj: &'r RObject, name: &str) -> Result<()> {
        self.path.clear();
        self.object(obj, false)
            .map_err(|why| why.error(name, &self.path).in_object(name))
    }

    fn data_only(&self) -> Option<&Host> {
        match self.trust {
            Trust::DataOnly(h) => Some(h),
            Trust::Code => None,
        }
    }

    fn refuse_code(&self, what: &str) -> Walked {
        match self.data_only() {
            Some(_) => Err(Refused::DataOnly(what.to_string())),
            None => Ok(()),
        }
    }

    fn within(&mut self, step: Step<'r>, f: impl FnOnce(&mut Self) -> Walked) -> Walked {
        self.path.push(step);
        f(self)?;
        self.path.pop();
        Ok(())
    }

    /// An object; `binding`: it is the value of a binding in an
    /// environment's frame (where R keeps promises).
    fn object(&mut self, o: &'r RObject, binding: bool) -> Walked {
        match o {
            RObject::Null | RObject::Special(_) | RObject::Char(_) | RObject::Taken(_) => Ok(()),
            RObject::Primitive(p) => self.attributes(p.attributes.as_ref(), false),
            RObject::Ref(id) => self.reference(*id),
            RObject::Pairlist(p) => self.pairlist(p, binding),
            RObject::Vector(v) => {
                if let VectorData::List(items) | VectorData::Expression(items) = &v.data {
                    let names = o.attribute(self.refs, "names").and_then(|n| n.as_strings());
                    for (i, it) in items.iter().enumerate() {
                        let step = match names.and_then(|n| n.get(i)) {
                            Some(n) if !n.is_empty() => Step::Name(n),
                            _ => Step::Position(i + 1),
                        };
                        self.within(step, |w| w.object(it, false))?;
                    }
                }
                self.attributes(v.attributes.as_ref(), false)
            }
            RObject::S4(s) => self.attributes(s.attributes.as_ref(), true),
            RObject::Bytecode(b) => {
                self.refuse_code("byte code, which is code from the file")?;
                self.bytecode(&b.code)?;
                self.attributes(b.attributes.as_ref(), false)
            }
            RObject::Altrep(a) => {
                if self.data_only().is_some() {
                    let (class, package) = altrep::class_of(a, self.refs);
                    if !class.is_some_and(altrep::is_base_class) {
                        let name = |b: Option<&[u8]>| {
                            b.map_or_else(
                                || "?".into(),
                                |b| String::from_utf8_lossy(b).into_owned(),
                            )
                        };
                        return Err(Refused::DataOnly(format!(
                            "an ALTREP object of class '{}' from package '{}', which that package's code rebuilds",
                            name(class),
                            name(package)
                        )));
                    }
                }
                self.object(&a.state, false)?;
                self.attributes(Some(&a.attributes), false)
            }
        }
    }

    fn attributes(&mut self, a: Option<&'r RObject>, slots: bool) -> Walked {
        let Some(a) = a else { return Ok(()) };
        match a {
            RObject::Pairlist(p) => {
                for c in &p.cells {
                    let name = tag_name(c.tag.as_ref(), self.refs);
                    let step = if slots && name != b"class" {
                        Step::Slot(name)
                    } else {
                        Step::Attribute(name)
                    };
                    self.within(step, |w| {
                        w.named_cell(c)?;
                        w.object(&c.car, false)
                    })?;
                }
                self.object(&p.tail, false)
            }
            other => self.object(other, false),
        }
    }

    fn promise_here(&self, binding: bool) -> Walked {
        if (binding || self.in_kept) && self.data_only().is_none() {
            Ok(())
        } else {
            Err(Refused::Promise)
        }
    }

    fn pairlist(&mut self, p: &'r Pairlist, binding: bool) -> Walked {
        // `...` bound in a frame holds the promises of its arguments (a
        // DOTSXP cell, then pairlist cells)
        let dots = binding && p.cells.first().is_some_and(|c| c.sxptype == sxp::DOT);
        // a promise bound in a frame (or held by one) is kept, and with it
        // everything it holds: its value, and its code to the chain's end
        let kept = (binding || self.in_kept)
            && p.cells.first().is_some_and(|c| c.sxptype == sxp::PROM)
            && self.data_only().is_none();
        if kept && !self.in_kept {
            self.in_kept = true;
            let walked = self.pairlist(p, binding);
            self.in_kept = false;
            return walked;
        }
        for (k, c) in p.cells.iter().enumerate() {
            match c.sxptype {
                sxp::PROM => self.promise_here(binding && k == 0)?,
                sxp::CLO => self.refuse_code("a function, which is code from the file")?,
                _ => {}
            }
            let step = match (&c.tag, c.sxptype) {
                (_, sxp::CLO | sxp::PROM | sxp::LANG | sxp::BCODE) => Step::Code,
                (Some(RObject::Ref(id)), _) => match self.refs.symbol_name(*id) {
                    Some(n) => Step::Name(n),
                    None => Step::Position(k + 1),
                },
                _ => Step::Position(k + 1),
            };
            self.within(step, |w| {
                w.attributes(c.attributes.as_ref(), false)?;
                if let Some(t) = &c.tag {
                    if matches!(c.sxptype, sxp::CLO | sxp::PROM) {
                        w.within(Step::Environment, |w| w.object(t, false))?;
                    } else {
                        w.object(t, false)?;
                    }
                }
                w.object(&c.car, dots)
            })?;
        }
        self.object(&p.tail, false)
    }

    fn reference(&mut self, id: RefId) -> Walked {
        let slot = id.0 as usize;
        if self.seen.get(slot).copied().unwrap_or(true) {
            return Ok(());
        }
        self.seen[slot] = true;
        let outer = std::mem::replace(&mut self.in_kept, false);
        let walked = self.referenced(id);
        self.in_kept = outer;
        walked
    }

    /// What a reference leads to, walked once (see [`Walk::reference`]).
    fn referenced(&mut self, id: RefId) -> Walked {
        match self.refs.get(id) {
            Some(RefEntry::Environment(e)) => {
                self.frame(&e.frame)?;
                match &e.hashtab {
                    RObject::Vector(v) if matches!(v.data, VectorData::List(_)) => {
                        if let VectorData::List(buckets) = &v.data {
                            for b in buckets {
                                self.frame(b)?;
                            }
                        }
                        self.attributes(v.attributes.as_ref(), false)?;
                    }
                    // not a hash table as R writes one: walked as it is
                    other => self.object(other, false)?,
                }
                self.attributes(Some(&e.attributes), false)?;
                self.within(Step::Parent, |w| w.object(&e.enclosure, false))
            }
            Some(RefEntry::ExternalPointer(p)) => {
                self.object(&p.protected, false)?;
                self.object(&p.tag, false)?;
                self.attributes(p.attributes.as_ref(), false)
            }
            Some(RefEntry::WeakRef(w)) => self.attributes(w.attributes.as_ref(), false),
            Some(RefEntry::Namespace(v)) => {
                self.host_has(v, |h| &h.namespaces, "the namespace", "loaded")
            }
            Some(RefEntry::Package(v)) => {
                self.host_has(v, |h| &h.attached, "the package environment", "attached")
            }
            Some(RefEntry::Persistent(_)) => self
                .refuse_code("a persistent reference, which a hook's code would have to rebuild"),
            Some(RefEntry::Symbol(_)) | Some(RefEntry::Pending) | None => Ok(()),
        }
    }

    /// A reference by name to what the host has (`which` of its lists): as
    /// data only, refused unless the host has it already (rebuilding it
    /// would load its package).
    fn host_has(
        &self,
        name: &[CharItem],
        which: impl Fn(&Host) -> &Vec<String>,
        what: &str,
        state: &str,
    ) -> Walked {
        let Some(host) = self.data_only() else {
            return Ok(());
        };
        let name = name.first().and_then(|c| c.bytes.as_deref()).unwrap_or(b"");
        let name = String::from_utf8_lossy(name).into_owned();
        if which(host).contains(&name) {
            return Ok(());
        }
        Err(Refused::DataOnly(format!(
            "a reference to {what} '{name}', which is not {state}: rebuilding it would load the package, running its code"
        )))
    }

    /// An environment's frame (or a bucket of its hash table): bindings,
    /// whose values may be promises.
    fn frame(&mut self, f: &'r RObject) -> Walked {
        let RObject::Pairlist(p) = f else {
            return self.object(f, false);
        };
        for c in &p.cells {
            let name = tag_name(c.tag.as_ref(), self.refs);
            if c.flags.levels & levels::ACTIVE_BINDING != 0 {
                self.within(Step::Name(name), |w| {
                    w.refuse_code(
                        "an active binding, which runs code from the file when it is read",
                    )
                })?;
            }
            self.within(Step::Name(name), |w| {
                w.named_cell(c)?;
                w.object(&c.car, true)
            })?;
        }
        self.object(&p.tail, false)
    }

    /// A cell of a list of named values (attributes, a frame): R writes
    /// pairlist cells there, but the rule holds whatever the file says the
    /// cell is, its tag and attributes included.
    fn named_cell(&mut self, c: &'r Cell) -> Walked {
        match c.sxptype {
            sxp::PROM => self.promise_here(false)?,
            sxp::CLO => self.refuse_code("a function, which is code from the file")?,
            _ => {}
        }
        if let Some(t) = &c.tag {
            self.object(t, false)?;
        }
        self.attributes(c.attributes.as_ref(), false)
    }

    fn bytecode(&mut self, b: &'r Bytecode) -> Walked {
        self.within(Step::Code, |w| {
            w.object(&b.code, false)?;
            for c in &b.consts {
                match c {
                    BcConst::Code(inner) => w.bytecode(inner)?,
                    BcConst::Item { value, .. } => w.object(value, false)?,
                    BcConst::Lang(l) => w.bc_lang(l)?,
                }
            }
            Ok(())
        })
    }

    fn bc_lang(&mut self, l: &'r BcLang) -> Walked {
        match l {
            BcLang::Ref(_) => Ok(()),
            BcLang::Item { value, .. } => self.object(value, false),
            BcLang::Cell(c) => {
                self.attributes(c.attributes.as_ref(), false)?;
                self.object(&c.tag, false)?;
                self.bc_lang(&c.car)?;
                self.bc_lang(&c.cdr)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::ReadOptions;

    // R's serialization written token by token (XDR, version 3), for what
    // no R function writes.
    fn int(v: i32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }
    fn flags(t: i32, attr: bool, tag: bool, object: bool, levels: i32) -> Vec<u8> {
        int(t | (object as i32) << 8 | (attr as i32) << 9 | (tag as i32) << 10 | levels << 12)
    }
    fn chr(s: &str) -> Vec<u8> {
        [
            flags(9, false, false, false, 64),
            int(s.len() as i32),
            s.as_bytes().to_vec(),
        ]
        .concat()
    }
    fn sym(s: &str) -> Vec<u8> {
        [flags(1, false, false, false, 0), chr(s)].concat()
    }
    fn nil() -> Vec<u8> {
        int(254)
    }
    fn ints(v: &[i32], attrs: Option<Vec<u8>>) -> Vec<u8> {
        let mut out = [
            flags(13, attrs.is_some(), false, false, 0),
            int(v.len() as i32),
        ]
        .concat();
        v.iter().for_each(|&x| out.extend(int(x)));
        out.extend(attrs.unwrap_or_default());
        out
    }
    fn strs(v: &[&str]) -> Vec<u8> {
        let mut out = [flags(16, false, false, false, 0), int(v.len() as i32)].concat();
        v.iter().for_each(|s| out.extend(chr(s)));
        out
    }
    /// A tagged pairlist; `levels` of each cell (an active binding's bit).
    fn pairlist(items: &[(&str, Vec<u8>, i32)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, v, levels) in items {
            out.extend([flags(2, false, true, false, *levels), sym(n), v.clone()].concat());
        }
        out.extend(nil());
        out
    }
    fn list(items: &[Vec<u8>]) -> Vec<u8> {
        let mut out = [flags(19, false, false, false, 0), int(items.len() as i32)].concat();
        items.iter().for_each(|i| out.extend(i.clone()));
        out
    }
    fn call() -> Vec<u8> {
        // file.create("marker")
        [
            flags(6, false, false, false, 0),
            sym("file.create"),
            flags(2, false, false, false, 0),
            strs(&["marker"]),
            nil(),
        ]
        .concat()
    }
    fn promise() -> Vec<u8> {
        [flags(5, false, true, false, 0), int(253), int(252), call()].concat()
    }
    fn closure() -> Vec<u8> {
        // function(x) x, in the global environment
        [
            flags(3, false, true, false, 0),
            int(253),
            pairlist(&[("x", int(251), 0)]),
            sym("y"),
        ]
        .concat()
    }
    /// An unhashed environment (enclosure: the empty one) of these bindings.
    fn env(bindings: &[(&str, Vec<u8>, i32)]) -> Vec<u8> {
        [int(4), int(0), int(242), pairlist(bindings), nil(), nil()].concat()
    }
    fn stream(node: Vec<u8>, rdata: bool) -> Vec<u8> {
        let lead: &[u8] = if rdata { b"RDX3\nX\n" } else { b"X\n" };
        [
            lead.to_vec(),
            int(3),
            int(262658),
            int(197888),
            int(5),
            b"UTF-8".to_vec(),
            node,
        ]
        .concat()
    }

    fn take(bytes: Vec<u8>, trust: Trust) -> Result<Vec<(String, RObject)>> {
        let opts = ReadOptions {
            trust,
            ..Default::default()
        };
        let mut doc = crate::read_bytes(bytes, &opts)?;
        let all: Vec<usize> = (0..doc.objects().len()).collect();
        doc.take_objects_at(&all, "x")
    }

    fn refused(bytes: Vec<u8>, trust: Trust, words: &str) {
        let e = take(bytes, trust).expect_err("refused");
        assert_eq!(e.kind, ErrorKind::Unsafe, "{e}");
        assert!(e.message.contains(words), "'{words}' not in: {}", e.message);
    }

    fn data_only() -> Trust {
        Trust::DataOnly(Host {
            namespaces: vec!["utils".into()],
            attached: vec!["package:stats".into()],
        })
    }

    #[test]
    fn promises_outside_frames_are_refused_and_named_by_their_place() {
        let s4 = {
            let class = [
                flags(16, true, false, false, 0),
                int(1),
                chr("Thing"),
                pairlist(&[("package", strs(&[".GlobalEnv"]), 0)]),
            ]
            .concat();
            [
                flags(25, true, false, true, 16),
                pairlist(&[("foo", promise(), 0), ("class", class, 0)]),
            ]
            .concat()
        };
        let cases: Vec<(Vec<u8>, bool, &str)> = vec![
            (promise(), false, "'x' is a promise"),
            (
                list(&[ints(&[1], None), promise()]),
                false,
                "'x[[2]]' is a promise",
            ),
            (
                ints(&[1, 2], Some(pairlist(&[("foo", promise(), 0)]))),
                false,
                "'attr(x, \"foo\")' is a promise",
            ),
            (s4, false, "'x@foo' is a promise"),
            (
                pairlist(&[("a", ints(&[1], None), 0), ("b", promise(), 0)]),
                true,
                "'b' is a promise",
            ),
            // inside a call, even one bound in a frame
            (
                env(&[(
                    "f",
                    [
                        flags(6, false, false, false, 0),
                        sym("g"),
                        flags(2, false, false, false, 0),
                        promise(),
                        nil(),
                    ]
                    .concat(),
                    0,
                )]),
                false,
                "'x$f[[2]]' is a promise",
            ),
        ];
        for (node, rdata, words) in cases {
            refused(stream(node.clone(), rdata), Trust::Code, words);
            refused(stream(node, rdata), data_only(), words);
        }
    }

    #[test]
    fn promises_bound_in_frames_keep_r_meaning_unless_data_only() {
        let bound = env(&[("n", promise(), 0)]);
        assert!(take(stream(list(&[bound.clone()]), false), Trust::Code).is_ok());
        refused(
            stream(list(&[bound]), false),
            data_only(),
            "'x[[1]]$n' is a promise",
        );
        // `...` bound in a frame holds its arguments' promises
        let dots = [
            flags(17, false, false, false, 0),
            promise(),
            flags(2, false, false, false, 0),
            promise(),
            nil(),
        ]
        .concat();
        assert!(take(stream(env(&[("...", dots, 0)]), false), Trust::Code).is_ok());
        // a bound promise whose value and code are promises (as method
        // dispatch makes them) is R's own too; the same nested anywhere else
        // is not
        let nested = [
            flags(5, false, true, false, 0),
            int(253),
            promise(),
            promise(),
        ]
        .concat();
        assert!(take(stream(env(&[("p", nested.clone(), 0)]), false), Trust::Code).is_ok());
        refused(
            stream(list(&[nested]), false),
            Trust::Code,
            "'x[[1]]' is a promise",
        );
        // and a call holding a promise, as a bound promise's code
        let in_call = [
            flags(5, false, true, false, 0),
            int(253),
            int(252),
            flags(6, false, false, false, 0),
            sym("f"),
            flags(2, false, true, false, 0),
            sym(".Object"),
            promise(),
            nil(),
        ]
        .concat();
        assert!(take(
            stream(env(&[("p", in_call.clone(), 0)]), false),
            Trust::Code
        )
        .is_ok());
        refused(
            stream(list(&[in_call]), false),
            Trust::Code,
            "'x[[1]]' is a promise",
        );
    }

    #[test]
    fn data_only_refuses_code_and_what_would_load_packages() {
        refused(
            stream(list(&[closure()]), false),
            data_only(),
            "'x[[1]]' is a function",
        );
        assert!(take(stream(list(&[closure()]), false), Trust::Code).is_ok());
        let active = env(&[("a", closure(), 1 << 15)]);
        refused(
            stream(active, false),
            data_only(),
            "'x$a' is an active binding",
        );
        let ns = |name: &str| [int(249), int(0), int(2), chr(name), chr("1.0")].concat();
        refused(
            stream(ns("evil"), false),
            data_only(),
            "the namespace 'evil', which is not loaded",
        );
        assert!(take(stream(ns("utils"), false), data_only()).is_ok());
        assert!(take(stream(ns("evil"), false), Trust::Code).is_ok());
        let pkg = |name: &str| [int(248), int(0), int(1), chr(name)].concat();
        refused(
            stream(pkg("package:evil"), false),
            data_only(),
            "'package:evil', which is not attached",
        );
        assert!(take(stream(pkg("package:stats"), false), data_only()).is_ok());
        let altrep = |class: &str, package: &str| {
            [
                int(238),
                flags(2, false, false, false, 0),
                sym(class),
                flags(2, false, false, false, 0),
                sym(package),
                flags(2, false, false, false, 0),
                ints(&[13], None),
                nil(),
                ints(&[1, 2, 3], None),
                nil(),
            ]
            .concat()
        };
        refused(
            stream(altrep("vroom_int", "vroom"), false),
            data_only(),
            "class 'vroom_int' from package 'vroom'",
        );
        // whatever a named list's cell says it is (fuzzing found a
        // function cell among an object's attributes)
        let odd = ints(
            &[1],
            Some([flags(3, false, true, false, 0), int(253), nil(), nil()].concat()),
        );
        refused(stream(odd, false), data_only(), "is a function");
        // data reads as data
        let data = list(&[
            ints(&[1, 2], Some(pairlist(&[("names", strs(&["a", "b"]), 0)]))),
            env(&[("v", strs(&["x"]), 0)]),
            int(253),
        ]);
        assert!(take(stream(data, false), data_only()).is_ok());
    }
}
