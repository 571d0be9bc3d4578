//! Lists of equal-shape R arrays as Arrow's canonical extension type
//! `arrow.fixed_shape_tensor`: a fixed-size list column whose every row is
//! one tensor of one shape (a stack of matrices, images, embeddings).
//!
//! R to Arrow ([`TensorShape::of_list`]): a list (or a data frame's list
//! column) whose elements are all integer or all double arrays of one
//! `dim`, with no attribute but `dim` (and `dimnames` after it, whose names
//! agree), becomes `fixed_size_list<T>[prod(dim)]`, each row the element's
//! values as R holds them (column-major). The field says so in the
//! extension's metadata ([`TensorShape::field_metadata`]): the physical
//! (row-major) shape is R's `dim` reversed, and `permutation` `[n-1, ...,
//! 0]` says that R's dimension `i` is the physical dimension `n-1-i`, so
//! the values are never transposed; `dim_names` are `names(dimnames)`,
//! reversed as the physical layout is. What else R had (the elements'
//! `dimnames`, the list's names or class) travels in the `"r"` metadata,
//! as for other columns. Readers that do not know the extension see the
//! fixed-size list underneath (Polars' Array, DuckDB's ARRAY, Spark's
//! array).
//!
//! Arrow to R ([`crate::from_arrow::tensor_columns::FieldTensor::of_field`]): such a column, whatever its
//! permutation (pyarrow's row-major tensors have none), becomes a list of
//! R arrays of the logical shape, each element's values put in R's
//! column-major order.

use rdarrow_format::tree::*;
use crate::mapping::types::RKind;
use arrow_schema::Field;
use std::collections::HashMap;

/// The extension's name.
pub const EXTENSION_NAME: &str = "arrow.fixed_shape_tensor";

/// The field metadata keys of an extension type.
pub const NAME_KEY: &str = "ARROW:extension:name";

pub const METADATA_KEY: &str = "ARROW:extension:metadata";

/// The shape every element of an R list has: R's `dim`, and the
/// dimensions' names (`names(dimnames)`) when they have them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorShape {
    pub dims: Vec<usize>,
    pub dim_names: Option<Vec<String>>,
}

/// An element's values type and shape, when it can be a row of a tensor
/// column: an integer or double vector whose attributes are `dim`, then
/// optionally `dimnames`.
pub(crate) fn element_shape(obj: &RObject, refs: &RefTable) -> Option<(u8, TensorShape)> {
    let RObject::Vector(v) = obj else { return None };
    let t = v.data.sxptype();
    if !matches!(t, sxp::INT | sxp::REAL) || v.flags.object {
        return None;
    }
    let entries = pairlist_entries(v.attributes.as_ref()?, refs);
    let dimnames = match entries.as_slice() {
        [(Some(b"dim"), _)] => None,
        [(Some(b"dim"), _), (Some(b"dimnames"), n)] => Some(*n),
        _ => return None,
    };
    // the format crate's checked `dim`: counts whose product is the length
    let dims = rdarrow_format::checks::consistency::dims(obj, refs, v.data.len()).ok()??;
    let dim_names = dimnames
        .and_then(|n| n.attribute(refs, "names"))
        .and_then(|n| n.as_strings())
        .map(|s| {
            (0..s.len())
                .map(|i| s.get(i).map(|b| String::from_utf8_lossy(b).into_owned()))
                .collect::<Option<Vec<String>>>()
        });
    let dim_names = match dim_names {
        // an NA name has no tensor equivalent
        Some(None) => return None,
        Some(Some(n)) => Some(n),
        None => None,
    };
    Some((t, TensorShape { dims, dim_names }))
}

