//! A pandas DataFrame's index, as pyarrow records it in a table's
//! `"pandas"` schema metadata (`pa.Table.from_pandas()`, `df.to_parquet()`),
//! made R's row names: the one rule of every route from Arrow to R
//! (Python's `write_rds()`/`write_rdata()`, `arrow_to_rdata()`,
//! `parquet_to_rdata()`, the command line's `to-rdata`).
//!
//! | index | R |
//! |---|---|
//! | exactly `0..n-1` (a `RangeIndex(n)`, or integer labels 0, 1, ...) | automatic row names |
//! | other integer labels within R's integers | integer row names (`c(7L, 8L, 9L)`) |
//! | string labels (also a Categorical of strings), integers beyond R's | character row names |
//! | a label repeated or missing | an error: R's row names are unique and never `NA` |
//! | labels of other types (floats, times, ...), a MultiIndex | leading columns, as `df.reset_index()` makes them (the index's name, else `index`; a level's name, else `level_<k>`) |
//!
//! A named index keeps its name in the data frame's attribute
//! [`INDEX_NAME_ATTRIBUTE`] (R has no place for a name of the row names),
//! which travels in the `"r"` metadata to `read_pandas()`. A table with
//! rdarrow's own `"r"` metadata was made from R: its row names are R's
//! (the conversion, which reads both, takes [`FrameLayout::plain`] then).

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Schema};
use rdarrow_format::base::error::{Error, Result};
use rdarrow_format::tree::make;
use rdarrow_format::tree::RObject;
use std::collections::HashMap;

/// The data frame attribute holding the name of the pandas index its row
/// names came from.
pub const INDEX_NAME_ATTRIBUTE: &str = "pandas.index.name";

/// Where the row names of a data frame made from a table come from.
#[derive(Debug, Clone, PartialEq)]
enum Labels {
    /// R's automatic row names.
    Automatic,
    /// A pandas `RangeIndex` other than `0..n-1`: its start and step.
    Range { start: i64, step: i64, stop: i64 },
    /// The labels in the table's column of this position.
    Column(usize),
}

/// Which of a table's columns a data frame holds, in what order and under
/// which names, and where its row names come from.
#[derive(Debug, Clone)]
pub struct FrameLayout {
    /// The table's columns in the frame's order.
    pub order: Vec<usize>,
    /// The frame's column names, in that order.
    pub names: Vec<String>,
    labels: Labels,
    name: Option<String>,
}

impl FrameLayout {
    /// Every column as it is, automatic row names.
    pub fn plain(schema: &Schema) -> FrameLayout {
        FrameLayout {
            order: (0..schema.fields().len()).collect(),
            names: schema.fields().iter().map(|f| f.name().clone()).collect(),
            labels: Labels::Automatic,
            name: None,
        }
    }

    /// The layout of a table by its `"pandas"` metadata (every column as
    /// it is when it has none).
    pub fn of(schema: &Schema) -> FrameLayout {
        let plain = FrameLayout::plain(schema);
        let Some(md) = schema.metadata().get("pandas") else {
            return plain;
        };
        let Ok(md) = serde_json::from_str::<serde_json::Value>(md) else {
            return plain;
        };
        let Some(index) = md.get("index_columns").and_then(|v| v.as_array()) else {
            return plain;
        };
        // an index column's name, from the entry "columns" gives its field
        let name_of = |field: &str| {
            md.get("columns")
                .and_then(|c| c.as_array())
                .and_then(|cols| {
                    cols.iter()
                        .find(|c| c.get("field_name").and_then(|f| f.as_str()) == Some(field))
                })
                .and_then(|c| label_text(c.get("name")?))
        };
        let position = |field: &str| schema.fields().iter().position(|f| f.name() == field);
        match index.as_slice() {
            [serde_json::Value::Object(range)]
                if range.get("kind").and_then(|k| k.as_str()) == Some("range") =>
            {
                let get = |k: &str| range.get(k).and_then(|v| v.as_i64());
                let labels = match (get("start"), get("stop"), get("step")) {
                    (Some(0), _, Some(1)) => Labels::Automatic,
                    (Some(start), Some(stop), Some(step)) if step != 0 => {
                        Labels::Range { start, step, stop }
                    }
                    _ => return plain,
                };
                FrameLayout {
                    labels,
                    name: range.get("name").and_then(label_text),
                    ..plain
                }
            }
            [serde_json::Value::String(field)] => {
                let Some(j) = position(field) else {
                    return plain;
                };
                let name = name_of(field);
                if labels_kind(schema.field(j).data_type()).is_some() {
                    FrameLayout {
                        order: plain.order.iter().copied().filter(|&k| k != j).collect(),
                        names: plain
                            .names
                            .iter()
                            .enumerate()
                            .filter(|(k, _)| *k != j)
                            .map(|(_, n)| n.clone())
                            .collect(),
                        labels: Labels::Column(j),
                        name,
                    }
                } else {
                    let name = name.unwrap_or_else(|| "index".into());
                    plain.leading(&[(j, name)])
                }
            }
            fields => {
                // a MultiIndex (or an index of strings pyarrow did not
                // name): its levels as leading columns
                let levels: Vec<(usize, String)> = fields
                    .iter()
                    .enumerate()
                    .filter_map(|(k, f)| {
                        let field = f.as_str()?;
                        Some((
                            position(field)?,
                            name_of(field).unwrap_or_else(|| format!("level_{k}")),
                        ))
                    })
                    .collect();
                if levels.is_empty() {
                    plain
                } else {
                    plain.leading(&levels)
                }
            }
        }
    }

