//! What a column's node of the `"r"` metadata says, taken from the R object
//! before its columns convert ([`ColumnMeta`]) and written once the Arrow
//! types they became are known ([`crate::mapping::types::type_says_kind`]):
//! its attributes, strings kept as R held them, NA bits, a matrix's or a
//! POSIXlt's parts, what a value inside a list was.

use crate::metadata::converted::ConvertedColumn;
use crate::metadata::strings::KeptStrings;
use crate::metadata::na_bits::NaBits;
use crate::metadata::attributes::attr_list;
use crate::mapping::objects::empty_of;
use crate::mapping::objects::factor_levels;
use crate::metadata::attributes::frame_order;
use crate::metadata::attributes::is_automatic_row_names;
use crate::metadata::attributes::plain_value;
use crate::mapping::types;
use crate::mapping::types::RKind;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;
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
/// ([`crate::mapping::posixlt`]).
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
        let tzone = crate::mapping::objects::strings_in(obj.attribute(refs, "tzone"), refs);
        let zone = match tzone.first() {
            Some(t) if !t.is_empty() => Some(t.clone()),
            _ => default_tz.map(str::to_string),
        };
        let tz = crate::mapping::posixlt::time_zone(zone.as_deref());
        let secs = crate::mapping::posixlt::instants(obj, refs, &tz);
        let parts = crate::mapping::posixlt::components(obj, refs);
        let unnamed = obj
            .attribute(refs, "names")
            .is_none()
            .then_some(parts.len());
        let names: Vec<String> = parts.iter().map(|(n, _)| n.clone()).collect();
        let derived = crate::mapping::posixlt::derive(&secs, &tz, &names);
        let components = parts
            .iter()
            .zip(&derived)
            .filter(|((_, orig), (_, d))| match orig {
                RObject::Vector(v) => {
                    v.attributes.is_some() || !crate::mapping::posixlt::same_values(&v.data, d)
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

    pub(crate) fn r_node(&self, m: &mut ObjectMaker, attrs: Vec<(String, RObject)>) -> RObject {
        let zone = match &self.zone {
            Some(z) => rdarrow_format::tree::make::strings([Some(z.as_bytes())]),
            None => RObject::Null,
        };
        let attributes = attr_list(m, attrs);
        let components = attr_list(m, self.components.clone());
        match self.unnamed {
            Some(n) => m.named_list(
                &["zone", "attributes", "components", "count"],
                vec![zone, attributes, components, rdarrow_format::tree::make::ints(vec![n as i32])],
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
    pub(crate) classes: Vec<String>,
    pub(crate) sxptype: u8,
    /// Every attribute, in order.
    pub(crate) attrs: Vec<(String, RObject)>,
    /// A data frame's columns.
    pub(crate) columns: Option<Vec<(String, ColumnMeta)>>,
    /// A list whose elements mix logical, integer and double vectors (they
    /// convert to the common type): each element's type.
    pub(crate) item_types: Option<Vec<u8>>,
    /// A list whose elements have attributes (names, dimensions, row
    /// names, ...): each element's (arrow R's row-level metadata).
    pub(crate) items: Option<Vec<ColumnMeta>>,
    /// The strings (of a character vector, or a factor's levels) that do
    /// not come back from their Arrow text as they are.
    pub strings: Option<KeptStrings>,
    /// A POSIXlt's node.
    pub(crate) posixlt: Option<LtMeta>,
    /// A list element that is a complex vector (its struct comes back as
    /// one).
    pub(crate) complex_item: bool,
    /// A raw element among elements of other types (a struct's field or a
    /// union's child of `uint8`, which alone would come back as integer;
    /// a list of raw vectors alone is Arrow's binary, which says it).
    pub(crate) raw_item: bool,
    /// A list element without an Arrow value (null in Arrow): itself.
    pub(crate) stored: Option<RObject>,
    /// A factor inside a list (at any depth): its own levels. The factors
    /// of a list share one dictionary in Arrow (the union of their
    /// levels, which a Parquet file may reorder), so each comes back
    /// recoded to its own levels.
    pub(crate) item_levels: Option<RObject>,
    /// An integer64 inside a list: it comes back as one (Arrow's int64
    /// comes back as integer where the values fit).
    pub(crate) integer64_item: bool,
    /// A Date, POSIXct, difftime or hms inside a list stored as integers:
    /// they come back as integers (Arrow's temporal types as doubles).
    pub(crate) integer_item: bool,
    /// A value inside a list (or inside a data frame inside one).
    pub(crate) in_list: bool,
    /// Its NAs whose bits are not R's `NA_real_`.
    pub(crate) na_bits: Option<NaBits>,
    /// An S4 object whose type is a vector (`ScalarInteger`): the S4 bit
    /// comes back on the vector.
    pub(crate) s4_vector: bool,
    /// The vector's other general-purpose bits (R's levels: a vector
    /// grown by `[<-` is marked growable), which R writes with it: they
    /// come back, so that the file is written with the bytes R writes.
    pub(crate) gp: u16,
    /// An S4 object's levels when they are not the S4 bit alone (objects
    /// saved before R 2.4 have no S4 bit): they come back as R had them.
    pub(crate) s4_flags: Option<u16>,
    /// A list of arrays of one shape: its tensor type, for the field's
    /// extension metadata ([`crate::from_arrow::tensor_columns`]).
    pub tensor: Option<crate::mapping::shape::TensorShape>,
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
            RObject::Vector(v) => match crate::metadata::converted::ConvertedColumn::of(&v.data) {
                Some(done) => done.strings.clone(),
                None => KeptStrings::of_object(obj, refs, native),
            },
            _ => KeptStrings::of_object(obj, refs, native),
        };
        let na_bits = match obj {
            RObject::Vector(v) => match crate::metadata::converted::ConvertedColumn::of(&v.data) {
                Some(done) => done.na_bits.clone(),
                None => NaBits::of_object(obj, &v.data, refs),
            },
            _ => None,
        };
        let classes = obj.class_attr(refs);
        let sxptype = obj.sxptype(refs);
        let posixlt = crate::mapping::posixlt::is_posixlt(&classes, sxptype)
            .then(|| LtMeta::of(obj, refs, cx.default_tz));
        ColumnMeta {
            classes,
            sxptype,
            attrs,
            strings,
            posixlt,
            s4_vector: crate::mapping::objects::is_s4(obj),
            na_bits,
            gp: match obj {
                RObject::Vector(v) => v.flags.levels & !levels::S4_OBJECT,
                _ => 0,
            },
            s4_flags: match obj {
                RObject::S4(s) if s.flags.levels != levels::S4_OBJECT => Some(s.flags.levels),
                _ => None,
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
                let names = crate::mapping::objects::names_of(obj, refs);
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
                        && crate::mapping::objects::has_arrow_value(it)
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
                        VectorData::List(l) => crate::metadata::columns::binary_list(l),
                        _ => false,
                    },
                    _ => false,
                };
                let metas: Vec<ColumnMeta> = items
                    .into_iter()
                    .map(|it| {
                        if !crate::mapping::objects::has_arrow_value(it) {
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
            .then(|| crate::mapping::shape::TensorShape::of_list(obj, refs))
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
            && self.s4_flags.is_none()
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
        let u = crate::mapping::objects::strings_in(self.attribute("units"), &RefTable::default());
        u.first().filter(|u| *u != "secs").cloned()
    }

    pub(crate) fn kind(&self) -> Option<RKind> {
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
    pub(crate) fn kept(&self, dt: Option<&DataType>, top: bool) -> Vec<(String, RObject)> {
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
    pub(crate) fn r_node(&self, m: &mut ObjectMaker, dt: Option<&DataType>) -> Option<RObject> {
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
            || self.s4_flags.is_some()
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
            values.push(rdarrow_format::tree::make::strings([Some(what.as_bytes())]));
        }
        if let Some(f) = self.s4_flags {
            names.push("s4flags");
            values.push(rdarrow_format::tree::make::ints(vec![f as i32]));
        }
        if self.s4_vector {
            names.push("s4");
            values.push(m.vector(VectorData::Logical(vec![1].into()), vec![]));
        }
        if self.gp != 0 {
            names.push("gp");
            values.push(rdarrow_format::tree::make::ints(vec![self.gp as i32]));
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
            values.push(rdarrow_format::tree::make::strings([Some(u.as_bytes())]));
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
            values.push(rdarrow_format::tree::make::ints(t.iter().map(|&x| x as i32).collect()));
        }
        names.extend(["attributes", "columns"]);
        values.extend([attributes, columns]);
        let order = order.map(|o| rdarrow_format::tree::make::strings(o.iter().map(|n| Some(n.as_bytes()))));
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

/// Whether a list's elements make Arrow binary (as arrow R maps a list of
/// raw vectors): raw vectors without attributes and `NULL`s, one raw at
/// least. Such a list comes back as raw vectors; a raw element of any
/// other list says so in its metadata node.
pub(crate) fn binary_list(items: &[RObject]) -> bool {
    items.iter().any(|o| raw_bytes(o).is_some())
        && items
            .iter()
            .all(|o| matches!(o, RObject::Null) || raw_bytes(o).is_some())
}

/// A raw vector without attributes: its bytes (a column converted while
/// its file was read is a `uint8` array by then).
pub(crate) fn raw_bytes(o: &RObject) -> Option<&[u8]> {
    let RObject::Vector(v) = o else { return None };
    if v.attributes.is_some() {
        return None;
    }
    match &v.data {
        VectorData::Raw(b) => Some(b.as_slice()),
        data => match ConvertedColumn::of(data).map(|c| &c.result) {
            Some(Ok((DataType::UInt8, a))) => {
                Some(arrow_array::cast::AsArray::as_primitive::<arrow_array::types::UInt8Type>(a.as_ref()).values())
            }
            _ => None,
        },
    }
}

