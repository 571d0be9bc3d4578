//! One R column to one Arrow array: [`Converter`] finds the column's kind
//! ([`RKind::of`]), asks [`types::arrow_type`] for its Arrow type and
//! converts the values. Integer, double, integer64, raw and UTF-8 string
//! payloads are wrapped, not copied.

use crate::to_arrow::nulls::fused_validity;
use crate::mapping::objects::has_arrow_value;
use crate::to_arrow::nulls::int_nulls;
use crate::mapping::objects::matrix_dims;
use crate::mapping::objects::not_convertible;
use crate::to_arrow::nulls::nulls_from;
use crate::mapping::objects::strings_in;
use crate::mapping::objects::strings_of;
use crate::mapping::objects::view;
use crate::mapping::objects::View;
use crate::metadata::columns::{binary_list, raw_bytes};
use crate::metadata::converted::ConvertedColumn;
use crate::to_arrow::options::NestedTable;
use crate::to_arrow::options::TableOptions;
use crate::to_arrow::temporal;
use crate::to_arrow::temporal::TimeChoice;
use rdarrow_format::tree::altrep;
use crate::mapping::types;
use crate::mapping::types::Facts;
use crate::mapping::types::RKind;
use rdarrow_format::tree::encoding;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::na;
use rdarrow_format::tree::na::is_na_real;
use rdarrow_format::tree::*;
use rdarrow_format::Document;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int8Type};
use arrow_array::*;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use std::borrow::Cow;
use std::sync::Arc;

/// Move an atomic vector's payload out of its node (which keeps its
/// attributes and a skipped payload of the same type and length), so the
/// conversion owns the only reference to its buffers.
pub(crate) fn take_payload(obj: &mut RObject) -> Option<VectorData> {
    let RObject::Vector(v) = obj else { return None };
    if matches!(
        v.data,
        VectorData::List(_)
            | VectorData::Expression(_)
            | VectorData::Skipped { .. }
            | VectorData::Deferred(_)
    ) {
        return None;
    }
    let (sxptype, len) = (v.data.sxptype(), v.data.len());
    Some(std::mem::replace(
        &mut v.data,
        VectorData::Skipped { sxptype, len },
    ))
}

fn attr<'a>(attrs: Option<&'a RObject>, refs: &RefTable, name: &str) -> Option<&'a RObject> {
    attrs.and_then(|a| pairlist_get(a, refs, name.as_bytes()))
}

/// R logicals as Arrow booleans, values and validity in one pass.
fn logical_array(x: &[i32]) -> BooleanArray {
    let mut values: Vec<u64> = vec![0; x.len().div_ceil(64)];
    let nulls = fused_validity(x.len(), |i| {
        let b = x[i];
        values[i / 64] |= ((b != 0 && b != na::INTEGER) as u64) << (i % 64);
        b != na::INTEGER
    });
    BooleanArray::new(
        BooleanBuffer::new(Buffer::from_vec(values), 0, x.len()),
        nulls,
    )
}

fn real_nulls(v: &[f64]) -> Option<NullBuffer> {
    if !v.iter().any(|&x| is_na_real(x)) {
        return None;
    }
    nulls_from(v.len(), |i| !is_na_real(v[i]))
}

/// The Arrow type of a kind whose type depends on no fact.
fn plain_type(kind: RKind) -> DataType {
    types::arrow_type(kind, &Facts::default())
}

/// Converts R columns (of one document) to Arrow arrays.
pub(crate) struct Converter<'d> {
    pub refs: &'d RefTable,
    /// The stream's native encoding.
    native: Option<&'d [u8]>,
    /// The document, for data-frame columns (absent while reading), and
    /// the conversion of such a column's data frame (the table's own).
    doc: Option<(&'d Document, NestedTable)>,
    default_tz: Option<&'d str>,
    /// A fixed unit for POSIXct timestamps ([`TableOptions::time_unit`]).
    pub time_unit: Option<arrow_schema::TimeUnit>,
    /// A time column's type chosen beforehand (a table read by row range).
    pub time_choice: Option<TimeChoice>,
    /// The columns converted are a data frame's: a list column is one
    /// slot per row (a union where the rows differ in type), whatever its
    /// names, never a struct of one row.
    pub frame_columns: bool,
}

impl<'d> Converter<'d> {
    /// A converter for the columns of a table of `doc`; a data-frame
    /// column is converted by `nested`, as a table of its own.
    pub fn for_table(doc: &'d Document, opts: &'d TableOptions, nested: NestedTable) -> Self {
        Converter {
            refs: &doc.refs,
            native: doc.header.native_encoding.as_deref(),
            doc: Some((doc, nested)),
            default_tz: opts.default_tz.as_deref(),
            time_unit: opts.time_unit,
            time_choice: None,
            frame_columns: false,
        }
    }

    /// A converter for columns of a stream still being read (with the
    /// reference table so far); data-frame columns do not convert.
    pub fn while_reading(
        refs: &'d RefTable,
        header: &'d rdarrow_format::StreamHeader,
        default_tz: Option<&'d str>,
        time_unit: Option<arrow_schema::TimeUnit>,
    ) -> Self {
        Converter {
            refs,
            native: header.native_encoding.as_deref(),
            doc: None,
            default_tz,
            time_unit,
            time_choice: None,
            frame_columns: false,
        }
    }

