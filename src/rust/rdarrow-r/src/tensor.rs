//! Tensors: an R array as an Arrow Tensor message.

use extendr_api::prelude::*;
use crate::errors::error_value;
use crate::settings::*;

/// Write one array of a file as an Arrow Tensor message; returns
/// list(shape, damage) (`damage`: what a salvaging read of a damaged file
/// lost, for R's warning; `NULL` for an intact file), or an error value.
/// @noRd
#[extendr]
fn rdata_to_tensor_impl(path: Robj, sink: &str, object: Nullable<String>, stream_name: &str, settings: Robj) -> Robj {
    let path = match crate::given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    let read = options(&settings);
    let object = match object {
        Nullable::NotNull(o) => Some(o),
        Nullable::Null => None,
    };
    let res = crate::job::run("Writing the tensor", || {
        rdarrow_arrow::files::tensor::rdata_to_tensor(
            &path,
            object.as_deref(),
            stream_name,
            read,
            std::path::Path::new(sink),
        )
    });
    match res {
        Ok(t) => list!(
            shape = t.shape.iter().map(|&d| d as f64).collect::<Vec<f64>>(),
            damage = t.damage.map_or_else(|| Robj::from(()), Robj::from)
        )
        .into(),
        Err(e) => error_value(&e),
    }
}

extendr_module! {
    mod tensor;
    fn rdata_to_tensor_impl;
}