    /// These columns first, renamed, the others after them as they were.
    fn leading(self, first: &[(usize, String)]) -> FrameLayout {
        let mut order: Vec<usize> = first.iter().map(|(j, _)| *j).collect();
        let mut names: Vec<String> = first.iter().map(|(_, n)| n.clone()).collect();
        for (j, n) in self.order.iter().zip(&self.names) {
            if !order.contains(j) {
                order.push(*j);
                names.push(n.clone());
            }
        }
        FrameLayout {
            order,
            names,
            ..self
        }
    }

    /// The table's column whose values are the row names, if any.
    pub fn label_column(&self) -> Option<usize> {
        match self.labels {
            Labels::Column(j) => Some(j),
            _ => None,
        }
    }

    /// The attributes the frame gets beyond names and class: `row.names`
    /// (`None`: R's automatic ones, as the frame has them) and the index's
    /// name. `labels` is the label column's chunks ([`Self::label_column`]).
    pub fn attributes(
        &self,
        nrow: usize,
        labels: &[ArrayRef],
    ) -> Result<Vec<(&'static str, RObject)>> {
        let mut out = Vec::new();
        let rows = match self.labels {
            Labels::Automatic => None,
            Labels::Range { start, step, stop } => {
                // a table sliced after pyarrow made it: the range no longer
                // says its rows (pyarrow then gives a default index too)
                let count = if step > 0 {
                    (stop - start).max(0)
                } else {
                    (start - stop).max(0)
                };
                let count = (count + step.abs() - 1) / step.abs();
                (count == nrow as i64).then(|| {
                    row_names(
                        (0..nrow as i64)
                            .map(|i| Label::Int(start + i * step))
                            .collect(),
                    )
                })
            }
            Labels::Column(_) => {
                let labels = column_labels(labels)?;
                check_labels(&labels)?;
                let automatic = labels
                    .iter()
                    .enumerate()
                    .all(|(i, l)| *l == Some(Label::Int(i as i64)));
                (!automatic).then(|| row_names(labels))
            }
        };
        if let Some(rows) = rows {
            out.push(("row.names", rows));
        }
        if let Some(name) = &self.name {
            out.push((INDEX_NAME_ATTRIBUTE, make::strings([Some(name.as_bytes())])));
        }
        Ok(out)
    }
}

/// An index name as pyarrow writes it (a string, or a number's text).
fn label_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether labels of this type are R's row names: `Some(true)` integers,
/// `Some(false)` strings, `None` neither.
fn labels_kind(t: &DataType) -> Option<bool> {
    match t {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Some(true),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => Some(true),
        // (an empty index of objects: pyarrow's null type)
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => Some(false),
        DataType::Dictionary(_, v) => labels_kind(v),
        _ => None,
    }
}

/// One label of an index column (`None`: missing).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Label {
    Int(i64),
    Text(String),
}

