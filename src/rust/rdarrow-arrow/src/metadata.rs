//! The schema metadata that carries what Arrow types do not say.
//!
//! - `"r"`: arrow R's key, an ASCII serialization of `list(attributes =
//!   <top-level attributes>, columns = list(<col> = NULL | list(attributes
//!   = ..., columns = ...)))`, holding every attribute the Arrow types
//!   themselves do not carry, so that arrow R's `as.data.frame()` (and
//!   rdarrow's way back) restore them. rdarrow adds one element arrow R
//!   ignores, `rdarrow = list(object = <"data.frame" | "vector" |
//!   "matrix">, attributes = list(...))`: what the object was (a vector's
//!   table has one column, a matrix's one per matrix column) and the
//!   attributes that arrow R could not apply to a data frame or its
//!   column (a vector's `dim` and `dimnames`, a matrix's attributes, row
//!   names whose length disagrees with the columns).
//!   A column's node (`list(attributes = ..., columns = ...)`, arrow R's)
//!   may hold elements arrow R ignores, applied on rdarrow's way back:
//!   `complex` (a list element that was a complex vector), `strings`
//!   (strings that are not valid text, as R held them: [`KeptStrings`]),
//!   `matrix` (a matrix column's `dim`, `dimnames` and type) and `posixlt`
//!   (a POSIXlt's zone, attributes and the components that do not derive
//!   back: [`super::posixlt`]). A value inside a list also says what Arrow
//!   does not give back as R had it: `raw`, `complex`, `integer64`,
//!   `integer` (a time stored as integers), `units` (a difftime's), `types`
//!   (elements widened), `levels` (a factor's own), `order` (its
//!   attributes' order, when the way back would make another) and `na`
//!   (NAs whose bits are not `NA_real_`'s: [`NaBits`]). The `rdarrow` element's `object` may also
//!   be `"sparse"`, with the sparse matrix's slots and storage
//!   ([`super::sparse`]).
//! - `"rdarrow"` ([`FIDELITY_KEY`]): one fact per line about top-level
//!   columns that arrow R's `"r"` cannot say without changing what arrow R
//!   shows.
//! - `"rdarrow.r"` ([`EXACT_KEY`]): the `"r"` list again, in XDR, when its
//!   ASCII text cannot hold a kept value's NaN payloads; rdarrow reads it
//!   in preference ([`r_text`]).
//!
//! What goes into both is decided from [`ColumnMeta`], taken from the R
//! object before its columns convert, and the Arrow types the columns
//! became ([`types::type_says_kind`]).

use super::types::{self, RKind};
use crate::tree::make::ObjectMaker;
use crate::base::error::Result;
use crate::wire::header::{Container, StreamHeader};
use crate::wire::decode::Format;
use crate::tree::*;
use arrow_schema::DataType;

/// What the metadata of a column depends on besides the column: the
/// stream's native encoding (strings) and the zone given to times without
/// one (POSIXlt).
#[derive(Debug, Clone, Copy, Default)]
pub struct MetaContext<'a> {
    pub native: Option<&'a [u8]>,
    pub default_tz: Option<&'a str>,
}

/// A POSIXlt column's node: the zone its instants were read in, and the
/// components that do not come back from them as they were
/// ([`super::posixlt`]).
#[derive(Debug, Clone)]
pub struct LtMeta {
    zone: Option<String>,
    components: Vec<(String, RObject)>,
    /// How many components it has when they have no names (data.table
    /// strips a POSIXlt column's): R's first that many.
    unnamed: Option<usize>,
}

impl LtMeta {
    fn of(obj: &RObject, refs: &RefTable, default_tz: Option<&str>) -> LtMeta {
        let tzone = crate::to_arrow::strings_in(obj.attribute(refs, "tzone"), refs);
        let zone = match tzone.first() {
            Some(t) if !t.is_empty() => Some(t.clone()),
            _ => default_tz.map(str::to_string),
        };
        let tz = super::posixlt::time_zone(zone.as_deref());
        let secs = super::posixlt::instants(obj, refs, &tz);
        let parts = super::posixlt::components(obj, refs);
        let unnamed = obj
            .attribute(refs, "names")
            .is_none()
            .then_some(parts.len());
        let names: Vec<String> = parts.iter().map(|(n, _)| n.clone()).collect();
        let derived = super::posixlt::derive(&secs, &tz, &names);
        let components = parts
            .iter()
            .zip(&derived)
            .filter(|((_, orig), (_, d))| match orig {
                RObject::Vector(v) => {
                    v.attributes.is_some() || !super::posixlt::same_values(&v.data, d)
                }
                _ => true,
            })
            .map(|((n, orig), _)| (n.clone(), (*orig).clone()))
            .collect();
        LtMeta {
            zone,
            components,
            unnamed,
        }
    }

    fn r_node(&self, m: &mut ObjectMaker, attrs: Vec<(String, RObject)>) -> RObject {
        let zone = match &self.zone {
            Some(z) => crate::tree::make::strings([Some(z.as_bytes())]),
            None => RObject::Null,
        };
        let attributes = attr_list(m, attrs);
        let components = attr_list(m, self.components.clone());
        match self.unnamed {
            Some(n) => m.named_list(
                &["zone", "attributes", "components", "count"],
                vec![zone, attributes, components, crate::tree::make::ints(vec![n as i32])],
            ),
            None => m.named_list(
                &["zone", "attributes", "components"],
                vec![zone, attributes, components],
            ),
        }
    }
}

/// The attributes of one column (or of the table's object), taken before
/// the column converts: the metadata are written once the Arrow types are
/// known.
#[derive(Debug, Clone, Default)]
pub struct ColumnMeta {
    classes: Vec<String>,
    sxptype: u8,
    /// Every attribute, in order.
    attrs: Vec<(String, RObject)>,
    /// A data frame's columns.
    columns: Option<Vec<(String, ColumnMeta)>>,
    /// A list whose elements mix logical, integer and double vectors (they
    /// convert to the common type): each element's type.
    item_types: Option<Vec<u8>>,
    /// A list whose elements have attributes (names, dimensions, row
    /// names, ...): each element's (arrow R's row-level metadata).
    items: Option<Vec<ColumnMeta>>,
    /// The strings (of a character vector, or a factor's levels) that do
    /// not come back from their Arrow text as they are.
    pub strings: Option<KeptStrings>,
    /// A POSIXlt's node.
    posixlt: Option<LtMeta>,
    /// A list element that is a complex vector (its struct comes back as
    /// one).
    complex_item: bool,
    /// A raw element among elements of other types (a struct's field or a
    /// union's child of `uint8`, which alone would come back as integer;
    /// a list of raw vectors alone is Arrow's binary, which says it).
    raw_item: bool,
    /// A list element without an Arrow value (null in Arrow): itself.
    stored: Option<RObject>,
    /// A factor inside a list (at any depth): its own levels. The factors
    /// of a list share one dictionary in Arrow (the union of their
    /// levels, which a Parquet file may reorder), so each comes back
    /// recoded to its own levels.
    item_levels: Option<RObject>,
    /// An integer64 inside a list: it comes back as one (Arrow's int64
    /// comes back as integer where the values fit).
    integer64_item: bool,
    /// A Date, POSIXct, difftime or hms inside a list stored as integers:
    /// they come back as integers (Arrow's temporal types as doubles).
    integer_item: bool,
    /// A value inside a list (or inside a data frame inside one).
    in_list: bool,
    /// Its NAs whose bits are not R's `NA_real_`.
    na_bits: Option<NaBits>,
    /// An S4 object whose type is a vector (`ScalarInteger`): the S4 bit
    /// comes back on the vector.
    s4_vector: bool,
    /// The vector's other general-purpose bits (R's levels: a vector
    /// grown by `[<-` is marked growable), which R writes with it: they
    /// come back, so that the file is written with the bytes R writes.
    gp: u16,
    /// A list of arrays of one shape: its tensor type, for the field's
    /// extension metadata ([`super::fixed_shape`]).
    pub tensor: Option<super::fixed_shape::TensorShape>,
}

/// A character vector node of `s`, without attributes.
fn character_vector(s: StringVector) -> RObject {
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Character(s),
        attributes: None,
    }))
}

/// Strings of a column kept in the metadata as R holds them (bytes and
/// encoding), to be put back on the way back
/// ([`crate::tree::encoding::unfaithful_strings`]): the column's node in the
/// `"r"` metadata gets `strings = list(rows = <1-based>, values = <the
/// strings>)`, which arrow R ignores.
#[derive(Debug, Clone)]
pub struct KeptStrings {
    pub found: crate::tree::encoding::Unfaithful,
    values: RObject,
}

impl KeptStrings {
    /// Those of `s` (of a stream of native encoding `native`); rows
    /// counted from `first_row` (a part of a column read by row range).
    pub fn of(s: &StringVector, native: Option<&[u8]>, first_row: usize) -> Option<KeptStrings> {
        let mut found = crate::tree::encoding::unfaithful_strings(s, native)?;
        let mut b = StringVectorBuilder::new(found.rows.len());
        for &i in &found.rows {
            b.data().extend_from_slice(s.bytes(i));
            b.end(false, s.levels(i));
        }
        for r in &mut found.rows {
            *r += first_row;
        }
        if let Some(f) = found.first_repaired.as_mut() {
            *f += first_row;
        }
        Some(KeptStrings {
            found,
            values: character_vector(b.finish()),
        })
    }

    /// The strings of a character vector, or of a factor's levels (an
    /// ALTREP vector expanded), that need keeping.
    pub(crate) fn of_object(
        obj: &RObject,
        refs: &RefTable,
        native: Option<&[u8]>,
    ) -> Option<KeptStrings> {
        let target = if obj.inherits(refs, "factor") {
            obj.attribute(refs, "levels")?
        } else {
            obj
        };
        match target {
            RObject::Vector(v) => match &v.data {
                VectorData::Character(s) => KeptStrings::of(s, native, 0),
                _ => None,
            },
            RObject::Altrep(a) => match crate::tree::altrep::expand(a, refs).ok()? {
                VectorData::Character(s) => KeptStrings::of(&s, native, 0),
                _ => None,
            },
            _ => None,
        }
    }

    /// Join those of the parts of a column read by row range.
    pub fn join(parts: Vec<KeptStrings>) -> Option<KeptStrings> {
        if parts.len() <= 1 {
            return parts.into_iter().next();
        }
        let mut found = crate::tree::encoding::Unfaithful::default();
        let total: usize = parts.iter().map(|p| p.found.rows.len()).sum();
        let mut b = StringVectorBuilder::new(total);
        for p in &parts {
            found.rows.extend_from_slice(&p.found.rows);
            found.repaired += p.found.repaired;
            if found.first_repaired.is_none() {
                found.first_repaired = p.found.first_repaired;
            }
            if let Some(s) = p.values.as_strings() {
                for i in 0..s.len() {
                    b.data().extend_from_slice(s.bytes(i));
                    b.end(false, s.levels(i));
                }
            }
        }
        Some(KeptStrings {
            found,
            values: character_vector(b.finish()),
        })
    }

