//! Well-formedness for R: the checks that make a parsed tree safe to hand
//! to R (built natively or by R's own unserializer), which trusts its input
//! and can crash on structures no R writer produces: attribute lists that
//! are not pairlists, tags that are not symbols, environments whose frames
//! are not pairlists, byte code whose code is not an integer vector, and
//! ALTREP objects whose class information or state is malformed.

use crate::tree::altrep;
use crate::base::error::{Error, Result};
use crate::tree::*;

fn bad(what: &str) -> Error {
    Error::corrupt(format!("malformed object: {what}"))
}

fn is_symbol(o: &RObject, refs: &RefTable) -> bool {
    matches!(o, RObject::Ref(id) if matches!(refs.get(*id), Some(RefEntry::Symbol(_))))
        || matches!(
            o,
            RObject::Special(SpecialValue::MissingArg | SpecialValue::UnboundValue)
        )
}

fn is_environment(o: &RObject, refs: &RefTable) -> bool {
    match o {
        RObject::Special(s) => !matches!(s, SpecialValue::MissingArg | SpecialValue::UnboundValue),
        RObject::Ref(id) => matches!(
            refs.get(*id),
            Some(
                RefEntry::Environment(_)
                    | RefEntry::Package(_)
                    | RefEntry::Namespace(_)
                    | RefEntry::Persistent(_)
            )
        ),
        RObject::Null => true,
        _ => false,
    }
}

/// R's strings end at a NUL: R's own reader refuses a string holding one
/// ("embedded nul in string"), and so must anything handed to R.
pub(crate) fn embedded_nul() -> Error {
    Error::corrupt("a string holds an embedded NUL byte, which R strings cannot hold")
}

fn no_nul(c: &CharItem) -> Result<()> {
    match &c.bytes {
        Some(b) if b.contains(&0) => Err(embedded_nul()),
        _ => Ok(()),
    }
}

/// Checks one object (and everything it holds) for R.
pub struct Validator<'r> {
    refs: &'r RefTable,
    seen_env: Vec<bool>,
    max_memory: u64,
}

impl<'r> Validator<'r> {
    /// `max_memory`: the read's memory limit, which expanding an ALTREP
    /// object to check it must respect.
    pub fn new(refs: &'r RefTable, max_memory: u64) -> Self {
        Validator {
            refs,
            seen_env: vec![false; refs.entries.len()],
            max_memory,
        }
    }

    fn attributes(&mut self, a: Option<&RObject>) -> Result<()> {
        match a {
            None | Some(RObject::Null) => Ok(()),
            Some(RObject::Pairlist(p)) => {
                for c in &p.cells {
                    if c.sxptype != sxp::LIST
                        || !c.tag.as_ref().is_some_and(|t| is_symbol(t, self.refs))
                    {
                        return Err(bad("an attribute list whose cells are not tagged by names"));
                    }
                    self.tag(c.tag.as_ref())?;
                    self.object(&c.car)?;
                }
                if !matches!(p.tail, RObject::Null) {
                    return Err(bad("an attribute list that does not end in NULL"));
                }
                Ok(())
            }
            Some(_) => Err(bad("attributes that are not a pairlist")),
        }
    }

    /// A tag's name (a symbol's print name must be a string R can hold).
    fn tag(&mut self, t: Option<&RObject>) -> Result<()> {
        match t {
            Some(RObject::Ref(id)) if matches!(self.refs.get(*id), Some(RefEntry::Symbol(_))) => {
                self.reference(*id)
            }
            _ => Ok(()),
        }
    }