    /// [`Self::column`] for a column that may be owned: an owned vector's
    /// payload moves into the conversion (a POSIXct's doubles become its
    /// timestamps in their own buffer).
    pub fn column_cow(&self, col: Cow<'_, RObject>, name: &str) -> Result<(DataType, ArrayRef)> {
        match col {
            Cow::Owned(mut obj) => {
                let payload = take_payload(&mut obj);
                self.column_with(&obj, payload, name)
            }
            Cow::Borrowed(obj) => self.column(obj, name),
        }
    }

    /// The zone of a POSIXct column: its `tzone` (none when it is ""),
    /// else the default zone (as arrow R does).
    fn zone_of(&self, attrs: Option<&RObject>) -> Option<String> {
        match strings_of(attr(attrs, self.refs, "tzone"))
            .into_iter()
            .next()
        {
            Some(tz) => Some(tz).filter(|t| !t.is_empty()),
            None => self.default_tz.map(|s| s.to_string()),
        }
    }

    pub fn column(&self, obj: &RObject, name: &str) -> Result<(DataType, ArrayRef)> {
        self.column_with(obj, None, name)
    }

    /// [`Self::column`], the vector's payload given (moved out of `obj`
    /// by [`take_payload`]) or else read from `obj`. A column converted
    /// while its file was read gives the array it became.
    pub fn column_with(
        &self,
        obj: &RObject,
        payload: Option<VectorData>,
        name: &str,
    ) -> Result<(DataType, ArrayRef)> {
        self.value(obj, payload, name, false)
    }

