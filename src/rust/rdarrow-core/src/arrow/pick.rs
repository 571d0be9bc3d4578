//! Which object of a file converts: the one named, or else the file's only
//! data frame.

use crate::error::{Error, Result};
use crate::tree::RObject;
use crate::Document;

/// Choose the object to convert: the named one, or else the file's only
/// data frame (an RDS stream's one object).
pub fn pick_object<'d>(doc: &'d Document, object: Option<&str>) -> Result<(String, &'d RObject)> {
    pick_object_named(doc, object, "")
}

/// As [`pick_object`]; an RDS stream's one object is called `stream_name`
/// (R users name it after the file), and asking for another name is an error.
pub fn pick_object_named<'d>(doc: &'d Document, object: Option<&str>, stream_name: &str) -> Result<(String, &'d RObject)> {
    let objs = doc.objects();
    let is_rds = !matches!(doc.container, crate::Container::RData { .. });
    let names: Vec<String> = objs.iter().map(|(n, _)| String::from_utf8_lossy(n).into_owned()).collect();
    let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ") };
    if let Some(name) = object {
        if is_rds {
            if !stream_name.is_empty() && name != stream_name {
                return Err(Error::usage(format!("object '{name}' not found in the file; it holds: '{stream_name}'")));
            }
            return Ok((name.to_string(), objs[0].1));
        }
        return match names.iter().position(|n| n == name) {
            Some(i) => Ok((name.to_string(), objs[i].1)),
            None => Err(Error::usage(format!("object '{name}' not found in the file; it holds: {}", list(&names)))),
        };
    }
    if is_rds {
        return Ok((stream_name.to_string(), objs[0].1));
    }
    let frames: Vec<usize> = (0..objs.len()).filter(|&i| objs[i].1.inherits(&doc.refs, "data.frame")).collect();
    match frames.len() {
        1 => Ok((names[frames[0]].clone(), objs[frames[0]].1)),
        0 => Err(Error::usage(format!("the file holds no data frame; choose an object with `object =` among: {}", list(&names)))),
        _ => {
            let cands: Vec<String> = frames.iter().map(|&i| names[i].clone()).collect();
            Err(Error::usage(format!("the file holds {} data frames; choose one with `object =`: {}", cands.len(), list(&cands))))
        }
    }
}

/// As [`pick_object_named`], moving the object out of the document (the
/// document keeps its reference table; its other objects are dropped), for
/// [`table_from_owned`].
pub fn take_object_named(doc: &mut Document, object: Option<&str>, stream_name: &str) -> Result<(String, RObject)> {
    let (name, picked) = pick_object_named(doc, object, stream_name)?;
    let picked: *const RObject = picked;
    let at = doc.objects().iter().position(|(_, o)| std::ptr::eq(*o, picked)).expect("the picked object is one of the document's");
    let obj = doc.take_objects().swap_remove(at).1;
    Ok((name, obj))
}
