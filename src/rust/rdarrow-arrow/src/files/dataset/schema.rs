//! One schema for a dataset's files: the first object's columns are the
//! reference the others must match; factors' dictionaries get int32
//! indices in every file. Time columns take the type `rdata_to_parquet()`
//! gives them (the coarsest unit that keeps every value); a later object's
//! column is rescaled to the dataset's unit where that keeps its values,
//! and where it needs a finer unit the dataset is written again in that
//! unit ([`Fit::Widen`]), so no file rounds a value.

use crate::ArrowTable;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// The first object's columns, which the others must match.
pub(super) struct Reference {
    pub file: String,
    /// Data columns (without the partition columns), in the written order.
    pub data: Vec<FieldRef>,
    /// Partition columns, in partitioning order.
    pub keys: Vec<FieldRef>,
}

/// An object's data table fitted to the dataset's time types, or the
/// finer type a column needs.
pub(super) enum Fit {
    Fitted(ArrowTable),
    /// Column `name` needs `to` (a finer unit than the dataset has given
    /// it so far) to keep its values.
    Widen { name: String, to: DataType },
}

/// The types time columns must have: those widened by an earlier attempt,
/// else the reference's.
pub(super) fn time_targets(
    widened: &HashMap<String, DataType>,
    reference: Option<&Reference>,
) -> HashMap<String, DataType> {
    let mut want: HashMap<String, DataType> = reference
        .map(|r| {
            r.data
                .iter()
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect()
        })
        .unwrap_or_default();
    want.extend(widened.iter().map(|(k, v)| (k.clone(), v.clone())));
    want
}

/// `t` with each timestamp or duration column in the unit `want` gives
/// its name, where every value keeps its bits; a column that needs a
/// finer unit than that gives [`Fit::Widen`]. Other differences are left
/// to [`check_fields`].
pub(super) fn fit_times(t: ArrowTable, want: &HashMap<String, DataType>) -> Result<Fit> {
    let fields = t.schema.fields().clone();
    let mut refit: Vec<(usize, DataType)> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let Some(w) = want.get(f.name()) else { continue };
        match (f.data_type(), w) {
            (DataType::Timestamp(a, za), DataType::Timestamp(b, zb)) if a != b && za == zb => {}
            (DataType::Duration(a), DataType::Duration(b)) if a != b => {}
            _ => continue,
        }
        refit.push((i, w.clone()));
    }
    if refit.is_empty() {
        return Ok(Fit::Fitted(t));
    }
    let mut batches: Vec<Vec<ArrayRef>> = t.batches.iter().map(|b| b.columns().to_vec()).collect();
    for (i, w) in &refit {
        for cols in batches.iter_mut() {
            match crate::to_arrow::temporal::refit_times(&cols[*i], w) {
                Some(a) => cols[*i] = a,
                None => {
                    let f = &fields[*i];
                    if finer(f.data_type(), w) {
                        return Ok(Fit::Widen {
                            name: f.name().clone(),
                            to: f.data_type().clone(),
                        });
                    }
                    // beyond the finer unit's range: check_fields says so
                    return Ok(Fit::Fitted(t));
                }
            }
        }
    }
    let schema: SchemaRef = Arc::new(Schema::new_with_metadata(
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| match refit.iter().find(|(j, _)| *j == i) {
                Some((_, w)) => Arc::new(f.as_ref().clone().with_data_type(w.clone())),
                None => f.clone(),
            })
            .collect::<Vec<FieldRef>>(),
        t.schema.metadata().clone(),
    ));
    let batches = batches
        .into_iter()
        .zip(&t.batches)
        .map(|(cols, b)| batch(&schema, cols, b.num_rows()))
        .collect::<Result<Vec<_>>>()?;
    Ok(Fit::Fitted(ArrowTable {
        schema,
        batches,
        warnings: t.warnings,
    }))
}

/// Whether time type `a`'s unit is finer than `b`'s.
fn finer(a: &DataType, b: &DataType) -> bool {
    use crate::mapping::types::units_per_second;
    match (a, b) {
        (DataType::Timestamp(x, _), DataType::Timestamp(y, _))
        | (DataType::Duration(x), DataType::Duration(y)) => {
            units_per_second(*x) > units_per_second(*y)
        }
        _ => false,
    }
}

