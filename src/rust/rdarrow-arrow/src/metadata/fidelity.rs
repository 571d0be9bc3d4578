//! The `"rdarrow"` notes: one fact per line about top-level columns that
//! arrow R's `"r"` cannot say, written and applied; data.table's
//! self-reference for the object written back to a file.

use crate::metadata::values::complex_of;
use crate::metadata::columns::ColumnMeta;
use crate::metadata::na_bits::NaBits;
use crate::metadata::attributes::frame_order;
use crate::metadata::values::narrow_item;
use crate::metadata::attributes::reorder_attributes;
use crate::metadata::attributes::set_vector_attribute;
use crate::metadata::values::to_integer;
use crate::metadata::values::to_integer64;
use crate::metadata::values::to_raw;
use crate::metadata::values::to_units;
use crate::mapping::types::RKind;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;
use arrow_schema::DataType;

/// The object the notes `notes` ([`FIDELITY_KEY`]) describe as a
/// data.table gets its self reference back, as `load()` gives it: a
/// pointer to nothing (data.table renews it when the table next changes).
/// Only for the object written back to a file: R's data frame view (as
/// arrow R's) has none. Last, the frame's attributes are put in their
/// order (`frame-order`), so that it serializes as it was.
pub fn restore_selfref(m: &mut ObjectMaker, frame: &mut RObject, notes: &str) {
    if notes.lines().any(|l| l == "frame-selfref") {
        // as data.table makes it (`setselfref()`), and R writes it: its tag
        // the table's names, its protected value a pointer to the table
        let names = frame.attribute(&m.refs, "names").cloned().unwrap_or(RObject::Null);
        let inner = m
            .refs
            .push(RefEntry::ExternalPointer(Box::new(ExternalPointer {
                flags: Flags::default(),
                protected: RObject::Null,
                tag: RObject::Null,
                attributes: None,
            })));
        let id = m
            .refs
            .push(RefEntry::ExternalPointer(Box::new(ExternalPointer {
                flags: Flags::default(),
                protected: RObject::Ref(inner),
                tag: names,
                attributes: None,
            })));
        set_vector_attribute(m, frame, ".internal.selfref", RObject::Ref(id));
    }
    // last, the attributes in their order
    if let Some(order) = notes.lines().find_map(|l| l.strip_prefix("frame-order\t")) {
        let order: Vec<&str> = order.split('\t').collect();
        reorder_attributes(frame, &order, &m.refs);
    }
}

/// The schema metadata key for what arrow R's `"r"` metadata cannot hold
/// without changing what arrow R shows: one fact per line about a
/// top-level column (`tzone-missing\t<col>` and `tzone-empty\t<col>` in
/// files of earlier releases, whose `"r"` did not say it),
/// `units\t<col>\t<unit>` (a difftime not in seconds), `integer64\t<col>`,
/// `integer\t<col>` (a time stored as integers), `na\t<col>\t<bits in
/// hex>\t<positions and runs>` (NAs whose bits are not `NA_real_`'s: `7,9-12`), `complex\t<col>` (a
/// struct of `re` and `im`), `raw\t<col>`, `null\t<col>` (a `NULL`),
/// `list-logical\t<col>\t<positions>` and `list-integer\t<col>\t<positions>`
/// (1-based, comma-separated: the elements of a list column converted to
/// a wider type; in files of earlier releases, whose list nodes did not say
/// it under `types`), `frame-class\t<classes>` (a tibble's), `frame-order\t<the
/// names of its attributes>` (when the way back would order them otherwise)
/// and `frame-selfref`
/// (a data.table's self reference, which metadata cannot hold).
pub const FIDELITY_KEY: &str = "rdarrow";

