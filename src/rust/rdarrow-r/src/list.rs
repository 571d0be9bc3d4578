//! Listing: the objects of files, directories and stores; object paths;
//! where a source is and what its object is called.

use crate::errors::in_file;
use extendr_api::prelude::*;
use crate::errors::error_value;
use crate::settings::*;

/// List the objects in a file (payloads skipped): the listing data frame.
/// @noRd
#[extendr]
fn rdata_list_impl(path: Robj, stream_name: &str, settings: Robj, recursive: bool) -> Robj {
    let path = match crate::given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    let opts = options(&settings);
    match crate::job::read("Listing", &path, &opts, &mut || {}, |opts| {
        rdarrow_arrow::list_file(&path, opts, stream_name, recursive)
    }) {
        Err(e) => error_value(&e),
        Ok((doc, infos)) => with_damage(listing_value(&infos, None), doc.damage.into_iter().collect()),
    }
}

/// A listing with what salvaging reads lost (attribute `rdarrow_damage`,
/// which R turns into warnings), when they lost anything.
fn with_damage(mut listing: Robj, damage: Vec<String>) -> Robj {
    if !damage.is_empty() && !listing.inherits("rdarrow_error_value") {
        let _ = listing.set_attrib("rdarrow_damage", damage);
    }
    listing
}

/// A listing as the data frame `rdata_objects()` returns, with (where
/// given) a first column `file`: the file each row comes from.
fn listing_value(
    infos: &[rdarrow_arrow::read::summary::ObjectInfo],
    file: Option<Vec<String>>,
) -> Robj {
    // counts as R's length() gives them: integers, doubles only where one
    // is beyond an integer's range; NA where a listing has no value
    let counts = |of: &dyn Fn(&rdarrow_arrow::read::summary::ObjectInfo) -> Option<f64>| -> Robj {
        let values: Vec<Option<f64>> = infos.iter().map(of).collect();
        if values.iter().flatten().all(|v| *v >= 0.0 && *v <= i32::MAX as f64) {
            values
                .iter()
                .map(|v| v.map_or(i32::MIN, |v| v as i32))
                .collect::<Vec<i32>>()
                .into()
        } else {
            values
                .iter()
                .map(|v| v.unwrap_or_else(rdarrow_arrow::tree::na::real))
                .collect::<Vec<f64>>()
                .into()
        }
    };
    let mut names: Vec<&str> = Vec::with_capacity(8);
    let mut columns: Vec<Robj> = Vec::with_capacity(8);
    if let Some(file) = file {
        names.push("file");
        columns.push(file.into());
    }
    names.extend(["name", "class", "type", "length", "nrow", "ncol", "bytes"]);
    columns.extend([
        infos
            .iter()
            .map(|i| i.name.clone())
            .collect::<Vec<_>>()
            .into(),
        infos
            .iter()
            .map(|i| i.class.clone())
            .collect::<Vec<_>>()
            .into(),
        infos
            .iter()
            .map(|i| i.type_name.clone())
            .collect::<Vec<_>>()
            .into(),
        counts(&|i| i.length),
        counts(&|i| i.nrow),
        counts(&|i| i.ncol),
        counts(&|i| i.bytes.map(|b| b as f64)),
    ]);
    let frame = List::from_names_and_values(names, columns).map(Robj::from);
    // a data frame's compact row names, as .set_row_names() makes them
    let n = infos.len() as i32;
    let row_names: Robj = if n == 0 {
        Vec::<i32>::new().into()
    } else {
        vec![i32::MIN, -n].into()
    };
    match frame.and_then(|mut f| {
        f.set_attrib(row_names_symbol(), row_names)?;
        f.set_class(["data.frame"])?;
        Ok(f)
    }) {
        Ok(f) => f,
        Err(e) => error_value(&rdarrow_arrow::Error::internal(format!(
            "cannot make the listing: {e}"
        ))),
    }
}