pub(super) fn check_fields(got: &Fields, want: &[FieldRef], ref_file: &str) -> Result<()> {
    for (g, w) in got.iter().zip(want) {
        let same = g.data_type() == w.data_type() && g.dict_is_ordered() == w.dict_is_ordered();
        if !same {
            let describe = |f: &Field| {
                if f.dict_is_ordered() == Some(true) {
                    format!("{} (ordered)", f.data_type())
                } else {
                    f.data_type().to_string()
                }
            };
            return Err(Error::usage(format!(
                "column '{}' has type {} but {} in '{ref_file}'; the columns of a dataset's inputs must have the same types",
                g.name(),
                describe(g),
                describe(w)
            )));
        }
    }
    Ok(())
}

/// The type a column is written with: dictionaries get int32 indices.
fn normal_type(dt: &DataType) -> DataType {
    match dt {
        DataType::Dictionary(_, v) => {
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(normal_type(v)))
        }
        DataType::List(f) => DataType::List(normal_field(f)),
        DataType::LargeList(f) => DataType::LargeList(normal_field(f)),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(normal_field).collect()),
        other => other.clone(),
    }
}

fn normal_field(f: &FieldRef) -> FieldRef {
    let dt = normal_type(f.data_type());
    if &dt == f.data_type() {
        return f.clone();
    }
    Arc::new(f.as_ref().clone().with_data_type(dt))
}

pub(super) fn normalise(t: ArrowTable) -> Result<ArrowTable> {
    let fields = t.schema.fields();
    let normal: Vec<FieldRef> = fields.iter().map(normal_field).collect();
    if normal
        .iter()
        .zip(fields.iter())
        .all(|(a, b)| Arc::ptr_eq(a, b))
    {
        return Ok(t);
    }
    let schema = Arc::new(Schema::new_with_metadata(
        normal.clone(),
        t.schema.metadata().clone(),
    ));
    let mut batches = Vec::with_capacity(t.batches.len());
    for b in &t.batches {
        let cols = b
            .columns()
            .iter()
            .zip(&normal)
            .map(|(c, f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    arrow_cast::cast(c, f.data_type()).map_err(|e| {
                        Error::unsupported(format!(
                            "column '{}': cannot convert {} to {}: {e}",
                            f.name(),
                            c.data_type(),
                            f.data_type()
                        ))
                    })
                }
            })
            .collect::<Result<Vec<_>>>()?;
        batches.push(batch(&schema, cols, b.num_rows())?);
    }
    Ok(ArrowTable {
        schema,
        batches,
        warnings: t.warnings,
    })
}

pub(super) fn batch(schema: &SchemaRef, cols: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    RecordBatch::try_new_with_options(
        schema.clone(),
        cols,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| Error::corrupt(format!("cannot assemble the record batch: {e}")))
}

/// The single batch of a table (tables are converted unchunked).
pub(super) fn one_batch(t: &ArrowTable) -> Result<RecordBatch> {
    match t.batches.len() {
        1 => Ok(t.batches[0].clone()),
        0 => Ok(RecordBatch::new_empty(t.schema.clone())),
        _ => arrow_select::concat::concat_batches(&t.schema, &t.batches)
            .map_err(|e| Error::corrupt(format!("cannot join the record batches: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::partition::segment_ids;
    use super::*;
    use arrow_array::Array;
    use arrow_schema::{Field, Schema};

    #[test]
    fn dictionaries_normalise_to_int32() {
        let d: arrow_array::DictionaryArray<arrow_array::types::Int8Type> =
            vec!["a", "b", "a"].into_iter().collect();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "f",
            d.data_type().clone(),
            true,
        )]));
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(d)]).unwrap();
        let t = normalise(ArrowTable {
            schema,
            batches: vec![b],
            warnings: Vec::new(),
        })
        .unwrap();
        assert_eq!(
            t.schema.field(0).data_type(),
            &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
        );
        let (ids, segs) = segment_ids(t.batches[0].column(0), "f").unwrap();
        assert_eq!(ids, vec![0, 1, 0]);
        assert_eq!(segs, vec!["a", "b"]);
    }
}
