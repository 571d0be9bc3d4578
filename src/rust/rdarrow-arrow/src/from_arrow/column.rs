//! Arrow record batches to R objects (a data frame tree), each column of
//! the kind [`crate::mapping::types`] maps its Arrow type to (as arrow R maps
//! Arrow to R); the `"r"` schema metadata restores attributes, so an R data
//! frame that went to Arrow comes back `identical()`.

use crate::mapping::types;
use crate::mapping::types::RKind;
use crate::mapping::types::ToR;
use rdarrow_format::tree::make;
use rdarrow_format::tree::make::na_real;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::na;
use rdarrow_format::tree::*;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, TimeUnit};

fn err_type(col: &str, dt: &DataType) -> Error {
    Error::unsupported(format!(
        "column '{col}' has Arrow type {dt}, which has no R equivalent"
    ))
}

/// The class attribute of an R vector of `kind`.
pub(crate) fn classes(kind: RKind) -> RObject {
    make::strings(kind.classes().iter().map(|s| Some(s.as_bytes())))
}

fn ints_with_nulls<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    f: impl Fn(T::Native) -> i32,
) -> Vec<i32> {
    if a.null_count() == 0 {
        return a.values().iter().map(|&x| f(x)).collect();
    }
    (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                na::INTEGER
            } else {
                f(a.value(i))
            }
        })
        .collect()
}

fn reals_with_nulls<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    f: impl Fn(T::Native) -> f64,
) -> Vec<f64> {
    if a.null_count() == 0 {
        return a.values().iter().map(|&x| f(x)).collect();
    }
    (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                na_real()
            } else {
                f(a.value(i))
            }
        })
        .collect()
}

/// An int32 column: Arrow's own values when nothing is null (R's layout:
/// shared, not copied), else a copy with NA where Arrow has nulls.
fn int32_values(a: &PrimitiveArray<Int32Type>) -> VectorData {
    if a.null_count() == 0 {
        VectorData::Integer(a.values().clone())
    } else {
        int_vec(ints_with_nulls(a, |x| x))
    }
}

/// A float64 column, as [`int32_values`].
fn float64_values(a: &PrimitiveArray<Float64Type>) -> VectorData {
    if a.null_count() == 0 {
        VectorData::Real(a.values().clone())
    } else {
        real_vec(reals_with_nulls(a, |x| x))
    }
}

/// A timestamp or duration column in seconds (R's POSIXct and difftime),
/// NA where Arrow has nulls.
fn seconds(name: &str, a: &dyn Array, u: TimeUnit) -> Result<Vec<f64>> {
    let ints = arrow_cast::cast(a, &DataType::Int64)
        .map_err(|e| Error::corrupt(format!("column '{name}': {e}")))?;
    let k = types::units_per_second(u);
    Ok(reals_with_nulls(ints.as_primitive::<Int64Type>(), |x| {
        x as f64 / k
    }))
}

pub(crate) fn int_vec(v: Vec<i32>) -> VectorData {
    VectorData::Integer(ScalarBuffer::from(v))
}

fn real_vec(v: Vec<f64>) -> VectorData {
    VectorData::Real(ScalarBuffer::from(v))
}

