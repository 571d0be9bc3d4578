//! Lists of equal-shape R arrays as Arrow's canonical extension type
//! `arrow.fixed_shape_tensor`: a fixed-size list column whose every row is
//! one tensor of one shape (a stack of matrices, images, embeddings).
//!
//! R to Arrow ([`crate::mapping::shape::TensorShape::of_list`]): a list (or a data frame's list
//! column) whose elements are all integer or all double arrays of one
//! `dim`, with no attribute but `dim` (and `dimnames` after it, whose names
//! agree), becomes `fixed_size_list<T>[prod(dim)]`, each row the element's
//! values as R holds them (column-major). The field says so in the
//! extension's metadata ([`crate::mapping::shape::TensorShape::field_metadata`]): the physical
//! (row-major) shape is R's `dim` reversed, and `permutation` `[n-1, ...,
//! 0]` says that R's dimension `i` is the physical dimension `n-1-i`, so
//! the values are never transposed; `dim_names` are `names(dimnames)`,
//! reversed as the physical layout is. What else R had (the elements'
//! `dimnames`, the list's names or class) travels in the `"r"` metadata,
//! as for other columns. Readers that do not know the extension see the
//! fixed-size list underneath (Polars' Array, DuckDB's ARRAY, Spark's
//! array).
//!
//! Arrow to R ([`FieldTensor::of_field`]): such a column, whatever its
//! permutation (pyarrow's row-major tensors have none), becomes a list of
//! R arrays of the logical shape, each element's values put in R's
//! column-major order.

use crate::mapping::shape::EXTENSION_NAME;
use crate::mapping::shape::METADATA_KEY;
use crate::mapping::shape::NAME_KEY;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;
use arrow_schema::Field;

/// A column's `arrow.fixed_shape_tensor` type, as R takes it: the logical
/// shape (R's `dim`), the dimensions' names, and where each logical
/// dimension's consecutive elements lie in a row's values (row-major
/// physical order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTensor {
    pub dims: Vec<usize>,
    pub dim_names: Option<Vec<String>>,
    /// Elements between consecutive values of each logical dimension.
    strides: Vec<usize>,
}

impl FieldTensor {
    /// The field's tensor type, if it is one; an error for metadata that
    /// does not describe one, or that disagrees with the field's type.
    pub fn of_field(field: &Field) -> Option<Result<FieldTensor>> {
        let md = field.metadata();
        if md.get(NAME_KEY).map(String::as_str) != Some(EXTENSION_NAME) {
            return None;
        }
        Some(FieldTensor::parse(
            field,
            md.get(METADATA_KEY).map(String::as_str),
        ))
    }