    /// [`Self::column_with`] for a column (`element` false) or an element
    /// of a list column (a matrix there keeps its values as one vector,
    /// its dimensions in the metadata, as arrow R has them).
    fn value(
        &self,
        obj: &RObject,
        payload: Option<VectorData>,
        name: &str,
        element: bool,
    ) -> Result<(DataType, ArrayRef)> {
        if let Some(done) = payload.as_ref().and_then(ConvertedColumn::of) {
            return done.result.clone();
        }
        if let RObject::Vector(v) = obj {
            if let Some(done) = ConvertedColumn::of(&v.data) {
                return done.result.clone();
            }
        }
        let refs = self.refs;
        // an S4 object without a data part: a struct of its slots (one
        // whose type is a vector converts as that vector)
        if let RObject::S4(s) = obj {
            let slots: Vec<(String, &RObject)> = match &s.attributes {
                Some(a) => pairlist_entries(a, refs)
                    .into_iter()
                    .filter(|(n, _)| *n != Some(b"class".as_slice()))
                    .map(|(n, v)| (String::from_utf8_lossy(n.unwrap_or(b"")).into_owned(), v))
                    .collect(),
                None => Vec::new(),
            };
            let (names, items): (Vec<String>, Vec<&RObject>) = slots.into_iter().unzip();
            return self.struct_of(&items, &names, name);
        }
        let classes = obj.class_attr(refs);
        if RKind::of(&classes, obj.sxptype(refs)) == Some(RKind::DataFrame) {
            return self.struct_column(obj, name);
        }
        if crate::mapping::posixlt::is_posixlt(&classes, obj.sxptype(refs)) {
            // the instants of its times, as a POSIXct in its zone
            let zone = match strings_in(obj.attribute(refs, "tzone"), refs)
                .into_iter()
                .next()
            {
                Some(tz) if !tz.is_empty() => Some(tz),
                _ => self.default_tz.map(str::to_string),
            };
            let tz = crate::mapping::posixlt::time_zone(zone.as_deref());
            let secs = crate::mapping::posixlt::instants(obj, refs, &tz);
            return temporal::date_time(
                Cow::Owned(VectorData::Real(secs.into())),
                zone,
                self.time_choice.or(self.time_unit.map(TimeChoice::Unit)),
            );
        }
        if let Some((nr, nc)) = matrix_dims(obj, refs).filter(|_| !element) {
            return self.matrix_column(obj, payload, nr, nc, name);
        }
        // a list of arrays of one shape: a tensor per row
        if !element {
            if let Some(shape) = crate::mapping::shape::TensorShape::of_list(obj, refs) {
                return self.tensor_column(obj, &shape, name);
            }
        }
        let v = match (payload, obj) {
            (Some(data), RObject::Vector(v)) => Some(View {
                data: Cow::Owned(data),
                attrs: v.attributes.as_ref(),
            }),
            _ => view(obj, refs)?,
        };
        let Some(v) = v else {
            if matches!(obj, RObject::Null) {
                return Ok((plain_type(RKind::Null), Arc::new(NullArray::new(0))));
            }
            return Err(not_convertible("the value", obj, refs));
        };
        match RKind::of(&classes, v.data.sxptype()) {
            Some(RKind::Factor | RKind::Ordered) => self.factor(&v.data, v.attrs),
            Some(RKind::Integer64) => integer64(&v.data),
            Some(RKind::Date) => temporal::date(v.data, self.time_choice),
            Some(RKind::PosixCt) => temporal::date_time(
                v.data,
                self.zone_of(v.attrs),
                self.time_choice.or(self.time_unit.map(TimeChoice::Unit)),
            ),
            Some(RKind::Hms) => temporal::time_of_day(v.data, self.time_choice),
            Some(RKind::Difftime) => {
                let units = strings_of(attr(v.attrs, refs, "units"))
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| "secs".into());
                temporal::duration(v.data, &units, self.time_choice)
            }
            // (a data frame's list column: its names name rows, not fields)
            _ if !element && self.frame_columns => self.plain(&v.data, None, name),
            _ => self.plain(&v.data, v.attrs, name),
        }
    }

    /// A matrix column (a vector with two dimensions): one fixed-size list
    /// of its `nc` values per row, the values converted as the vector
    /// without its dimensions would be.
    fn matrix_column(
        &self,
        obj: &RObject,
        payload: Option<VectorData>,
        nr: usize,
        nc: usize,
        name: &str,
    ) -> Result<(DataType, ArrayRef)> {
        let refs = self.refs;
        let (data, flags, attrs) = match obj {
            RObject::Vector(v) => (
                match payload {
                    Some(p) => Cow::Owned(p),
                    None => Cow::Borrowed(&v.data),
                },
                v.flags,
                v.attributes.as_ref(),
            ),
            _ => {
                let v = view(obj, refs)?.ok_or_else(|| not_convertible("the value", obj, refs))?;
                let attrs = v.attrs;
                (Cow::Owned(v.data.into_owned()), Flags::default(), attrs)
            }
        };
        let rows = data.transposed(nr, nc).ok_or_else(|| {
            Error::corrupt(format!(
                "a matrix's dimensions {nr} x {nc} do not match its length {}",
                data.len()
            ))
        })?;
        // the values keep the attributes that say their kind (class,
        // levels, zone, units), not the dimensions
        let mut kept = attrs.cloned();
        remove_attribute(&mut kept, b"dim", refs);
        remove_attribute(&mut kept, b"dimnames", refs);
        let values = RObject::Vector(Box::new(Vector {
            flags,
            data: rows,
            attributes: kept,
        }));
        let (item_type, items) = self.column_with(&values, None, name)?;
        let field = Arc::new(arrow_schema::Field::new("item", item_type, true));
        // a matrix without columns still has its rows
        let nulls = (nc == 0).then(|| NullBuffer::new_valid(nr));
        let arr = FixedSizeListArray::try_new(field.clone(), nc as i32, items, nulls)
            .map_err(|e| Error::corrupt(format!("a matrix column: {e}")))?;
        Ok((DataType::FixedSizeList(field, nc as i32), Arc::new(arr)))
    }

    /// A list of arrays of one shape and type ([`crate::from_arrow::tensor_columns`]):
    /// one fixed-size list of each array's values, in R's order, per row.
    fn tensor_column(
        &self,
        obj: &RObject,
        shape: &crate::mapping::shape::TensorShape,
        name: &str,
    ) -> Result<(DataType, ArrayRef)> {
        let items: Vec<&RObject> = match obj {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => items.iter().collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let label = |i: usize| format!("element {}", i + 1);
        let arrays = self
            .values_of(&items, name, &label)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.map(|(_, a)| a)
                    .ok_or_else(|| Error::internal(format!("{} of a tensor column has no values", label(i))))
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        let parts: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
        let err = |e: arrow_schema::ArrowError| Error::corrupt(format!("a tensor column: {e}"));
        let values = arrow_select::concat::concat(&parts).map_err(err)?;
        let field = Arc::new(arrow_schema::Field::new("item", values.data_type().clone(), true));
        let size = shape.size() as i32;
        // a shape without values still has its rows
        let nulls = (size == 0).then(|| NullBuffer::new_valid(items.len()));
        let arr = FixedSizeListArray::try_new(field.clone(), size, values, nulls).map_err(err)?;
        Ok((DataType::FixedSizeList(field, size), Arc::new(arr)))
    }

    /// A vector without a class the mapping knows, by its type.
    fn plain(
        &self,
        data: &VectorData,
        attrs: Option<&RObject>,
        name: &str,
    ) -> Result<(DataType, ArrayRef)> {
        Ok(match data {
            VectorData::Logical(x) => (plain_type(RKind::Logical), Arc::new(logical_array(x))),
            VectorData::Integer(x) => (
                plain_type(RKind::Integer),
                Arc::new(Int32Array::new(x.clone(), int_nulls(x))),
            ),
            VectorData::Real(x) => (
                plain_type(RKind::Double),
                Arc::new(Float64Array::new(x.clone(), real_nulls(x))),
            ),
            VectorData::Raw(b) => (
                plain_type(RKind::Raw),
                Arc::new(UInt8Array::new(
                    ScalarBuffer::new(b.clone(), 0, b.len()),
                    None,
                )),
            ),
            VectorData::Character(s) => self.strings(s)?,
            VectorData::Complex(x) => complex(x)?,
            VectorData::List(items) => {
                let names = attr(attrs, self.refs, "names").map(|n| strings_in(Some(n), self.refs));
                self.list(items, names, name)?
            }
            VectorData::Expression(_) => {
                return Err(Error::unsupported(
                    "an expression vector has no Arrow equivalent",
                ))
            }
            VectorData::Skipped { .. } | VectorData::Deferred(_) => {
                return Err(Error::usage("internal: payload skipped"))
            }
            VectorData::Consumed(c) => match c.value::<ConvertedColumn>() {
                Some(done) => return done.result.clone(),
                None => return Err(Error::internal("a payload taken by another consumer")),
            },
        })
    }

    /// A character vector as utf8, wrapping the buffers when they are
    /// UTF-8 already.
    fn strings(&self, s: &StringVector) -> Result<(DataType, ArrayRef)> {
        let native = self.native;
        let native_utf8 = native.is_none_or(encoding::is_utf8_name);
        let zero_copy = match &s.levels {
            StringLevels::Uniform(l) => {
                l & (levels::LATIN1 | levels::BYTES) == 0
                    && (l & (levels::UTF8 | levels::ASCII) != 0 || native_utf8)
            }
            StringLevels::PerElement(v) => v.iter().all(|l| {
                l & (levels::LATIN1 | levels::BYTES) == 0
                    && (l & (levels::UTF8 | levels::ASCII) != 0 || native_utf8)
            }),
        } && std::str::from_utf8(&s.data).is_ok();
        if zero_copy {
            // Each string is valid UTF-8 on its own: they were written as
            // whole strings and the concatenation validated.
            let dt = types::arrow_type(
                RKind::Character,
                &Facts {
                    large: matches!(s.offsets, StringOffsets::Large(_)),
                    ..Default::default()
                },
            );
            return Ok(match &s.offsets {
                StringOffsets::Small(o) => (
                    dt,
                    // SAFETY: offsets are monotonic within data; data is valid UTF-8 and
                    // every offset falls on a string boundary, hence a char boundary.
                    Arc::new(unsafe {
                        StringArray::new_unchecked(o.clone(), s.data.clone(), s.validity.clone())
                    }),
                ),
                StringOffsets::Large(o) => (
                    dt,
                    Arc::new(unsafe {
                        LargeStringArray::new_unchecked(
                            o.clone(),
                            s.data.clone(),
                            s.validity.clone(),
                        )
                    }),
                ),
            });
        }
        // transcode; text that is not valid in its encoding is repaired
        // by the one rule (its bytes travel in the metadata)
        let mut out: Vec<Option<String>> = Vec::with_capacity(s.len());
        for i in 0..s.len() {
            match s.get(i) {
                None => out.push(None),
                Some(b) => out.push(Some(
                    encoding::arrow_text(b, s.levels(i), native).0.into_owned(),
                )),
            }
        }
        let total: usize = out.iter().map(|s| s.as_ref().map_or(0, |x| x.len())).sum();
        let dt = types::arrow_type(
            RKind::Character,
            &Facts {
                large: total > i32::MAX as usize,
                ..Default::default()
            },
        );
        Ok(if dt == DataType::LargeUtf8 {
            (dt, Arc::new(LargeStringArray::from(out)))
        } else {
            (dt, Arc::new(StringArray::from(out)))
        })
    }

    fn factor(&self, data: &VectorData, attrs: Option<&RObject>) -> Result<(DataType, ArrayRef)> {
        let codes = match data {
            VectorData::Integer(x) => x,
            _ => return Err(Error::corrupt("a factor's codes are not integers")),
        };
        let levels_obj = attr(attrs, self.refs, "levels");
        // levels R keeps as ALTREP (`as.character()` of numbers, deferred)
        let expanded;
        let levels = match levels_obj {
            Some(RObject::Altrep(a)) => {
                expanded = altrep::expand(a, self.refs)?;
                match &expanded {
                    VectorData::Character(s) => Some(s),
                    _ => None,
                }
            }
            Some(o) => o.as_strings(),
            None => None,
        };
        let (levels_type, values) = match levels {
            Some(s) => self.strings(s)?,
            None => (
                plain_type(RKind::Character),
                Arc::new(StringArray::from(Vec::<String>::new())) as ArrayRef,
            ),
        };
        let nlev = values.len();
        let dt = types::arrow_type(
            RKind::Factor,
            &Facts {
                levels: nlev,
                large: levels_type == DataType::LargeUtf8,
                ..Default::default()
            },
        );
        // keys (codes - 1), validity and the range check in one pass
        let mut bad: Option<i32> = None;
        macro_rules! dict {
            ($t:ty, $k:ty) => {{
                let mut keys: Vec<$k> = Vec::with_capacity(codes.len());
                let nulls = fused_validity(codes.len(), |i| {
                    let c = codes[i];
                    if c == na::INTEGER {
                        keys.push(0);
                        return false;
                    }
                    if c < 1 || c as usize > nlev {
                        bad.get_or_insert(c);
                        keys.push(0);
                    } else {
                        keys.push((c - 1) as $k);
                    }
                    true
                });
                if let Some(bad) = bad {
                    return Err(rdarrow_format::checks::consistency::factor_code_outside(
                        bad,
                        None,
                        nlev as u64,
                    ));
                }
                let keys = PrimitiveArray::<$t>::new(ScalarBuffer::from(keys), nulls);
                // SAFETY: every valid key was checked to be below the
                // number of values just above.
                Arc::new(unsafe { DictionaryArray::<$t>::new_unchecked(keys, values.clone()) })
                    as ArrayRef
            }};
        }
        let arr = match &dt {
            DataType::Dictionary(index, _) if **index == DataType::Int8 => dict!(Int8Type, i8),
            DataType::Dictionary(index, _) if **index == DataType::Int16 => dict!(Int16Type, i16),
            _ => dict!(Int32Type, i32),
        };
        Ok((dt, arr))
    }

    fn struct_column(&self, obj: &RObject, name: &str) -> Result<(DataType, ArrayRef)> {
        let (doc, nested) = self.doc.ok_or_else(|| {
            Error::usage("internal: a data-frame column converts with its document")
        })?;
        let t = nested(
            doc,
            obj,
            &TableOptions {
                default_tz: self.default_tz.map(Into::into),
                time_unit: self.time_unit,
                object_name: name.into(),
                ..Default::default()
            },
        )?;
        let batch = arrow_select::concat::concat_batches(&t.schema, &t.batches)
            .map_err(|e| Error::corrupt(format!("cannot assemble a data-frame column: {e}")))?;
        let dt = types::arrow_type(
            RKind::DataFrame,
            &Facts {
                fields: Some(batch.schema().fields().clone()),
                ..Default::default()
            },
        );
        Ok((dt, Arc::new(StructArray::from(batch))))
    }

    /// A list: its elements' values (a list element with no Arrow value,
    /// a call, a function, an environment, is null here; it travels in
    /// the column's node of the metadata). Elements of one type (after
    /// R's coercion of logical < integer < double, and factors' levels
    /// made one dictionary) make `list<T>`, one slot per element; else a
    /// named list (`names`) makes a struct of one row, one field per
    /// element, and an unnamed one a dense union of one `list<T>` child
    /// per type, one slot per element ([`types`]' rule for lists).
    fn list(
        &self,
        items: &[RObject],
        names: Option<Vec<String>>,
        name: &str,
    ) -> Result<(DataType, ArrayRef)> {
        if binary_list(items) {
            let vals: Vec<Option<&[u8]>> = items.iter().map(raw_bytes).collect();
            let total: usize = vals.iter().map(|v| v.map_or(0, |b| b.len())).sum();
            let dt = types::arrow_type(
                RKind::List,
                &Facts {
                    raw_items: true,
                    large: total > i32::MAX as usize,
                    ..Default::default()
                },
            );
            let arr: ArrayRef = if dt == DataType::LargeBinary {
                Arc::new(LargeBinaryArray::from_opt_vec(vals))
            } else {
                Arc::new(BinaryArray::from_opt_vec(vals))
            };
            return Ok((dt, arr));
        }
        let items: Vec<&RObject> = items.iter().collect();
        let values = self.values_of(&items, name, &|i| format!("element {}", i + 1))?;
        // the elements' types, those that meet made one
        let mut groups: Vec<DataType> = Vec::new();
        let mut group_of: Vec<Option<usize>> = Vec::with_capacity(values.len());
        for v in &values {
            let Some((dt, _)) = v else {
                group_of.push(None);
                continue;
            };
            let met = groups
                .iter()
                .enumerate()
                .find_map(|(g, t)| meet(t, dt).map(|m| (g, m)));
            match met {
                Some((g, m)) => {
                    groups[g] = m;
                    group_of.push(Some(g));
                }
                None => {
                    groups.push(dt.clone());
                    group_of.push(Some(groups.len() - 1));
                }
            }
        }
        if groups.len() <= 1 {
            let slots: Vec<Option<ArrayRef>> =
                values.into_iter().map(|v| v.map(|(_, a)| a)).collect();
            return slots_list(slots, groups.pop());
        }
        match names {
            Some(names) => {
                let items: Vec<Option<ArrayRef>> =
                    values.into_iter().map(|v| v.map(|(_, a)| a)).collect();
                struct_of_values(items, &names)
            }
            None => {
                if groups.len() > i8::MAX as usize {
                    return Err(Error::limit(format!(
                        "a list's elements have {} types; an Arrow union holds at most {}",
                        groups.len(),
                        i8::MAX
                    )));
                }
                let mut members: Vec<Vec<Option<ArrayRef>>> = vec![Vec::new(); groups.len()];
                let mut type_ids: Vec<i8> = Vec::with_capacity(values.len());
                let mut offsets: Vec<i32> = Vec::with_capacity(values.len());
                for (v, g) in values.into_iter().zip(group_of) {
                    // a NULL element: a null slot of the first child
                    let g = g.unwrap_or(0);
                    type_ids.push(g as i8);
                    offsets.push(members[g].len() as i32);
                    members[g].push(v.map(|(_, a)| a));
                }
                let mut children = Vec::with_capacity(groups.len());
                for (slots, dt) in members.into_iter().zip(groups) {
                    children.push(slots_list(slots, Some(dt))?.1);
                }
                let fields: Vec<arrow_schema::Field> = types::union_member_names(
                    &children
                        .iter()
                        .map(|c| c.data_type().clone())
                        .collect::<Vec<_>>(),
                )
                .into_iter()
                .zip(&children)
                .map(|(n, c)| arrow_schema::Field::new(n, c.data_type().clone(), true))
                .collect();
                let fields = arrow_schema::UnionFields::try_new(0..fields.len() as i8, fields)
                    .map_err(|e| Error::corrupt(format!("cannot assemble a list's union: {e}")))?;
                let arr = UnionArray::try_new(
                    fields.clone(),
                    ScalarBuffer::from(type_ids),
                    Some(ScalarBuffer::from(offsets)),
                    children,
                )
                .map_err(|e| Error::corrupt(format!("cannot assemble a list's union: {e}")))?;
                Ok((
                    DataType::Union(fields, arrow_schema::UnionMode::Dense),
                    Arc::new(arr),
                ))
            }
        }
    }

    /// Each item's Arrow value (`None`: `NULL`, or no Arrow value), an
    /// error naming the item by `label` (its position).
    fn values_of(
        &self,
        items: &[&RObject],
        name: &str,
        label: &dyn Fn(usize) -> String,
    ) -> Result<Vec<Option<(DataType, ArrayRef)>>> {
        items
            .iter()
            .enumerate()
            .map(|(i, it)| {
                if matches!(it, RObject::Null) || !has_arrow_value(it) {
                    return Ok(None);
                }
                self.value(it, None, name, true)
                    .map(Some)
                    .map_err(|e| Error {
                        message: format!("{}: {}", label(i), e.message),
                        ..e
                    })
            })
            .collect()
    }

    /// A struct of one row, a field per item (an S4 object's slots).
    fn struct_of(
        &self,
        items: &[&RObject],
        names: &[String],
        name: &str,
    ) -> Result<(DataType, ArrayRef)> {
        let values = self.values_of(items, name, &|i| format!("slot '{}'", names[i]))?;
        struct_of_values(
            values.into_iter().map(|v| v.map(|(_, a)| a)).collect(),
            names,
        )
    }
}