    /// Check an object.
    pub fn object(&mut self, o: &RObject) -> Result<()> {
        match o {
            // made by the consumer itself, as it was read
            RObject::Null | RObject::Special(_) | RObject::Taken(_) => Ok(()),
            RObject::Char(c) => no_nul(c),
            RObject::Ref(id) => self.reference(*id),
            RObject::Pairlist(p) => {
                for c in &p.cells {
                    self.attributes(c.attributes.as_ref())?;
                    if let Some(t) = &c.tag {
                        let ok = match c.sxptype {
                            sxp::CLO | sxp::PROM => is_environment(t, self.refs),
                            _ => is_symbol(t, self.refs) || matches!(t, RObject::Null),
                        };
                        if !ok {
                            return Err(bad("a pairlist tag that is not a name (or a closure environment that is not an environment)"));
                        }
                        self.tag(Some(t))?;
                    }
                    if c.sxptype == sxp::CLO
                        && !matches!(c.car, RObject::Null | RObject::Pairlist(_))
                    {
                        return Err(bad("a function whose formals are not a pairlist"));
                    }
                    self.object(&c.car)?;
                }
                self.object(&p.tail)
            }
            RObject::Vector(v) => {
                match &v.data {
                    VectorData::List(items) | VectorData::Expression(items) => {
                        for it in items {
                            self.object(it)?;
                        }
                    }
                    // one scan of the contiguous string bytes
                    VectorData::Character(sv) if sv.data.as_slice().contains(&0) => {
                        return Err(embedded_nul())
                    }
                    _ => {}
                }
                self.attributes(v.attributes.as_ref())
            }
            RObject::Primitive(p) => self.attributes(p.attributes.as_ref()),
            RObject::S4(s) => self.attributes(s.attributes.as_ref()),
            RObject::Bytecode(b) => {
                self.bytecode(&b.code)?;
                self.attributes(b.attributes.as_ref())
            }
            RObject::Altrep(a) => self.altrep(a),
        }
    }

    fn reference(&mut self, id: RefId) -> Result<()> {
        let slot = id.0 as usize;
        if self.seen_env.get(slot).copied().unwrap_or(true) {
            return Ok(());
        }
        self.seen_env[slot] = true;
        match self.refs.get(id) {
            Some(RefEntry::Environment(e)) => {
                if !is_environment(&e.enclosure, self.refs) {
                    return Err(bad("an environment whose enclosure is not an environment"));
                }
                self.enclosure_and_frame(&e.frame)?;
                match &e.hashtab {
                    RObject::Null => {}
                    RObject::Vector(v) => match &v.data {
                        VectorData::List(buckets) => {
                            for b in buckets {
                                self.enclosure_and_frame(b)?;
                            }
                        }
                        _ => return Err(bad("an environment hash table that is not a list")),
                    },
                    _ => return Err(bad("an environment hash table that is not a list")),
                }
                self.attributes(Some(&e.attributes))?;
                self.object(&e.enclosure)
            }
            Some(RefEntry::ExternalPointer(p)) => {
                self.object(&p.protected)?;
                self.object(&p.tag)?;
                self.attributes(p.attributes.as_ref())
            }
            Some(RefEntry::WeakRef(w)) => self.attributes(w.attributes.as_ref()),
            Some(RefEntry::Symbol(c)) => no_nul(c),
            Some(RefEntry::Package(v) | RefEntry::Namespace(v) | RefEntry::Persistent(v)) => {
                v.iter().try_for_each(no_nul)
            }
            Some(RefEntry::Pending) | None => Err(bad("a reference to an incomplete object")),
        }
    }

    /// A frame (or hash bucket): NULL or a pairlist of bindings tagged by names.
    fn enclosure_and_frame(&mut self, f: &RObject) -> Result<()> {
        match f {
            RObject::Null => Ok(()),
            RObject::Pairlist(p) => {
                for c in &p.cells {
                    if c.sxptype != sxp::LIST
                        || !c.tag.as_ref().is_some_and(|t| is_symbol(t, self.refs))
                    {
                        return Err(bad("an environment binding without a name"));
                    }
                    self.tag(c.tag.as_ref())?;
                    self.attributes(c.attributes.as_ref())?;
                    self.object(&c.car)?;
                }
                if matches!(p.tail, RObject::Null) {
                    Ok(())
                } else {
                    Err(bad("an environment frame that does not end in NULL"))
                }
            }
            _ => Err(bad("an environment frame that is not a pairlist")),
        }
    }