    fn r_node(&self, m: &mut ObjectMaker) -> RObject {
        let rows: Vec<i32> = self.found.rows.iter().map(|&r| (r + 1) as i32).collect();
        m.named_list(
            &["rows", "values"],
            vec![crate::tree::make::ints(rows), self.values.clone()],
        )
    }
}

/// The NAs of a double vector whose bits are not R's `NA_real_`: R's
/// arithmetic on NA gives NaNs with NA's payload (`NA_real_ + 1`), which R
/// treats as NA and writes as they are. Arrow's null keeps no bits, so
/// they travel in the metadata (a list's element in its node, a top-level
/// column in the fidelity notes) and go back in their places.
#[derive(Debug, Clone, PartialEq)]
pub struct NaBits(Vec<(usize, u64)>);

impl NaBits {
    /// Those of `data`, the payload of `obj` (none for an integer64, whose
    /// doubles are 64-bit integers).
    pub fn of_object(obj: &RObject, data: &VectorData, refs: &RefTable) -> Option<NaBits> {
        match data {
            VectorData::Real(x) if !obj.inherits(refs, "integer64") => NaBits::of(x),
            _ => None,
        }
    }

    fn of(x: &[f64]) -> Option<NaBits> {
        NaBits::of_rows(x, 0)
    }

    /// Those of rows `first_row..` of a vector, whose values are `x`.
    pub fn of_rows(x: &[f64], first_row: usize) -> Option<NaBits> {
        let found: Vec<(usize, u64)> = x
            .iter()
            .enumerate()
            .filter(|(_, &f)| na::is_na_real(f) && f.to_bits() != na::REAL_BITS)
            .map(|(i, f)| (first_row + i, f.to_bits()))
            .collect();
        (!found.is_empty()).then_some(NaBits(found))
    }

    /// Those of a vector's row ranges, in order, as one.
    pub fn join(parts: Vec<NaBits>) -> Option<NaBits> {
        let all: Vec<(usize, u64)> = parts.into_iter().flat_map(|p| p.0).collect();
        (!all.is_empty()).then_some(NaBits(all))
    }

    /// Runs of consecutive positions with one bit pattern: (first
    /// position, 0-based; length; bits). A column of NAs that all came
    /// from arithmetic is one run.
    fn runs(&self) -> Vec<(usize, usize, u64)> {
        let mut out: Vec<(usize, usize, u64)> = Vec::new();
        for &(i, b) in &self.0 {
            match out.last_mut() {
                Some((start, n, bits)) if *bits == b && *start + *n == i => *n += 1,
                _ => out.push((i, 1, b)),
            }
        }
        out
    }

    /// The node element: `list(at = <1-based first positions>, n = <run
    /// lengths>, bits = <hex>)`, one entry per run.
    fn r_node(&self, m: &mut ObjectMaker) -> RObject {
        let runs = self.runs();
        let at = crate::tree::make::ints(runs.iter().map(|&(i, _, _)| i as i32 + 1).collect());
        let n = crate::tree::make::ints(runs.iter().map(|&(_, n, _)| n as i32).collect());
        let hex: Vec<String> = runs.iter().map(|&(_, _, b)| format!("{b:016x}")).collect();
        let bits = crate::tree::make::strings(hex.iter().map(|h| Some(h.as_bytes())));
        m.named_list(&["at", "n", "bits"], vec![at, n, bits])
    }

    /// The fidelity notes' lines for top-level column `name`: one per bit
    /// pattern, `na\t<col>\t<hex>\t<1-based positions and runs>` (`7,9-12`).
    fn note_lines(&self, name: &str) -> String {
        let runs = self.runs();
        let mut patterns: Vec<u64> = runs.iter().map(|&(_, _, b)| b).collect();
        patterns.sort_unstable();
        patterns.dedup();
        let mut out = String::new();
        for p in patterns {
            let at: Vec<String> = runs
                .iter()
                .filter(|&&(_, _, b)| b == p)
                .map(|&(i, n, _)| match n {
                    1 => (i + 1).to_string(),
                    _ => format!("{}-{}", i + 1, i + n),
                })
                .collect();
            out.push_str(&format!("na\t{name}\t{p:016x}\t{}\n", at.join(",")));
        }
        out
    }

