//! The `"r"` metadata document: written from a table's shape and its
//! columns' nodes, read back from a schema (text or its bit-exact form).

use crate::metadata::columns::ColumnMeta;
use crate::metadata::attributes::attr_list;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::base::error::Result;
use rdarrow_format::wire::header::{Container, StreamHeader};
use rdarrow_format::wire::decode::Format;
use rdarrow_format::tree::*;
use arrow_schema::DataType;

/// What the table was made from, for the way back.
#[derive(Debug, Clone)]
pub enum Shape {
    /// A data frame: its columns are the table's. `attrs`: what Arrow's
    /// field names and arrow R cannot take: row names whose length
    /// disagrees with the columns (the table has the columns' rows), names
    /// that are `NA`.
    Frame { attrs: Vec<(String, RObject)> },
    /// One vector, the table's only column; `attrs`: those a data frame's
    /// column cannot carry for arrow R (`dim`, `dimnames`).
    Vector { attrs: Vec<(String, RObject)> },
    /// A matrix, one table column per matrix column; `attrs`: all of its
    /// attributes.
    Matrix { attrs: Vec<(String, RObject)> },
    /// A sparse matrix of the Matrix package, one row per stored entry
    /// ([`crate::mapping::sparse`]); `slots`: all of its slots, those of the
    /// entries `NULL`.
    Sparse {
        storage: crate::mapping::sparse::Storage,
        slots: Vec<(String, RObject)>,
    },
}

impl Shape {
    /// The `rdarrow` element of the `"r"` metadata (None for a data frame
    /// that needs nothing restored).
    fn element(&self, m: &mut ObjectMaker) -> Option<RObject> {
        let (object, attrs) = match self {
            Shape::Frame { attrs } if attrs.is_empty() => return None,
            Shape::Frame { attrs } => ("data.frame", attrs.clone()),
            Shape::Vector { attrs } => ("vector", attrs.clone()),
            Shape::Matrix { attrs } => ("matrix", attrs.clone()),
            Shape::Sparse { storage, slots } => {
                let attributes = attr_list(m, slots.clone());
                return Some(m.named_list(
                    &["object", "attributes", "storage"],
                    vec![
                        rdarrow_format::tree::make::strings([Some(b"sparse".as_slice())]),
                        attributes,
                        rdarrow_format::tree::make::strings([Some(storage.letter().as_bytes())]),
                    ],
                ));
            }
        };
        let attributes = attr_list(m, attrs);
        Some(m.named_list(
            &["object", "attributes"],
            vec![rdarrow_format::tree::make::strings([Some(object.as_bytes())]), attributes],
        ))
    }
}

/// The element name of rdarrow's part of the `"r"` metadata.
pub(crate) const SHAPE_ELEMENT: &str = "rdarrow";

/// The `"r"` metadata for a table made from an object of `shape` (`frame`:
/// a data frame's own attributes) whose columns `names` have `cols` and
/// became `types`; None when there is nothing to keep.
pub fn r_metadata(
    refs: &RefTable,
    shape: &Shape,
    frame: Option<&ColumnMeta>,
    names: &[&str],
    cols: &[ColumnMeta],
    types: &[DataType],
) -> Result<Option<RMetadata>> {
    let mut m = ObjectMaker::with_refs(refs.clone());
    let mut top = frame.map(|f| f.kept(None, true)).unwrap_or_default();
    if let Shape::Frame { attrs } = shape {
        // row names that disagree with the columns would break arrow R's
        // data frame: they travel in rdarrow's element only
        top.retain(|(n, _)| !attrs.iter().any(|(a, _)| a == n));
    }
    let col_md: Vec<Option<RObject>> = cols
        .iter()
        .zip(types)
        .map(|(c, dt)| c.r_node(&mut m, Some(dt)))
        .collect();
    let element = shape.element(&mut m);
    if top.is_empty() && col_md.iter().all(|c| c.is_none()) && element.is_none() {
        return Ok(None);
    }
    let attributes = attr_list(&mut m, top);
    let columns = m.named_list(
        names,
        col_md
            .into_iter()
            .map(|c| c.unwrap_or(RObject::Null))
            .collect(),
    );
    let root = match element {
        Some(e) => m.named_list(
            &["attributes", "columns", SHAPE_ELEMENT],
            vec![attributes, columns, e],
        ),
        None => m.named_list(&["attributes", "columns"], vec![attributes, columns]),
    };
    // doubles in hex (`serialize(ascii = NA)`): R's `%.16g` would lose
    // their last bits (a `ts`'s `tsp`); R and arrow R read both
    let header = StreamHeader {
        ascii_hex: true,
        ..StreamHeader::utf8_v3(Format::Ascii)
    };
    let (bytes, exact) =
        rdarrow_format::write::write_stream_exact(Container::Stream, &header, &root, &m.refs)?;
    // NaNs whose payloads text cannot keep (R's arithmetic on NA, in a
    // kept value): the same list in XDR too, for rdarrow's way back (arrow
    // R takes ASCII alone)
    let exact = if exact {
        None
    } else {
        let xdr = StreamHeader::utf8_v3(Format::Xdr);
        let inner = rdarrow_format::write::write_stream(Vec::new(), Container::Stream, &xdr, &root, &m.refs)?;
        Some(String::from_utf8_lossy(&compressed(&inner, &header)?).into_owned())
    };
    Ok(Some(RMetadata {
        r: String::from_utf8_lossy(&compress_large(bytes, &header)?).into_owned(),
        exact,
    }))
}