    fn bytecode(&mut self, b: &Bytecode) -> Result<()> {
        match &b.code {
            RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if !x.is_empty()) => {}
            _ => return Err(bad("byte code whose code is not an integer vector")),
        }
        for c in &b.consts {
            match c {
                BcConst::Code(inner) => self.bytecode(inner)?,
                BcConst::Item { value, .. } => self.object(value)?,
                BcConst::Lang(_) => {}
            }
        }
        Ok(())
    }

    fn altrep(&mut self, a: &Altrep) -> Result<()> {
        let info_ok = match &a.info {
            RObject::Pairlist(p) if p.cells.len() >= 3 => {
                is_symbol(&p.cells[0].car, self.refs)
                    && is_symbol(&p.cells[1].car, self.refs)
                    && matches!(&p.cells[2].car, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x.len() == 1))
            }
            _ => false,
        };
        if !info_ok {
            return Err(bad("an ALTREP object whose class information is malformed"));
        }
        self.attributes(Some(&a.attributes))?;
        let (class, _) = altrep::class_of(a, self.refs);
        let base = altrep::base_type(a);
        if !class.is_some_and(altrep::is_base_class) {
            // a class from a package: R rebuilds it with that package's method
            return self.object(&a.state);
        }
        // the state must be exactly what R's own methods expect
        let Some(expected_base) = class.and_then(altrep::base_class_type) else {
            return Err(bad("an unknown wrapper ALTREP class"));
        };
        if base != Some(expected_base) {
            return Err(bad(
                "an ALTREP object whose base type does not match its class",
            ));
        }
        // expanding checks the state's shape and values (a sequence is
        // checked without expanding: R keeps it compact, whatever its length)
        let invalid = |e: Error| {
            bad(&format!(
                "an ALTREP object with an invalid state ({})",
                e.message
            ))
        };
        let data_type = if class.is_some_and(altrep::is_compact_sequence) {
            altrep::check_sequence(a, self.refs).map_err(invalid)?;
            expected_base
        } else {
            altrep::expand_within(a, self.refs, self.max_memory)
                .map_err(invalid)?
                .sxptype()
        };
        if data_type != expected_base {
            return Err(bad("an ALTREP object whose state has the wrong type"));
        }
        match &a.state {
            RObject::Pairlist(p) => {
                let meta = if p.cells.len() > 1 {
                    &p.cells[1].car
                } else {
                    &p.tail
                };
                let meta_ok = match class.unwrap() {
                    b"deferred_string" => {
                        matches!(meta, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if !x.is_empty()))
                    }
                    _ => {
                        matches!(meta, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x.len() == 2))
                    }
                };
                if !meta_ok {
                    return Err(bad("an ALTREP object whose metadata is malformed"));
                }
                let inner = &p.cells[0].car;
                let numbers = match inner {
                    RObject::Vector(v) => {
                        matches!(v.data, VectorData::Integer(_) | VectorData::Real(_))
                            && v.attributes.is_none()
                    }
                    RObject::Altrep(ia) => {
                        matches!(altrep::base_type(ia), Some(sxp::INT | sxp::REAL))
                    }
                    _ => false,
                };
                if class.unwrap() == b"deferred_string" && !numbers {
                    return Err(bad(
                        "a deferred string whose numbers are not a plain vector",
                    ));
                }
                if let RObject::Vector(v) = inner {
                    if class.unwrap() != b"deferred_string" && v.data.sxptype() != expected_base {
                        return Err(bad("a wrapper whose wrapped vector has the wrong type"));
                    }
                }
                self.object(inner)
            }
            RObject::Vector(v) => match &v.data {
                VectorData::Real(x) if x.len() == 3 && v.attributes.is_none() => Ok(()),
                _ => Err(bad("a compact sequence whose state is not three numbers")),
            },
            _ => Err(bad("an ALTREP object whose state is malformed")),
        }
    }
}

/// Check that `obj` is safe to hand to R.
pub fn check_for_r(obj: &RObject, refs: &RefTable) -> Result<()> {
    check_for_r_within(obj, refs, crate::base::limits::physical_memory())
}

/// As [`check_for_r`], within a read's memory limit, without the trust
/// rule: for objects a document handed on, which checked the whole file
/// (`Document::check_trust`).
pub fn check_well_formed_within(obj: &RObject, refs: &RefTable, max_memory: u64) -> Result<()> {
    Validator::new(refs, max_memory).object(obj)
}

/// As [`check_for_r`], within a read's memory limit.
pub fn check_for_r_within(obj: &RObject, refs: &RefTable, max_memory: u64) -> Result<()> {
    check_well_formed_within(obj, refs, max_memory)?;
    // and no promise where R keeps none, whoever made the object
    crate::checks::trust::check(obj, refs, &crate::checks::trust::Trust::Code, "")
}