/// List the objects of several files (`labels`: the files as the user
/// named them, for errors), read on several threads at once: one listing
/// with a first column `file`, each row's file as the user named it.
/// @noRd
#[extendr]
fn rdata_list_files_impl(
    paths: Vec<String>,
    labels: Vec<String>,
    stream_names: Vec<String>,
    settings: Robj,
    recursive: bool,
) -> Robj {
    use rdarrow_arrow::sources::all_cores;
    let opts = all_cores::on_thread_with_stack(&options(&settings), all_cores::WORKER_STACK);
    crate::job::watch_interrupts();
    let mut infos = Vec::new();
    let mut file = Vec::new();
    let mut damage = Vec::new();
    let mut failed = None;
    all_cores::in_order(
        &paths,
        all_cores::threads_for(paths.len()),
        |path| all_cores::file_weight(path),
        // (the file's document freed by the worker that made it: freed on
        // this thread, its memory would wait on the worker's allocator)
        |i, path| {
            rdarrow_arrow::list_file(path, &opts, &stream_names[i], recursive)
                .map(|(doc, found)| (doc.damage.clone(), found))
        },
        &mut || {},
        &mut |i, listed: rdarrow_arrow::Result<(Option<String>, Vec<_>)>| match listed {
            Ok((lost, found)) => {
                if let Some(lost) = lost {
                    damage.push(format!("file '{}': {lost}", labels[i]));
                }
                file.extend(std::iter::repeat_n(labels[i].clone(), found.len()));
                infos.extend(found);
                std::ops::ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(in_file(&e, &labels[i]));
                std::ops::ControlFlow::Break(())
            }
        },
    );
    failed.unwrap_or_else(|| with_damage(listing_value(&infos, Some(file)), damage))
}

/// The object path (`lst$a[[2]]`) of `parts`, each a name or (where
/// `position`) a position from 1.
/// @noRd
#[extendr]
fn object_path_impl(parts: Vec<String>, position: Logicals) -> Robj {
    use rdarrow_arrow::tree::object_path::ObjectPath;
    use rdarrow_arrow::tree::object_path::Step;
    let position: Vec<bool> = position.iter().map(|b| b.is_true()).collect();
    let mut steps = Vec::new();
    for (p, &pos) in parts.iter().zip(&position).skip(1) {
        steps.push(if pos {
            match p.parse::<usize>() {
                Ok(n) if n >= 1 => Step::Position(n),
                _ => {
                    return error_value(&rdarrow_arrow::Error::usage(format!(
                        "'{p}' is not a position (from 1)"
                    )))
                }
            }
        } else {
            Step::Name(p.clone())
        });
    }
    let top = parts.first().cloned().unwrap_or_default();
    ObjectPath { top, steps }.display().into()
}

/// The sources an object store URL names (a glob's matches, a prefix's R
/// data files, listed from the store), or an error value.
/// @noRd
#[extendr]
fn expand_sources_impl(given: Vec<String>, full: Vec<String>, settings: Robj) -> Robj {
    // each of `full` (the paths of `given`, expanded by R: `~`) by the
    // engine's rule; one that names only itself keeps the user's words
    let read = options(&settings);
    let mut out: Vec<String> = Vec::with_capacity(given.len());
    for (g, f) in given.iter().zip(&full) {
        match rdarrow_arrow::expand_sources(f, &read) {
            Ok(found) if found.len() == 1 && found[0].as_os_str() == f.as_str() => {
                out.push(g.clone())
            }
            Ok(found) => out.extend(found.iter().map(|p| p.to_string_lossy().into_owned())),
            Err(e) => return error_value(&e),
        }
    }
    out.into()
}

/// The names objects of `sources` (paths or URLs) take: the engine's one
/// rule (object_name_of() of the format crate).
/// @noRd
#[extendr]
fn object_name_impl(sources: Vec<String>) -> Vec<String> {
    sources
        .iter()
        .map(|s| rdarrow_arrow::object_name_of(s))
        .collect()
}

/// Where each of `given` is: "http", "store" or "local" (the engine's
/// one rule, location_of() of the format crate).
/// @noRd
#[extendr]
fn location_impl(given: Vec<String>) -> Vec<String> {
    given
        .iter()
        .map(|g| rdarrow_arrow::location_of(g).name().to_string())
        .collect()
}

/// Whether a file written at `path` is an `.rds` (else an `.RData`): the
/// engine's one rule (path_is_rds() of the format crate).
/// @noRd
#[extendr]
fn path_is_rds_impl(path: &str) -> bool {
    rdarrow_arrow::path_is_rds(path)
}

/// A path that names an existing local file: list(path (in full), name
/// (of its object were it an `.rds` file)), else `NULL` (R's general path
/// then applies: URLs, lazy-load bases, directories, `~`, errors).
/// @noRd
#[extendr]
fn local_file_impl(file: &str) -> Robj {
    match rdarrow_arrow::Source::local_file(file) {
        Some((path, name)) => list!(path = path.to_string_lossy().into_owned(), name = name).into(),
        None => ().into(),
    }
}

extendr_module! {
    mod list;
    fn rdata_list_impl;
    fn rdata_list_files_impl;
    fn object_path_impl;
    fn expand_sources_impl;
    fn object_name_impl;
    fn location_impl;
    fn path_is_rds_impl;
    fn local_file_impl;
}