/// The labels of the index column's chunks.
fn column_labels(chunks: &[ArrayRef]) -> Result<Vec<Option<Label>>> {
    let fail = |e: arrow_schema::ArrowError| Error::corrupt(format!("the pandas index: {e}"));
    let mut out = Vec::new();
    for chunk in chunks {
        let ints = labels_kind(chunk.data_type()) == Some(true);
        // an integer beyond int64 (a uint64 past 2**63 - 1) as its text
        let as_int = ints
            .then(|| {
                let opts = arrow_cast::CastOptions {
                    safe: false,
                    ..Default::default()
                };
                arrow_cast::cast_with_options(chunk, &DataType::Int64, &opts).ok()
            })
            .flatten();
        match as_int {
            Some(a) => {
                let a = a.as_primitive::<Int64Type>();
                out.extend((0..a.len()).map(|i| a.is_valid(i).then(|| Label::Int(a.value(i)))));
            }
            None => {
                let a = arrow_cast::cast(chunk, &DataType::Utf8).map_err(fail)?;
                let a = a.as_string::<i32>();
                out.extend(
                    (0..a.len())
                        .map(|i| a.is_valid(i).then(|| Label::Text(a.value(i).to_string()))),
                );
            }
        }
    }
    Ok(out)
}

/// The labels as R's row names require them: each present, none twice.
fn check_labels(labels: &[Option<Label>]) -> Result<()> {
    const FIX: &str =
        "df.reset_index() keeps the index as a column, df.reset_index(drop=True) drops it";
    let mut seen: HashMap<&Label, usize> = HashMap::with_capacity(labels.len());
    for (i, l) in labels.iter().enumerate() {
        let Some(l) = l else {
            return Err(Error::usage(format!(
                "the pandas index has a missing label at row {}, and R's row names cannot be NA: {FIX}",
                i + 1
            )));
        };
        if let Some(first) = seen.insert(l, i) {
            let shown = match l {
                Label::Int(v) => v.to_string(),
                Label::Text(s) => format!("'{s}'"),
            };
            return Err(Error::usage(format!(
                "the pandas index has the label {shown} twice (rows {} and {}), and R's row names are unique: {FIX}",
                first + 1,
                i + 1
            )));
        }
    }
    Ok(())
}

