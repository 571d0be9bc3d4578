//! Arrow record batches to an R data frame (or the object the table was
//! made from), column by column; and an R data file written from a file's
//! columns one at a time.

use crate::from_arrow::column::column;
use crate::from_arrow::column::data_frame;
use crate::from_arrow::column::FactorLevels;
use crate::from_arrow::column::int_vec;
use crate::from_arrow::column::unified_factor;
use crate::mapping::pandas_index::FrameLayout;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::na;
use rdarrow_format::tree::*;
use arrow_array::*;
use arrow_schema::{Field, SchemaRef};

/// A data frame made from Arrow data, with the table of its symbols.
pub struct RFrame {
    pub object: RObject,
    pub refs: RefTable,
}

pub(crate) fn concat(arrays: &[ArrayRef]) -> Result<ArrayRef> {
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
/// `"r"` metadata records ([`crate::metadata::document::Shape`]).
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
        Some(shape) => crate::metadata::restore::restore_shape(&mut m, frame, &shape)?,
        None => match frame {
            RObject::Vector(v) => match v.data {
                VectorData::List(mut items) if items.len() == 1 => items.pop().unwrap(),
                data => RObject::Vector(Box::new(Vector { data, ..*v })),
            },
            other => other,
        },
    };
    rdarrow_format::checks::validate::check_for_r(&object, &m.refs)?;
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
    if let Some(notes) = schema.metadata().get(crate::metadata::fidelity::FIDELITY_KEY) {
        crate::metadata::fidelity::restore_selfref(m, &mut object, notes);
    }
    if let Some(shape) = shape {
        object = crate::metadata::restore::restore_shape(m, object, &shape)?;
        rdarrow_format::checks::validate::check_for_r(&object, &m.refs)
            .map_err(|e| Error::corrupt(format!("the \"r\" metadata: {}", e.message)))?;
    }
    Ok(object)
}

