//! A dataset's hive partitions: the rows of each partition, in order of
//! first appearance, and the directory names of their values, rendered
//! and percent-encoded as arrow renders and decodes them.

use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::DataType;
use std::collections::HashMap;
use std::path::PathBuf;

/// The directory name arrow gives to a missing (`NA`) partition value.
pub const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// Percent-encode a partition value (or key) as arrow's `"uri"` segment
/// encoding does: everything but `A-Z a-z 0-9 - _ . ~`, byte by byte.
pub fn hive_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The rows of each partition, in order of first appearance, with the
/// partition's directory (`a=x/b=y`).
pub(super) fn partition_rows(keys: &RecordBatch, partitioning: &[String]) -> Result<Vec<(PathBuf, Vec<u32>)>> {
    let n = keys.num_rows();
    let mut group: Vec<u32> = vec![0; n];
    // the segment ids of each group, one per partition column
    let mut group_segments: Vec<Vec<u32>> = vec![Vec::new()];
    let mut segments: Vec<Vec<String>> = Vec::with_capacity(partitioning.len());
    for (c, name) in partitioning.iter().enumerate() {
        let (ids, segs) = segment_ids(keys.column(c), name)?;
        let key = hive_escape(name);
        segments.push(segs.into_iter().map(|s| format!("{key}={s}")).collect());
        // refine the groups by this column
        let mut refined: HashMap<(u32, u32), u32> = HashMap::new();
        let mut next_segments: Vec<Vec<u32>> = Vec::new();
        for row in 0..n {
            let k = (group[row], ids[row]);
            let g = *refined.entry(k).or_insert_with(|| {
                let mut s = group_segments[k.0 as usize].clone();
                s.push(k.1);
                next_segments.push(s);
                (next_segments.len() - 1) as u32
            });
            group[row] = g;
        }
        group_segments = next_segments;
    }
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); group_segments.len()];
    for (row, &g) in group.iter().enumerate() {
        rows[g as usize].push(row as u32);
    }
    Ok(group_segments
        .into_iter()
        .zip(rows)
        .map(|(segs, r)| {
            let dir: PathBuf = segs
                .iter()
                .enumerate()
                .map(|(c, &s)| segments[c][s as usize].as_str())
                .collect();
            (dir, r)
        })
        .collect())
}

/// For each row, the id of its escaped partition value, and the values.
pub(super) fn segment_ids(col: &ArrayRef, name: &str) -> Result<(Vec<u32>, Vec<String>)> {
    let n = col.len();
    let mut segs: Vec<String> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut id_of = |s: &str, segs: &mut Vec<String>| -> u32 {
        if let Some(&i) = index.get(s) {
            return i;
        }
        segs.push(s.to_string());
        let i = (segs.len() - 1) as u32;
        index.insert(s.to_string(), i);
        i
    };
    if let DataType::Dictionary(_, _) = col.data_type() {
        let d = col.as_any_dictionary();
        let keys = arrow_cast::cast(d.keys(), &DataType::Int32)
            .map_err(|e| Error::corrupt(format!("dictionary keys: {e}")))?;
        let keys = keys.as_primitive::<Int32Type>();
        let values = value_strings(d.values(), name)?;
        let level_ids: Vec<u32> = (0..values.len())
            .map(|i| {
                let s = if values.is_null(i) {
                    HIVE_NULL.to_string()
                } else {
                    hive_escape(values.value(i))
                };
                id_of(&s, &mut segs)
            })
            .collect();
        let mut null_id = None;
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            if col.is_null(i)
                || keys.is_null(i)
                || keys.value(i) < 0
                || keys.value(i) as usize >= level_ids.len()
            {
                let id = *null_id.get_or_insert_with(|| id_of(HIVE_NULL, &mut segs));
                ids.push(id);
            } else {
                ids.push(level_ids[keys.value(i) as usize]);
            }
        }
        return Ok((ids, segs));
    }
    let strings = value_strings(col, name)?;
    let mut raw: HashMap<Option<&str>, u32> = HashMap::new();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let v = (!strings.is_null(i)).then(|| strings.value(i));
        let id = match raw.get(&v) {
            Some(&id) => id,
            None => {
                let id = match v {
                    None => id_of(HIVE_NULL, &mut segs),
                    Some(s) => id_of(&hive_escape(s), &mut segs),
                };
                raw.insert(v, id);
                id
            }
        };
        ids.push(id);
    }
    Ok((ids, segs))
}