    /// The 1-based positions of a note's `7,9-12` (at most `len`).
    fn positions(text: &str, len: usize) -> impl Iterator<Item = usize> + '_ {
        text.split(',').flat_map(move |part| {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.parse::<usize>().ok(), b.parse::<usize>().ok()),
                None => (part.parse::<usize>().ok(), part.parse::<usize>().ok()),
            };
            match (a, b) {
                (Some(a), Some(b)) if a >= 1 && a <= b => a..b.min(len) + 1,
                _ => 1..1,
            }
        })
    }

    /// Put the bits back: each 1-based position that is NA in `target` (a
    /// double vector) gets its own; anything else is left as it is.
    fn put_back(target: &mut RObject, at: impl Iterator<Item = (usize, u64)>) {
        let RObject::Vector(v) = target else { return };
        let VectorData::Real(x) = &v.data else { return };
        let mut vals: Option<Vec<f64>> = None;
        for (pos, bits) in at {
            let Some(i) = pos.checked_sub(1) else { continue };
            let f = f64::from_bits(bits);
            if i < x.len() && na::is_na_real(x[i]) && na::is_na_real(f) {
                vals.get_or_insert_with(|| x.to_vec())[i] = f;
            }
        }
        if let Some(vals) = vals {
            v.data = VectorData::Real(vals.into());
        }
    }

    /// The length of a double vector (0 for anything else).
    fn len_of(target: &RObject) -> usize {
        match target {
            RObject::Vector(v) => match &v.data {
                VectorData::Real(x) => x.len(),
                _ => 0,
            },
            _ => 0,
        }
    }

    /// [`Self::put_back`] from a node element.
    fn apply_node(target: &mut RObject, part: &RObject, refs: &RefTable) {
        let parts = list_entries(part, refs);
        let get = |n: &str| parts.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let ints = |n: &str| match get(n) {
            Some(RObject::Vector(v)) => match &v.data {
                VectorData::Integer(x) => x.to_vec(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let (at, n) = (ints("at"), ints("n"));
        let bits: Vec<u64> = crate::to_arrow::strings_in(get("bits"), refs)
            .iter()
            .filter_map(|h| u64::from_str_radix(h, 16).ok())
            .collect();
        if at.len() != n.len() || at.len() != bits.len() {
            return;
        }
        let len = NaBits::len_of(target);
        let pairs: Vec<(usize, u64)> = at
            .iter()
            .zip(&n)
            .zip(bits)
            .filter(|((&a, &k), _)| a > 0 && k > 0)
            .flat_map(|((&a, &k), b)| {
                let a = a as usize;
                (a..(a + k as usize).min(len + 1)).map(move |p| (p, b))
            })
            .collect();
        NaBits::put_back(target, pairs.into_iter());
    }
}

/// An attribute's value as the metadata keeps it: a compact sequence
/// (`dim = 2:6`) as the plain vector it stands for (`identical()` in R),
/// which every consumer builds.
fn plain_value(v: &RObject, refs: &RefTable) -> RObject {
    if let RObject::Altrep(a) = v {
        let (class, _) = crate::tree::altrep::class_of(a, refs);
        if class.is_some_and(crate::tree::altrep::is_compact_sequence)
            && matches!(a.attributes, RObject::Null)
        {
            if let Ok(data) = crate::tree::altrep::expand_within(a, refs, 1 << 20) {
                return RObject::Vector(Box::new(Vector {
                    flags: a.flags,
                    data,
                    attributes: None,
                }));
            }
        }
    }
    v.clone()
}

impl ColumnMeta {
    /// The metadata of `obj` itself: its class, type and attributes (not
    /// its columns or elements).
    pub fn own(obj: &RObject, refs: &RefTable, cx: MetaContext<'_>) -> ColumnMeta {
        let native = cx.native;
        let s4 = matches!(obj, RObject::S4(_));
        let attrs = match obj.attributes() {
            // an S4 object's slots are its struct's fields: its class
            // alone travels here
            Some(a) => pairlist_entries(a, refs)
                .into_iter()
                .filter(|(n, _)| !s4 || *n == Some(b"class".as_slice()))
                .filter_map(|(n, v)| Some((String::from_utf8_lossy(n?).into_owned(), plain_value(v, refs))))
                .collect(),
            None => Vec::new(),
        };
        // strings converted while the file was read were checked then
        let strings = match obj {
            RObject::Vector(v) => match crate::to_arrow::ConvertedColumn::of(&v.data) {
                Some(done) => done.strings.clone(),
                None => KeptStrings::of_object(obj, refs, native),
            },
            _ => KeptStrings::of_object(obj, refs, native),
        };
        let na_bits = match obj {
            RObject::Vector(v) => match crate::to_arrow::ConvertedColumn::of(&v.data) {
                Some(done) => done.na_bits.clone(),
                None => NaBits::of_object(obj, &v.data, refs),
            },
            _ => None,
        };
        let classes = obj.class_attr(refs);
        let sxptype = obj.sxptype(refs);
        let posixlt = super::posixlt::is_posixlt(&classes, sxptype)
            .then(|| LtMeta::of(obj, refs, cx.default_tz));
        ColumnMeta {
            classes,
            sxptype,
            attrs,
            strings,
            posixlt,
            s4_vector: crate::to_arrow::is_s4(obj),
            na_bits,
            gp: match obj {
                RObject::Vector(v) => v.flags.levels & !levels::S4_OBJECT,
                _ => 0,
            },
            ..Default::default()
        }
    }

    /// The metadata of `obj` with those of a data frame's columns and a
    /// list's elements.
    pub fn of(obj: &RObject, refs: &RefTable, cx: MetaContext<'_>) -> ColumnMeta {
        ColumnMeta::of_in(obj, refs, cx, false)
    }

    /// [`Self::of`] for a value inside a list (`in_list`) or not.
    fn of_in(obj: &RObject, refs: &RefTable, cx: MetaContext<'_>, in_list: bool) -> ColumnMeta {
        let mut own = ColumnMeta::own(obj, refs, cx);
        own.in_list = in_list;
        if in_list {
            match own.kind() {
                Some(RKind::Factor | RKind::Ordered) => {
                    own.item_levels = Some(factor_levels(obj, refs));
                }
                Some(RKind::Integer64) => own.integer64_item = true,
                // times stored as integers come back as doubles
                Some(RKind::Date | RKind::PosixCt | RKind::Difftime | RKind::Hms) => {
                    own.integer_item = own.sxptype == sxp::INT;
                }
                _ => {}
            }
            // the types Arrow gives back as others: complex from its
            // struct, raw from `uint8` (not in a list of raw vectors
            // alone, Arrow's binary, which says it)
            own.complex_item = own.sxptype == sxp::CPLX;
            own.raw_item = own.sxptype == sxp::RAW;
        }
        if own.posixlt.is_some() {
            // its components travel in its own node
            return own;
        }
        let items = match obj {
            RObject::Vector(v) => match &v.data {
                VectorData::List(l) => Some(l),
                _ => None,
            },
            _ => None,
        };
        let kind = own.kind();
        let columns = match (kind, items) {
            (Some(RKind::DataFrame), Some(items)) => {
                let names = crate::to_arrow::names_of(obj, refs);
                Some(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            (
                                names.get(i).cloned().unwrap_or_default(),
                                ColumnMeta::of_in(c, refs, cx, in_list),
                            )
                        })
                        .collect(),
                )
            }
            _ => None,
        };
        let item_types = match (kind, items) {
            (Some(RKind::List), Some(items)) => {
                // plain logical, integer and double elements (names and
                // other attributes allowed, no class)
                let t: Vec<u8> = items
                    .iter()
                    .map(|it| {
                        let t = it.sxptype(refs);
                        let plain = matches!(
                            RKind::of(&it.class_attr(refs), t),
                            Some(RKind::Logical | RKind::Integer | RKind::Double)
                        );
                        if plain {
                            t
                        } else {
                            sxp::NIL
                        }
                    })
                    .collect();
                // widened when any other element's type is wider, a
                // classed one's too (a fractional Date is float64)
                let first = t.iter().copied().find(|&x| x != sxp::NIL);
                let narrow = t.iter().any(|&x| matches!(x, sxp::LGL | sxp::INT));
                let mixed = items.iter().zip(&t).any(|(it, &x)| {
                    !matches!(it, RObject::Null)
                        && crate::to_arrow::has_arrow_value(it)
                        && Some(x) != first
                });
                (narrow && mixed).then_some(t)
            }
            _ => None,
        };
        let slots: Option<Vec<&RObject>> = match obj {
            RObject::S4(s) => Some(match &s.attributes {
                Some(a) => pairlist_entries(a, refs)
                    .into_iter()
                    .filter(|(n, _)| *n != Some(b"class".as_slice()))
                    .map(|(_, v)| v)
                    .collect(),
                None => Vec::new(),
            }),
            _ => match (kind, items) {
                (Some(RKind::List), Some(items)) => Some(items.iter().collect()),
                _ => None,
            },
        };
        let items = match slots {
            Some(items) => {
                let binary = match (obj, kind) {
                    (RObject::Vector(v), Some(RKind::List)) => match &v.data {
                        VectorData::List(l) => crate::to_arrow::binary_list(l),
                        _ => false,
                    },
                    _ => false,
                };
                let metas: Vec<ColumnMeta> = items
                    .into_iter()
                    .map(|it| {
                        if !crate::to_arrow::has_arrow_value(it) {
                            return ColumnMeta {
                                stored: Some(it.clone()),
                                ..Default::default()
                            };
                        }
                        let mut meta = ColumnMeta::of_in(it, refs, cx, true);
                        meta.raw_item &= !binary;
                        meta
                    })
                    .collect();
                metas.iter().any(|m| !m.is_empty()).then_some(metas)
            }
            _ => None,
        };
        let tensor = (!in_list && kind == Some(RKind::List))
            .then(|| super::fixed_shape::TensorShape::of_list(obj, refs))
            .flatten();
        ColumnMeta {
            columns,
            item_types,
            items,
            tensor,
            ..own
        }
    }

    /// How many strings of this value (its own, its columns' and its
    /// elements') were repaired to become Arrow text, and the row of the
    /// first of its own.
    fn repaired(&self) -> (usize, Option<usize>) {
        let own = self
            .strings
            .as_ref()
            .map_or((0, None), |k| (k.found.repaired, k.found.first_repaired));
        let nested: usize = self
            .columns
            .iter()
            .flatten()
            .map(|(_, c)| c.repaired().0)
            .chain(self.items.iter().flatten().map(|c| c.repaired().0))
            .sum();
        (own.0 + nested, own.1)
    }

    /// The warning for a column (named `column`) some of whose strings
    /// were not valid text: how many, and where the first is.
    pub fn repair_warning(&self, column: &str) -> Option<String> {
        let (n, first) = self.repaired();
        if n == 0 {
            return None;
        }
        let what = if self.has("factor") {
            "factor level"
        } else {
            "string"
        };
        let (plural, verb) = if n == 1 { ("", "is") } else { ("s", "are") };
        let at = match first {
            Some(r) if self.has("factor") => format!(" (the first is level {})", r + 1),
            Some(r) => format!(" (the first is in row {})", r + 1),
            None => " (in its nested values)".to_string(),
        };
        Some(format!(
            "column '{column}': {n} {what}{plural} {verb} not valid text{at}; in Arrow each reads as Windows-1252 where its bytes stand alone, else with U+FFFD for the invalid bytes; the original bytes are kept in the \"r\" metadata and come back on the way back to R"
        ))
    }

    /// Whether nothing about this value needs keeping.
    fn is_empty(&self) -> bool {
        self.attrs.is_empty()
            && self.columns.is_none()
            && self.items.is_none()
            && self.strings.is_none()
            && self.posixlt.is_none()
            && !self.complex_item
            && !self.raw_item
            && self.stored.is_none()
            && self.item_levels.is_none()
            && !self.integer64_item
            && !self.integer_item
            && !(self.in_list && self.na_bits.is_some())
            && self.item_types.is_none()
            && !self.s4_vector
            && self.sxptype != sxp::S4
            && self.gp == 0
    }

    /// What a struct made of this value holds, for the way back: `"S4"`
    /// (an S4 object's slots), `"list"` (a named list whose elements
    /// differ in type: its type a struct, or not known, as in a union,
    /// where the way back sees whether it came back as a data frame);
    /// None for a data frame (or anything else).
    fn struct_of(&self, dt: Option<&DataType>) -> Option<&'static str> {
        if self.sxptype == sxp::S4 {
            return Some("S4");
        }
        match (self.kind(), dt) {
            (Some(RKind::List), Some(DataType::Struct(_))) => Some("list"),
            (Some(RKind::List), None) if self.attribute("names").is_some() => Some("list"),
            _ => None,
        }
    }

    /// The names of this value's attributes in their order, when the way
    /// back from `dt` would put them in another: the attributes the type
    /// says come first, as [`RKind::made_attributes`] makes them, then
    /// `kept` (not a data frame's: see [`frame_order`]).
    fn vector_order(&self, dt: Option<&DataType>, kept: &[(String, RObject)]) -> Option<Vec<String>> {
        if self.attrs.len() < 2 || self.has("data.frame") || self.posixlt.is_some() {
            return None;
        }
        let original: Vec<String> = self.attrs.iter().map(|(n, _)| n.clone()).collect();
        let kind = self.kind()?;
        // (its type not known, inside a union's element: the order always)
        let Some(dt) = dt else { return Some(original) };
        let says = types::type_says_kind(kind, dt);
        let made: &[&str] = if says { kind.made_attributes() } else { &[] };
        // (a timestamp's zone is made only when it is one)
        let zone = self
            .attribute("tzone")
            .and_then(|t| t.as_strings())
            .is_some_and(|t| t.get(0).is_some_and(|z| !z.is_empty()));
        let way_back: Vec<&str> = made
            .iter()
            .copied()
            .filter(|n| original.iter().any(|o| o == n) && (*n != "tzone" || zone))
            .chain(
                kept.iter()
                    .filter(|(n, v)| !matches!(v, RObject::Null) && !made.contains(&n.as_str()))
                    .map(|(n, _)| n.as_str()),
            )
            .collect();
        (!way_back.iter().copied().eq(original.iter().map(String::as_str))).then_some(original)
    }

    /// A difftime inside a list (a struct's field, a union's child, a
    /// nested frame's column) in units other than seconds: its units (one
    /// that became a duration comes back in seconds; a top-level column's
    /// units are in the fidelity notes).
    fn item_units(&self) -> Option<String> {
        if self.kind() != Some(RKind::Difftime) || !self.in_list {
            return None;
        }
        let u = crate::to_arrow::strings_in(self.attribute("units"), &RefTable::default());
        u.first().filter(|u| *u != "secs").cloned()
    }

    fn kind(&self) -> Option<RKind> {
        RKind::of(&self.classes, self.sxptype)
    }

    fn has(&self, class: &str) -> bool {
        self.classes.iter().any(|c| c == class)
    }

    /// Keep the NA bits of a column read after its metadata was taken.
    pub fn set_na_bits(&mut self, bits: NaBits) {
        self.na_bits = Some(bits);
    }

    /// One attribute.
    pub fn attribute(&self, name: &str) -> Option<&RObject> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Move every attribute out.
    pub fn take_all(mut self) -> Vec<(String, RObject)> {
        std::mem::take(&mut self.attrs)
    }

    /// Move the attributes named `names` out (they travel elsewhere).
    pub fn take(&mut self, names: &[&str]) -> Vec<(String, RObject)> {
        let (out, keep) = std::mem::take(&mut self.attrs)
            .into_iter()
            .partition(|(n, _)| names.contains(&n.as_str()));
        self.attrs = keep;
        out
    }

    /// The attributes arrow R's `"r"` metadata keeps for this column, once
    /// it became `dt` (`top`: the table's own attributes, which leave out
    /// a class of exactly "data.frame", as arrow R does).
    fn kept(&self, dt: Option<&DataType>, top: bool) -> Vec<(String, RObject)> {
        if self.posixlt.is_some() {
            // arrow R gets the timestamps alone; the POSIXlt's attributes
            // are in its own node
            return Vec::new();
        }
        // (a time whose type is not known, inside a union's element: its
        // attributes travel whole, whatever its values became)
        let says = match (self.kind(), dt) {
            (Some(k), Some(dt)) => types::type_says_kind(k, dt),
            (Some(k), None) => types::type_says_kind(k, &DataType::Float64),
            _ => true,
        };
        // arrow R's remove_attributes(), for the types that say the kind;
        // a class the type does not say (a subclass: "IDate", "labelled")
        // stays
        let canonical = self.kind().is_some_and(|k| {
            self.classes
                .iter()
                .map(String::as_str)
                .eq(k.classes().iter().copied())
        });
        let removed: &[&str] = if self.classes == ["tbl_df", "tbl", "data.frame"] && top {
            &["class", "row.names", "names"]
        } else if self.has("data.frame") {
            &["row.names", "names"]
        } else if self.has("factor") {
            // levels with attributes of their own (names) travel whole:
            // the dictionary holds only their strings; so do no levels at
            // all (Parquet's readers give an empty dictionary one level)
            let plain_levels = self.attribute("levels").is_none_or(|l| {
                l.attributes().is_none() && !matches!(l, RObject::Vector(v) if v.data.is_empty())
            });
            match (canonical, plain_levels) {
                // inside a list the factor's class says ordered or not
                // (the list's one dictionary cannot), its levels travel
                // in the node
                (true, true) if self.item_levels.is_some() => &["levels"],
                (true, true) => &["class", "levels"],
                (true, false) => &["class"],
                (false, true) => &["levels"],
                (false, false) => &[],
            }
        } else if !says {
            &[]
        } else if self.has("POSIXct") {
            if canonical {
                &["class", "tzone"]
            } else {
                &["tzone"]
            }
        } else if self.has("hms") || self.has("difftime") {
            if canonical {
                &["class", "units"]
            } else {
                &["units"]
            }
        } else if (self.has("integer64") || self.has("Date")) && canonical {
            &["class"]
        } else {
            &[]
        };
        let plain_frame = self.classes == ["data.frame"];
        let mut kept: Vec<(String, RObject)> = self
            .attrs
            .iter()
            .filter(|(n, _)| {
                !removed.contains(&n.as_str())
                    // (a data.table's self reference: in the fidelity
                    // notes for the table's own frame, which R's view of
                    // the table leaves out; kept, as load() gives it, a
                    // pointer to nothing, for a frame inside a list)
                    && !(top && n == ".internal.selfref")
                    && !(top && plain_frame && n == "class")
            })
            .cloned()
            .collect();
        // row names other than the automatic ones are data: kept (arrow R
        // restores them)
        if self.has("data.frame") {
            if let Some(rn) = self
                .attribute("row.names")
                .filter(|r| !is_automatic_row_names(r))
            {
                kept.push(("row.names".into(), rn.clone()));
            }
        }
        // a timestamp's zone is the `tzone` only when that is a zone: no
        // `tzone` (the zone is then the session's, as arrow R gives it) and
        // "" travel here, where arrow R restores them too
        // (without a zone and in a union whose float64 child could hold it
        // (`!says`), it may still have become a timestamp: no `tzone` too)
        if self.has("POSIXct") && (says && removed.contains(&"tzone") || !says) {
            match self.attribute("tzone") {
                None => kept.push(("tzone".into(), RObject::Null)),
                Some(_) if !says => {}
                Some(tz)
                    if tz
                        .as_strings()
                        .is_some_and(|t| t.get(0).is_none_or(|z| z.is_empty())) =>
                {
                    kept.push(("tzone".into(), tz.clone()))
                }
                _ => {}
            }
        }
        kept
    }

    /// `arrow_attributes(x)` of arrow R for a column that became `dt`:
    /// None when there is nothing to keep.
    fn r_node(&self, m: &mut ObjectMaker, dt: Option<&DataType>) -> Option<RObject> {
        let mut kept = self.kept(dt, false);
        let strings = self.strings.as_ref().map(|k| k.r_node(m));
        // a matrix column's dimensions go on once its rows are bound
        // again; arrow R could not put them on its list column
        let matrix = match dt {
            Some(DataType::FixedSizeList(..)) if self.attribute("dim").is_some() => {
                let (dims, rest): (Vec<_>, Vec<_>) = kept
                    .into_iter()
                    .partition(|(n, _)| n == "dim" || n == "dimnames");
                kept = rest;
                // an empty matrix's type is not in its (no) rows
                let mut dims = dims;
                if let Some(t) = empty_of(self.sxptype) {
                    dims.push(("type".into(), m.vector(t, vec![])));
                }
                Some(attr_list(m, dims))
            }
            _ => None,
        };
        let posixlt = self
            .posixlt
            .as_ref()
            .map(|p| p.r_node(m, self.attrs.clone()));
        let units = self.item_units();
        // (a top-level column's are in the fidelity notes)
        let na_bits = self
            .na_bits
            .as_ref()
            .filter(|_| self.in_list)
            .map(|n| n.r_node(m));
        let extra = strings.is_some()
            || matrix.is_some()
            || posixlt.is_some()
            || self.complex_item
            || self.raw_item
            || self.stored.is_some()
            || self.item_levels.is_some()
            || self.integer64_item
            || self.integer_item
            || na_bits.is_some()
            || units.is_some()
            || self.item_types.is_some()
            || self.s4_vector
            || self.gp != 0
            || self.struct_of(dt).is_some();
        // a data frame inside a list or a column: its attributes' order
        // (the table's own frame has its order in the fidelity notes)
        let order = self.has("data.frame").then(|| {
            let names: Vec<&str> = self
                .attrs
                .iter()
                .map(|(n, _)| n.as_str())
                .collect();
            frame_order(&names).map(|_| names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        });
        // another value: its attributes' order, when the way back would
        // make them in another (an hms's class before its units)
        let order = order.flatten().or_else(|| self.vector_order(dt, &kept));
        let extra = extra || order.is_some();
        let columns = match &self.columns {
            Some(cols) => {
                let child_types: Vec<Option<&DataType>> = match dt {
                    Some(DataType::Struct(fields)) => {
                        fields.iter().map(|f| Some(f.data_type())).collect()
                    }
                    _ => vec![None; cols.len()],
                };
                let nodes: Vec<Option<RObject>> = cols
                    .iter()
                    .enumerate()
                    .map(|(i, (_, c))| c.r_node(m, child_types.get(i).copied().flatten()))
                    .collect();
                if kept.is_empty() && nodes.iter().all(|c| c.is_none()) && !extra {
                    return None;
                }
                let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
                m.named_list(
                    &names,
                    nodes
                        .into_iter()
                        .map(|c| c.unwrap_or(RObject::Null))
                        .collect(),
                )
            }
            None => match &self.items {
                Some(items) => {
                    let nodes: Vec<RObject> = items
                        .iter()
                        .enumerate()
                        .map(|(i, it)| {
                            let t = item_type(dt, i, it.kind());
                            it.r_node(m, t.as_ref()).unwrap_or(RObject::Null)
                        })
                        .collect();
                    m.vector(VectorData::List(nodes), vec![])
                }
                None if kept.is_empty() && !extra => return None,
                None => RObject::Null,
            },
        };
        let attributes = attr_list(m, kept);
        let mut names = vec![];
        let mut values = vec![];
        // first: the struct becomes the list (or S4 object) its
        // attributes and elements' nodes go on
        if let Some(what) = self.struct_of(dt) {
            names.push("struct");
            values.push(crate::tree::make::strings([Some(what.as_bytes())]));
        }
        if self.s4_vector {
            names.push("s4");
            values.push(m.vector(VectorData::Logical(vec![1].into()), vec![]));
        }
        if self.gp != 0 {
            names.push("gp");
            values.push(crate::tree::make::ints(vec![self.gp as i32]));
        }
        if let Some(v) = &self.stored {
            // the element itself: arrow R ignores it
            names.push("value");
            values.push(v.clone());
        }
        if self.complex_item {
            // first: the element is made complex before its attributes go on
            names.push("complex");
            values.push(m.vector(VectorData::Logical(vec![1].into()), vec![]));
        }
        // likewise: the element is what it was before its attributes go on
        if self.raw_item {
            names.push("raw");
            values.push(m.vector(VectorData::Logical(vec![1].into()), vec![]));
        }
        if self.integer64_item {
            names.push("integer64");
            values.push(m.vector(VectorData::Logical(vec![1].into()), vec![]));
        }
        // a difftime inside a list, whose duration came back in seconds:
        // its units (its values scaled back), then its storage
        if let Some(u) = units {
            names.push("units");
            values.push(crate::tree::make::strings([Some(u.as_bytes())]));
        }
        if self.integer_item {
            names.push("integer");
            values.push(m.vector(VectorData::Logical(vec![1].into()), vec![]));
        }
        if let Some(levels) = &self.item_levels {
            names.push("levels");
            values.push(levels.clone());
        }
        if let Some(t) = &self.item_types {
            names.push("types");
            values.push(crate::tree::make::ints(t.iter().map(|&x| x as i32).collect()));
        }
        names.extend(["attributes", "columns"]);
        values.extend([attributes, columns]);
        let order = order.map(|o| crate::tree::make::strings(o.iter().map(|n| Some(n.as_bytes()))));
        for (name, value) in [
            ("strings", strings),
            ("matrix", matrix),
            ("posixlt", posixlt),
            // last: the attributes in their order, the NAs' bits in the
            // values as they are by then
            ("order", order),
            ("na", na_bits),
        ] {
            if let Some(v) = value {
                names.push(name);
                values.push(v);
            }
        }
        Some(m.named_list(&names, values))
    }
}

