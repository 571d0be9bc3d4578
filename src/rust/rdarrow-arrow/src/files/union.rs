//! Many tables read as one, as `read_parquet(union_by_name = true)` reads
//! many files: the columns of every input, matched by name, in the order
//! they are first met. A column an input lacks is null in its rows. Where
//! inputs give a column different types, the one type that holds every
//! input's values is chosen: the widest number (logical < integer <
//! integer64 < double), text for factors whose levels differ (or for a
//! factor and text); other differences are errors naming both inputs.

use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use arrow_array::{new_null_array, Array, ArrayRef};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// One input of a union: what to call it in errors, its schema, and the
/// levels of each of its dictionary (factor) columns.
pub struct UnionInput<'a> {
    pub label: &'a str,
    pub schema: SchemaRef,
    /// For each column of `schema`: a dictionary column's values.
    pub levels: Vec<Option<ArrayRef>>,
}

/// The union of many inputs' columns.
#[derive(Debug, Clone)]
pub struct Union {
    pub schema: SchemaRef,
    /// For each input, for each column of `schema`: that input's column.
    pub sources: Vec<Vec<Option<usize>>>,
    /// For each column of `schema` that is a dictionary: its levels (the
    /// same in every input that has the column).
    pub levels: Vec<Option<ArrayRef>>,
}