/// One Arrow column to an R vector of the kind [`types::r_kind`] gives its
/// type.
pub fn column(m: &mut ObjectMaker, field: &Field, a: &dyn Array) -> Result<RObject> {
    let name = field.name().as_str();
    let dt = a.data_type();
    let Some(to) = types::r_kind(dt, field.dict_is_ordered().unwrap_or(false)) else {
        return Err(err_type(name, dt));
    };
    Ok(match to {
        ToR::Kind(RKind::Logical) => {
            let v: Vec<i32> = match dt {
                DataType::Boolean => {
                    let b = a.as_boolean();
                    (0..b.len())
                        .map(|i| {
                            if b.is_null(i) {
                                na::INTEGER
                            } else {
                                b.value(i) as i32
                            }
                        })
                        .collect()
                }
                _ => vec![na::INTEGER; a.len()],
            };
            m.vector(VectorData::Logical(ScalarBuffer::from(v)), vec![])
        }
        ToR::Kind(RKind::Integer) => {
            let v = match dt {
                DataType::Int8 => {
                    int_vec(ints_with_nulls(a.as_primitive::<Int8Type>(), |x| x as i32))
                }
                DataType::Int16 => {
                    int_vec(ints_with_nulls(a.as_primitive::<Int16Type>(), |x| x as i32))
                }
                DataType::Int32 => int32_values(a.as_primitive::<Int32Type>()),
                DataType::UInt8 => {
                    int_vec(ints_with_nulls(a.as_primitive::<UInt8Type>(), |x| x as i32))
                }
                DataType::UInt16 => int_vec(ints_with_nulls(a.as_primitive::<UInt16Type>(), |x| {
                    x as i32
                })),
                other => return Err(err_type(name, other)),
            };
            m.vector(v, vec![])
        }
        ToR::IntegerOrInteger64 => {
            let p = a.as_primitive::<Int64Type>();
            let fits = (0..p.len()).all(|i| {
                p.is_null(i) || (p.value(i) > na::INTEGER as i64 && p.value(i) <= i32::MAX as i64)
            });
            if fits {
                m.vector(int_vec(ints_with_nulls(p, |x| x as i32)), vec![])
            } else {
                // integer64: the 8 bytes of each value in a double
                let v: Vec<f64> = (0..p.len())
                    .map(|i| na::integer64((!p.is_null(i)).then(|| p.value(i))))
                    .collect();
                m.vector(real_vec(v), vec![("class", classes(RKind::Integer64))])
            }
        }
        ToR::Kind(RKind::Double) => {
            let v = match dt {
                DataType::UInt32 => {
                    real_vec(reals_with_nulls(a.as_primitive::<UInt32Type>(), |x| {
                        x as f64
                    }))
                }
                DataType::UInt64 => {
                    real_vec(reals_with_nulls(a.as_primitive::<UInt64Type>(), |x| {
                        x as f64
                    }))
                }
                DataType::Float16 => {
                    real_vec(reals_with_nulls(a.as_primitive::<Float16Type>(), |x| {
                        x.to_f64()
                    }))
                }
                DataType::Float32 => {
                    real_vec(reals_with_nulls(a.as_primitive::<Float32Type>(), |x| {
                        x as f64
                    }))
                }
                DataType::Float64 => float64_values(a.as_primitive::<Float64Type>()),
                DataType::Decimal128(_, s) => {
                    let s = *s as i32;
                    real_vec(reals_with_nulls(a.as_primitive::<Decimal128Type>(), |x| {
                        x as f64 / 10f64.powi(s)
                    }))
                }
                DataType::Decimal256(_, s) => {
                    let s = *s as i32;
                    real_vec(reals_with_nulls(a.as_primitive::<Decimal256Type>(), |x| {
                        x.to_string().parse::<f64>().unwrap_or(f64::NAN) / 10f64.powi(s)
                    }))
                }
                other => return Err(err_type(name, other)),
            };
            m.vector(v, vec![])
        }
        ToR::Kind(RKind::Character) => strings_column(a)?,
        ToR::Kind(RKind::Date) => {
            let v = match dt {
                DataType::Date32 => reals_with_nulls(a.as_primitive::<Date32Type>(), |x| x as f64),
                DataType::Date64 => {
                    reals_with_nulls(a.as_primitive::<Date64Type>(), |x| x as f64 / 86_400_000.0)
                }
                other => return Err(err_type(name, other)),
            };
            m.vector(real_vec(v), vec![("class", classes(RKind::Date))])
        }
        ToR::Kind(RKind::PosixCt) => {
            let DataType::Timestamp(u, tz) = dt else {
                return Err(err_type(name, dt));
            };
            let v = seconds(name, a, *u)?;
            let mut attrs = vec![("class", classes(RKind::PosixCt))];
            if let Some(tz) = tz.as_deref().filter(|t| !t.is_empty()) {
                attrs.push(("tzone", make::strings([Some(tz.as_bytes())])));
            }
            m.vector(real_vec(v), attrs)
        }
        ToR::Kind(RKind::Hms) => {
            let v = match dt {
                DataType::Time32(TimeUnit::Second) => {
                    reals_with_nulls(a.as_primitive::<Time32SecondType>(), |x| x as f64)
                }
                DataType::Time32(u) => {
                    let k = types::units_per_second(*u);
                    reals_with_nulls(a.as_primitive::<Time32MillisecondType>(), |x| x as f64 / k)
                }
                DataType::Time64(TimeUnit::Microsecond) => {
                    let k = types::units_per_second(TimeUnit::Microsecond);
                    reals_with_nulls(a.as_primitive::<Time64MicrosecondType>(), |x| x as f64 / k)
                }
                DataType::Time64(u) => {
                    let k = types::units_per_second(*u);
                    reals_with_nulls(a.as_primitive::<Time64NanosecondType>(), |x| x as f64 / k)
                }
                other => return Err(err_type(name, other)),
            };
            let units = make::strings([Some(&b"secs"[..])]);
            m.vector(
                real_vec(v),
                vec![("units", units), ("class", classes(RKind::Hms))],
            )
        }
        ToR::Kind(RKind::Difftime) => {
            let DataType::Duration(u) = dt else {
                return Err(err_type(name, dt));
            };
            let v = seconds(name, a, *u)?;
            let units = make::strings([Some(&b"secs"[..])]);
            m.vector(
                real_vec(v),
                vec![("class", classes(RKind::Difftime)), ("units", units)],
            )
        }
        ToR::Kind(kind @ (RKind::Factor | RKind::Ordered)) => {
            let d = a.as_any_dictionary();
            let keys = arrow_cast_keys(d.keys())?;
            let levels = strings_column(d.values().as_ref())?;
            let codes: Vec<i32> = (0..a.len())
                .map(|i| {
                    if a.is_null(i) || keys[i] < 0 {
                        na::INTEGER
                    } else {
                        keys[i] + 1
                    }
                })
                .collect();
            m.vector(
                int_vec(codes),
                vec![("levels", levels), ("class", classes(kind))],
            )
        }
        ToR::Kind(RKind::List) => match dt {
            DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_) => {
                let items: Vec<RObject> = (0..a.len())
                    .map(|i| {
                        if a.is_null(i) {
                            return RObject::Null;
                        }
                        let bytes: Vec<u8> = match dt {
                            DataType::Binary => a.as_binary::<i32>().value(i).to_vec(),
                            DataType::LargeBinary => a.as_binary::<i64>().value(i).to_vec(),
                            DataType::BinaryView => a.as_binary_view().value(i).to_vec(),
                            _ => a.as_fixed_size_binary().value(i).to_vec(),
                        };
                        RObject::Vector(Box::new(Vector {
                            flags: Flags::default(),
                            data: VectorData::Raw(arrow_buffer::Buffer::from_vec(bytes)),
                            attributes: None,
                        }))
                    })
                    .collect();
                m.vector(VectorData::List(items), vec![])
            }
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::FixedSizeList(f, _)
            | DataType::ListView(f)
            | DataType::LargeListView(f) => {
                let mut items = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    if a.is_null(i) {
                        items.push(RObject::Null);
                        continue;
                    }
                    let child: ArrayRef = match dt {
                        DataType::List(_) => a.as_list::<i32>().value(i),
                        DataType::LargeList(_) => a.as_list::<i64>().value(i),
                        DataType::FixedSizeList(..) => a.as_fixed_size_list().value(i),
                        DataType::ListView(_) => a.as_list_view::<i32>().value(i),
                        _ => a.as_list_view::<i64>().value(i),
                    };
                    items.push(column(m, f, child.as_ref())?);
                }
                // a tensor per row: R arrays of its shape
                if let Some(t) = crate::from_arrow::tensor_columns::FieldTensor::of_field(field) {
                    t?.shape_items(m, &mut items)?;
                }
                m.vector(VectorData::List(items), vec![])
            }
            // a list whose elements differ in type: each slot's value is
            // its child's (a `list<T>` child's slot is the element itself;
            // another child's value a vector of length 1)
            DataType::Union(fields, _) => {
                let u = a.as_union();
                let mut items = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    let id = u.type_id(i);
                    let off = u.value_offset(i);
                    let Some((_, f)) = fields.iter().find(|(t, _)| *t == id) else {
                        return Err(Error::corrupt(format!(
                            "column '{name}': a union slot of type id {id}, which the union does not have"
                        )));
                    };
                    let child = u.child(id);
                    if off >= child.len() {
                        return Err(Error::corrupt(format!(
                            "column '{name}': a union slot at offset {off} past its child's {} values",
                            child.len()
                        )));
                    }
                    let one = child.slice(off, 1);
                    let v = column(m, f, one.as_ref())?;
                    let item = match (f.data_type(), v) {
                        (
                            DataType::List(_)
                            | DataType::LargeList(_)
                            | DataType::FixedSizeList(..)
                            | DataType::ListView(_)
                            | DataType::LargeListView(_),
                            RObject::Vector(mut l),
                        ) => match &mut l.data {
                            VectorData::List(one) if one.len() == 1 => {
                                one.pop().unwrap_or(RObject::Null)
                            }
                            _ => RObject::Vector(l),
                        },
                        (_, v) => v,
                    };
                    items.push(item);
                }
                m.vector(VectorData::List(items), vec![])
            }
            DataType::Map(_, _) => {
                let mp = a.as_map();
                let entries = mp.entries();
                let kf = Field::new("key", entries.column(0).data_type().clone(), true);
                let vf = Field::new("value", entries.column(1).data_type().clone(), true);
                let mut items = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    if a.is_null(i) {
                        items.push(RObject::Null);
                        continue;
                    }
                    let e = mp.value(i);
                    let k = column(m, &kf, e.column(0).as_ref())?;
                    let v = column(m, &vf, e.column(1).as_ref())?;
                    items.push(data_frame(m, &["key", "value"], vec![k, v], e.len()));
                }
                m.vector(VectorData::List(items), vec![])
            }
            other => return Err(err_type(name, other)),
        },
        ToR::Kind(RKind::DataFrame) => {
            let DataType::Struct(fields) = dt else {
                return Err(err_type(name, dt));
            };
            let s = a.as_struct();
            let mut cols = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                cols.push(column(m, f, s.column(i).as_ref())?);
            }
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            data_frame(m, &names, cols, a.len())
        }
        ToR::Decoded => match dt {
            DataType::Dictionary(..) => {
                let d = a.as_any_dictionary();
                let keys = arrow_cast_keys(d.keys())?;
                let idx = UInt32Array::from(
                    (0..a.len())
                        .map(|i| {
                            if a.is_null(i) {
                                None
                            } else {
                                Some(keys[i] as u32)
                            }
                        })
                        .collect::<Vec<_>>(),
                );
                let taken =
                    arrow_select::take::take(d.values().as_ref(), &idx, None).map_err(|e| {
                        Error::corrupt(format!("cannot decode dictionary column '{name}': {e}"))
                    })?;
                let inner = Field::new(name, taken.data_type().clone(), true);
                column(m, &inner, taken.as_ref())?
            }
            DataType::RunEndEncoded(_, values) => {
                let plain = arrow_cast::cast(a, values.data_type()).map_err(|e| {
                    Error::corrupt(format!(
                        "cannot decode run-end encoded column '{name}': {e}"
                    ))
                })?;
                let inner = Field::new(name, plain.data_type().clone(), true);
                column(m, &inner, plain.as_ref())?
            }
            other => return Err(err_type(name, other)),
        },
        ToR::Kind(RKind::Null | RKind::Integer64 | RKind::Raw | RKind::Complex) => {
            return Err(err_type(name, dt))
        }
    })
}