/// Checked labels as R's row names: integers when every one is an R
/// integer (not `NA`'s -2**31), else their text.
fn row_names(labels: Vec<impl Into<Option<Label>>>) -> RObject {
    let labels: Vec<Label> = labels.into_iter().filter_map(Into::into).collect();
    let ints: Option<Vec<i32>> = labels
        .iter()
        .map(|l| match l {
            Label::Int(v) if *v > i32::MIN as i64 && *v <= i32::MAX as i64 => Some(*v as i32),
            _ => None,
        })
        .collect();
    match ints {
        Some(v) => make::ints(v),
        None => {
            let text: Vec<String> = labels
                .into_iter()
                .map(|l| match l {
                    Label::Int(v) => v.to_string(),
                    Label::Text(s) => s,
                })
                .collect();
            make::strings(text.iter().map(|s| Some(s.as_bytes())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::Field;
    use rdarrow_format::tree::VectorData;
    use std::sync::Arc;

    fn schema(fields: &[(&str, DataType)], pandas: &str) -> Schema {
        let fields: Vec<Field> = fields
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone(), true))
            .collect();
        Schema::new(fields)
            .with_metadata(HashMap::from([("pandas".to_string(), pandas.to_string())]))
    }

    fn range(start: i64, stop: i64, name: &str) -> String {
        format!(
            r#"{{"index_columns": [{{"kind": "range", "name": {name}, "start": {start}, "stop": {stop}, "step": 1}}], "columns": []}}"#
        )
    }

    fn column_index(field: &str, name: &str) -> String {
        format!(
            r#"{{"index_columns": ["{field}"], "columns": [{{"name": "a", "field_name": "a"}}, {{"name": {name}, "field_name": "{field}"}}]}}"#
        )
    }

    /// A column `a` and an unnamed index of type `t`.
    fn unnamed_index(t: DataType) -> Schema {
        schema(
            &[("a", DataType::Int64), ("__index_level_0__", t)],
            &column_index("__index_level_0__", "null"),
        )
    }

    fn ints_of(o: &RObject) -> Vec<i32> {
        match o {
            RObject::Vector(v) => match &v.data {
                VectorData::Integer(x) => x.to_vec(),
                d => panic!("not integers: {d:?}"),
            },
            _ => panic!("not a vector"),
        }
    }

    fn strings_of(o: &RObject) -> Vec<String> {
        let s = o.as_strings().expect("strings");
        (0..s.len())
            .map(|i| String::from_utf8_lossy(s.get(i).unwrap()).into_owned())
            .collect()
    }

    #[test]
    fn a_range_from_zero_is_automatic_and_any_other_gives_integer_row_names() {
        let s = schema(&[("a", DataType::Int64)], &range(0, 3, "null"));
        let l = FrameLayout::of(&s);
        assert_eq!(l.order, vec![0]);
        assert!(l.attributes(3, &[]).unwrap().is_empty());
        let s = schema(&[("a", DataType::Int64)], &range(7, 10, "\"id\""));
        let attrs = FrameLayout::of(&s).attributes(3, &[]).unwrap();
        assert_eq!(attrs[0].0, "row.names");
        assert_eq!(ints_of(&attrs[0].1), vec![7, 8, 9]);
        assert_eq!(attrs[1].0, INDEX_NAME_ATTRIBUTE);
        assert_eq!(strings_of(&attrs[1].1), vec!["id"]);
        // a table sliced after pyarrow made it: the range says other rows
        assert!(FrameLayout::of(&s).attributes(2, &[]).unwrap().len() == 1);
    }

    #[test]
    fn an_index_column_becomes_row_names_and_leaves_the_columns() {
        let s = unnamed_index(DataType::Utf8);
        let l = FrameLayout::of(&s);
        assert_eq!(
            (l.order.clone(), l.names.clone()),
            (vec![0], vec!["a".to_string()])
        );
        assert_eq!(l.label_column(), Some(1));
        let labels: ArrayRef = Arc::new(StringArray::from(vec!["x", "y"]));
        let attrs = l.attributes(2, &[labels]).unwrap();
        assert_eq!(strings_of(&attrs[0].1), vec!["x", "y"]);
        assert_eq!(attrs.len(), 1);
        // integers beyond R's: their text
        let s = schema(
            &[("a", DataType::Int64), ("id", DataType::Int64)],
            &column_index("id", "\"id\""),
        );
        let big: ArrayRef = Arc::new(Int64Array::from(vec![5, 1 << 40]));
        let attrs = FrameLayout::of(&s).attributes(2, &[big]).unwrap();
        assert_eq!(strings_of(&attrs[0].1), vec!["5", "1099511627776"]);
        // 0..n-1 labels are automatic
        let zero: ArrayRef = Arc::new(Int64Array::from(vec![0, 1]));
        let attrs = FrameLayout::of(&s).attributes(2, &[zero]).unwrap();
        assert_eq!(
            attrs.iter().map(|a| a.0).collect::<Vec<_>>(),
            vec![INDEX_NAME_ATTRIBUTE]
        );
    }

    #[test]
    fn repeated_or_missing_labels_are_errors() {
        let s = unnamed_index(DataType::Int64);
        let l = FrameLayout::of(&s);
        let twice: ArrayRef = Arc::new(Int64Array::from(vec![3, 4, 3]));
        let e = l.attributes(3, &[twice]).unwrap_err();
        assert!(
            e.message.contains("the label 3 twice (rows 1 and 3)"),
            "{}",
            e.message
        );
        // an empty index of objects (pyarrow's null type): automatic; with
        // rows, every label missing
        let of_nulls = FrameLayout::of(&unnamed_index(DataType::Null));
        let empty: ArrayRef = Arc::new(arrow_array::NullArray::new(0));
        assert!(of_nulls.attributes(0, &[empty]).unwrap().is_empty());
        let nulls: ArrayRef = Arc::new(arrow_array::NullArray::new(2));
        let e = of_nulls.attributes(2, &[nulls]).unwrap_err();
        assert!(e.message.contains("missing label at row 1"), "{}", e.message);
        let missing: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None]));
        let e = l.attributes(2, &[missing]).unwrap_err();
        assert!(
            e.message.contains("missing label at row 2"),
            "{}",
            e.message
        );
    }

    #[test]
    fn other_labels_and_a_multi_index_are_leading_columns() {
        let s = unnamed_index(DataType::Float64);
        let l = FrameLayout::of(&s);
        assert_eq!(
            (l.order.clone(), l.names.clone()),
            (vec![1, 0], vec!["index".to_string(), "a".to_string()])
        );
        assert_eq!(l.label_column(), None);
        let md = r#"{"index_columns": ["k", "__index_level_1__"], "columns": [{"name": "k", "field_name": "k"}, {"name": null, "field_name": "__index_level_1__"}]}"#;
        let s = schema(
            &[
                ("a", DataType::Int64),
                ("k", DataType::Utf8),
                ("__index_level_1__", DataType::Int64),
            ],
            md,
        );
        let l = FrameLayout::of(&s);
        assert_eq!(l.order, vec![1, 2, 0]);
        assert_eq!(l.names, vec!["k", "level_1", "a"]);
        assert!(l.attributes(0, &[]).unwrap().is_empty());
    }
}
