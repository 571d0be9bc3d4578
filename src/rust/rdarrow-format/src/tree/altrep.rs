//! ALTREP objects: kept as written, expanded to ordinary vectors when a
//! value is needed (compact sequences, deferred strings, wrappers).

use crate::base::error::{Error, Result};
use crate::tree::*;
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};

/// The ALTREP class and package names of an ALTREP node.
pub fn class_of<'a>(a: &'a Altrep, refs: &'a RefTable) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
    let cells = match &a.info {
        RObject::Pairlist(p) => &p.cells,
        _ => return (None, None),
    };
    let sym = |i: usize| match cells.get(i).map(|c| &c.car) {
        Some(RObject::Ref(id)) => refs.symbol_name(*id),
        _ => None,
    };
    (sym(0), sym(1))
}

/// The base SEXPTYPE recorded in the ALTREP info.
pub fn base_type(a: &Altrep) -> Option<u8> {
    let cells = match &a.info {
        RObject::Pairlist(p) => &p.cells,
        _ => return None,
    };
    match cells.get(2).map(|c| &c.car) {
        Some(RObject::Vector(v)) => match &v.data {
            VectorData::Integer(x) if !x.is_empty() => u8::try_from(x[0]).ok(),
            _ => None,
        },
        _ => None,
    }
}

fn state_pair(state: &RObject) -> Option<(&RObject, &RObject)> {
    match state {
        RObject::Pairlist(p) if !p.cells.is_empty() => {
            let first = &p.cells[0].car;
            let rest = if p.cells.len() > 1 {
                &p.cells[1].car
            } else {
                &p.tail
            };
            Some((first, rest))
        }
        _ => None,
    }
}

fn seq_state(state: &RObject) -> Option<(f64, f64, f64)> {
    match state {
        RObject::Vector(v) => match &v.data {
            VectorData::Real(x) if x.len() == 3 => Some((x[0], x[1], x[2])),
            VectorData::Integer(x) if x.len() == 3 => Some((x[0] as f64, x[1] as f64, x[2] as f64)),
            _ => None,
        },
        _ => None,
    }
}

/// Base R's ALTREP classes, each with the type of the vector it stands for.
pub const BASE_CLASSES: [(&str, u8); 10] = [
    ("compact_intseq", sxp::INT),
    ("compact_realseq", sxp::REAL),
    ("deferred_string", sxp::STR),
    ("wrap_integer", sxp::INT),
    ("wrap_logical", sxp::LGL),
    ("wrap_real", sxp::REAL),
    ("wrap_complex", sxp::CPLX),
    ("wrap_raw", sxp::RAW),
    ("wrap_string", sxp::STR),
    ("wrap_list", sxp::VEC),
];

/// The type of vector a base R ALTREP class stands for (`None`: not one
/// of base R's classes).
pub fn base_class_type(name: &[u8]) -> Option<u8> {
    BASE_CLASSES
        .iter()
        .find(|(n, _)| n.as_bytes() == name)
        .map(|&(_, t)| t)
}

/// Whether R itself serializes ALTREP objects of this class (base R's
/// compact sequences, deferred strings and wrappers, including wrapper
/// classes a later R may add): the classes this module expands, and that
/// R's unserializer rebuilds.
pub fn is_base_class(name: &[u8]) -> bool {
    base_class_type(name).is_some() || is_wrapper(name)
}

/// Whether this is one of base R's wrapper classes (`wrap_*`).
pub fn is_wrapper(name: &[u8]) -> bool {
    name.starts_with(b"wrap_")
}

/// R's `UNKNOWN_SORTEDNESS`, a wrapper's "nothing known" sortedness.
pub const UNKNOWN_SORTEDNESS: i32 = i32::MIN;

/// Whether R serializes a wrapper of class `class` from `package` as the
/// ordinary vector it stands for (R >= 4.1, PR#18142): one of base R's
/// wrappers of a vector type this module knows, whose wrapped vector is
/// not ALTREP and whose metadata (`meta`: sortedness, no-NA flag) says
/// nothing. The one rule of every writer of in-memory R objects.
pub fn wrapper_writes_plain(class: &[u8], package: &[u8], wrapped_is_altrep: bool, meta: &[i32]) -> bool {
    package == b"base"
        && base_class_type(class).is_some()
        && is_wrapper(class)
        && !wrapped_is_altrep
        && meta.len() >= 2
        && meta[0] == UNKNOWN_SORTEDNESS
        && meta[1] == 0
}

