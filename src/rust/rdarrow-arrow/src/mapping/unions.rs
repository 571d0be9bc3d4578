//! Dense unions for consumers that have none: each member as long as the
//! union.

/// Each child of a union as long as the union, valid in the slots that
/// are its (a sparse layout of a dense union): how consumers without
/// dense unions take one (Parquet's stored struct, DuckDB's UNION).
pub fn union_members(a: &arrow_array::UnionArray) -> rdarrow_format::Result<Vec<arrow_array::ArrayRef>> {
    use arrow_array::Array;
    let arrow_schema::DataType::Union(fields, _) = a.data_type() else {
        return Err(rdarrow_format::Error::internal("not a union"));
    };
    let n = a.len();
    fields
        .iter()
        .map(|(t, _)| {
            let at: arrow_array::UInt32Array = (0..n)
                .map(|i| (a.type_id(i) == t).then(|| a.value_offset(i) as u32))
                .collect();
            arrow_select::take::take(a.child(t).as_ref(), &at, None).map_err(|e| {
                rdarrow_format::Error::corrupt(format!("cannot lay out a union's members: {e}"))
            })
        })
        .collect()
}