/// The Arrow type element `i` of a list (or slot `i` of an S4 object)
/// became, in a list of type `dt`: `list<T>`'s `T`, a struct's field `i`'s
/// `T`; in a dense union, the child whose type says the element's kind
/// (a Date, time or duration without one became float64); None when not
/// known.
fn item_type(dt: Option<&DataType>, i: usize, kind: Option<RKind>) -> Option<DataType> {
    let inner = |t: &DataType| match t {
        DataType::List(f) | DataType::LargeList(f) => Some(f.data_type().clone()),
        _ => None,
    };
    match dt? {
        DataType::List(f) | DataType::LargeList(f) => Some(f.data_type().clone()),
        DataType::Struct(fields) => inner(fields.get(i)?.data_type()),
        DataType::Union(fields, _) => {
            let kind = kind?;
            if !matches!(
                kind,
                RKind::Date | RKind::PosixCt | RKind::Difftime | RKind::Hms
            ) {
                return None;
            }
            let temporal = |t: &DataType| match kind {
                RKind::Date => matches!(t, DataType::Date32 | DataType::Date64),
                RKind::PosixCt => matches!(t, DataType::Timestamp(..)),
                RKind::Difftime => matches!(t, DataType::Duration(_)),
                _ => matches!(t, DataType::Time32(_) | DataType::Time64(_)),
            };
            // one child the element can be in: its type; where a float64
            // child could hold it too (the same kind split by its values),
            // not known: the element's attributes travel whole, and their
            // order
            let mut could = fields
                .iter()
                .filter_map(|(_, f)| inner(f.data_type()))
                .filter(|t| temporal(t) || *t == DataType::Float64);
            match (could.next(), could.next()) {
                (Some(t), None) => Some(t),
                _ => None,
            }
        }
        _ => None,
    }
}