/// A dictionary-of-strings column across batches as one factor (see
/// [`FactorLevels`]).
pub(crate) fn unified_factor(
    m: &mut ObjectMaker,
    field: &Field,
    parts: &[ArrayRef],
) -> Result<Option<RObject>> {
    let Some(mut levels) = FactorLevels::of(field) else {
        return Ok(None);
    };
    for a in parts {
        levels.learn(a.as_ref())?;
    }
    let mut codes = Vec::new();
    for a in parts {
        codes.extend(levels.codes(a.as_ref())?);
    }
    Ok(Some(levels.factor(m, int_vec(codes))))
}

/// The levels of a factor made of dictionary chunks, as arrow R unifies
/// them: when every chunk has the same dictionary (as rdarrow and arrow R
/// write a factor) and it holds no null, its values as they are
/// (duplicates included); else the union of the dictionaries in order of
/// first appearance (unused entries kept), a null value being a missing
/// value, not a level.
pub(crate) struct FactorLevels {
    kind: RKind,
    /// The first chunk's dictionary, and its values as strings.
    first: Option<(ArrayRef, ArrayRef)>,
    /// Every chunk's dictionary is the first's.
    same: bool,
    union: Vec<String>,
    index: std::collections::HashMap<String, i32>,
}

impl FactorLevels {
    /// For a column that becomes a factor.
    pub(crate) fn of(field: &Field) -> Option<FactorLevels> {
        let Some(ToR::Kind(kind @ (RKind::Factor | RKind::Ordered))) =
            types::r_kind(field.data_type(), field.dict_is_ordered().unwrap_or(false))
        else {
            return None;
        };
        Some(FactorLevels {
            kind,
            first: None,
            same: true,
            union: Vec::new(),
            index: std::collections::HashMap::new(),
        })
    }