/// Whether this is one of base R's compact sequences.
pub fn is_compact_sequence(name: &[u8]) -> bool {
    matches!(name, b"compact_intseq" | b"compact_realseq")
}

/// The length an ALTREP object will have once expanded, if known.
pub fn length(a: &Altrep, refs: &RefTable) -> Option<u64> {
    let (class, _) = class_of(a, refs);
    match class? {
        b"compact_intseq" | b"compact_realseq" => seq_state(&a.state).map(|s| s.0 as u64),
        b"deferred_string" => value_length(state_pair(&a.state)?.0, refs),
        c if c.starts_with(b"wrap_") => value_length(state_pair(&a.state)?.0, refs),
        _ => None,
    }
}

fn value_length(obj: &RObject, refs: &RefTable) -> Option<u64> {
    match obj {
        RObject::Vector(v) => Some(v.data.len()),
        RObject::Altrep(a) => length(a, refs),
        _ => None,
    }
}

fn bad_state(class: &str) -> Error {
    Error::corrupt(format!(
        "the state of an ALTREP '{class}' object is malformed"
    ))
}

/// Expand an ALTREP node into ordinary vector data (without attributes),
/// bounded by the machine's memory.
pub fn expand(a: &Altrep, refs: &RefTable) -> Result<VectorData> {
    expand_within(a, refs, crate::base::limits::physical_memory())
}

/// As [`expand`], a compact sequence taking at most `max_memory` bytes.
pub fn expand_within(a: &Altrep, refs: &RefTable, max_memory: u64) -> Result<VectorData> {
    let (class, pkg) = class_of(a, refs);
    let class_name = String::from_utf8_lossy(class.unwrap_or(b"?")).into_owned();
    match class.unwrap_or(b"") {
        b"compact_intseq" | b"compact_realseq" => {
            let (n, _, _) = seq_state(&a.state).ok_or_else(|| bad_state(&class_name))?;
            check_memory(
                n,
                if class == Some(b"compact_intseq") {
                    4
                } else {
                    8
                },
                max_memory,
            )?;
            sequence_part(a, refs, 0, n as u64)
        }
        b"deferred_string" => {
            let (arg, info) = state_pair(&a.state).ok_or_else(|| bad_state(&class_name))?;
            let scipen = match info {
                RObject::Vector(v) => match &v.data {
                    VectorData::Integer(x) if !x.is_empty() => x[0],
                    _ => 0,
                },
                _ => 0,
            };
            let out_dec = info
                .attribute(refs, "OutDec")
                .and_then(|o| o.as_strings())
                .and_then(|s| s.get(0).map(|b| b.to_vec()));
            let values = match arg {
                RObject::Altrep(inner) => expand(inner, refs)?,
                RObject::Vector(v) => v.data.clone(),
                _ => return Err(bad_state(&class_name)),
            };
            Ok(VectorData::Character(
                deferred_strings(&values, scipen, out_dec.as_deref())
                    .ok_or_else(|| bad_state(&class_name))?,
            ))
        }
        c if c.starts_with(b"wrap_") => {
            let (x, _meta) = state_pair(&a.state).ok_or_else(|| bad_state(&class_name))?;
            match x {
                RObject::Altrep(inner) => expand(inner, refs),
                RObject::Vector(v) => Ok(v.data.clone()),
                _ => Err(bad_state(&class_name)),
            }
        }
        _ => Err(Error::unsupported(format!(
            "the object uses the ALTREP class '{}' from package '{}', which rdarrow cannot expand",
            class_name,
            String::from_utf8_lossy(pkg.unwrap_or(b"?"))
        ))),
    }
}

/// Elements `[start, start + n)` of a compact sequence (an error for any
/// other node or a range past its end).
pub fn sequence_part(a: &Altrep, refs: &RefTable, start: u64, n: u64) -> Result<VectorData> {
    let (class, _) = class_of(a, refs);
    let class_name = String::from_utf8_lossy(class.unwrap_or(b"?")).into_owned();
    let (len, n1, inc) = seq_state(&a.state).ok_or_else(|| bad_state(&class_name))?;
    check_sequence(a, refs)?;
    if start.checked_add(n).is_none_or(|end| end as f64 > len) {
        return Err(Error::internal(
            "elements past the end of a compact sequence",
        ));
    }
    let at = start as f64;
    match class.unwrap_or(b"") {
        b"compact_intseq" => {
            let (n1, inc) = (n1 as i64 + inc as i64 * start as i64, inc as i64);
            Ok(VectorData::Integer(ScalarBuffer::from(
                (0..n as i64)
                    .map(|i| (n1 + inc * i) as i32)
                    .collect::<Vec<_>>(),
            )))
        }
        b"compact_realseq" => Ok(VectorData::Real(ScalarBuffer::from(
            (0..n)
                .map(|i| n1 + inc * (at + i as f64))
                .collect::<Vec<_>>(),
        ))),
        _ => Err(Error::internal(format!(
            "'{class_name}' is not a compact sequence"
        ))),
    }
}