impl TensorShape {
    /// The shape of a list whose every element is an array of it (of one
    /// type, integer or double), or `None`: a list of another kind, an
    /// empty one, one with a `NULL` or any element of another shape or
    /// type keeps the list type.
    pub fn of_list(obj: &RObject, refs: &RefTable) -> Option<TensorShape> {
        let RObject::Vector(v) = obj else { return None };
        let VectorData::List(items) = &v.data else {
            return None;
        };
        if items.is_empty()
            || RKind::of(&obj.class_attr(refs), sxp::VEC) != Some(RKind::List)
            || i32::try_from(items.len()).is_err()
        {
            return None;
        }
        let (t, shape) = element_shape(&items[0], refs)?;
        let size = shape.size();
        if shape.dims.is_empty() || i32::try_from(size).is_err() {
            return None;
        }
        items[1..]
            .iter()
            .all(|it| element_shape(it, refs).is_some_and(|(u, s)| u == t && s == shape))
            .then_some(shape)
    }

    /// Values per element.
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }

    /// The extension's field metadata for this shape in R's column-major
    /// order: physical shape `dim` reversed, `permutation` `[n-1, ..., 0]`,
    /// `dim_names` reversed.
    pub fn field_metadata(&self) -> HashMap<String, String> {
        // the keys in Arrow C++'s order and form, so that readers that
        // compare the text (Polars) see the type pyarrow writes
        // (serde_json's text of a value: compact, strings escaped)
        let json = |v: serde_json::Value| v.to_string();
        let n = self.dims.len();
        let shape: Vec<usize> = self.dims.iter().rev().copied().collect();
        let mut text = format!("{{\"shape\":{}", json(shape.into()));
        if n > 1 {
            let perm: Vec<usize> = (0..n).rev().collect();
            text.push_str(&format!(",\"permutation\":{}", json(perm.into())));
        }
        if let Some(names) = &self.dim_names {
            let names: Vec<String> = names.iter().rev().cloned().collect();
            text.push_str(&format!(",\"dim_names\":{}", json(names.into())));
        }
        text.push('}');
        HashMap::from([
            (NAME_KEY.to_string(), EXTENSION_NAME.to_string()),
            (METADATA_KEY.to_string(), text),
        ])
    }
}

/// `schema` with its tensor columns as the fixed-size lists underneath
/// (their extension metadata left out), for consumers that convert
/// Arrow to R but not this extension: arrow R 25 cannot make R values of
/// a canonical extension type it did not define, and makes the same
/// arrays of the storage type, with the `"r"` metadata, the R list they
/// were.
pub fn storage_schema(schema: &arrow_schema::SchemaRef) -> arrow_schema::SchemaRef {
    let is_tensor =
        |f: &Field| f.metadata().get(NAME_KEY).map(String::as_str) == Some(EXTENSION_NAME);
    if !schema.fields().iter().any(|f| is_tensor(f)) {
        return schema.clone();
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let mut f = f.as_ref().clone();
            if is_tensor(&f) {
                let mut md = f.metadata().clone();
                md.remove(NAME_KEY);
                md.remove(METADATA_KEY);
                f.set_metadata(md);
            }
            f
        })
        .collect();
    std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    ))
}

/// Copy the elements of a tensor (`width` bytes each, `shape`, byte
/// `strides`, values from `src`) into `dest` in R's column-major order.
pub(crate) fn gather(
    src: &[u8],
    width: usize,
    shape: &[usize],
    strides: &[usize],
    dest: &mut [u8],
) {
    let n: usize = shape.iter().product();
    if n == 0 {
        return;
    }
    if shape.is_empty() {
        dest[..width].copy_from_slice(&src[..width]);
        return;
    }
    let (d0, s0) = (shape[0], strides[0]);
    let mut index = vec![0usize; shape.len()];
    let mut out = 0usize;
    loop {
        let base: usize = index[1..]
            .iter()
            .zip(&strides[1..])
            .map(|(i, s)| i * s)
            .sum();
        let run = &mut dest[out..out + d0 * width];
        if s0 == width {
            run.copy_from_slice(&src[base..base + d0 * width]);
        } else {
            for (k, slot) in run.chunks_exact_mut(width).enumerate() {
                let at = base + k * s0;
                slot.copy_from_slice(&src[at..at + width]);
            }
        }
        out += d0 * width;
        // the next column: the odometer over dimensions 2..
        let mut k = 1;
        loop {
            if k == shape.len() {
                return;
            }
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
            k += 1;
        }
    }
}