/// The `"r"` metadata of a table, and its bit-exact form when the text
/// is not ([`EXACT_KEY`]).
pub struct RMetadata {
    pub r: String,
    pub exact: Option<String>,
}

/// The schema metadata key of the `"r"` metadata's bit-exact form: the
/// ASCII serialization of the raw vector `memCompress(<XDR serialization>,
/// "gzip")`, written when the ASCII `"r"` would lose NaN payloads.
pub const EXACT_KEY: &str = "rdarrow.r";

/// The `"r"` metadata rdarrow reads from a schema: the bit-exact form
/// when there is one.
pub fn r_text(schema: &arrow_schema::Schema) -> Option<&String> {
    let md = schema.metadata();
    md.get(EXACT_KEY).or_else(|| md.get("r"))
}

/// Metadata above this size is compressed, as arrow R does.
pub(crate) const COMPRESS_ABOVE: usize = 100_000;

/// arrow R's form of large metadata: the ASCII serialization of the raw
/// vector `memCompress(<serialization>, "gzip")` (zlib), when smaller.
pub(crate) fn compress_large(bytes: Vec<u8>, header: &StreamHeader) -> Result<Vec<u8>> {
    if bytes.len() <= COMPRESS_ABOVE {
        return Ok(bytes);
    }
    let out = compressed(&bytes, header)?;
    Ok(if out.len() < bytes.len() { out } else { bytes })
}

/// The ASCII serialization (`header`) of the raw vector
/// `memCompress(<bytes>, "gzip")` (zlib), as arrow R writes it.
pub(crate) fn compressed(bytes: &[u8], header: &StreamHeader) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes)
        .and_then(|_| z.flush())
        .map_err(|e| rdarrow_format::Error::io(&e, "cannot compress the \"r\" metadata"))?;
    let packed = z
        .finish()
        .map_err(|e| rdarrow_format::Error::io(&e, "cannot compress the \"r\" metadata"))?;
    let raw = RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Raw(arrow_buffer::Buffer::from_vec(packed)),
        attributes: None,
    }));
    rdarrow_format::write::write_stream(
        Vec::new(),
        Container::Stream,
        header,
        &raw,
        &RefTable::default(),
    )
}

/// The `"r"` schema metadata, as the R object it serializes.
pub(crate) fn parse_r_metadata(md: &str) -> Result<rdarrow_format::Document> {
    read_r_text(md, "the \"r\" schema metadata")
}

/// An R object serialized in ASCII as the `"r"` metadata holds it
/// (`what`: which metadata, for its error), parsed on this thread where
/// its stack allows: metadata is small, and a thread of its own would cost
/// more than the parse.
pub(crate) fn read_r_text(md: &str, what: &str) -> Result<rdarrow_format::Document> {
    let read = |bytes: Vec<u8>| {
        let opts = rdarrow_format::ReadOptions::default();
        rdarrow_format::read_here(&opts, |o| rdarrow_format::read_bytes(bytes.clone(), o))
            .unwrap_or_else(|| rdarrow_format::read_bytes(bytes, &opts))
    };
    let doc = read(md.as_bytes().to_vec()).map_err(|e| {
        rdarrow_format::Error::corrupt(format!("{what} is not a valid R serialization: {e}"))
    })?;
    // arrow R gzips large metadata: serialize(memCompress(x, "gzip"))
    if let RObject::Vector(v) = &doc.root {
        if let VectorData::Raw(b) = &v.data {
            let inner = rdarrow_format::compression::inflate_zlib_or_gzip(b)?;
            return read(inner);
        }
    }
    Ok(doc)
}