/// The numbers, narrowest first: a column that is any two of them is the
/// wider.
const NUMBERS: [DataType; 4] = [
    DataType::Boolean,
    DataType::Int32,
    DataType::Int64,
    DataType::Float64,
];

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The columns of `inputs`, matched by name.
pub fn union_by_name(inputs: &[UnionInput<'_>]) -> Result<Union> {
    let mut fields: Vec<Field> = Vec::new();
    let mut levels: Vec<Option<ArrayRef>> = Vec::new();
    let mut first: Vec<&str> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for input in inputs {
        for (j, f) in input.schema.fields().iter().enumerate() {
            let Some(&k) = at.get(f.name()) else {
                at.insert(f.name().clone(), fields.len());
                fields.push(f.as_ref().clone().with_nullable(true));
                levels.push(input.levels.get(j).cloned().flatten());
                first.push(input.label);
                continue;
            };
            let (have, got) = (fields[k].data_type().clone(), f.data_type());
            let both = |t: DataType| fields[k].clone().with_data_type(t);
            fields[k] = match (&have, got) {
                (DataType::Dictionary(..), DataType::Dictionary(..)) => {
                    let same = match (&levels[k], input.levels.get(j).and_then(|l| l.as_ref())) {
                        (Some(a), Some(b)) => a.to_data() == b.to_data(),
                        _ => false,
                    };
                    if same {
                        both(DataType::Dictionary(
                            Box::new(DataType::Int32),
                            Box::new(DataType::Utf8),
                        ))
                    } else {
                        levels[k] = None;
                        both(DataType::Utf8)
                    }
                }
                (DataType::Dictionary(..), t) | (t, DataType::Dictionary(..)) if is_text(t) => {
                    levels[k] = None;
                    both(DataType::Utf8)
                }
                (a, b) if a == b => continue,
                (DataType::Null, b) => {
                    levels[k] = input.levels.get(j).cloned().flatten();
                    both(b.clone())
                }
                (_, DataType::Null) => continue,
                (a, b) if is_text(a) && is_text(b) => both(DataType::Utf8),
                (DataType::Timestamp(u, _), DataType::Timestamp(..)) => {
                    both(DataType::Timestamp(*u, Some("UTC".into())))
                }
                (a, b) if NUMBERS.contains(a) && NUMBERS.contains(b) => {
                    let rank = |t: &DataType| NUMBERS.iter().position(|n| n == t);
                    both(if rank(a) > rank(b) {
                        a.clone()
                    } else {
                        b.clone()
                    })
                }
                (a, b) => {
                    return Err(Error::unsupported(format!(
                        "column '{}' is {a} in '{}' and {b} in '{}': no one type holds both",
                        f.name(),
                        first[k],
                        input.label
                    )))
                }
            };
        }
    }
    let sources = inputs
        .iter()
        .map(|input| {
            fields
                .iter()
                .map(|f| input.schema.index_of(f.name()).ok())
                .collect()
        })
        .collect();
    Ok(Union {
        schema: Arc::new(Schema::new(fields)),
        sources,
        levels,
    })
}

/// `column` (`None`: the input lacks it, `rows` nulls) as `want`.
pub fn conform(column: Option<ArrayRef>, want: &DataType, rows: usize) -> Result<ArrayRef> {
    let Some(column) = column else {
        return Ok(new_null_array(want, rows));
    };
    if column.data_type() == want {
        return Ok(column);
    }
    arrow_cast::cast(&column, want).map_err(|e| {
        Error::unsupported(format!(
            "cannot make {} into {want}: {e}",
            column.data_type()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int8Type;
    use arrow_array::{DictionaryArray, Float64Array, Int32Array, StringArray};

    fn schema(cols: &[(&str, DataType)]) -> SchemaRef {
        Arc::new(Schema::new(
            cols.iter()
                .map(|(n, t)| Field::new(*n, t.clone(), true))
                .collect::<Vec<_>>(),
        ))
    }

    fn factor(levels: &[&str]) -> ArrayRef {
        let keys = arrow_array::Int8Array::from(vec![0i8]);
        Arc::new(
            DictionaryArray::<Int8Type>::try_new(
                keys,
                Arc::new(StringArray::from(levels.to_vec())),
            )
            .unwrap(),
        )
    }

    #[test]
    fn columns_are_matched_by_name_and_widened() {
        let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        let a = UnionInput {
            label: "a.rds",
            schema: schema(&[
                ("x", DataType::Int32),
                ("g", dict.clone()),
                ("h", dict.clone()),
            ]),
            levels: vec![None, Some(factor(&["u", "v"])), Some(factor(&["p"]))],
        };
        let b = UnionInput {
            label: "b.rds",
            schema: schema(&[
                ("h", dict.clone()),
                ("y", DataType::Utf8),
                ("x", DataType::Float64),
                ("g", dict),
            ]),
            levels: vec![Some(factor(&["q"])), None, None, Some(factor(&["u", "v"]))],
        };
        let u = union_by_name(&[a, b]).unwrap();
        let names: Vec<_> = u
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["x", "g", "h", "y"]);
        assert_eq!(u.schema.field(0).data_type(), &DataType::Float64);
        assert!(matches!(
            u.schema.field(1).data_type(),
            DataType::Dictionary(..)
        ));
        assert_eq!(u.schema.field(2).data_type(), &DataType::Utf8);
        assert_eq!(u.sources[0], vec![Some(0), Some(1), Some(2), None]);
        assert_eq!(u.sources[1], vec![Some(2), Some(3), Some(0), Some(1)]);
        assert!(u.levels[1].is_some() && u.levels[2].is_none());
        let x = conform(
            Some(Arc::new(Int32Array::from(vec![Some(1), None]))),
            &DataType::Float64,
            2,
        )
        .unwrap();
        let x = x.as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(x.value(0), 1.0);
        assert!(x.is_null(1));
        assert_eq!(conform(None, &DataType::Utf8, 3).unwrap().null_count(), 3);
    }

    #[test]
    fn types_no_one_type_holds_are_an_error_naming_both_inputs() {
        let a = UnionInput {
            label: "a.rds",
            schema: schema(&[("x", DataType::Utf8)]),
            levels: vec![None],
        };
        let b = UnionInput {
            label: "b.rds",
            schema: schema(&[("x", DataType::Date32)]),
            levels: vec![None],
        };
        let e = union_by_name(&[a, b]).unwrap_err().to_string();
        assert!(
            e.contains("column 'x'") && e.contains("'a.rds'") && e.contains("'b.rds'"),
            "{e}"
        );
    }
}
