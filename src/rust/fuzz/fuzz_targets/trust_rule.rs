//! Bytes of a file or stream -> parse -> the trust rule (`rdarrow_arrow::
//! trust`) at both levels, against a plain scan of every node. Panics when
//! the rule lets through what it must refuse: a file passing as data only
//! holding a promise, function or byte code anywhere; a file passing the
//! default rule while data only is more lenient; a refusal that is not the
//! rule's kind; a file that passes, written back and read again, refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::tree::sxp;
use rdarrow_arrow::tree::RObject;
use rdarrow_arrow::tree::RefEntry;
use rdarrow_arrow::tree::RefTable;
use rdarrow_arrow::tree::VectorData;
use rdarrow_arrow::checks::trust;
use rdarrow_arrow::checks::trust::Host;
use rdarrow_arrow::checks::trust::Trust;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::write_document;
use rdarrow_arrow::ErrorKind;
use rdarrow_arrow::ReadOptions;

/// Whether any promise, function or byte code is reachable from `o`.
fn code_anywhere(o: &RObject, refs: &RefTable, seen: &mut Vec<bool>, depth: usize) -> bool {
    if depth > 600 {
        return false;
    }
    let d = depth + 1;
    let attrs = |a: Option<&RObject>, seen: &mut Vec<bool>| a.is_some_and(|a| code_anywhere(a, refs, seen, d));
    match o {
        RObject::Pairlist(p) => {
            p.cells.iter().any(|c| {
                matches!(c.sxptype, sxp::PROM | sxp::CLO)
                    || attrs(c.attributes.as_ref(), seen)
                    || c.tag.as_ref().is_some_and(|t| code_anywhere(t, refs, seen, d))
                    || code_anywhere(&c.car, refs, seen, d)
            }) || code_anywhere(&p.tail, refs, seen, d)
        }
        RObject::Vector(v) => {
            let items = match &v.data {
                VectorData::List(i) | VectorData::Expression(i) => i.iter().any(|i| code_anywhere(i, refs, seen, d)),
                _ => false,
            };
            items || attrs(v.attributes.as_ref(), seen)
        }
        RObject::Bytecode(_) => true,
        RObject::S4(s) => attrs(s.attributes.as_ref(), seen),
        RObject::Altrep(a) => code_anywhere(&a.state, refs, seen, d) || code_anywhere(&a.attributes, refs, seen, d),
        RObject::Primitive(p) => attrs(p.attributes.as_ref(), seen),
        RObject::Ref(id) => {
            let i = id.0 as usize;
            if seen.get(i).copied().unwrap_or(true) {
                return false;
            }
            seen[i] = true;
            match refs.get(*id) {
                Some(RefEntry::Environment(e)) => {
                    code_anywhere(&e.frame, refs, seen, d)
                        || code_anywhere(&e.hashtab, refs, seen, d)
                        || code_anywhere(&e.enclosure, refs, seen, d)
                        || code_anywhere(&e.attributes, refs, seen, d)
                }
                Some(RefEntry::ExternalPointer(p)) => {
                    code_anywhere(&p.protected, refs, seen, d) || code_anywhere(&p.tag, refs, seen, d) || attrs(p.attributes.as_ref(), seen)
                }
                Some(RefEntry::WeakRef(w)) => attrs(w.attributes.as_ref(), seen),
                _ => false,
            }
        }
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let Ok(doc) = read_bytes(data.to_vec(), &opts) else { return };
    let strict = Trust::DataOnly(Host::default());
    let code = trust::check_root(&doc.root, &doc.refs, &Trust::Code, doc.is_rds(), "x");
    let data_only = trust::check_root(&doc.root, &doc.refs, &strict, doc.is_rds(), "x");
    for e in [&code, &data_only].into_iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(e.kind, ErrorKind::Unsafe, "{e}");
    }
    if data_only.is_ok() {
        assert!(code.is_ok(), "data only passes what the default refuses");
        let mut seen = vec![false; doc.refs.entries.len()];
        assert!(!code_anywhere(&doc.root, &doc.refs, &mut seen, 0), "data only let code through");
    }
    if code.is_ok() {
        if let Ok(bytes) = write_document(&doc, Vec::new()) {
            if let Ok(again) = read_bytes(bytes, &opts) {
                assert!(again.check_trust("x").is_ok(), "the file written back is refused");
            }
        }
    }
});