/// A column's values as strings, as arrow renders partition values.
fn value_strings(col: &ArrayRef, name: &str) -> Result<StringArray> {
    let dt = col.data_type();
    let cannot = |why: String| {
        Error::unsupported(format!(
            "cannot partition by column '{name}' of type {dt}: {why}"
        ))
    };
    match dt {
        DataType::Utf8 => Ok(col.as_string::<i32>().clone()),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            let f = arrow_cast::cast(col, &DataType::Float64).map_err(|e| cannot(e.to_string()))?;
            let f = f.as_primitive::<arrow_array::types::Float64Type>();
            Ok((0..f.len())
                .map(|i| (!f.is_null(i)).then(|| format_float(f.value(i))))
                .collect())
        }
        DataType::Dictionary(_, _) => {
            let plain =
                arrow_cast::cast(col, &DataType::Utf8).map_err(|e| cannot(e.to_string()))?;
            Ok(plain.as_string::<i32>().clone())
        }
        dt if dt.is_nested()
            || matches!(
                dt,
                DataType::Binary
                    | DataType::LargeBinary
                    | DataType::BinaryView
                    | DataType::FixedSizeBinary(_)
            ) =>
        {
            Err(cannot(
                "partition values must be strings, factors, numbers, logicals, dates or times"
                    .to_string(),
            ))
        }
        _ => {
            let s = arrow_cast::cast(col, &DataType::Utf8).map_err(|e| cannot(e.to_string()))?;
            Ok(s.as_string::<i32>().clone())
        }
    }
}

/// A double as arrow prints it: integral values without a fraction.
fn format_float(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    #[test]
    fn escapes_like_arrow() {
        assert_eq!(hive_escape("a"), "a");
        assert_eq!(hive_escape("-_.~A9z"), "-_.~A9z");
        assert_eq!(hive_escape("b c/d"), "b%20c%2Fd");
        assert_eq!(hive_escape("x=y%"), "x%3Dy%25");
        assert_eq!(hive_escape("é"), "%C3%A9");
        assert_eq!(hive_escape("+:@!"), "%2B%3A%40%21");
    }

    #[test]
    fn floats_print_like_arrow() {
        assert_eq!(format_float(2.0), "2");
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(-3.0), "-3");
    }

    #[test]
    fn partitions_group_rows_in_order() {
        let g: ArrayRef = Arc::new(StringArray::from(vec![
            Some("a"),
            Some("b"),
            None,
            Some("a"),
            Some("x y"),
        ]));
        let h: ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![
            Some(1),
            Some(1),
            Some(2),
            Some(2),
            None,
        ]));
        let schema = Arc::new(Schema::new(vec![
            Field::new("g", DataType::Utf8, true),
            Field::new("h", DataType::Int32, true),
        ]));
        let b = RecordBatch::try_new(schema, vec![g, h]).unwrap();
        let parts = partition_rows(&b, &["g".into(), "h".into()]).unwrap();
        let got: Vec<(String, Vec<u32>)> = parts
            .into_iter()
            .map(|(p, r)| (p.to_string_lossy().into_owned(), r))
            .collect();
        assert_eq!(
            got,
            vec![
                ("g=a/h=1".to_string(), vec![0]),
                ("g=b/h=1".to_string(), vec![1]),
                (format!("g={HIVE_NULL}/h=2"), vec![2]),
                ("g=a/h=2".to_string(), vec![3]),
                (format!("g=x%20y/h={HIVE_NULL}"), vec![4]),
            ]
        );
    }
}