/// R's compact form of the row names 1..n, `c(NA_integer_, -n)`: what a
/// data frame made from Arrow has (with the table's row count).
fn is_automatic_row_names(rn: &RObject) -> bool {
    matches!(rn, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x.len() == 2 && x[0] == crate::tree::na::INTEGER && x[1] <= 0))
}

fn attr_list(m: &mut ObjectMaker, attrs: Vec<(String, RObject)>) -> RObject {
    let names: Vec<String> = attrs.iter().map(|(n, _)| n.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    m.named_list(&names, attrs.into_iter().map(|(_, v)| v).collect())
}

/// What the table was made from, for the way back.
#[derive(Debug, Clone)]
pub enum Shape {
    /// A data frame: its columns are the table's. `attrs`: what Arrow's
    /// field names and arrow R cannot take: row names whose length
    /// disagrees with the columns (the table has the columns' rows), names
    /// that are `NA`.
    Frame { attrs: Vec<(String, RObject)> },
    /// One vector, the table's only column; `attrs`: those a data frame's
    /// column cannot carry for arrow R (`dim`, `dimnames`).
    Vector { attrs: Vec<(String, RObject)> },
    /// A matrix, one table column per matrix column; `attrs`: all of its
    /// attributes.
    Matrix { attrs: Vec<(String, RObject)> },
    /// A sparse matrix of the Matrix package, one row per stored entry
    /// ([`super::sparse`]); `slots`: all of its slots, those of the
    /// entries `NULL`.
    Sparse {
        storage: super::sparse::Storage,
        slots: Vec<(String, RObject)>,
    },
}

impl Shape {
    /// The `rdarrow` element of the `"r"` metadata (None for a data frame
    /// that needs nothing restored).
    fn element(&self, m: &mut ObjectMaker) -> Option<RObject> {
        let (object, attrs) = match self {
            Shape::Frame { attrs } if attrs.is_empty() => return None,
            Shape::Frame { attrs } => ("data.frame", attrs.clone()),
            Shape::Vector { attrs } => ("vector", attrs.clone()),
            Shape::Matrix { attrs } => ("matrix", attrs.clone()),
            Shape::Sparse { storage, slots } => {
                let attributes = attr_list(m, slots.clone());
                return Some(m.named_list(
                    &["object", "attributes", "storage"],
                    vec![
                        crate::tree::make::strings([Some(b"sparse".as_slice())]),
                        attributes,
                        crate::tree::make::strings([Some(storage.letter().as_bytes())]),
                    ],
                ));
            }
        };
        let attributes = attr_list(m, attrs);
        Some(m.named_list(
            &["object", "attributes"],
            vec![crate::tree::make::strings([Some(object.as_bytes())]), attributes],
        ))
    }
}

/// The order of a data frame's attributes `names` to note: `None` when
/// the way back gives it anyway (`names`, `class`, `row.names`, then the
/// others as they were), as `data.frame()` makes them; `$<-` on a data
/// frame, tibbles and data.tables put `class` after `row.names`.
fn frame_order(names: &[&str]) -> Option<String> {
    const FIRST: [&str; 3] = ["names", "class", "row.names"];
    // (a frame made from Arrow always has names, a zero-column one too)
    let usual = FIRST
        .iter()
        .copied()
        .filter(|f| *f == "names" || names.contains(f))
        .chain(names.iter().copied().filter(|n| !FIRST.contains(n)));
    (!usual.eq(names.iter().copied())).then(|| names.join("\t"))
}

/// Put the attributes of a data frame `obj` in the order `order` names
/// (those it does not name after them, as they were); without `names`
/// when the order has none (a frame without columns that had none).
fn reorder_attributes(obj: &mut RObject, order: &[&str], refs: &RefTable) {
    let RObject::Vector(v) = obj else { return };
    let Some(RObject::Pairlist(p)) = v.attributes.as_mut() else {
        return;
    };
    let tag_is = |c: &Cell, name: &str| matches!(&c.tag, Some(RObject::Ref(id)) if refs.symbol_name(*id) == Some(name.as_bytes()));
    if !order.contains(&"names") {
        p.cells.retain(|c| {
            !(tag_is(c, "names") && matches!(&c.car, RObject::Vector(n) if n.data.is_empty()))
        });
    }
    let rank = |c: &Cell| {
        let name = match &c.tag {
            Some(RObject::Ref(id)) => refs.symbol_name(*id),
            _ => None,
        };
        order
            .iter()
            .position(|n| Some(n.as_bytes()) == name)
            .unwrap_or(order.len())
    };
    p.cells.sort_by_key(|c| rank(c));
}

/// The element name of rdarrow's part of the `"r"` metadata.
const SHAPE_ELEMENT: &str = "rdarrow";

/// The `"r"` metadata for a table made from an object of `shape` (`frame`:
/// a data frame's own attributes) whose columns `names` have `cols` and
/// became `types`; None when there is nothing to keep.
pub fn r_metadata(
    refs: &RefTable,
    shape: &Shape,
    frame: Option<&ColumnMeta>,
    names: &[&str],
    cols: &[ColumnMeta],
    types: &[DataType],
) -> Result<Option<RMetadata>> {
    let mut m = ObjectMaker::with_refs(refs.clone());
    let mut top = frame.map(|f| f.kept(None, true)).unwrap_or_default();
    if let Shape::Frame { attrs } = shape {
        // row names that disagree with the columns would break arrow R's
        // data frame: they travel in rdarrow's element only
        top.retain(|(n, _)| !attrs.iter().any(|(a, _)| a == n));
    }
    let col_md: Vec<Option<RObject>> = cols
        .iter()
        .zip(types)
        .map(|(c, dt)| c.r_node(&mut m, Some(dt)))
        .collect();
    let element = shape.element(&mut m);
    if top.is_empty() && col_md.iter().all(|c| c.is_none()) && element.is_none() {
        return Ok(None);
    }
    let attributes = attr_list(&mut m, top);
    let columns = m.named_list(
        names,
        col_md
            .into_iter()
            .map(|c| c.unwrap_or(RObject::Null))
            .collect(),
    );
    let root = match element {
        Some(e) => m.named_list(
            &["attributes", "columns", SHAPE_ELEMENT],
            vec![attributes, columns, e],
        ),
        None => m.named_list(&["attributes", "columns"], vec![attributes, columns]),
    };
    // doubles in hex (`serialize(ascii = NA)`): R's `%.16g` would lose
    // their last bits (a `ts`'s `tsp`); R and arrow R read both
    let header = StreamHeader {
        ascii_hex: true,
        ..StreamHeader::utf8_v3(Format::Ascii)
    };
    let (bytes, exact) =
        crate::write::write_stream_exact(Container::Stream, &header, &root, &m.refs)?;
    // NaNs whose payloads text cannot keep (R's arithmetic on NA, in a
    // kept value): the same list in XDR too, for rdarrow's way back (arrow
    // R takes ASCII alone)
    let exact = if exact {
        None
    } else {
        let xdr = StreamHeader::utf8_v3(Format::Xdr);
        let inner = crate::write::write_stream(Vec::new(), Container::Stream, &xdr, &root, &m.refs)?;
        Some(String::from_utf8_lossy(&compressed(&inner, &header)?).into_owned())
    };
    Ok(Some(RMetadata {
        r: String::from_utf8_lossy(&compress_large(bytes, &header)?).into_owned(),
        exact,
    }))
}

/// The `"r"` metadata of a table, and its bit-exact form when the text
/// is not ([`EXACT_KEY`]).
pub struct RMetadata {
    pub r: String,
    pub exact: Option<String>,
}

/// The schema metadata key of the `"r"` metadata's bit-exact form: the
/// ASCII serialization of the raw vector `memCompress(<XDR serialization>,
/// "gzip")`, written when the ASCII `"r"` would lose NaN payloads.
pub const EXACT_KEY: &str = "rdarrow.r";

/// The `"r"` metadata rdarrow reads from a schema: the bit-exact form
/// when there is one.
pub fn r_text(schema: &arrow_schema::Schema) -> Option<&String> {
    let md = schema.metadata();
    md.get(EXACT_KEY).or_else(|| md.get("r"))
}

/// Metadata above this size is compressed, as arrow R does.
const COMPRESS_ABOVE: usize = 100_000;

/// arrow R's form of large metadata: the ASCII serialization of the raw
/// vector `memCompress(<serialization>, "gzip")` (zlib), when smaller.
fn compress_large(bytes: Vec<u8>, header: &StreamHeader) -> Result<Vec<u8>> {
    if bytes.len() <= COMPRESS_ABOVE {
        return Ok(bytes);
    }
    let out = compressed(&bytes, header)?;
    Ok(if out.len() < bytes.len() { out } else { bytes })
}

/// The ASCII serialization (`header`) of the raw vector
/// `memCompress(<bytes>, "gzip")` (zlib), as arrow R writes it.
fn compressed(bytes: &[u8], header: &StreamHeader) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes)
        .and_then(|_| z.flush())
        .map_err(|e| crate::Error::io(&e, "cannot compress the \"r\" metadata"))?;
    let packed = z
        .finish()
        .map_err(|e| crate::Error::io(&e, "cannot compress the \"r\" metadata"))?;
    let raw = RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Raw(arrow_buffer::Buffer::from_vec(packed)),
        attributes: None,
    }));
    crate::write::write_stream(
        Vec::new(),
        Container::Stream,
        header,
        &raw,
        &RefTable::default(),
    )
}

/// Set an attribute on a vector node (setting `class` sets the object bit).
pub(crate) fn set_vector_attribute(
    m: &mut ObjectMaker,
    target: &mut RObject,
    name: &str,
    value: RObject,
) {
    let tag = m.symbol(name);
    let (attrs, flags) = match target {
        RObject::Vector(v) => (&mut v.attributes, &mut v.flags),
        RObject::S4(s) => (&mut s.attributes, &mut s.flags),
        _ => return,
    };
    if matches!(value, RObject::Null) {
        remove_attribute(attrs, name.as_bytes(), &m.refs);
        if name == "class" {
            flags.object = false;
        }
        return;
    }
    if name == "class" {
        flags.object = true;
    }
    set_attribute(attrs, tag, name.as_bytes(), &m.refs, value);
}