    fn strings(values: &dyn Array) -> Result<ArrayRef> {
        arrow_cast::cast(values, &DataType::Utf8)
            .map_err(|e| Error::corrupt(format!("dictionary values: {e}")))
    }

    /// Take in one chunk's dictionary.
    pub(crate) fn learn(&mut self, chunk: &dyn Array) -> Result<()> {
        let values = chunk.as_any_dictionary().values();
        match &self.first {
            None => self.first = Some((values.clone(), Self::strings(values.as_ref())?)),
            Some((first, _)) => self.same &= first == values,
        }
        let strings = Self::strings(values.as_ref())?;
        let strings = strings.as_string::<i32>();
        for v in strings.iter().flatten() {
            if !self.index.contains_key(v) {
                self.union.push(v.to_string());
                self.index.insert(v.to_string(), self.union.len() as i32);
            }
        }
        Ok(())
    }

    /// The first dictionary's values, when they are the levels as they are.
    fn as_is(&self) -> Option<&StringArray> {
        let (_, strings) = self.first.as_ref()?;
        let strings = strings.as_string::<i32>();
        (self.same && strings.null_count() == 0).then_some(strings)
    }

    /// The R codes (from 1, NA where missing) of a chunk.
    pub(crate) fn codes(&self, chunk: &dyn Array) -> Result<Vec<i32>> {
        let d = chunk.as_any_dictionary();
        let keys = arrow_cast_keys(d.keys())?;
        // each dictionary entry's code
        let map: Vec<i32> = match self.as_is() {
            Some(values) => (1..=values.len() as i32).collect(),
            None => {
                let values = Self::strings(d.values().as_ref())?;
                values
                    .as_string::<i32>()
                    .iter()
                    .map(|v| {
                        v.and_then(|v| self.index.get(v).copied())
                            .unwrap_or(na::INTEGER)
                    })
                    .collect()
            }
        };
        Ok(keys
            .iter()
            .enumerate()
            .map(|(j, &k)| {
                if chunk.is_null(j) || k < 0 || k as usize >= map.len() {
                    na::INTEGER
                } else {
                    map[k as usize]
                }
            })
            .collect())
    }

