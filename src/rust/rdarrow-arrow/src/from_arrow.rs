//! Arrow record batches to R objects (a data frame tree), each column of
//! the kind [`super::types`] maps its Arrow type to (as arrow R maps
//! Arrow to R); the `"r"` schema metadata restores attributes, so an R data
//! frame that went to Arrow comes back `identical()`.

use super::types::{self, RKind, ToR};
use crate::tree::make::{self, na_real, ObjectMaker};
use crate::base::error::{Error, Result};
use crate::tree::na;
use crate::tree::*;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, SchemaRef, TimeUnit};

/// A data frame made from Arrow data, with the table of its symbols.
pub struct RFrame {
    pub object: RObject,
    pub refs: RefTable,
}

fn err_type(col: &str, dt: &DataType) -> Error {
    Error::unsupported(format!(
        "column '{col}' has Arrow type {dt}, which has no R equivalent"
    ))
}

fn concat(arrays: &[ArrayRef]) -> Result<ArrayRef> {
    if arrays.len() == 1 {
        return Ok(arrays[0].clone());
    }
    let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&refs)
        .map_err(|e| Error::corrupt(format!("cannot join the record batches: {e}")))
}

/// Convert a schema and its batches to an R data frame (as arrow R's
/// `as.data.frame()` does; the shape of an object that was not a data
/// frame is not restored: see [`object_from_batches`]).
pub fn frame_from_batches(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<RFrame> {
    convert(schema, batches).map(|(object, _, m)| RFrame {
        object,
        refs: m.refs,
    })
}

/// Convert a schema and its batches back to the R object they were made
/// from: a data frame, or the vector or matrix whose shape rdarrow's
/// `"r"` metadata records ([`super::metadata::Shape`]).
pub fn object_from_batches(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<RFrame> {
    let mut m = ObjectMaker::default();
    let object = object_with(&mut m, schema, batches)?;
    Ok(RFrame {
        object,
        refs: m.refs,
    })
}

/// The R value of a table's one column: an Arrow array (or chunked array,
/// or scalar) given on its own becomes the R vector it maps to, a struct
/// a data frame. A table whose `"r"` metadata records an object's shape
/// becomes that object, as [`object_from_batches`] makes it.
pub fn vector_from_batches(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<RFrame> {
    if schema.fields().len() != 1 {
        return Err(Error::usage(format!(
            "an Arrow array is one column, not {}",
            schema.fields().len()
        )));
    }
    let mut m = ObjectMaker::default();
    let (frame, shape) = convert_with(&mut m, schema, batches)?;
    let object = match shape {
        Some(shape) => super::metadata::restore_shape(&mut m, frame, &shape)?,
        None => match frame {
            RObject::Vector(v) => match v.data {
                VectorData::List(mut items) if items.len() == 1 => items.pop().unwrap(),
                data => RObject::Vector(Box::new(Vector { data, ..*v })),
            },
            other => other,
        },
    };
    crate::checks::validate::check_for_r(&object, &m.refs)?;
    Ok(RFrame {
        object,
        refs: m.refs,
    })
}

/// As [`object_from_batches`], its symbols made by `m`, so that several
/// objects share one reference table (the objects of one `.RData` file).
pub fn object_with(
    m: &mut ObjectMaker,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<RObject> {
    let (mut object, shape) = convert_with(m, schema, batches)?;
    if let Some(notes) = schema.metadata().get(super::metadata::FIDELITY_KEY) {
        super::metadata::restore_selfref(m, &mut object, notes);
    }
    if let Some(shape) = shape {
        object = super::metadata::restore_shape(m, object, &shape)?;
        crate::checks::validate::check_for_r(&object, &m.refs)
            .map_err(|e| Error::corrupt(format!("the \"r\" metadata: {}", e.message)))?;
    }
    Ok(object)
}

/// The data frame, the shape element of the `"r"` metadata and the object
/// maker (whose symbols the frame uses).
fn convert(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(RObject, Option<RObject>, ObjectMaker)> {
    let mut m = ObjectMaker::default();
    let (frame, shape) = convert_with(&mut m, schema, batches)?;
    Ok((frame, shape, m))
}

/// [`convert`] with the symbols made by `m`.
fn convert_with(
    m: &mut ObjectMaker,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(RObject, Option<RObject>)> {
    let nrow: usize = batches.iter().map(|b| b.num_rows()).sum();
    let mut cols = Vec::with_capacity(schema.fields().len());
    for (i, f) in schema.fields().iter().enumerate() {
        crate::base::cancel::check()?;
        let parts: Vec<ArrayRef> = batches.iter().map(|b| b.column(i).clone()).collect();
        cols.push(convert_column(m, f, &parts)?);
    }
    finish_frame(m, schema, cols, nrow)
}

/// One column from its chunks, checked for what R cannot hold.
fn convert_column(m: &mut ObjectMaker, f: &Field, parts: &[ArrayRef]) -> Result<RObject> {
    let col = match unified_factor(m, f, parts)? {
        Some(factor) => factor,
        None => {
            let arr = if parts.is_empty() {
                empty_column(f)?
            } else {
                concat(parts)?
            };
            column(m, f, arr.as_ref())?
        }
    };
    checked_for_r(m, f, col)
}

/// `col`, or the error saying which column holds what R strings cannot
/// hold (R refuses such a file).
fn checked_for_r(m: &ObjectMaker, f: &Field, col: RObject) -> Result<RObject> {
    let named = f.name().contains('\0');
    if named || crate::checks::validate::check_for_r(&col, &m.refs).is_err() {
        let what = if named {
            "its name holds"
        } else {
            "it holds a string with"
        };
        return Err(Error::unsupported(format!(
            "column '{}': {what} an embedded NUL byte, which R strings cannot hold",
            f.name().replace('\0', "\\0")
        )));
    }
    Ok(col)
}

/// The data frame of the converted columns, with the schema's metadata
/// applied; and the shape element of its `"r"` metadata.
fn finish_frame(
    m: &mut ObjectMaker,
    schema: &SchemaRef,
    cols: Vec<RObject>,
    nrow: usize,
) -> Result<(RObject, Option<RObject>)> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let mut frame = data_frame(m, &names, cols, nrow);
    let mut shape = None;
    // the values first (a complex column from its struct, ...), then the
    // attributes that go on them
    if let Some(notes) = schema.metadata().get(super::metadata::FIDELITY_KEY) {
        super::metadata::apply_fidelity_notes(m, &mut frame, notes);
    }
    if let Some(md) = super::metadata::r_text(schema) {
        (frame, shape) = super::metadata::apply_r_metadata(m, frame, md)?;
        crate::checks::validate::check_for_r(&frame, &m.refs)
            .map_err(|e| Error::corrupt(format!("the \"r\" metadata: {}", e.message)))?;
    }
    Ok((frame, shape))
}

/// A table read one column at a time, each column in chunks (a Parquet
/// file: its row groups' record batches).
pub trait ColumnChunks {
    fn schema(&self) -> SchemaRef;
    fn num_rows(&self) -> usize;
    /// Every row of column `j`, handed to `each` a chunk at a time.
    fn chunks(&self, j: usize, each: &mut dyn FnMut(ArrayRef) -> Result<()>) -> Result<()>;
    /// Every row of column `j`, in chunks held together.
    fn column(&self, j: usize) -> Result<Vec<ArrayRef>> {
        all_chunks(self, j)
    }
}

/// Every chunk of column `j` of `src`, held together.
pub fn all_chunks(src: &(impl ColumnChunks + ?Sized), j: usize) -> Result<Vec<ArrayRef>> {
    let mut parts = Vec::new();
    src.chunks(j, &mut |c| {
        parts.push(c);
        Ok(())
    })?;
    Ok(parts)
}

/// How the chunks of a plain column become the elements of its R vector,
/// learned from all of them before the first is written: a factor's
/// levels (see [`FactorLevels`]), and whether an int64 column is integer
/// or integer64 (integer64 when any value does not fit in R's integers).
struct ChunkPlan {
    factor: Option<FactorLevels>,
    integer64: bool,
}

impl ChunkPlan {
    /// Read every chunk of column `j` (each converted, checked and dropped)
    /// and return the plan with the column's skeleton: its attributes, its
    /// payload [`VectorData::Skipped`]. `None` when the column is not a
    /// plain vector (a list, a data-frame column), which converts whole.
    fn learn(
        m: &mut ObjectMaker,
        f: &Field,
        src: &dyn ColumnChunks,
        j: usize,
    ) -> Result<Option<(ChunkPlan, RObject)>> {
        // the attributes come with the type: an empty column has them all
        // but a factor's levels and the integer64 class, learned below
        let RObject::Vector(mut skeleton) = convert_column(m, f, &[])? else {
            return Ok(None);
        };
        if !is_plain(&skeleton.data) {
            return Ok(None);
        }
        let mut plan = ChunkPlan {
            factor: FactorLevels::of(f),
            integer64: false,
        };
        src.chunks(j, &mut |c| {
            crate::base::cancel::check()?;
            match plan.factor.as_mut() {
                Some(levels) => levels.learn(c.as_ref()),
                None => {
                    let RObject::Vector(v) = convert_column(m, f, &[c])? else {
                        return Err(Error::internal("a column's chunk is not a vector"));
                    };
                    if !plan.integer64 && v.data.sxptype() != skeleton.data.sxptype() {
                        // an int64 chunk with values past R's integers
                        plan.integer64 = true;
                        skeleton = v;
                    }
                    Ok(())
                }
            }
        })?;
        if let Some(levels) = &plan.factor {
            let factor = levels.factor(
                m,
                VectorData::Skipped {
                    sxptype: sxp::INT,
                    len: 0,
                },
            );
            let RObject::Vector(v) = checked_for_r(m, f, factor)? else {
                return Err(Error::internal("a factor is not a vector"));
            };
            skeleton = v;
        }
        let nrow = src.num_rows() as u64;
        let sxptype = skeleton.data.sxptype();
        skeleton.data = VectorData::Skipped { sxptype, len: nrow };
        Ok(Some((plan, RObject::Vector(skeleton))))
    }

    /// The elements of one chunk, as they stand in the whole column.
    fn part(&self, f: &Field, chunk: ArrayRef) -> Result<VectorData> {
        if let Some(levels) = &self.factor {
            return levels.codes(chunk.as_ref()).map(int_vec);
        }
        let RObject::Vector(v) = convert_column(&mut ObjectMaker::default(), f, &[chunk])? else {
            return Err(Error::internal("a column's chunk is not a vector"));
        };
        Ok(match v.data {
            VectorData::Integer(x) if self.integer64 => {
                VectorData::Real(na::integer64_of_ints(&x).into())
            }
            data => data,
        })
    }
}

/// A payload held as plain elements (what a chunk can be).
fn is_plain(data: &VectorData) -> bool {
    matches!(
        data,
        VectorData::Logical(_)
            | VectorData::Integer(_)
            | VectorData::Real(_)
            | VectorData::Complex(_)
            | VectorData::Raw(_)
            | VectorData::Character(_)
    )
}

/// Write the table `src` as an R data file (as [`object_from_batches`] and
/// [`crate::write::write_object_file`] would) holding about one chunk of
/// one column at a time. A first pass reads every column chunk by chunk to
/// learn the attributes the data frame gets (factor levels, integer64,
/// the `"r"` metadata's) and checks the values; then the file is written
/// column after column, each chunk converted again just before it is
/// written. Columns the metadata's notes change (and lists) are converted
/// whole; an object that was not a data frame (its shape in the metadata)
/// is converted whole by `whole`.
pub fn write_columns_file(
    src: &dyn ColumnChunks,
    path: &std::path::Path,
    o: &crate::write::ObjectFileOptions,
    whole: impl FnOnce() -> Result<RFrame>,
) -> Result<()> {
    let schema = src.schema();
    let notes = schema.metadata().get(super::metadata::FIDELITY_KEY);
    let keeping = super::metadata::columns_rebuilt_whole(&schema);
    let noted = |name: &str| {
        keeping.iter().any(|k| k == name)
            || notes.is_some_and(|n| {
                n.lines()
                    .any(|l| l.split('\t').skip(1).any(|part| part == name))
            })
    };
    let mut m = ObjectMaker::default();
    let mut cols = Vec::with_capacity(schema.fields().len());
    let mut plans = Vec::with_capacity(schema.fields().len());
    for (j, f) in schema.fields().iter().enumerate() {
        crate::base::cancel::check()?;
        let learned = if noted(f.name()) {
            None
        } else {
            ChunkPlan::learn(&mut m, f, src, j)?
        };
        match learned {
            Some((plan, skeleton)) => {
                cols.push(skeleton);
                plans.push(Some(plan));
            }
            None => {
                cols.push(convert_column(&mut m, f, &src.column(j)?)?);
                plans.push(None);
            }
        }
    }
    let (mut frame, shape) = finish_frame(&mut m, &schema, cols, src.num_rows())?;
    if shape.is_some() {
        drop(frame);
        let f = whole()?;
        return crate::write::write_object_file(path, f.object, f.refs, o);
    }
    if let Some(notes) = notes {
        super::metadata::restore_selfref(&mut m, &mut frame, notes);
    }
    let fields = schema.fields();
    crate::write::write_frame_file(path, &frame, m.refs, o, &mut |j, part| {
        let plan = plans[j]
            .as_ref()
            .ok_or_else(|| Error::internal("a column written whole has no chunks"))?;
        src.chunks(j, &mut |c| part(plan.part(&fields[j], c)?))
    })
}

/// A zero-row array of a column's type. Arrow panics on types it cannot
/// build (a map whose entries are not a two-field struct, as a malformed
/// IPC schema can declare): that is a corrupt-input error here.
fn empty_column(f: &arrow_schema::Field) -> Result<ArrayRef> {
    crate::base::error::catch_quietly(|| arrow_array::new_empty_array(f.data_type())).map_err(|_| {
        Error::corrupt(format!(
            "column '{}' has an invalid Arrow type {}",
            f.name(),
            f.data_type()
        ))
    })
}

/// `data.frame` with compact row names.
fn data_frame(m: &mut ObjectMaker, names: &[&str], cols: Vec<RObject>, nrow: usize) -> RObject {
    let nm = make::strings(names.iter().map(|s| Some(s.as_bytes())));
    let class = classes(RKind::DataFrame);
    let rn = make::ints(vec![na::INTEGER, -(nrow as i32)]);
    m.vector(
        VectorData::List(cols),
        vec![("names", nm), ("class", class), ("row.names", rn)],
    )
}

/// The class attribute of an R vector of `kind`.
fn classes(kind: RKind) -> RObject {
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

fn int_vec(v: Vec<i32>) -> VectorData {
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
                if let Some(t) = crate::fixed_shape::FieldTensor::of_field(field) {
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
fn unified_factor(
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
struct FactorLevels {
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
    fn of(field: &Field) -> Option<FactorLevels> {
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
    fn learn(&mut self, chunk: &dyn Array) -> Result<()> {
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
    fn codes(&self, chunk: &dyn Array) -> Result<Vec<i32>> {
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
    fn factor(&self, m: &mut ObjectMaker, codes: VectorData) -> RObject {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{table_from_object, TableOptions};
    use crate::tree::make::{self, ObjectMaker};
    use crate::{Container, Document, Format, StreamHeader};
    use std::sync::Arc;

    fn doc_with(root: RObject, refs: RefTable) -> Document {
        Document {
            compression: crate::Compression::None,
            container: Container::Stream,
            header: StreamHeader::utf8_v3(Format::Xdr),
            root,
            refs,
            spans: Vec::new(),
            stream_len: 0,
            trust: Default::default(),
            seen: None,
        }
    }

    #[test]
    fn a_data_frame_goes_to_arrow_and_back() {
        let mut m = ObjectMaker::default();
        let ints = make::ints(vec![1, i32::MIN, 3]);
        let reals = make::reals(vec![1.5, make::na_real(), f64::NAN]);
        let strs = make::strings([Some(&b"a"[..]), None, Some("é".as_bytes())]);
        let names = make::strings([Some(&b"i"[..]), Some(&b"x"[..]), Some(&b"s"[..])]);
        let class = make::strings([Some(&b"data.frame"[..])]);
        let rn = make::ints(vec![i32::MIN, -3]);
        let df = m.vector(
            VectorData::List(vec![ints, reals, strs]),
            vec![("names", names), ("class", class), ("row.names", rn)],
        );
        let doc = doc_with(df, m.refs);
        let t = table_from_object(&doc, &doc.root, &TableOptions::default()).unwrap();
        assert_eq!(t.num_rows(), 3);
        let s = &t.schema;
        assert_eq!(s.field(0).data_type(), &DataType::Int32);
        assert_eq!(s.field(1).data_type(), &DataType::Float64);
        assert_eq!(s.field(2).data_type(), &DataType::Utf8);
        let b = &t.batches[0];
        assert!(b.column(0).is_null(1));
        assert!(b.column(1).is_null(1), "NA_real_ is null");
        assert!(!b.column(1).is_null(2), "NaN is a value");
        assert!(b.column(1).as_primitive::<Float64Type>().value(2).is_nan());
        // the int32 values are the very buffer the tree holds
        let tree_ptr = match &doc.root {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => match &items[0] {
                    RObject::Vector(c) => match &c.data {
                        VectorData::Integer(x) => x.as_ptr(),
                        _ => unreachable!(),
                    },
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        assert_eq!(
            b.column(0).as_primitive::<Int32Type>().values().as_ptr(),
            tree_ptr
        );

        let back = frame_from_batches(&t.schema, &t.batches).unwrap();
        let cols = match &back.object {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => items.clone(),
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        match &cols[1] {
            RObject::Vector(v) => match &v.data {
                VectorData::Real(x) => {
                    assert_eq!(x[0], 1.5);
                    assert_eq!(x[1].to_bits(), make::na_real().to_bits());
                    assert!(x[2].is_nan() && x[2].to_bits() != make::na_real().to_bits());
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dictionaries_are_unified_across_batches() {
        let field = Arc::new(Field::new(
            "f",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            true,
        ));
        let schema = Arc::new(arrow_schema::Schema::new(vec![field.clone()]));
        let d1: DictionaryArray<Int8Type> = vec!["b", "a"].into_iter().collect();
        let d2: DictionaryArray<Int8Type> = vec![Some("c"), None, Some("a")].into_iter().collect();
        let b1 = RecordBatch::try_new(schema.clone(), vec![Arc::new(d1)]).unwrap();
        let b2 = RecordBatch::try_new(schema.clone(), vec![Arc::new(d2)]).unwrap();
        let f = frame_from_batches(&schema, &[b1, b2]).unwrap();
        let col = match &f.object {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => items[0].clone(),
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        let levels = col
            .attribute(&f.refs, "levels")
            .unwrap()
            .as_strings()
            .unwrap()
            .clone();
        let lv: Vec<&[u8]> = (0..levels.len()).map(|i| levels.bytes(i)).collect();
        assert_eq!(lv, vec![&b"b"[..], b"a", b"c"]);
        match &col {
            RObject::Vector(v) => match &v.data {
                VectorData::Integer(x) => assert_eq!(&x[..], &[1, 2, 3, i32::MIN, 2]),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    /// Batches as a [`ColumnChunks`]: each batch's column a chunk.
    struct Batches(SchemaRef, Vec<RecordBatch>);

    impl ColumnChunks for Batches {
        fn schema(&self) -> SchemaRef {
            self.0.clone()
        }
        fn num_rows(&self) -> usize {
            self.1.iter().map(|b| b.num_rows()).sum()
        }
        fn chunks(&self, j: usize, each: &mut dyn FnMut(ArrayRef) -> Result<()>) -> Result<()> {
            self.1.iter().try_for_each(|b| each(b.column(j).clone()))
        }
    }

    /// Written chunk by chunk, a column whose chunks convert differently
    /// alone (an int64 chunk that fits in integers beside one that does
    /// not, dictionaries that differ or hold a null) gives the bytes of the
    /// whole column converted at once.
    #[test]
    fn chunks_written_in_turn_give_the_whole_columns_bytes() {
        use crate::write::{write_object_file, ObjectFileOptions};
        let dict = || DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            Field::new("big", DataType::Int64, true),
            Field::new("small", DataType::Int64, true),
            Field::new("f", dict(), true),
            Field::new("same", dict(), true),
            Field::new("s", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
        ]));
        let same = || -> DictionaryArray<Int8Type> {
            vec![Some("u"), None, Some("v")].into_iter().collect()
        };
        let batch = |big: Vec<Option<i64>>, f: DictionaryArray<Int8Type>| {
            let n = big.len();
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(big)),
                    Arc::new(Int64Array::from(
                        (0..n as i64)
                            .map(|i| (i % 3 != 0).then_some(i))
                            .collect::<Vec<_>>(),
                    )),
                    Arc::new(f),
                    Arc::new(same().slice(0, n)),
                    Arc::new(StringArray::from(
                        (0..n)
                            .map(|i| (i % 4 != 0).then(|| format!("é{i}")))
                            .collect::<Vec<_>>(),
                    )),
                    Arc::new(Float64Array::from(
                        (0..n)
                            .map(|i| (i % 5 != 0).then_some(i as f64 / 3.0))
                            .collect::<Vec<_>>(),
                    )),
                ],
            )
            .unwrap()
        };
        let b1 = batch(
            vec![Some(1), None, Some(-7)],
            vec!["b", "a", "b"].into_iter().collect(),
        );
        let b2 = batch(
            vec![Some(1 << 40), Some(2), None],
            vec![Some("c"), None, Some("a")].into_iter().collect(),
        );
        let b3 = batch(
            vec![Some(3), Some(4), Some(5)],
            vec!["a", "d", "a"].into_iter().collect(),
        );
        let src = Batches(schema.clone(), vec![b1, b2, b3]);
        let dir = std::env::temp_dir().join(format!("rdarrow-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = ObjectFileOptions {
            name: "x".into(),
            ..Default::default()
        };
        let (parts, whole) = (dir.join("parts.RData"), dir.join("whole.RData"));
        write_columns_file(&src, &parts, &o, || unreachable!()).unwrap();
        let f = object_from_batches(&schema, &src.1).unwrap();
        // the whole conversion: big is integer64, small integer, f's levels unified
        let cols = match &f.object {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => items.clone(),
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        assert!(matches!(&cols[0], RObject::Vector(v) if matches!(v.data, VectorData::Real(_))));
        assert!(matches!(&cols[1], RObject::Vector(v) if matches!(v.data, VectorData::Integer(_))));
        write_object_file(&whole, f.object, f.refs, &o).unwrap();
        assert!(std::fs::read(&parts).unwrap() == std::fs::read(&whole).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A named vector with many names (its metadata compressed, as arrow R
    /// compresses large metadata) and a matrix come back as themselves.
    #[test]
    fn vectors_and_matrices_come_back_with_their_shape() {
        let n = 30_000;
        let mut m = ObjectMaker::default();
        let names: Vec<String> = (0..n).map(|i| format!("name{i}")).collect();
        let nm = make::strings(names.iter().map(|s| Some(s.as_bytes())));
        let values: Vec<f64> = (0..n).map(|i| i as f64 / 7.0).collect();
        let v = m.vector(VectorData::Real(values.clone().into()), vec![("names", nm)]);
        let doc = doc_with(v, m.refs);
        let t = table_from_object(
            &doc,
            &doc.root,
            &TableOptions {
                object_name: "v".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let md = &t.schema.metadata()["r"];
        // compressed (the names alone take 15 bytes each in ASCII)
        assert!(md.len() < n * 10, "compressed: {} bytes", md.len());
        let back = object_from_batches(&t.schema, &t.batches).unwrap();
        match &back.object {
            RObject::Vector(b) => match &b.data {
                VectorData::Real(x) => assert_eq!(&x[..], &values[..]),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let got = back
            .object
            .attribute(&back.refs, "names")
            .and_then(|a| a.as_strings())
            .unwrap();
        assert_eq!(
            (got.len(), got.get(n - 1)),
            (n, Some(format!("name{}", n - 1).as_bytes()))
        );
        // the data-frame view keeps the one column
        let frame = frame_from_batches(&t.schema, &t.batches).unwrap();
        assert!(frame.object.inherits(&frame.refs, "data.frame"));

        let mut m = ObjectMaker::default();
        let mat = m.vector(
            VectorData::Integer(vec![1, 2, 3, 4, 5, 6].into()),
            vec![("dim", make::ints(vec![2, 3]))],
        );
        let doc = doc_with(mat, m.refs);
        let t = table_from_object(&doc, &doc.root, &TableOptions::default()).unwrap();
        assert_eq!(t.schema.fields().len(), 3);
        let back = object_from_batches(&t.schema, &t.batches).unwrap();
        match &back.object {
            RObject::Vector(b) => {
                assert!(matches!(&b.data, VectorData::Integer(x) if x[..] == [1, 2, 3, 4, 5, 6]))
            }
            other => panic!("{other:?}"),
        }
        let dim = back.object.attribute(&back.refs, "dim").unwrap();
        assert!(
            matches!(dim, RObject::Vector(d) if matches!(&d.data, VectorData::Integer(x) if x[..] == [2, 3]))
        );
    }

    #[test]
    fn union_columns_are_refused_with_their_name() {
        let mut m = ObjectMaker::default();
        let ty = DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano);
        let arr = arrow_array::new_null_array(&ty, 2);
        let err = column(&mut m, &Field::new("when", ty, true), arr.as_ref()).unwrap_err();
        assert!(err.message.contains("'when'"), "{err}");
    }

    /// R's bytes of `obj` (its symbols in `refs`).
    fn bytes_of(obj: &RObject, refs: &RefTable) -> Vec<u8> {
        let header = crate::StreamHeader::utf8_v3(crate::Format::Xdr);
        crate::write::write_stream(Vec::new(), crate::Container::Stream, &header, obj, refs)
            .unwrap()
    }

    /// A named list of mixed types, an unnamed one (with NULL, a nested
    /// list and logical, integer and double elements) and an S4 object
    /// of slots: their Arrow layout, and their way back (through the
    /// batches, and through Parquet) to the same bytes.
    #[test]
    fn mixed_lists_and_s4_objects_go_to_arrow_and_back() {
        let strs = |v: &[&str]| make::strings(v.iter().map(|s| Some(s.as_bytes())));
        let objects = |m: &mut ObjectMaker| -> Vec<RObject> {
            let inner = m.vector(
                VectorData::List(vec![make::reals(vec![1.0]), strs(&["b"])]),
                vec![],
            );
            let named = m.named_list(
                &["coef", "n", "method", "none"],
                vec![
                    make::reals(vec![1.5, -2.0]),
                    make::ints(vec![10]),
                    strs(&["ols"]),
                    RObject::Null,
                ],
            );
            let flag = m.vector(VectorData::Logical(vec![1].into()), vec![]);
            let unnamed = m.vector(
                VectorData::List(vec![
                    make::ints(vec![1, 2, 3]),
                    strs(&["a"]),
                    RObject::Null,
                    inner,
                    make::reals(vec![2.5, make::na_real()]),
                    flag,
                ]),
                vec![],
            );
            let mut class = strs(&["Rec"]);
            let package = m.tagged_pairlist(vec![("package", strs(&[".GlobalEnv"]))]);
            if let RObject::Vector(v) = &mut class {
                v.attributes = package;
            }
            let slots = m.tagged_pairlist(vec![
                ("num", make::reals(vec![1.0, 2.0])),
                ("chr", strs(&["z"])),
                ("class", class),
            ]);
            let s4 = RObject::S4(Box::new(AttrOnly {
                flags: Flags {
                    levels: levels::S4_OBJECT,
                    object: true,
                },
                attributes: slots,
            }));
            vec![named, unnamed, s4]
        };
        let mut m = ObjectMaker::default();
        let objs = objects(&mut m);
        for (k, obj) in objs.into_iter().enumerate() {
            let doc = doc_with(obj, m.refs.clone());
            let t = table_from_object(
                &doc,
                &doc.root,
                &TableOptions {
                    object_name: "x".into(),
                    ..Default::default()
                },
            )
            .unwrap();
            let dt = t.schema.field(0).data_type().clone();
            match k {
                0 | 2 => {
                    assert!(matches!(dt, DataType::Struct(_)), "{dt}");
                    assert_eq!(t.num_rows(), 1);
                }
                _ => {
                    let DataType::Union(fields, arrow_schema::UnionMode::Dense) = &dt else {
                        panic!("{dt}")
                    };
                    // logical, integer and double meet in double
                    let names: Vec<&str> = fields.iter().map(|(_, f)| f.name().as_str()).collect();
                    assert_eq!(names, ["double", "character", "union"]);
                    assert_eq!(t.num_rows(), 6);
                }
            }
            for b in &t.batches {
                b.column(0).to_data().validate_full().unwrap();
            }
            let want = bytes_of(&doc.root, &doc.refs);
            let back = object_from_batches(&t.schema, &t.batches).unwrap();
            assert_eq!(bytes_of(&back.object, &back.refs), want, "object {k}");
            // Parquet: the union as a struct of its type ids and children
            let pq = bytes::Bytes::from(
                super::super::parquet::write_parquet(&t, Vec::new(), &Default::default()).unwrap(),
            );
            let dir = std::env::temp_dir()
                .join(format!("rdarrow-mixed-{}-{k}.parquet", std::process::id()));
            std::fs::write(&dir, &pq).unwrap();
            let (schema, batches) =
                super::super::parquet::read_parquet_file(&dir, u64::MAX).unwrap();
            let _ = std::fs::remove_file(&dir);
            assert_eq!(schema.field(0).data_type(), &dt);
            let back = object_from_batches(&schema, &batches).unwrap();
            assert_eq!(
                bytes_of(&back.object, &back.refs),
                want,
                "object {k} through Parquet"
            );
        }
    }

    /// A data frame's list column whose elements are named and differ in
    /// type: a union, one slot per row (its names name rows), and back.
    #[test]
    fn a_named_list_column_of_mixed_types_is_a_union() {
        let mut m = ObjectMaker::default();
        let strs = |v: &[&str]| make::strings(v.iter().map(|s| Some(s.as_bytes())));
        let col = m.named_list(&["a", "b"], vec![make::ints(vec![1, 2]), strs(&["x"])]);
        let df = m.vector(
            VectorData::List(vec![make::ints(vec![1, 2]), col]),
            vec![
                ("names", strs(&["id", "l"])),
                ("class", strs(&["data.frame"])),
                ("row.names", make::ints(vec![i32::MIN, -2])),
            ],
        );
        let doc = doc_with(df, m.refs);
        let t = table_from_object(&doc, &doc.root, &TableOptions::default()).unwrap();
        assert!(matches!(t.schema.field(1).data_type(), DataType::Union(..)));
        assert_eq!(t.num_rows(), 2);
        let back = object_from_batches(&t.schema, &t.batches).unwrap();
        assert_eq!(
            bytes_of(&back.object, &back.refs),
            bytes_of(&doc.root, &doc.refs)
        );
    }

    #[test]
    fn a_union_slot_naming_no_child_is_refused() {
        let mut m = ObjectMaker::default();
        let fields = arrow_schema::UnionFields::try_new(
            [0, 1],
            [
                Field::new("a", DataType::Int32, true),
                Field::new("b", DataType::Utf8, true),
            ],
        )
        .unwrap();
        let union = |offsets: Vec<i32>| {
            UnionArray::try_new(
                fields.clone(),
                vec![0i8, 1].into(),
                Some(offsets.into()),
                vec![
                    Arc::new(Int32Array::from(vec![1])) as ArrayRef,
                    Arc::new(StringArray::from(vec!["x"])),
                ],
            )
        };
        // arrow refuses an offset past its child; a valid one converts
        assert!(union(vec![0, 5]).is_err());
        let u = union(vec![0, 0]).unwrap();
        let f = Field::new(
            "u",
            DataType::Union(fields, arrow_schema::UnionMode::Dense),
            true,
        );
        let got = column(&mut m, &f, &u).unwrap();
        let RObject::Vector(v) = got else { panic!() };
        let VectorData::List(items) = &v.data else {
            panic!()
        };
        assert_eq!(items.len(), 2);
        assert!(
            matches!(&items[1], RObject::Vector(x) if matches!(&x.data, VectorData::Character(s) if s.get(0) == Some(&b"x"[..])))
        );
    }
}