    fn parse(field: &Field, text: Option<&str>) -> Result<FieldTensor> {
        let bad = |why: &str| {
            Error::corrupt(format!(
                "column '{}': its {EXTENSION_NAME} metadata {why}",
                field.name()
            ))
        };
        let text = text.ok_or_else(|| bad("is missing"))?;
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(&format!("is not JSON ({e})")))?;
        let counts = |key: &str| -> Result<Option<Vec<usize>>> {
            match v.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .map(|x| x.as_u64().and_then(|u| usize::try_from(u).ok()))
                    .collect::<Option<Vec<usize>>>()
                    .map(Some)
                    .ok_or_else(|| bad(&format!("has a '{key}' that is not a list of counts"))),
                Some(_) => Err(bad(&format!("has a '{key}' that is not a list"))),
            }
        };
        let shape = counts("shape")?.ok_or_else(|| bad("has no 'shape'"))?;
        let n = shape.len();
        let perm = counts("permutation")?.unwrap_or_else(|| (0..n).collect());
        let mut seen = vec![false; n];
        if perm.len() != n
            || !perm
                .iter()
                .all(|&p| p < n && !std::mem::replace(&mut seen[p], true))
        {
            return Err(bad(&format!(
                "has a 'permutation' {perm:?} that is not one of its {n} dimensions"
            )));
        }
        let names = match v.get("dim_names") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Array(a)) if a.len() == n => Some(
                a.iter()
                    .map(|x| x.as_str().map(str::to_string))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| bad("has 'dim_names' that are not strings"))?,
            ),
            Some(_) => return Err(bad(&format!("has 'dim_names' that are not {n} strings"))),
        };
        let size = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| bad("has a shape too large"))?;
        match field.data_type() {
            arrow_schema::DataType::FixedSizeList(_, k) if *k as usize == size && *k >= 0 => {}
            dt => {
                return Err(bad(&format!(
                    "has shape {shape:?} ({size} values), but the column is {dt}"
                )))
            }
        }
        // row-major strides of the physical shape, then each logical
        // dimension's
        let mut physical = vec![1usize; n];
        for j in (0..n.saturating_sub(1)).rev() {
            physical[j] = physical[j + 1] * shape[j + 1];
        }
        Ok(FieldTensor {
            dims: perm.iter().map(|&p| shape[p]).collect(),
            dim_names: names.map(|nm| perm.iter().map(|&p| nm[p].clone()).collect()),
            strides: perm.iter().map(|&p| physical[p]).collect(),
        })
    }

    /// Whether a row's values are already in R's column-major order.
    fn column_major(&self) -> bool {
        let mut step = 1;
        self.dims.iter().zip(&self.strides).all(|(&d, &s)| {
            let ok = d <= 1 || s == step;
            step *= d;
            ok
        })
    }

    /// Make each element of `items` (one row's values each, `NULL` for a
    /// null row) the R array it holds: its values in R's order, its `dim`,
    /// and `dimnames` naming the dimensions when they have names.
    pub fn shape_items(&self, m: &mut ObjectMaker, items: &mut [RObject]) -> Result<()> {
        let dim: Vec<i32> = self
            .dims
            .iter()
            .map(|&d| i32::try_from(d))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::unsupported("a tensor dimension is longer than R's (2^31 - 1)"))?;
        let reorder = !self.column_major();
        for it in items.iter_mut() {
            let RObject::Vector(v) = it else { continue };
            if reorder {
                v.data = self.in_r_order(&v.data)?;
            }
            let dims = rdarrow_format::tree::make::ints(dim.clone());
            crate::metadata::attributes::set_vector_attribute(m, it, "dim", dims);
            if let Some(names) = &self.dim_names {
                let nm: Vec<&str> = names.iter().map(String::as_str).collect();
                let list = m.named_list(&nm, vec![RObject::Null; nm.len()]);
                crate::metadata::attributes::set_vector_attribute(m, it, "dimnames", list);
            }
        }
        Ok(())
    }

    /// One row's values (in physical order) in R's column-major order.
    fn in_r_order(&self, data: &VectorData) -> Result<VectorData> {
        let n: usize = self.dims.iter().product();
        if data.len() as usize != n {
            return Err(Error::corrupt(format!(
                "a tensor row holds {} values, not {n}",
                data.len()
            )));
        }
        let (bytes, width) = match data {
            VectorData::Integer(x) | VectorData::Logical(x) => (x.inner(), 4),
            VectorData::Real(x) => (x.inner(), 8),
            VectorData::Raw(b) => (b, 1),
            other => {
                return Err(Error::unsupported(format!(
                    "a tensor of {} values: R arrays of numbers are made",
                    sxp::type_name(other.sxptype())
                )))
            }
        };
        // the tensor module's gather, over the row's bytes
        let strides: Vec<usize> = self.strides.iter().map(|s| s * width).collect();
        let mut out = arrow_buffer::MutableBuffer::from_len_zeroed(n * width);
        crate::mapping::shape::gather(
            bytes.as_slice(),
            width,
            &self.dims,
            &strides,
            out.as_slice_mut(),
        );
        let out: arrow_buffer::Buffer = out.into();
        Ok(match data {
            VectorData::Integer(_) => {
                VectorData::Integer(arrow_buffer::ScalarBuffer::new(out, 0, n))
            }
            VectorData::Logical(_) => {
                VectorData::Logical(arrow_buffer::ScalarBuffer::new(out, 0, n))
            }
            VectorData::Real(_) => VectorData::Real(arrow_buffer::ScalarBuffer::new(out, 0, n)),
            _ => VectorData::Raw(out),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::mapping::shape::*;
    use std::collections::HashMap;
    use super::*;
    use arrow_schema::DataType;
    use std::sync::Arc;

    fn field(md: &str, size: i32) -> Field {
        Field::new(
            "x",
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Int32, true)), size),
            true,
        )
        .with_metadata(HashMap::from([
            (NAME_KEY.to_string(), EXTENSION_NAME.to_string()),
            (METADATA_KEY.to_string(), md.to_string()),
        ]))
    }

    #[test]
    fn r_s_order_is_the_reversed_shape_and_permutation() {
        let s = TensorShape {
            dims: vec![2, 3, 4],
            dim_names: Some(vec!["a".into(), "b".into(), "c".into()]),
        };
        let md = s.field_metadata();
        let f = field(&md[METADATA_KEY], 24);
        let t = FieldTensor::of_field(&f).unwrap().unwrap();
        assert_eq!(t.dims, vec![2, 3, 4]);
        assert_eq!(t.dim_names, s.dim_names);
        assert!(t.column_major());
    }

    #[test]
    fn row_major_rows_are_put_in_r_s_order() {
        let t = FieldTensor::of_field(&field(r#"{"shape": [2, 3]}"#, 6))
            .unwrap()
            .unwrap();
        assert_eq!(t.dims, vec![2, 3]);
        assert!(!t.column_major());
        let back = t
            .in_r_order(&VectorData::Integer(vec![0, 1, 2, 3, 4, 5].into()))
            .unwrap();
        // row-major [[0, 1, 2], [3, 4, 5]] is R's c(0, 3, 1, 4, 2, 5)
        assert!(matches!(back, VectorData::Integer(x) if x.to_vec() == vec![0, 3, 1, 4, 2, 5]));
    }

    /// A list of 2 x 3 integer arrays through arrow-rs's IPC writer and
    /// reader: the field keeps the extension, the rows R's values, and the
    /// way back the list.
    #[test]
    fn arrow_rs_carries_the_extension_and_the_way_back_is_the_list() {
        use rdarrow_format::tree::make::ints;
        use rdarrow_format::tree::make::ObjectMaker;
        let mut m = ObjectMaker::with_refs(RefTable::default());
        let mut items = Vec::new();
        for k in 0..3 {
            let names = m.named_list(&["r", "c"], vec![RObject::Null, RObject::Null]);
            let values: Vec<i32> = (0..6).map(|i| 10 * k + i).collect();
            items.push(m.vector(
                VectorData::Integer(values.into()),
                vec![("dim", ints(vec![2, 3])), ("dimnames", names)],
            ));
        }
        let list = m.vector(VectorData::List(items), vec![]);
        let doc = crate::to_arrow::table::tests::doc_of(m, list);
        let table = crate::table_from_object(&doc, &doc.root, &Default::default()).unwrap();
        let bytes = crate::files::ipc::write_ipc(
            &table,
            Vec::new(),
            crate::files::ipc::IpcFormat::Stream,
            crate::files::ipc::IpcCompression::Uncompressed,
        )
        .unwrap();
        let reader =
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        let schema = reader.schema();
        let f = schema.field(0);
        assert_eq!(f.metadata()[NAME_KEY], EXTENSION_NAME);
        assert_eq!(
            f.metadata()[METADATA_KEY],
            r#"{"shape":[3,2],"permutation":[1,0],"dim_names":["c","r"]}"#
        );
        let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
        let col = batches[0].column(0);
        use arrow_array::Array;
        let fsl = col
            .as_any()
            .downcast_ref::<arrow_array::FixedSizeListArray>()
            .unwrap();
        assert_eq!(fsl.len(), 3);
        let row = fsl.value(2);
        let row = row
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .unwrap();
        assert_eq!(row.values().to_vec(), vec![20, 21, 22, 23, 24, 25]);
        let t = FieldTensor::of_field(f).unwrap().unwrap();
        assert_eq!(
            (t.dims.clone(), t.dim_names.clone()),
            (vec![2, 3], Some(vec!["r".into(), "c".into()]))
        );
        let back = crate::from_arrow::frame::object_from_batches(&schema, &batches).unwrap();
        let RObject::Vector(v) = &back.object else {
            panic!("not a list")
        };
        let VectorData::List(items) = &v.data else {
            panic!("not a list")
        };
        assert_eq!(items.len(), 3);
        assert_eq!(
            rdarrow_format::checks::consistency::dims(&items[1], &back.refs, 6).unwrap(),
            Some(vec![2, 3])
        );
    }

    #[test]
    fn bad_metadata_is_an_error_naming_the_column() {
        for (md, why) in [
            ("nope", "is not JSON"),
            (r#"{"shape": [2, "x"]}"#, "not a list of counts"),
            (r#"{"shape": [2, 3], "permutation": [0, 0]}"#, "permutation"),
            (r#"{"shape": [2, 3], "dim_names": ["a"]}"#, "dim_names"),
            (r#"{"shape": [2, 4]}"#, "has shape [2, 4] (8 values)"),
            (r#"{}"#, "has no 'shape'"),
        ] {
            let e = FieldTensor::of_field(&field(md, 6)).unwrap().unwrap_err();
            assert!(
                e.message.contains("column 'x'") && e.message.contains(why),
                "{md}: {}",
                e.message
            );
        }
    }
}