    /// The factor of these codes.
    pub(crate) fn factor(&self, m: &mut ObjectMaker, codes: VectorData) -> RObject {
        let lv = match self.as_is() {
            Some(values) => {
                make::strings((0..values.len()).map(|j| Some(values.value(j).as_bytes())))
            }
            None => make::strings(self.union.iter().map(|s| Some(s.as_bytes()))),
        };
        m.vector(codes, vec![("levels", lv), ("class", classes(self.kind))])
    }
}

fn arrow_cast_keys(keys: &dyn Array) -> Result<Vec<i32>> {
    let k = arrow_cast::cast(keys, &DataType::Int32)
        .map_err(|e| Error::corrupt(format!("dictionary keys: {e}")))?;
    let k = k.as_primitive::<Int32Type>();
    Ok((0..k.len())
        .map(|i| if k.is_null(i) { -1 } else { k.value(i) })
        .collect())
}

/// Whether an Arrow string array's offsets span exactly its values (an
/// array that is not a slice of another).
fn whole<O: OffsetSizeTrait>(s: &GenericStringArray<O>) -> bool {
    let o = s.offsets();
    o[0].as_usize() == 0 && o[o.len() - 1].as_usize() == s.values().len()
}

fn strings_column(a: &dyn Array) -> Result<RObject> {
    let n = a.len();
    let obj = match a.data_type() {
        // the Arrow buffers themselves, where they start at 0 (not a slice)
        DataType::Utf8 if whole(a.as_string::<i32>()) => {
            let s = a.as_string::<i32>();
            make::strings_over(
                StringOffsets::Small(s.offsets().clone()),
                s.values().clone(),
                s.nulls().cloned(),
            )
        }
        DataType::LargeUtf8 if whole(a.as_string::<i64>()) => {
            let s = a.as_string::<i64>();
            make::strings_over(
                StringOffsets::Large(s.offsets().clone()),
                s.values().clone(),
                s.nulls().cloned(),
            )
        }
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            make::strings((0..n).map(|i| (!s.is_null(i)).then(|| s.value(i).as_bytes())))
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            make::strings((0..n).map(|i| (!s.is_null(i)).then(|| s.value(i).as_bytes())))
        }
        DataType::Utf8View => {
            let s = a.as_string_view();
            make::strings((0..n).map(|i| (!s.is_null(i)).then(|| s.value(i).as_bytes())))
        }
        other => {
            return Err(Error::unsupported(format!(
                "expected strings, found {other}"
            )))
        }
    };
    Ok(obj)
}

// ---------------------------------------------------------------------------
// Whole files: an R data file out (shared by the R bindings and the
// command-line tool).

/// `data.frame` with compact row names.
pub(crate) fn data_frame(m: &mut ObjectMaker, names: &[&str], cols: Vec<RObject>, nrow: usize) -> RObject {
    let nm = make::strings(names.iter().map(|s| Some(s.as_bytes())));
    let class = classes(RKind::DataFrame);
    let rn = make::ints(vec![na::INTEGER, -(nrow as i32)]);
    m.vector(
        VectorData::List(cols),
        vec![("names", nm), ("class", class), ("row.names", rn)],
    )
}