/// The facts to record for top-level columns `names` of `cols`, which
/// became `types` (empty when none).
pub fn fidelity_notes(
    frame: Option<&ColumnMeta>,
    names: &[&str],
    cols: &[ColumnMeta],
    types: &[DataType],
) -> String {
    let mut out = String::new();
    // a tibble's class is implied for arrow R (its tables become tibbles)
    if let Some(f) = frame {
        if f.classes == ["tbl_df", "tbl", "data.frame"] {
            out.push_str("frame-class\ttbl_df\ttbl\tdata.frame\n");
        }
        if f.attribute(".internal.selfref").is_some() {
            out.push_str("frame-selfref\n");
        }
        let names: Vec<&str> = f.attrs.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(order) = frame_order(&names) {
            out.push_str(&format!("frame-order\t{order}\n"));
        }
    }
    for ((name, c), dt) in names.iter().zip(cols).zip(types) {
        let attr_str = |n: &str| {
            c.attribute(n)
                .and_then(|a| a.as_strings())
                .map(|s| String::from_utf8_lossy(s.get(0).unwrap_or(b"")).into_owned())
        };
        match (c.kind(), dt) {
            (Some(RKind::Difftime), DataType::Duration(_)) => {
                if let Some(u) = attr_str("units").filter(|u| u != "secs") {
                    out.push_str(&format!("units\t{name}\t{u}\n"));
                }
            }
            (Some(RKind::Integer64), _) => out.push_str(&format!("integer64\t{name}\n")),
            (Some(RKind::Complex), _) => out.push_str(&format!("complex\t{name}\n")),
            (Some(RKind::Raw), _) => out.push_str(&format!("raw\t{name}\n")),
            (Some(RKind::Null), _) => out.push_str(&format!("null\t{name}\n")),
            _ => {}
        }
        if let Some(n) = &c.na_bits {
            out.push_str(&n.note_lines(name));
        }
        // times stored as integers come back as integers (after their units)
        if matches!(
            c.kind(),
            Some(RKind::Date | RKind::PosixCt | RKind::Difftime | RKind::Hms)
        ) && c.sxptype == sxp::INT
        {
            out.push_str(&format!("integer\t{name}\n"));
        }
    }
    out
}

/// Apply the facts of [`FIDELITY_KEY`] to a data frame made from Arrow.
pub fn apply_fidelity_notes(m: &mut ObjectMaker, frame: &mut RObject, notes: &str) {
    let names: Vec<String> = match frame
        .attribute(&m.refs, "names")
        .and_then(|n| n.as_strings())
    {
        Some(s) => (0..s.len())
            .map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned())
            .collect(),
        None => return,
    };
    for line in notes.lines() {
        let parts: Vec<&str> = line.split('\t').collect();
        if parts[0] == "frame-class" && parts.len() > 1 {
            let class = rdarrow_format::tree::make::strings(parts[1..].iter().map(|s| Some(s.as_bytes())));
            set_vector_attribute(m, frame, "class", class);
            continue;
        }

        let Some(i) = parts.get(1).and_then(|n| names.iter().position(|x| x == n)) else {
            continue;
        };
        let RObject::Vector(v) = frame else { return };
        let VectorData::List(items) = &mut v.data else {
            return;
        };
        let col = &mut items[i];
        match parts[0] {
            "tzone-missing" => set_vector_attribute(m, col, "tzone", RObject::Null),
            "tzone-empty" => {
                set_vector_attribute(m, col, "tzone", rdarrow_format::tree::make::strings([Some(&b""[..])]))
            }
            "units" => {
                let Some(u) = parts.get(2) else { continue };
                to_units(m, col, u);
            }
            "integer64" => to_integer64(m, col),
            "date-fractional" => {
                // a timestamp came back as POSIXct seconds: days again
                if let RObject::Vector(cv) = col {
                    if let VectorData::Real(x) = &cv.data {
                        let days: Vec<f64> = x
                            .iter()
                            .map(|&f| if f.is_nan() { f } else { f / 86400.0 })
                            .collect();
                        cv.data = VectorData::Real(days.into());
                    }
                }
                set_vector_attribute(m, col, "tzone", RObject::Null);
                set_vector_attribute(m, col, "class", rdarrow_format::tree::make::strings([Some(&b"Date"[..])]));
            }
            "complex" => {
                // the struct's parts, bit for bit (a null slot's parts too)
                if let Some(z) = complex_of(col, &m.refs) {
                    *col = m.vector(VectorData::Complex(z.into()), vec![]);
                }
            }
            "list-logical" | "list-integer" => {
                let Some(at) = parts.get(2) else { continue };
                let RObject::Vector(cv) = col else { continue };
                let VectorData::List(items) = &mut cv.data else {
                    continue;
                };
                let code = if parts[0] == "list-logical" {
                    sxp::LGL
                } else {
                    sxp::INT
                };
                for p in at.split(',').filter_map(|p| p.parse::<usize>().ok()) {
                    if let Some(RObject::Vector(item)) =
                        p.checked_sub(1).and_then(|i| items.get_mut(i))
                    {
                        narrow_item(item, code);
                    }
                }
            }
            "raw" => to_raw(col),
            "null" => *col = RObject::Null,
            "na" => {
                let (Some(hex), Some(at)) = (parts.get(2), parts.get(3)) else {
                    continue;
                };
                let Ok(bits) = u64::from_str_radix(hex, 16) else {
                    continue;
                };
                let len = NaBits::len_of(col);
                let at: Vec<usize> = NaBits::positions(at, len).collect();
                NaBits::put_back(col, at.into_iter().map(|p| (p, bits)));
            }
            // "date-integer": the name files of earlier releases have
            "integer" | "date-integer" => to_integer(col),
            _ => {}
        }
    }
}
