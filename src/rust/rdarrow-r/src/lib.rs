//! R bindings for the rdarrow engine: argument conversion, results and
//! errors only. Each function returns either its result or an
//! `rdarrow_error_value` list that the R wrapper raises as a condition.

use extendr_api::prelude::*;

// The verbs, by job: each module's extendr functions are listed below.
mod arrow;
mod dataset;
mod engine;
mod list;
mod read;
mod tensor;
mod write;

// What the verbs share: settings, errors, where work runs, R values.
mod errors;
mod from_arrow;
mod given;
mod job;
mod lazy_strings;
mod r_memory;
mod save_native;
mod save_r;
mod settings;
mod to_r;

extendr_module! {
    mod rdarrow;
    use engine;
    use list;
    use read;
    use write;
    use arrow;
    use tensor;
    use dataset;
}