/// A compact sequence's state as R accepts it: a whole length, an
/// increment of 1 or -1 (the only ones R makes and reads back), and for
/// integers, values that stay integers.
pub fn check_sequence(a: &Altrep, refs: &RefTable) -> Result<()> {
    let (class, _) = class_of(a, refs);
    let class_name = String::from_utf8_lossy(class.unwrap_or(b"?")).into_owned();
    let (n, n1, inc) = seq_state(&a.state).ok_or_else(|| bad_state(&class_name))?;
    if !(0.0..=(1u64 << 52) as f64).contains(&n) || n.fract() != 0.0 {
        return Err(Error::corrupt(format!(
            "invalid ALTREP sequence length {n}"
        )));
    }
    if inc != 1.0 && inc != -1.0 {
        return Err(Error::corrupt(format!(
            "invalid ALTREP sequence increment {inc} (R writes 1 or -1)"
        )));
    }
    if class == Some(b"compact_intseq") {
        let last = n1 + inc * (n - 1.0).max(0.0);
        let int_range = (i32::MIN as f64 + 1.0)..=(i32::MAX as f64);
        if n > 0.0 && (n1.fract() != 0.0 || !int_range.contains(&n1) || !int_range.contains(&last))
        {
            return Err(bad_state(&class_name));
        }
    }
    Ok(())
}

/// Expanding a sequence stays within the decoding memory limit (the file
/// holds three numbers, whatever length it declares).
fn check_memory(n: f64, width: u64, limit: u64) -> Result<()> {
    let bytes = (n as u64).saturating_mul(width);
    if bytes > limit {
        return Err(Error::limit_of(
            crate::base::error::LimitKind::Memory,
            format!("a compact sequence of {n} elements would take {bytes} bytes, over the memory limit of {limit} bytes"),
        ));
    }
    Ok(())
}

/// `as.character()` of numbers, as R's deferred strings produce them.
fn deferred_strings(
    values: &VectorData,
    scipen: i32,
    out_dec: Option<&[u8]>,
) -> Option<StringVector> {
    let n = values.len() as usize;
    let mut offsets: Vec<i32> = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut data = Vec::new();
    let mut valid = BooleanBufferBuilder::new(n);
    let mut any_na = false;
    let mut push = |s: Option<String>| {
        match s {
            Some(s) => {
                let s = match out_dec {
                    Some(d) if d != b"." => s.replace('.', &String::from_utf8_lossy(d)),
                    _ => s,
                };
                data.extend_from_slice(s.as_bytes());
                valid.append(true);
            }
            None => {
                any_na = true;
                valid.append(false);
            }
        }
        offsets.push(data.len() as i32);
    };
    match values {
        VectorData::Integer(x) => x.iter().for_each(|&v| {
            push(if v == na::INTEGER {
                None
            } else {
                Some(v.to_string())
            })
        }),
        VectorData::Real(x) => x.iter().for_each(|&v| {
            push(if na::is_na_real(v) {
                None
            } else {
                Some(format_real_15(v, scipen))
            })
        }),
        _ => return None,
    }
    Some(StringVector {
        // SAFETY: offsets are non-decreasing and end at data.len().
        offsets: StringOffsets::Small(unsafe {
            OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets))
        }),
        data: Buffer::from_vec(data),
        validity: if any_na {
            Some(NullBuffer::new(valid.finish()))
        } else {
            None
        },
        levels: StringLevels::Uniform(levels::ASCII),
    })
}