/// The row names of the data frame a schema's `"r"` metadata describes,
/// when they are not R's automatic 1..n (character row names, or integers
/// R keeps), with the reference table they use: for front ends that give
/// a table an index (pandas).
pub fn row_names(schema: &arrow_schema::Schema) -> Result<Option<(RObject, RefTable)>> {
    frame_attribute(schema, "row.names")
}

/// The name of the pandas index the data frame's row names were written
/// from ([`crate::mapping::pandas_index::INDEX_NAME_ATTRIBUTE`]), as the
/// `"r"` metadata records it.
pub fn index_name(schema: &arrow_schema::Schema) -> Result<Option<String>> {
    let attr = frame_attribute(schema, crate::mapping::pandas_index::INDEX_NAME_ATTRIBUTE)?;
    Ok(attr.and_then(|(v, _)| {
        let s = v.as_strings()?;
        (s.len() == 1).then(|| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned())).flatten()
    }))
}

/// One attribute of the data frame a schema's `"r"` metadata describes,
/// with the reference table it uses.
fn frame_attribute(schema: &arrow_schema::Schema, name: &str) -> Result<Option<(RObject, RefTable)>> {
    let Some(md) = r_text(schema) else {
        return Ok(None);
    };
    let mut doc = parse_r_metadata(md)?;
    let found = list_entries(&doc.root, &doc.refs)
        .into_iter()
        .find(|(k, _)| k == "attributes")
        .and_then(|(_, a)| {
            list_entries(a, &doc.refs)
                .into_iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        });
    Ok(found.map(|v| (v, std::mem::take(&mut doc.refs))))
}

/// What the table was made from, as its `"r"` metadata records it:
/// `"vector"`, `"matrix"`, `"sparse"` or `"data.frame"` (also for a
/// table without rdarrow's metadata). A front end offers a vector's table
/// as that vector's own array.
pub fn object_shape(schema: &arrow_schema::Schema) -> String {
    let Some(md) = r_text(schema) else {
        return "data.frame".into();
    };
    let Ok(doc) = parse_r_metadata(md) else {
        return "data.frame".into();
    };
    list_entries(&doc.root, &doc.refs)
        .into_iter()
        .find(|(k, _)| k == SHAPE_ELEMENT)
        .and_then(|(_, e)| {
            list_entries(e, &doc.refs)
                .into_iter()
                .find(|(k, _)| k == "object")
                .and_then(|(_, v)| v.as_strings())
                .and_then(|s| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned()))
        })
        .unwrap_or_else(|| "data.frame".into())
}

/// The top-level columns whose `"r"` metadata node (at any depth) keeps
/// strings ([`crate::metadata::strings::KeptStrings`]), binds a matrix or rebuilds a POSIXlt: that
/// is done on the whole column.
pub fn columns_rebuilt_whole(schema: &arrow_schema::Schema) -> Vec<String> {
    let Some(md) = r_text(schema) else {
        return Vec::new();
    };
    let Ok(doc) = parse_r_metadata(md) else {
        return Vec::new();
    };
    fn keeps(node: &RObject, refs: &RefTable) -> bool {
        list_entries(node, refs).into_iter().any(|(k, v)| {
            matches!(k.as_str(), "strings" | "matrix" | "posixlt")
                || (k == "columns"
                    && match v {
                        RObject::Vector(l) => match &l.data {
                            VectorData::List(items) => items.iter().any(|c| keeps(c, refs)),
                            _ => false,
                        },
                        _ => false,
                    })
        })
    }
    list_entries(&doc.root, &doc.refs)
        .into_iter()
        .find(|(k, _)| k == "columns")
        .map(|(_, cols)| {
            list_entries(cols, &doc.refs)
                .into_iter()
                .filter(|(_, node)| keeps(node, &doc.refs))
                .map(|(name, _)| name)
                .collect()
        })
        .unwrap_or_default()
}