fn apply(m: &mut ObjectMaker, target: &mut RObject, md: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(md, &refs);
    for (key, part) in parts {
        match key.as_str() {
            "attributes" => {
                for (name, value) in list_entries(part, &refs) {
                    set_vector_attribute(m, target, &name, value.clone());
                }
            }
            // a struct made of a named list or of an S4 object's slots
            "struct" => struct_back(m, target, part),
            // a data frame's attributes in their order
            "order" => {
                let order = crate::to_arrow::strings_in(Some(part), &m.refs);
                let order: Vec<&str> = order.iter().map(String::as_str).collect();
                reorder_attributes(target, &order, &m.refs);
            }
            // the vector's general-purpose bits, as R wrote them
            "gp" => {
                if let (RObject::Vector(v), Some(gp)) = (&mut *target, first_int(part)) {
                    v.flags.levels |= gp as u16;
                }
            }
            // an S4 object whose type is a vector
            "s4" => {
                if let RObject::Vector(v) = target {
                    v.flags.levels |= levels::S4_OBJECT;
                }
            }
            // a list column's elements (an S4 object's slots), by position
            // (arrow R's row-level metadata)
            "columns" if !target.inherits(&m.refs, "data.frame") => {
                let subs: Vec<&RObject> = match part {
                    RObject::Vector(v) => match &v.data {
                        VectorData::List(l) => l.iter().collect(),
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                match target {
                    RObject::Vector(v) => {
                        if let VectorData::List(items) = &mut v.data {
                            for (item, sub) in items.iter_mut().zip(subs) {
                                if !matches!(sub, RObject::Null) {
                                    apply(m, item, sub);
                                }
                            }
                        }
                    }
                    RObject::S4(s) => {
                        if let Some(RObject::Pairlist(p)) = s.attributes.as_mut() {
                            for (cell, sub) in p.cells.iter_mut().zip(subs) {
                                if !matches!(sub, RObject::Null) {
                                    apply(m, &mut cell.car, sub);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            // a list element without an Arrow value: itself
            "value" => *target = part.clone(),
            // a list's integer64 element that came back as integer
            "integer64" => to_integer64(m, target),
            // a raw element among others, which came back as integer
            "raw" => to_raw(target),
            // a difftime inside a list, in seconds: its own units again
            "units" => {
                if let Some(u) = crate::to_arrow::strings_in(Some(part), &refs).first() {
                    to_units(m, target, u);
                }
            }
            // a time stored as integers inside a list
            "integer" => to_integer(target),
            // NAs with bits other than R's NA_real_
            "na" => NaBits::apply_node(target, part, &refs),
            // a factor inside a list: its codes recoded to its own levels
            "levels" => recode_factor(m, target, part),
            // a list's logical and integer elements, widened in Arrow
            "types" => {
                let codes: Vec<i32> = match part {
                    RObject::Vector(v) => match &v.data {
                        VectorData::Integer(x) => x.to_vec(),
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                if let RObject::Vector(v) = target {
                    if let VectorData::List(items) = &mut v.data {
                        for (item, code) in items.iter_mut().zip(codes) {
                            if let RObject::Vector(item) = item {
                                narrow_item(item, code as u8);
                            }
                        }
                    }
                }
            }
            // a list element that was complex: from its struct's parts
            "complex" => {
                if let Some(z) = complex_of(target, &m.refs) {
                    *target = m.vector(VectorData::Complex(z.into()), vec![]);
                }
            }
            // strings kept as R held them, put back in their rows
            "strings" => put_back_strings(m, target, part),
            // a matrix column: its rows bound into the matrix
            "matrix" => bind_matrix_rows(m, target, part),
            // a POSIXlt: its components from the times, as they were
            "posixlt" => rebuild_posixlt(m, target, part),
            "columns" => {
                let col_names: Vec<String> = match target
                    .attribute(&m.refs, "names")
                    .and_then(|n| n.as_strings())
                {
                    Some(s) => (0..s.len())
                        .map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned())
                        .collect(),
                    None => Vec::new(),
                };
                for (name, sub) in list_entries(part, &refs) {
                    if matches!(sub, RObject::Null) {
                        continue;
                    }
                    if let Some(i) = col_names.iter().position(|n| *n == name) {
                        if let RObject::Vector(v) = target {
                            if let VectorData::List(items) = &mut v.data {
                                apply(m, &mut items[i], sub);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The first number of an integer vector.
fn first_int(obj: &RObject) -> Option<i32> {
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::Integer(x) => x.first().copied(),
            _ => None,
        },
        _ => None,
    }
}

/// A struct made of a named list (`what` "list") or of an S4 object's
/// slots (`"S4"`), which came back as a data frame of one row whose
/// columns are lists of one element: the list of those elements (its
/// names and attributes go on next), or the S4 object with them as its
/// slots, in order (its class goes on next).
fn struct_back(m: &mut ObjectMaker, target: &mut RObject, what: &RObject) {
    let refs = m.refs.clone();
    if !target.inherits(&refs, "data.frame") {
        // a named list whose elements had one type: a list already
        return;
    }
    let names: Vec<String> =
        crate::to_arrow::strings_in(target.attribute(&refs, "names"), &refs);
    let RObject::Vector(v) = target else { return };
    let VectorData::List(cols) = &mut v.data else {
        return;
    };
    let items: Vec<RObject> = std::mem::take(cols)
        .into_iter()
        .map(|c| match c {
            RObject::Vector(mut l) => match &mut l.data {
                VectorData::List(one) if one.len() == 1 => one.pop().unwrap_or(RObject::Null),
                _ => RObject::Vector(l),
            },
            other => other,
        })
        .collect();
    let s4 = what
        .as_strings()
        .is_some_and(|s| s.get(0) == Some(b"S4".as_slice()));
    *target = if s4 {
        let slots: Vec<(&str, RObject)> = names.iter().map(String::as_str).zip(items).collect();
        RObject::S4(Box::new(AttrOnly {
            flags: Flags {
                levels: levels::S4_OBJECT,
                object: true,
            },
            attributes: m.tagged_pairlist(slots),
        }))
    } else {
        m.vector(VectorData::List(items), vec![])
    };
}

/// A list element that was logical or integer (`code`) and came back as
/// a wider type: its values as they were.
fn narrow_item(item: &mut Vector, code: u8) {
    if !matches!(code, sxp::LGL | sxp::INT) {
        return;
    }
    let narrowed: Vec<i32> = match &item.data {
        VectorData::Real(x) => x
            .iter()
            .map(|&f| {
                if na::is_na_real(f) {
                    na::INTEGER
                } else {
                    f as i32
                }
            })
            .collect(),
        VectorData::Integer(x) | VectorData::Logical(x) => x.to_vec(),
        _ => return,
    };
    item.data = if code == sxp::LGL {
        VectorData::Logical(narrowed.into())
    } else {
        VectorData::Integer(narrowed.into())
    };
}

/// The levels of a factor (ALTREP levels expanded) as a character vector
/// without attributes, each string as R held it.
fn factor_levels(obj: &RObject, refs: &RefTable) -> RObject {
    let data = match obj.attribute(refs, "levels") {
        Some(RObject::Vector(v)) => v.data.clone(),
        Some(RObject::Altrep(a)) => crate::tree::altrep::expand(a, refs)
            .unwrap_or(VectorData::Character(StringVectorBuilder::new(0).finish())),
        _ => VectorData::Character(StringVectorBuilder::new(0).finish()),
    };
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data,
        attributes: None,
    }))
}

/// The strings of a character vector as text, for matching levels
/// (`None`: `NA`).
fn level_texts(obj: &RObject) -> Vec<Option<String>> {
    let Some(s) = obj.as_strings() else {
        return Vec::new();
    };
    (0..s.len())
        .map(|i| {
            (!s.is_na(i)).then(|| {
                let (_, b) = crate::tree::encoding::to_utf8(s.bytes(i), s.levels(i), None);
                String::from_utf8_lossy(&b).into_owned()
            })
        })
        .collect()
}

/// A factor that came back with its list's dictionary as levels: its
/// codes recoded to `levels` (its own, as it had them), matched by text.
fn recode_factor(m: &mut ObjectMaker, target: &mut RObject, levels: &RObject) {
    let refs = m.refs.clone();
    let old = match target.attribute(&refs, "levels") {
        Some(l) => level_texts(l),
        None => return,
    };
    let new = level_texts(levels);
    if old != new {
        let mut at: std::collections::HashMap<&Option<String>, i32> = Default::default();
        for (i, l) in new.iter().enumerate() {
            at.entry(l).or_insert(i as i32 + 1);
        }
        let table: Vec<i32> = old
            .iter()
            .map(|l| at.get(l).copied().unwrap_or(na::INTEGER))
            .collect();
        let RObject::Vector(v) = target else { return };
        let VectorData::Integer(codes) = &v.data else {
            return;
        };
        let recoded: Vec<i32> = codes
            .iter()
            .map(|&c| {
                if c == na::INTEGER || c < 1 {
                    na::INTEGER
                } else {
                    table.get(c as usize - 1).copied().unwrap_or(na::INTEGER)
                }
            })
            .collect();
        v.data = VectorData::Integer(recoded.into());
    }
    set_vector_attribute(m, target, "levels", levels.clone());
}

/// An integer64 (a top-level column's, a list element's) that came back
/// as integer (its values fit): integer64 again.
fn to_integer64(m: &mut ObjectMaker, target: &mut RObject) {
    let RObject::Vector(v) = target else { return };
    if let VectorData::Integer(x) = &v.data {
        v.data = VectorData::Real(crate::tree::na::integer64_of_ints(x).into());
    }
    if !target.inherits(&m.refs, "integer64") {
        set_vector_attribute(
            m,
            target,
            "class",
            crate::tree::make::strings([Some(&b"integer64"[..])]),
        );
    }
}

/// A POSIXlt made from the timestamps of its instants: its components
/// derived in the zone of its node, those the node keeps put as they
/// were (where they still fit: the table was not filtered), and its
/// attributes.
fn rebuild_posixlt(m: &mut ObjectMaker, target: &mut RObject, node: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(node, &refs);
    let get = |k: &str| parts.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let secs: Vec<f64> = match target {
        RObject::Vector(v) => match &v.data {
            VectorData::Real(x) => x.to_vec(),
            VectorData::Integer(x) => x
                .iter()
                .map(|&i| {
                    if i == na::INTEGER {
                        f64::from_bits(na::REAL_BITS)
                    } else {
                        i as f64
                    }
                })
                .collect(),
            _ => return,
        },
        _ => return,
    };
    let zone = get("zone")
        .and_then(|z| z.as_strings())
        .and_then(|s| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned()));
    let attrs: Vec<(String, RObject)> = get("attributes")
        .map(|a| {
            list_entries(a, &refs)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let kept: Vec<(String, RObject)> = get("components")
        .map(|a| {
            list_entries(a, &refs)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let names: Vec<String> = attrs
        .iter()
        .find(|(n, _)| n == "names")
        .and_then(|(_, v)| v.as_strings())
        .map(|s| {
            (0..s.len())
                .map(|i| String::from_utf8_lossy(s.bytes(i)).into_owned())
                .collect()
        })
        .unwrap_or_else(|| {
            // (components without names: R's first `count`)
            let count = get("count").and_then(first_int).map_or(usize::MAX, |c| c.max(0) as usize);
            super::posixlt::COMPONENTS
                .iter()
                .take(count)
                .map(|c| c.to_string())
                .collect()
        });
    let tz = super::posixlt::time_zone(zone.as_deref());
    let n = secs.len();
    let items: Vec<RObject> = super::posixlt::derive(&secs, &tz, &names)
        .into_iter()
        .map(|(name, data)| {
            match kept.iter().find(|(k, v)| {
                *k == name
                    && (crate::read::summary::r_length(v, &refs) as usize == n
                        || (n == 0 && crate::read::summary::r_length(v, &refs) == 0))
            }) {
                Some((_, v)) => v.clone(),
                None => RObject::Vector(Box::new(Vector {
                    flags: Flags::default(),
                    data,
                    attributes: None,
                })),
            }
        })
        .collect();
    let mut lt = RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::List(items),
        attributes: None,
    }));
    for (name, value) in attrs {
        set_vector_attribute(m, &mut lt, &name, value);
    }
    *target = lt;
}

/// A matrix column made from a fixed-size list (a list of its rows) bound
/// back into the matrix, with the dimensions in `node` (`dim`,
/// `dimnames`); the list's other attributes stay. Left alone when the rows
/// do not fit the dimensions (the table was filtered).
fn bind_matrix_rows(m: &mut ObjectMaker, target: &mut RObject, node: &RObject) {
    let refs = m.refs.clone();
    let attrs: Vec<(String, RObject)> = list_entries(node, &refs)
        .into_iter()
        .map(|(n, v)| (n, v.clone()))
        .collect();
    let Some((_, dim)) = attrs.iter().find(|(n, _)| n == "dim") else {
        return;
    };
    let dims: Vec<usize> = match dim {
        RObject::Vector(v) => match &v.data {
            VectorData::Integer(x) => x.iter().map(|&i| i.max(0) as usize).collect(),
            VectorData::Real(x) => x.iter().map(|&f| f.max(0.0) as usize).collect(),
            _ => return,
        },
        _ => return,
    };
    let [nr, nc] = dims[..] else { return };
    let empty_type = attrs
        .iter()
        .find(|(n, _)| n == "type")
        .and_then(|(_, t)| match t {
            RObject::Vector(t) => Some(t.data.clone()),
            _ => None,
        });
    let RObject::Vector(v) = target else { return };
    let VectorData::List(rows) = &v.data else {
        return;
    };
    if rows.len() != nr {
        return;
    }
    let data = if nr == 0 || nc == 0 {
        // no values to say their type: the node says it
        match empty_type {
            Some(t) => t,
            None => VectorData::Logical(Vec::<i32>::new().into()),
        }
    } else {
        let Some(RObject::Vector(bound)) = bind_columns(rows.clone()) else {
            return;
        };
        let Some(data) = bound.data.transposed(nc, nr) else {
            return;
        };
        data
    };
    v.data = data;
    for (name, value) in attrs {
        if name != "type" {
            set_vector_attribute(m, target, &name, value);
        }
    }
}

/// A vector of R type `t` without elements.
fn empty_of(t: u8) -> Option<VectorData> {
    Some(match t {
        sxp::LGL => VectorData::Logical(Vec::<i32>::new().into()),
        sxp::INT => VectorData::Integer(Vec::<i32>::new().into()),
        sxp::REAL => VectorData::Real(Vec::<f64>::new().into()),
        sxp::CPLX => VectorData::Complex(Vec::<f64>::new().into()),
        sxp::STR => VectorData::Character(StringVectorBuilder::new(0).finish()),
        sxp::RAW => VectorData::Raw(arrow_buffer::Buffer::from_vec(Vec::<u8>::new())),
        sxp::VEC => VectorData::List(Vec::new()),
        _ => return None,
    })
}

/// Put the strings of a column's `strings` node ([`KeptStrings`]) back in
/// their rows: of a character vector, or of a factor's levels. Rows that
/// are no longer there (the table was filtered) are left alone.
fn put_back_strings(m: &mut ObjectMaker, target: &mut RObject, node: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(node, &refs);
    let rows: Vec<usize> = match parts.iter().find(|(k, _)| k == "rows").map(|(_, v)| v) {
        Some(RObject::Vector(v)) => match &v.data {
            VectorData::Integer(x) => x.iter().map(|&r| r.max(1) as usize - 1).collect(),
            _ => return,
        },
        _ => return,
    };
    let Some(values) = parts
        .iter()
        .find(|(k, _)| k == "values")
        .and_then(|(_, v)| v.as_strings())
    else {
        return;
    };
    if values.len() != rows.len() {
        return;
    }
    let patched = |s: &StringVector| -> StringVector {
        let mut b = StringVectorBuilder::new(s.len());
        let mut next = 0;
        for i in 0..s.len() {
            while next < rows.len() && rows[next] < i {
                next += 1;
            }
            if next < rows.len() && rows[next] == i {
                b.data().extend_from_slice(values.bytes(next));
                b.end(false, values.levels(next));
            } else {
                b.data().extend_from_slice(s.bytes(i));
                b.end(s.is_na(i), s.levels(i));
            }
        }
        b.finish()
    };
    if target.inherits(&refs, "factor") {
        let Some(levels) = target
            .attribute(&refs, "levels")
            .and_then(|l| l.as_strings())
        else {
            return;
        };
        let new = character_vector(patched(levels));
        set_vector_attribute(m, target, "levels", new);
    } else if let RObject::Vector(v) = target {
        if let VectorData::Character(s) = &v.data {
            v.data = VectorData::Character(patched(s));
        }
    }
}

/// Apply arrow R's `"r"` metadata to a data frame made from Arrow data:
/// `attributes(x)[names(a)] <- a` at each level. Returns the frame and
/// rdarrow's shape element ([`Shape`]), when there is one.
pub fn apply_r_metadata(
    m: &mut ObjectMaker,
    mut frame: RObject,
    md: &str,
) -> Result<(RObject, Option<RObject>)> {
    let mut doc = parse_r_metadata(md)?;
    let base = m.refs.append(std::mem::take(&mut doc.refs));
    let mut root = doc.root;
    root.for_each_ref_mut(&mut |id| id.0 += base);
    apply(m, &mut frame, &root);
    let refs = m.refs.clone();
    let shape = list_entries(&root, &refs)
        .into_iter()
        .find(|(k, _)| k == SHAPE_ELEMENT)
        .map(|(_, v)| v.clone());
    Ok((frame, shape))
}

/// The `"r"` schema metadata, as the R object it serializes.
fn parse_r_metadata(md: &str) -> Result<crate::Document> {
    read_r_text(md, "the \"r\" schema metadata")
}

/// An R object serialized in ASCII as the `"r"` metadata holds it
/// (`what`: which metadata, for its error), parsed on this thread where
/// its stack allows: metadata is small, and a thread of its own would cost
/// more than the parse.
pub(crate) fn read_r_text(md: &str, what: &str) -> Result<crate::Document> {
    let read = |bytes: Vec<u8>| {
        let opts = crate::ReadOptions::default();
        crate::read_here(&opts, |o| crate::read_bytes(bytes.clone(), o))
            .unwrap_or_else(|| crate::read_bytes(bytes, &opts))
    };
    let doc = read(md.as_bytes().to_vec()).map_err(|e| {
        crate::Error::corrupt(format!("{what} is not a valid R serialization: {e}"))
    })?;
    // arrow R gzips large metadata: serialize(memCompress(x, "gzip"))
    if let RObject::Vector(v) = &doc.root {
        if let VectorData::Raw(b) = &v.data {
            let inner = crate::compression::inflate_zlib_or_gzip(b)?;
            return read(inner);
        }
    }
    Ok(doc)
}

/// The row names of the data frame a schema's `"r"` metadata describes,
/// when they are not R's automatic 1..n (character row names, or integers
/// R keeps), with the reference table they use: for front ends that give
/// a table an index (pandas).
pub fn row_names(schema: &arrow_schema::Schema) -> Result<Option<(RObject, RefTable)>> {
    let Some(md) = r_text(schema) else {
        return Ok(None);
    };
    let mut doc = parse_r_metadata(md)?;
    let found = list_entries(&doc.root, &doc.refs)
        .into_iter()
        .find(|(k, _)| k == "attributes")
        .and_then(|(_, a)| {
            list_entries(a, &doc.refs)
                .into_iter()
                .find(|(k, _)| k == "row.names")
                .map(|(_, rn)| rn.clone())
        });
    Ok(found.map(|rn| (rn, std::mem::take(&mut doc.refs))))
}

/// What the table was made from, as its `"r"` metadata records it:
/// `"vector"`, `"matrix"`, `"sparse"` or `"data.frame"` (also for a
/// table without rdarrow's metadata). A front end offers a vector's table
/// as that vector's own array.
pub fn object_shape(schema: &arrow_schema::Schema) -> String {
    let Some(md) = r_text(schema) else {
        return "data.frame".into();
    };
    let Ok(doc) = parse_r_metadata(md) else {
        return "data.frame".into();
    };
    list_entries(&doc.root, &doc.refs)
        .into_iter()
        .find(|(k, _)| k == SHAPE_ELEMENT)
        .and_then(|(_, e)| {
            list_entries(e, &doc.refs)
                .into_iter()
                .find(|(k, _)| k == "object")
                .and_then(|(_, v)| v.as_strings())
                .and_then(|s| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned()))
        })
        .unwrap_or_else(|| "data.frame".into())
}

/// The top-level columns whose `"r"` metadata node (at any depth) keeps
/// strings ([`KeptStrings`]), binds a matrix or rebuilds a POSIXlt: that
/// is done on the whole column.
pub fn columns_rebuilt_whole(schema: &arrow_schema::Schema) -> Vec<String> {
    let Some(md) = r_text(schema) else {
        return Vec::new();
    };
    let Ok(doc) = parse_r_metadata(md) else {
        return Vec::new();
    };
    fn keeps(node: &RObject, refs: &RefTable) -> bool {
        list_entries(node, refs).into_iter().any(|(k, v)| {
            matches!(k.as_str(), "strings" | "matrix" | "posixlt")
                || (k == "columns"
                    && match v {
                        RObject::Vector(l) => match &l.data {
                            VectorData::List(items) => items.iter().any(|c| keeps(c, refs)),
                            _ => false,
                        },
                        _ => false,
                    })
        })
    }
    list_entries(&doc.root, &doc.refs)
        .into_iter()
        .find(|(k, _)| k == "columns")
        .map(|(_, cols)| {
            list_entries(cols, &doc.refs)
                .into_iter()
                .filter(|(_, node)| keeps(node, &doc.refs))
                .map(|(name, _)| name)
                .collect()
        })
        .unwrap_or_default()
}

/// Give a data frame made from Arrow data back the shape of the object it
/// was made from (the `rdarrow` element of its `"r"` metadata): a vector
/// (its one column), a matrix (its columns bound), or a data frame whose
/// row names disagree with its columns. A table changed since (columns
/// added or dropped, rows filtered) no longer fits the shape: it stays
/// the data frame.
pub fn restore_shape(m: &mut ObjectMaker, frame: RObject, element: &RObject) -> Result<RObject> {
    let refs = m.refs.clone();
    let parts = list_entries(element, &refs);
    let object = parts
        .iter()
        .find(|(k, _)| k == "object")
        .and_then(|(_, v)| v.as_strings())
        .and_then(|s| s.get(0).map(|b| b.to_vec()));
    let attrs: Vec<(String, RObject)> = parts
        .iter()
        .find(|(k, _)| k == "attributes")
        .map(|(_, v)| {
            list_entries(v, &refs)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let cols = match &frame {
        RObject::Vector(v) => match &v.data {
            VectorData::List(items) => items.len(),
            _ => return Ok(frame),
        },
        _ => return Ok(frame),
    };
    let mut out = match object.as_deref() {
        Some(b"data.frame") => frame,
        Some(b"vector") if cols == 1 => match frame {
            RObject::Vector(v) => match v.data {
                VectorData::List(mut items) => items.pop().unwrap_or(RObject::Null),
                _ => unreachable!("a list, checked above"),
            },
            _ => unreachable!("a vector, checked above"),
        },
        Some(b"sparse") => {
            let storage = parts
                .iter()
                .find(|(k, _)| k == "storage")
                .and_then(|(_, v)| v.as_strings())
                .and_then(|s| s.get(0).and_then(super::sparse::Storage::from_letter))
                .ok_or_else(|| {
                    crate::Error::corrupt("the sparse matrix's metadata has no storage")
                })?;
            let names = crate::to_arrow::names_of(&frame, &refs);
            let RObject::Vector(v) = frame else {
                unreachable!("a vector, checked above")
            };
            let VectorData::List(items) = v.data else {
                unreachable!("a list, checked above")
            };
            let columns: Vec<(String, RObject)> = names.into_iter().zip(items).collect();
            return super::sparse::rebuild(m, storage, &columns, attrs);
        }
        Some(b"matrix") => {
            let RObject::Vector(v) = &frame else {
                unreachable!("a vector, checked above")
            };
            let VectorData::List(items) = &v.data else {
                unreachable!("a list, checked above")
            };
            match bind_columns(items.clone()) {
                Some(bound) => bound,
                None => return Ok(frame),
            }
        }
        _ => return Ok(frame),
    };
    // dimensions that no longer fit the values (rows were filtered)
    let len = crate::read::summary::r_length(&out, &refs);
    if let Some((_, dim)) = attrs.iter().find(|(n, _)| n == "dim") {
        let cells = match dim {
            RObject::Vector(d) => match &d.data {
                VectorData::Integer(x) => x.iter().map(|&i| i.max(0) as u64).product::<u64>(),
                VectorData::Real(x) => x.iter().map(|&f| f.max(0.0) as u64).product::<u64>(),
                _ => u64::MAX,
            },
            _ => u64::MAX,
        };
        if cells != len {
            return Err(crate::Error::usage(format!(
                "the table was made from an array of {cells} cells but holds {len} values; convert it as a data frame (as.data.frame())"
            )));
        }
    }
    for (name, value) in attrs {
        set_vector_attribute(m, &mut out, &name, value);
    }
    Ok(out)
}

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

/// Matrix columns (vectors of one type) bound into one vector, column
/// after column; None when their types differ.
fn bind_columns(cols: Vec<RObject>) -> Option<RObject> {
    let datas: Vec<VectorData> = cols
        .into_iter()
        .map(|c| match c {
            RObject::Vector(v) => Some(v.data),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let Some(first) = datas.first() else {
        // a matrix without columns: its type is lost with them
        return Some(RObject::Vector(Box::new(Vector {
            flags: Flags::default(),
            data: VectorData::Logical(Vec::<i32>::new().into()),
            attributes: None,
        })));
    };
    let t = first.sxptype();
    if datas.iter().any(|d| d.sxptype() != t) {
        return None;
    }
    macro_rules! cat {
        ($var:ident) => {{
            let mut all = Vec::new();
            for d in &datas {
                if let VectorData::$var(x) = d {
                    all.extend_from_slice(&x[..]);
                }
            }
            VectorData::$var(all.into())
        }};
    }
    let data = match first {
        VectorData::Logical(_) => cat!(Logical),
        VectorData::Integer(_) => cat!(Integer),
        VectorData::Real(_) => cat!(Real),
        VectorData::Complex(_) => cat!(Complex),
        VectorData::Raw(_) => {
            let mut all = Vec::new();
            for d in &datas {
                if let VectorData::Raw(x) = d {
                    all.extend_from_slice(x.as_slice());
                }
            }
            VectorData::Raw(arrow_buffer::Buffer::from_vec(all))
        }
        VectorData::Character(_) => {
            // each string keeps its encoding (strings put back from the
            // metadata keep theirs)
            let total = datas.iter().map(|d| d.len() as usize).sum();
            let mut b = StringVectorBuilder::new(total);
            for d in &datas {
                if let VectorData::Character(s) = d {
                    for i in 0..s.len() {
                        b.data().extend_from_slice(s.bytes(i));
                        b.end(s.is_na(i), s.levels(i));
                    }
                }
            }
            VectorData::Character(b.finish())
        }
        VectorData::List(_) => {
            let mut all = Vec::new();
            for d in datas {
                if let VectorData::List(x) = d {
                    all.extend(x);
                }
            }
            VectorData::List(all)
        }
        _ => return None,
    };
    Some(RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data,
        attributes: None,
    })))
}

/// A difftime that came back in seconds (from a duration): in units `u`
/// again (values and attribute; units R does not know, and a difftime
/// that came back as plain doubles, are left as they are).
fn to_units(m: &mut ObjectMaker, target: &mut RObject, u: &str) {
    let Some(mult) = super::types::difftime_seconds(u) else {
        return;
    };
    let secs = target
        .attribute(&m.refs, "units")
        .and_then(|a| a.as_strings())
        .is_some_and(|a| a.len() == 1 && a.get(0) == Some(b"secs".as_slice()));
    if !secs {
        return;
    }
    if let RObject::Vector(cv) = target {
        if let VectorData::Real(x) = &cv.data {
            let scaled: Vec<f64> = x
                .iter()
                .map(|&f| if f.is_nan() { f } else { f / mult })
                .collect();
            cv.data = VectorData::Real(scaled.into());
        }
    }
    set_vector_attribute(m, target, "units", crate::tree::make::strings([Some(u.as_bytes())]));
}

/// A time stored as integers that came back as doubles: integers again.
fn to_integer(target: &mut RObject) {
    if let RObject::Vector(cv) = target {
        if let VectorData::Real(x) = &cv.data {
            let v: Vec<i32> = x
                .iter()
                .map(|&f| if f.is_nan() { na::INTEGER } else { f as i32 })
                .collect();
            cv.data = VectorData::Integer(v.into());
        }
    }
}

/// A raw vector that came back from Arrow's `uint8` as integer: raw again.
fn to_raw(target: &mut RObject) {
    if let RObject::Vector(v) = target {
        if let VectorData::Integer(x) = &v.data {
            let bytes: Vec<u8> = x.iter().map(|&i| i as u8).collect();
            v.data = VectorData::Raw(arrow_buffer::Buffer::from_vec(bytes));
        }
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
            let class = crate::tree::make::strings(parts[1..].iter().map(|s| Some(s.as_bytes())));
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
                set_vector_attribute(m, col, "tzone", crate::tree::make::strings([Some(&b""[..])]))
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
                set_vector_attribute(m, col, "class", crate::tree::make::strings([Some(&b"Date"[..])]));
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

/// A complex vector's values from the data frame of its `re` and `im`
/// parts that Arrow's struct became (the parts' doubles as they are).
fn complex_of(col: &RObject, refs: &RefTable) -> Option<Vec<f64>> {
    let RObject::Vector(v) = col else { return None };
    let VectorData::List(parts) = &v.data else {
        return None;
    };
    let names = col.attribute(refs, "names")?.as_strings()?;
    let part = |n: &[u8]| {
        (0..names.len())
            .position(|i| names.get(i) == Some(n))
            .and_then(|i| match &parts[i] {
                RObject::Vector(p) => match &p.data {
                    VectorData::Real(x) => Some(x.clone()),
                    _ => None,
                },
                _ => None,
            })
    };
    let (re, im) = (part(b"re")?, part(b"im")?);
    Some(
        re.iter()
            .zip(im.iter())
            .flat_map(|(&r, &i)| [r, i])
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn na_bits_travel_as_runs_and_come_back_in_place() {
        let quiet = f64::from_bits(0x7ff8_0000_0000_07a2);
        let na = f64::from_bits(na::REAL_BITS);
        let x = vec![1.0, quiet, quiet, quiet, na, quiet, 2.0];
        let bits = NaBits::of(&x).expect("NAs with other bits");
        assert_eq!(bits.runs(), vec![(1, 3, 0x7ff8_0000_0000_07a2), (5, 1, 0x7ff8_0000_0000_07a2)]);
        let line = bits.note_lines("x");
        assert_eq!(line, "na\tx\t7ff80000000007a2\t2-4,6\n");
        // back: the vector as Arrow gives it, every NA R's NA_real_
        let mut target = RObject::Vector(Box::new(Vector {
            flags: Flags::default(),
            data: VectorData::Real(vec![1.0, na, na, na, na, na, 2.0].into()),
            attributes: None,
        }));
        let at: Vec<usize> = NaBits::positions("2-4,6,9-99,0,x,5-3", 7).collect();
        assert_eq!(at, vec![2, 3, 4, 6]);
        NaBits::put_back(&mut target, at.into_iter().map(|p| (p, 0x7ff8_0000_0000_07a2)));
        let RObject::Vector(v) = &target else { unreachable!() };
        let VectorData::Real(got) = &v.data else { unreachable!() };
        let got: Vec<u64> = got.iter().map(|f| f.to_bits()).collect();
        let want: Vec<u64> = x.iter().map(|f| f.to_bits()).collect();
        assert_eq!(got, want);
        // bits that are not an NA's are never put in
        NaBits::put_back(&mut target, [(1, 1.5f64.to_bits()), (5, 0x7ff8_0000_0000_0000)].into_iter());
        let RObject::Vector(v) = &target else { unreachable!() };
        let VectorData::Real(again) = &v.data else { unreachable!() };
        assert_eq!(again[0], 1.0);
        assert_eq!(again[4].to_bits(), na::REAL_BITS);
    }
}