/// Format one double as R's `as.character()` does: 15 significant digits,
/// trailing zeros dropped, fixed notation unless scientific is narrower
/// (with `scipen` as the penalty).
pub fn format_real_15(x: f64, scipen: i32) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Inf".into() } else { "-Inf".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    let neg = x < 0.0;
    // 15 significant digits, correctly rounded: d.dddddddddddddde±k
    let sci = format!("{:.14e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap();
    let kpower: i32 = exp.parse().unwrap();
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let nsig = digits.trim_end_matches('0').len().max(1) as i32;
    // fixed notation width
    let left = kpower + 1;
    let sleft = neg as i32 + if left <= 0 { 1 } else { left };
    let rgt = (nsig - kpower - 1).max(0);
    let w_fixed = sleft + rgt + (rgt != 0) as i32;
    // scientific width
    let e_digits = if kpower.abs() >= 100 { 2 } else { 1 };
    let d = nsig - 1;
    let w_sci = neg as i32 + (d > 0) as i32 + d + 4 + e_digits;
    if w_fixed <= w_sci + scipen {
        format!("{:.*}", rgt as usize, x)
    } else {
        let m = format!("{:.*e}", d as usize, x);
        let (m, e) = m.split_once('e').unwrap();
        let e: i32 = e.parse().unwrap();
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

// What an object is, ALTREP nodes included (the node's own methods sit
// here, where ALTREP is known, so the tree does not import its ALTREP).
impl RObject {
    /// The explicit `class` attribute (`oldClass(x)`), empty when none.
    pub fn class_attr(&self, refs: &RefTable) -> Vec<String> {
        class_attr_of(self.attributes(), refs)
    }

    /// The R type of this node (as `typeof()` would report it for the
    /// object it stands for; references resolve through `refs`).
    pub fn sxptype(&self, refs: &RefTable) -> u8 {
        match self {
            RObject::Null => sxp::NIL,
            RObject::Special(s) => match s {
                SpecialValue::UnboundValue | SpecialValue::MissingArg => sxp::SYM,
                _ => sxp::ENV,
            },
            RObject::Ref(id) => match refs.get(*id) {
                Some(RefEntry::Symbol(_)) => sxp::SYM,
                Some(RefEntry::ExternalPointer(_)) => sxp::EXTPTR,
                Some(RefEntry::WeakRef(_)) => sxp::WEAKREF,
                Some(RefEntry::Persistent(_)) => sxp::PERSIST,
                _ => sxp::ENV,
            },
            RObject::Pairlist(p) => p.cells.first().map(|c| c.sxptype).unwrap_or(sxp::LIST),
            RObject::Vector(v) => v.data.sxptype(),
            RObject::Char(_) => sxp::CHAR,
            RObject::Primitive(p) => p.sxptype,
            RObject::S4(_) => sxp::S4,
            RObject::Bytecode(_) => sxp::BCODE,
            RObject::Altrep(a) => base_type(a).unwrap_or(sxp::NIL),
            // the consumer's own: not the format's to say
            RObject::Taken(_) => sxp::NIL,
        }
    }

    /// The length of a vector (ALTREP included); 0 for anything else.
    pub fn vector_len(&self, refs: &RefTable) -> u64 {
        match self {
            RObject::Vector(v) => v.data.len(),
            RObject::Altrep(a) => length(a, refs).unwrap_or(0),
            _ => 0,
        }
    }
}

/// The `class` attribute in an attribute pairlist (empty when none; an
/// ALTREP character vector is expanded).
pub fn class_attr_of(attrs: Option<&RObject>, refs: &RefTable) -> Vec<String> {
    let Some(class) = attrs.and_then(|a| pairlist_get(a, refs, b"class")) else {
        return Vec::new();
    };
    let expanded;
    let strings = match class {
        RObject::Altrep(a) => {
            expanded = expand(a, refs).ok();
            match &expanded {
                Some(VectorData::Character(s)) => s,
                _ => return Vec::new(),
            }
        }
        other => match other.as_strings() {
            Some(s) => s,
            None => return Vec::new(),
        },
    };
    (0..strings.len())
        .map(|i| String::from_utf8_lossy(strings.get(i).unwrap_or(b"NA")).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::format_real_15 as f;

    #[test]
    fn formats_like_as_character() {
        let cases = [
            (1.0, "1"),
            (2.3, "2.3"),
            (10000.0, "10000"),
            (1e5, "1e+05"),
            (-10000.0, "-10000"),
            (-1e5, "-1e+05"),
            (0.001, "0.001"),
            (1e-4, "1e-04"),
            (1e-5, "1e-05"),
            (123456.0, "123456"),
            (0.1 + 0.2, "0.3"),
            (1.0 / 3.0, "0.333333333333333"),
            (1e100, "1e+100"),
            (3.14159, "3.14159"),
        ];
        for (x, want) in cases {
            assert_eq!(f(x, 0), want, "{x}");
        }
        assert_eq!(f(1e5, 100), "100000");
    }
}