/// Whether two element types meet in one: equal, factors (dictionaries)
/// of other numbers of levels (one dictionary, int32 keys), logical,
/// integer and double (their common type, as R coerces them).
fn meet(t: &DataType, dt: &DataType) -> Option<DataType> {
    if t == dt {
        return Some(t.clone());
    }
    if wide_keys(t) == wide_keys(dt) {
        return Some(wide_keys(t));
    }
    match (numeric_rank(t), numeric_rank(dt)) {
        (Some(a), Some(b)) => Some(if b > a { dt.clone() } else { t.clone() }),
        _ => None,
    }
}

/// `list<T>`, one slot per element (`None`: a null slot), the elements
/// widened to `item` (their common type) and their dictionaries made one.
fn slots_list(
    slots: Vec<Option<ArrayRef>>,
    item: Option<DataType>,
) -> Result<(DataType, ArrayRef)> {
    let dt = types::arrow_type(
        RKind::List,
        &Facts {
            item,
            ..Default::default()
        },
    );
    let DataType::List(field) = &dt else {
        return Err(Error::usage(format!("internal: a list cannot become {dt}")));
    };
    let mut offsets: Vec<i32> = vec![0];
    let mut valid = Vec::with_capacity(slots.len());
    let mut children: Vec<ArrayRef> = Vec::new();
    for s in slots {
        match s {
            None => {
                valid.push(false);
                offsets.push(*offsets.last().unwrap());
            }
            Some(arr) => {
                let end = *offsets.last().unwrap() as i64 + arr.len() as i64;
                if end > i32::MAX as i64 {
                    return Err(Error::limit("a list column holds more than 2^31 values"));
                }
                offsets.push(end as i32);
                valid.push(true);
                children.push(arr);
            }
        }
    }
    let values: ArrayRef = if children.is_empty() {
        arrow_array::new_empty_array(field.data_type())
    } else {
        for c in children
            .iter_mut()
            .filter(|c| c.data_type() != field.data_type())
        {
            *c = arrow_cast::cast(c, field.data_type())
                .map_err(|e| Error::corrupt(format!("cannot widen a list element: {e}")))?;
        }
        let children = one_dictionary(children)?;
        let refs: Vec<&dyn Array> = children.iter().map(|a| a.as_ref()).collect();
        arrow_select::concat::concat(&refs)
            .map_err(|e| Error::corrupt(format!("cannot assemble a list column: {e}")))?
    };
    // the elements' dictionaries became one
    let field = Arc::new(
        field
            .as_ref()
            .clone()
            .with_data_type(values.data_type().clone()),
    );
    let dt = DataType::List(field.clone());
    let nulls = nulls_from(valid.len(), |i| valid[i]);
    let arr = ListArray::try_new(
        field.clone(),
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        values,
        nulls,
    )
    .map_err(|e| Error::corrupt(format!("cannot assemble a list column: {e}")))?;
    Ok((dt, Arc::new(arr)))
}