/// The data frame, the shape element of the `"r"` metadata and the object
/// maker (whose symbols the frame uses).
pub(crate) fn convert(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(RObject, Option<RObject>, ObjectMaker)> {
    let mut m = ObjectMaker::default();
    let (frame, shape) = convert_with(&mut m, schema, batches)?;
    Ok((frame, shape, m))
}

/// [`convert`] with the symbols made by `m`.
pub(crate) fn convert_with(
    m: &mut ObjectMaker,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(RObject, Option<RObject>)> {
    let nrow: usize = batches.iter().map(|b| b.num_rows()).sum();
    let layout = layout_of(schema);
    let parts = |i: usize| -> Vec<ArrayRef> { batches.iter().map(|b| b.column(i).clone()).collect() };
    let mut cols = Vec::with_capacity(layout.order.len());
    for &i in &layout.order {
        rdarrow_format::base::cancel::check()?;
        cols.push(convert_column(m, schema.field(i), &parts(i))?);
    }
    let labels = layout.label_column().map(parts).unwrap_or_default();
    finish_frame(m, schema, &layout, cols, nrow, &labels)
}

/// Which columns a table's data frame holds and where its row names come
/// from: a pandas index by its `"pandas"` metadata, unless rdarrow's `"r"`
/// metadata says the table was made from R (whose row names it holds).
fn layout_of(schema: &arrow_schema::Schema) -> FrameLayout {
    if crate::metadata::document::r_text(schema).is_some() {
        FrameLayout::plain(schema)
    } else {
        FrameLayout::of(schema)
    }
}

/// One column from its chunks, checked for what R cannot hold.
pub(crate) fn convert_column(m: &mut ObjectMaker, f: &Field, parts: &[ArrayRef]) -> Result<RObject> {
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
pub(crate) fn checked_for_r(m: &ObjectMaker, f: &Field, col: RObject) -> Result<RObject> {
    let named = f.name().contains('\0');
    if named || rdarrow_format::checks::validate::check_for_r(&col, &m.refs).is_err() {
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

/// The data frame of the converted columns (the table's, as `layout`
/// orders them), with the schema's metadata applied (a pandas index's
/// row names from `labels`, the chunks of its column); and the shape
/// element of its `"r"` metadata.
pub(crate) fn finish_frame(
    m: &mut ObjectMaker,
    schema: &SchemaRef,
    layout: &FrameLayout,
    cols: Vec<RObject>,
    nrow: usize,
    labels: &[ArrayRef],
) -> Result<(RObject, Option<RObject>)> {
    let names: Vec<&str> = layout.names.iter().map(String::as_str).collect();
    let mut frame = data_frame(m, &names, cols, nrow);
    for (name, value) in layout.attributes(nrow, labels)? {
        let tag = m.symbol(name);
        if let RObject::Vector(v) = &mut frame {
            set_attribute(&mut v.attributes, tag, name.as_bytes(), &m.refs, value);
        }
    }
    let mut shape = None;
    // the values first (a complex column from its struct, ...), then the
    // attributes that go on them
    if let Some(notes) = schema.metadata().get(crate::metadata::fidelity::FIDELITY_KEY) {
        crate::metadata::fidelity::apply_fidelity_notes(m, &mut frame, notes);
    }
    if let Some(md) = crate::metadata::document::r_text(schema) {
        (frame, shape) = crate::metadata::restore::apply_r_metadata(m, frame, md)?;
        rdarrow_format::checks::validate::check_for_r(&frame, &m.refs)
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
pub(crate) struct ChunkPlan {
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
            rdarrow_format::base::cancel::check()?;
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
pub(crate) fn is_plain(data: &VectorData) -> bool {
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
/// [`rdarrow_format::write::write_object_file`] would) holding about one chunk of
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
    o: &rdarrow_format::write::ObjectFileOptions,
    whole: impl FnOnce() -> Result<RFrame>,
) -> Result<()> {
    let schema = src.schema();
    let notes = schema.metadata().get(crate::metadata::fidelity::FIDELITY_KEY);
    let keeping = crate::metadata::document::columns_rebuilt_whole(&schema);
    let noted = |name: &str| {
        keeping.iter().any(|k| k == name)
            || notes.is_some_and(|n| {
                n.lines()
                    .any(|l| l.split('\t').skip(1).any(|part| part == name))
            })
    };
    let mut m = ObjectMaker::default();
    let layout = layout_of(&schema);
    let mut cols = Vec::with_capacity(layout.order.len());
    let mut plans = Vec::with_capacity(layout.order.len());
    for &j in &layout.order {
        let f = schema.field(j);
        rdarrow_format::base::cancel::check()?;
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
    let labels = match layout.label_column() {
        Some(j) => src.column(j)?,
        None => Vec::new(),
    };
    let (mut frame, shape) = finish_frame(&mut m, &schema, &layout, cols, src.num_rows(), &labels)?;
    drop(labels);
    if shape.is_some() {
        drop(frame);
        let f = whole()?;
        return rdarrow_format::write::write_object_file(path, f.object, f.refs, o);
    }
    if let Some(notes) = notes {
        crate::metadata::fidelity::restore_selfref(&mut m, &mut frame, notes);
    }
    let fields = schema.fields();
    rdarrow_format::write::write_frame_file(path, &frame, m.refs, o, &mut |k, part| {
        let plan = plans[k]
            .as_ref()
            .ok_or_else(|| Error::internal("a column written whole has no chunks"))?;
        let j = layout.order[k];
        src.chunks(j, &mut |c| part(plan.part(&fields[j], c)?))
    })
}

/// A zero-row array of a column's type. Arrow panics on types it cannot
/// build (a map whose entries are not a two-field struct, as a malformed
/// IPC schema can declare): that is a corrupt-input error here.
pub(crate) fn empty_column(f: &arrow_schema::Field) -> Result<ArrayRef> {
    rdarrow_format::base::error::catch_quietly(|| arrow_array::new_empty_array(f.data_type())).map_err(|_| {
        Error::corrupt(format!(
            "column '{}' has an invalid Arrow type {}",
            f.name(),
            f.data_type()
        ))
    })
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType;
    use arrow_array::types::{Float64Type, Int32Type, Int8Type};
    use super::*;
    use crate::table_from_object;
    use crate::TableOptions;
    use rdarrow_format::tree::make;
    use rdarrow_format::tree::make::ObjectMaker;
    use rdarrow_format::Container;
    use rdarrow_format::Document;
    use rdarrow_format::Format;
    use rdarrow_format::StreamHeader;
    use std::sync::Arc;

    fn doc_with(root: RObject, refs: RefTable) -> Document {
        Document {
            compression: rdarrow_format::Compression::None,
            container: Container::Stream,
            header: StreamHeader::utf8_v3(Format::Xdr),
            root,
            refs,
            spans: Vec::new(),
            stream_len: 0,
            trust: Default::default(),
            seen: None,
            damage: None,
            salvaged: None,
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
        use rdarrow_format::write::write_object_file;
        use rdarrow_format::write::ObjectFileOptions;
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

    /// A table pyarrow made from a pandas DataFrame: its index becomes the
    /// row names (or, a MultiIndex, the first columns), the same whether
    /// the file is written column by column (Parquet's route) or whole.
    #[test]
    fn a_pandas_index_is_the_row_names_on_both_routes() {
        use rdarrow_format::write::write_object_file;
        use rdarrow_format::write::ObjectFileOptions;
        let dir = std::env::temp_dir().join(format!("rdarrow-pandas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = ObjectFileOptions {
            name: "x".into(),
            ..Default::default()
        };
        let index = r#"{"index_columns": ["__index_level_0__"], "columns": [{"name": "v", "field_name": "v"}, {"name": "id", "field_name": "__index_level_0__"}]}"#;
        let multi = r#"{"index_columns": ["k", "__index_level_1__"], "columns": [{"name": "k", "field_name": "k"}, {"name": null, "field_name": "__index_level_1__"}]}"#;
        for (md, second, row_names, names) in [
            (index, DataType::Int64, Some(vec![7, 8, 9]), vec!["v"]),
            (multi, DataType::Utf8, None, vec!["k", "level_1", "v"]),
        ] {
            let (first, other) = if md == index { ("v", "__index_level_0__") } else { ("v", "k") };
            let mut fields = vec![Field::new(first, DataType::Float64, true), Field::new(other, second.clone(), true)];
            let mut cols: Vec<ArrayRef> = vec![
                Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5])),
                if second == DataType::Int64 {
                    Arc::new(Int64Array::from(vec![7, 8, 9]))
                } else {
                    Arc::new(StringArray::from(vec!["a", "b", "c"]))
                },
            ];
            if md == multi {
                fields.push(Field::new("__index_level_1__", DataType::Int64, true));
                cols.push(Arc::new(Int64Array::from(vec![1, 2, 3])));
            }
            let schema = Arc::new(
                arrow_schema::Schema::new(fields)
                    .with_metadata(std::collections::HashMap::from([("pandas".to_string(), md.to_string())])),
            );
            let b = RecordBatch::try_new(schema.clone(), cols).unwrap();
            let src = Batches(schema.clone(), vec![b.slice(0, 2), b.slice(2, 1)]);
            let (parts, whole) = (dir.join("parts.RData"), dir.join("whole.RData"));
            write_columns_file(&src, &parts, &o, || unreachable!()).unwrap();
            let f = object_from_batches(&schema, &src.1).unwrap();
            let got_names = f.object.attribute(&f.refs, "names").unwrap().as_strings().unwrap().clone();
            let got_names: Vec<&[u8]> = (0..got_names.len()).map(|i| got_names.bytes(i)).collect();
            assert_eq!(got_names, names.iter().map(|n| n.as_bytes()).collect::<Vec<_>>());
            let rn = f.object.attribute(&f.refs, "row.names").unwrap();
            match (&rn, row_names) {
                (RObject::Vector(v), Some(want)) => assert!(matches!(&v.data, VectorData::Integer(x) if x[..] == want[..])),
                (rn, None) => assert!(crate::metadata::attributes::is_automatic_row_names(rn)),
                (other, _) => panic!("{other:?}"),
            }
            write_object_file(&whole, f.object, f.refs, &o).unwrap();
            assert!(std::fs::read(&parts).unwrap() == std::fs::read(&whole).unwrap());
        }
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
        let header = rdarrow_format::StreamHeader::utf8_v3(rdarrow_format::Format::Xdr);
        rdarrow_format::write::write_stream(Vec::new(), rdarrow_format::Container::Stream, &header, obj, refs)
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
                crate::files::parquet::write_parquet(&t, Vec::new(), &Default::default()).unwrap(),
            );
            let dir = std::env::temp_dir()
                .join(format!("rdarrow-mixed-{}-{k}.parquet", std::process::id()));
            std::fs::write(&dir, &pq).unwrap();
            let (schema, batches) =
                crate::files::parquet::read_parquet_file(&dir, u64::MAX).unwrap();
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