/// A struct of one row, field `j` the `list<T>` of one slot holding
/// value `j` (null for `None`), named by `names` (an empty, `NA` or
/// repeated name by its position, `V<j>`: the names travel in the
/// metadata).
fn struct_of_values(
    values: Vec<Option<ArrayRef>>,
    names: &[String],
) -> Result<(DataType, ArrayRef)> {
    let field_names = types::struct_field_names(names, values.len());
    let mut fields = Vec::with_capacity(values.len());
    let mut columns = Vec::with_capacity(values.len());
    for (v, n) in values.into_iter().zip(field_names) {
        let item = v.as_ref().map(|a| a.data_type().clone());
        let (dt, arr) = slots_list(vec![v], item)?;
        fields.push(arrow_schema::Field::new(n, dt, true));
        columns.push(arr);
    }
    let fields = arrow_schema::Fields::from(fields);
    let arr = StructArray::try_new_with_length(fields.clone(), columns, None, 1)
        .map_err(|e| Error::corrupt(format!("cannot assemble a struct: {e}")))?;
    Ok((DataType::Struct(fields), Arc::new(arr)))
}

/// `dt` with the index of every dictionary in it int32: the type in which
/// factors of different numbers of levels meet.
fn wide_keys(dt: &DataType) -> DataType {
    let field = |f: &arrow_schema::FieldRef| {
        Arc::new(f.as_ref().clone().with_data_type(wide_keys(f.data_type())))
    };
    match dt {
        DataType::Dictionary(_, v) => DataType::Dictionary(Box::new(DataType::Int32), v.clone()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// Whether `dt` holds a dictionary.
fn has_dictionary(dt: &DataType) -> bool {
    match dt {
        DataType::Dictionary(..) => true,
        DataType::List(f) | DataType::FixedSizeList(f, _) => has_dictionary(f.data_type()),
        DataType::Struct(fs) => fs.iter().any(|f| has_dictionary(f.data_type())),
        _ => false,
    }
}

/// The elements of a list column (of one type), each dictionary of
/// strings in them (their factors) given one dictionary: every level of
/// every element once, in order of first appearance, unused ones kept,
/// with the narrowest index that holds them, as a factor's own. The
/// elements then share its values, so that concatenating them neither
/// repeats nor drops a level (arrow's concatenation merges dictionaries
/// that differ, dropping the values no key uses).
fn one_dictionary(children: Vec<ArrayRef>) -> Result<Vec<ArrayRef>> {
    let Some(first) = children.first() else {
        return Ok(children);
    };
    let dt = first.data_type().clone();
    if !has_dictionary(&dt) {
        return Ok(children);
    }
    let err =
        |e: arrow_schema::ArrowError| Error::corrupt(format!("cannot assemble a list column: {e}"));
    let field = |f: &arrow_schema::FieldRef, dt: &DataType| {
        Arc::new(f.as_ref().clone().with_data_type(dt.clone()))
    };
    // the parts of each child at one place of the type, made one, then
    // each child rebuilt around its own
    let parts = |get: &dyn Fn(&ArrayRef) -> ArrayRef| -> Result<Vec<ArrayRef>> {
        one_dictionary(children.iter().map(get).collect())
    };
    Ok(match &dt {
        DataType::Dictionary(_, v) if matches!(**v, DataType::Utf8 | DataType::LargeUtf8) => {
            let large = **v == DataType::LargeUtf8;
            let mut at: std::collections::HashMap<Option<String>, i32> = Default::default();
            let mut order: Vec<Option<String>> = Vec::new();
            let mut remaps: Vec<Vec<i32>> = Vec::with_capacity(children.len());
            for c in &children {
                let d = c.as_any_dictionary();
                let values: Vec<Option<&str>> = if large {
                    d.values().as_string::<i64>().iter().collect()
                } else {
                    d.values().as_string::<i32>().iter().collect()
                };
                remaps.push(
                    values
                        .into_iter()
                        .map(|s| {
                            let key = s.map(str::to_string);
                            *at.entry(key.clone()).or_insert_with(|| {
                                order.push(key);
                                order.len() as i32 - 1
                            })
                        })
                        .collect(),
                );
            }
            let want = types::arrow_type(
                RKind::Factor,
                &Facts {
                    levels: order.len(),
                    large,
                    ..Default::default()
                },
            );
            let DataType::Dictionary(index, _) = &want else {
                return Err(Error::usage(format!(
                    "internal: a factor cannot become {want}"
                )));
            };
            let values: ArrayRef = if large {
                Arc::new(LargeStringArray::from_iter(
                    order.iter().map(|s| s.as_deref()),
                ))
            } else {
                Arc::new(StringArray::from_iter(order.iter().map(|s| s.as_deref())))
            };
            let mut out = Vec::with_capacity(children.len());
            for (c, remap) in children.iter().zip(&remaps) {
                let d = c.as_any_dictionary();
                let keys = arrow_cast::cast(d.keys(), &DataType::Int32).map_err(err)?;
                let keys = keys.as_primitive::<Int32Type>();
                let new: Vec<i32> = keys
                    .values()
                    .iter()
                    .map(|&k| remap.get(k as usize).copied().unwrap_or(0))
                    .collect();
                let new = Int32Array::new(new.into(), keys.nulls().cloned());
                let new = arrow_cast::cast(&new, index).map_err(err)?;
                macro_rules! dict {
                    ($t:ty) => {
                        Arc::new(
                            DictionaryArray::<$t>::try_new(
                                new.as_primitive::<$t>().clone(),
                                values.clone(),
                            )
                            .map_err(err)?,
                        ) as ArrayRef
                    };
                }
                out.push(match **index {
                    DataType::Int8 => dict!(Int8Type),
                    DataType::Int16 => dict!(Int16Type),
                    _ => dict!(Int32Type),
                });
            }
            out
        }
        DataType::List(f) => {
            let vals = parts(&|c| c.as_list::<i32>().values().clone())?;
            let mut out = Vec::with_capacity(children.len());
            for (c, v) in children.iter().zip(vals) {
                let l = c.as_list::<i32>();
                let f = field(f, v.data_type());
                out.push(Arc::new(
                    ListArray::try_new(f, l.offsets().clone(), v, l.nulls().cloned())
                        .map_err(err)?,
                ) as ArrayRef);
            }
            out
        }
        DataType::FixedSizeList(f, n) => {
            let vals = parts(&|c| c.as_fixed_size_list().values().clone())?;
            let mut out = Vec::with_capacity(children.len());
            for (c, v) in children.iter().zip(vals) {
                let l = c.as_fixed_size_list();
                let f = field(f, v.data_type());
                out.push(Arc::new(
                    FixedSizeListArray::try_new(f, *n, v, l.nulls().cloned()).map_err(err)?,
                ) as ArrayRef);
            }
            out
        }
        DataType::Struct(fs) => {
            let mut cols: Vec<Vec<ArrayRef>> = Vec::with_capacity(fs.len());
            for j in 0..fs.len() {
                cols.push(parts(&|c| c.as_struct().column(j).clone())?);
            }
            let mut out = Vec::with_capacity(children.len());
            for (i, c) in children.iter().enumerate() {
                let st = c.as_struct();
                let these: Vec<ArrayRef> = cols.iter().map(|col| col[i].clone()).collect();
                let fs: arrow_schema::Fields = fs
                    .iter()
                    .zip(&these)
                    .map(|(f, c)| field(f, c.data_type()))
                    .collect();
                out.push(Arc::new(
                    StructArray::try_new(fs, these, st.nulls().cloned()).map_err(err)?,
                ) as ArrayRef);
            }
            out
        }
        _ => children,
    })
}

/// The place of logical, integer and double in R's coercion order (the
/// Arrow types they become); None for other types.
fn numeric_rank(dt: &DataType) -> Option<u8> {
    match dt {
        DataType::Boolean => Some(0),
        DataType::Int32 => Some(1),
        DataType::Float64 => Some(2),
        _ => None,
    }
}

/// An integer64 column: the doubles' bytes are the int64 values.
fn integer64(data: &VectorData) -> Result<(DataType, ArrayRef)> {
    let VectorData::Real(x) = data else {
        return Err(Error::usage("internal: an integer64 that is not double"));
    };
    let ints: ScalarBuffer<i64> = ScalarBuffer::new(x.inner().clone(), 0, x.len());
    let nulls = if ints.contains(&na::INTEGER64) {
        nulls_from(ints.len(), |i| ints[i] != na::INTEGER64)
    } else {
        None
    };
    Ok((
        plain_type(RKind::Integer64),
        Arc::new(Int64Array::new(ints, nulls)),
    ))
}

/// A complex vector as a struct of its real and imaginary parts.
fn complex(x: &ScalarBuffer<f64>) -> Result<(DataType, ArrayRef)> {
    let dt = plain_type(RKind::Complex);
    let DataType::Struct(fields) = &dt else {
        return Err(Error::usage(format!(
            "internal: a complex vector cannot become {dt}"
        )));
    };
    let n = x.len() / 2;
    let re: Vec<f64> = (0..n).map(|i| x[2 * i]).collect();
    let im: Vec<f64> = (0..n).map(|i| x[2 * i + 1]).collect();
    // R's complex NA (either part NA_real_) is a null slot; the parts keep
    // their bits (restored exactly on the way back)
    let nulls = nulls_from(n, |i| !is_na_real(re[i]) && !is_na_real(im[i]));
    let arr = StructArray::new(
        fields.clone(),
        vec![
            Arc::new(Float64Array::new(re.into(), None)) as ArrayRef,
            Arc::new(Float64Array::new(im.into(), None)),
        ],
        nulls,
    );
    Ok((dt, Arc::new(arr)))
}
