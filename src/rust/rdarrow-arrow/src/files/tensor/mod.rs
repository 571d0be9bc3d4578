//! R arrays as Arrow Tensor messages, both ways.
//!
//! A Tensor message (Arrow IPC's fourth kind of message, what
//! `pyarrow.ipc.write_tensor()` writes and `read_tensor()` reads) holds one
//! n-dimensional array: an element type, a shape, strides in bytes,
//! dimension names, and one buffer. Its flatbuffers are arrow-ipc's
//! generated code (`arrow_ipc::Tensor`, `arrow_ipc::Message`).
//!
//! R to a tensor ([`TensorParts::of`]): an R array's values are written as
//! R holds them, with R's column-major strides (no transpose, no copy of
//! the values); the element type is [`types::tensor_element`]'s. The
//! array's attributes (`dim`, `dimnames`, a class) and its R type travel in
//! the message's custom metadata under `"r"` (an R serialization, as the
//! schema's `"r"` of a table), so that the way back gives the array
//! `identical()`; dimension names are also the tensor's (`names(dimnames)`).
//!
//! A tensor to R ([`read_tensor_file`]): any strides (row-major NumPy
//! arrays, column-major ones, others) are gathered into R's column-major
//! order, each element type mapped by [`types::tensor_r_kind`]. What R
//! cannot hold is refused, naming why.

use crate::mapping::shape::gather;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;
use crate::mapping::types;
use crate::mapping::types::RKind;
use rdarrow_format::wire::decode::Format;
use rdarrow_format::wire::header::Container;
use rdarrow_format::wire::header::StreamHeader;
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use std::io::Write;

/// The key of the message's custom metadata that holds the R array's type
/// and attributes.
pub const R_KEY: &str = "r";

/// Bytes before the body are padded to this (the body's values aligned
/// for any reader that maps the file).
const BODY_ALIGN: usize = 64;

/// An R array laid out as a tensor: the pieces of its message.
#[derive(Debug, Clone)]
pub struct TensorParts {
    /// The element type ([`types::tensor_element`]).
    pub element: DataType,
    /// The shape: R's `dim` (a vector without one: its length), and for a
    /// complex array a last dimension of 2 (real, imaginary).
    pub shape: Vec<usize>,
    /// Bytes between consecutive elements of each dimension: R's
    /// column-major order.
    pub strides: Vec<usize>,
    /// Each dimension's name (`names(dimnames)`); empty when none has one.
    pub names: Vec<Option<String>>,
    /// The values as R holds them.
    pub data: Buffer,
    /// The R type and attributes (the custom metadata's `"r"`).
    pub r: String,
}

/// The shape R's `dim` gives an array of `sxptype`, and the byte strides
/// of its column-major order (a complex array's last dimension holds the
/// real and imaginary parts, 8 bytes apart).
fn column_major(dims: &[usize], width: usize, complex: bool) -> (Vec<usize>, Vec<usize>) {
    let mut shape = dims.to_vec();
    let mut strides = Vec::with_capacity(dims.len() + 1);
    // (an empty array: every stride the element's width, as Arrow C++
    // computes it)
    let empty = dims.contains(&0);
    let mut step = width;
    for &d in dims {
        strides.push(if empty { width } else { step });
        step = step.saturating_mul(d);
    }
    if complex {
        shape.push(2);
        strides.push(8);
    }
    (shape, strides)
}

/// Whether `obj` is an R value that makes a tensor: an integer, logical,
/// double, complex or raw vector (with `dim`, an array).
pub fn is_tensor_value(obj: &RObject, refs: &RefTable) -> bool {
    let t = obj.sxptype(refs);
    matches!(t, sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX | sxp::RAW)
        && obj.attribute(refs, "dim").is_some()
}

impl TensorParts {
    /// The tensor of the R value `obj` (an array, or a vector as one
    /// dimension), its values R's own buffer.
    pub fn of(obj: &RObject, refs: &RefTable) -> Result<TensorParts> {
        let (data, attrs, flags) = match obj {
            RObject::Vector(v) => (v.data.clone(), v.attributes.clone(), v.flags),
            RObject::Altrep(a) => (
                rdarrow_format::tree::altrep::expand(a, refs)?,
                match &a.attributes {
                    RObject::Null => None,
                    o => Some(o.clone()),
                },
                a.flags,
            ),
            _ => return Err(not_an_array(obj, refs)),
        };
        let classes = obj.class_attr(refs);
        let integer64 = RKind::of(&classes, data.sxptype()) == Some(RKind::Integer64);
        let element = types::tensor_element(data.sxptype(), integer64)
            .ok_or_else(|| not_an_array(obj, refs))?;
        let (bytes, width) = match &data {
            VectorData::Logical(x) | VectorData::Integer(x) => (x.inner().clone(), 4),
            VectorData::Real(x) => (x.inner().clone(), 8),
            VectorData::Complex(x) => (x.inner().clone(), 16),
            VectorData::Raw(b) => (b.clone(), 1),
            _ => {
                return Err(Error::internal(
                    "an array's payload is not at hand for its tensor",
                ))
            }
        };
        let len = data.len() as usize;
        // the format crate's checked `dim` (counts whose product is the length)
        let dims = rdarrow_format::checks::consistency::dims(obj, refs, len as u64)?.unwrap_or(vec![len]);
        let complex = data.sxptype() == sxp::CPLX;
        let (shape, strides) = column_major(&dims, width, complex);
        // names(dimnames): the dimensions' names
        let mut names: Vec<Option<String>> = attrs
            .as_ref()
            .and_then(|a| pairlist_get(a, refs, b"dimnames"))
            .and_then(|d| d.attribute(refs, "names"))
            .and_then(|n| n.as_strings())
            .map(|s| {
                (0..s.len())
                    .map(|i| s.get(i).map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        if !names.is_empty() && complex {
            names.push(Some("complex".to_string()));
        }
        let r = r_metadata(data.sxptype(), flags, attrs.as_ref(), refs)?;
        Ok(TensorParts {
            element,
            shape,
            strides,
            names,
            data: bytes,
            r,
        })
    }

    /// The message: continuation marker, metadata length, the `Message`
    /// flatbuffer (padded so the body starts at a multiple of 64 bytes),
    /// then the body (the values, padded to 8 bytes).
    pub fn write(&self, w: &mut dyn Write) -> Result<u64> {
        let body_len = self.data.len().div_ceil(8) * 8;
        let meta = self.flatbuffer(body_len as i64)?;
        let padded = (8 + meta.len()).div_ceil(BODY_ALIGN) * BODY_ALIGN - 8;
        let err = |e: std::io::Error| Error::io(&e, "cannot write the tensor");
        w.write_all(&[0xff; 4]).map_err(err)?;
        w.write_all(&(padded as i32).to_le_bytes()).map_err(err)?;
        w.write_all(&meta).map_err(err)?;
        w.write_all(&vec![0u8; padded - meta.len()]).map_err(err)?;
        w.write_all(self.data.as_slice()).map_err(err)?;
        w.write_all(&vec![0u8; body_len - self.data.len()])
            .map_err(err)?;
        Ok((8 + padded + body_len) as u64)
    }

    fn flatbuffer(&self, body_len: i64) -> Result<Vec<u8>> {
        use arrow_ipc as fb;
        let mut b = flatbuffers::FlatBufferBuilder::new();
        let (type_type, type_) = match &self.element {
            DataType::Float64 => (
                fb::Type::FloatingPoint,
                fb::FloatingPoint::create(
                    &mut b,
                    &fb::FloatingPointArgs {
                        precision: fb::Precision::DOUBLE,
                    },
                )
                .as_union_value(),
            ),
            DataType::Int32 | DataType::Int64 | DataType::UInt8 => {
                let (bits, signed) = match self.element {
                    DataType::Int32 => (32, true),
                    DataType::Int64 => (64, true),
                    _ => (8, false),
                };
                (
                    fb::Type::Int,
                    fb::Int::create(
                        &mut b,
                        &fb::IntArgs {
                            bitWidth: bits,
                            is_signed: signed,
                        },
                    )
                    .as_union_value(),
                )
            }
            other => {
                return Err(Error::internal(format!(
                    "no tensor element type for {other}"
                )))
            }
        };
        let dims: Vec<_> = self
            .shape
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                let name = self
                    .names
                    .get(i)
                    .and_then(|n| n.as_deref())
                    .map(|n| b.create_string(n));
                fb::TensorDim::create(
                    &mut b,
                    &fb::TensorDimArgs {
                        size: size as i64,
                        name,
                    },
                )
            })
            .collect();
        let shape = b.create_vector(&dims);
        let strides: Vec<i64> = self.strides.iter().map(|&s| s as i64).collect();
        let strides = b.create_vector(&strides);
        let data = fb::Buffer::new(0, self.data.len() as i64);
        let tensor = fb::Tensor::create(
            &mut b,
            &fb::TensorArgs {
                type_type,
                type_: Some(type_),
                shape: Some(shape),
                strides: Some(strides),
                data: Some(&data),
            },
        );
        let key = b.create_string(R_KEY);
        let value = b.create_string(&self.r);
        let kv = fb::KeyValue::create(
            &mut b,
            &fb::KeyValueArgs {
                key: Some(key),
                value: Some(value),
            },
        );
        let custom = b.create_vector(&[kv]);
        let message = fb::Message::create(
            &mut b,
            &fb::MessageArgs {
                version: fb::MetadataVersion::V5,
                header_type: fb::MessageHeader::Tensor,
                header: Some(tensor.as_union_value()),
                bodyLength: body_len,
                custom_metadata: Some(custom),
            },
        );
        b.finish(message, None);
        Ok(b.finished_data().to_vec())
    }
}

fn dims_text(dims: &[usize]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(" x ")
}

fn not_an_array(obj: &RObject, refs: &RefTable) -> Error {
    let what = match obj.sxptype(refs) {
        sxp::STR => "a character vector".to_string(),
        sxp::VEC if obj.inherits(refs, "data.frame") => "a data frame".to_string(),
        sxp::VEC => "a list".to_string(),
        t => format!("an object of type {}", sxp::type_name(t)),
    };
    Error::usage(format!(
        "{what} has no tensor: a tensor holds an integer, logical, double, complex or raw array"
    ))
}

/// The `"r"` custom metadata: `list(type = <R type>, attributes =
/// <the attribute pairlist>)`, serialized as the schema's `"r"` is (ASCII,
/// doubles in hex).
fn r_metadata(
    sxptype: u8,
    flags: Flags,
    attrs: Option<&RObject>,
    refs: &RefTable,
) -> Result<String> {
    let mut m = ObjectMaker::with_refs(refs.clone());
    let ty = rdarrow_format::tree::make::strings([Some(sxp::type_name(sxptype).as_bytes())]);
    let object = rdarrow_format::tree::make::ints(vec![flags.object as i32]);
    let root = m.named_list(
        &["type", "object", "attributes"],
        vec![ty, object, attrs.cloned().unwrap_or(RObject::Null)],
    );
    let header = StreamHeader {
        ascii_hex: true,
        ..StreamHeader::utf8_v3(Format::Ascii)
    };
    let bytes = rdarrow_format::write::write_stream(Vec::new(), Container::Stream, &header, &root, &m.refs)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What [`rdata_to_tensor`] wrote.
#[derive(Debug, Clone)]
pub struct WrittenTensor {
    /// The array's name.
    pub name: String,
    pub shape: Vec<usize>,
    /// Salvaging a damaged file, what it lost ([`rdarrow_format::Document::damage_for`]),
    /// for the host to warn of.
    pub damage: Option<String>,
}

/// Write one R array of the R data file at `path` (`object`, else the
/// file's only array) as a Tensor message at `sink` (or an object store's
/// URL); the file appears only complete.
pub fn rdata_to_tensor(
    path: &(impl rdarrow_format::Origin + ?Sized),
    object: Option<&str>,
    stream_name: &str,
    read: rdarrow_format::ReadOptions,
    sink: &std::path::Path,
) -> Result<WrittenTensor> {
    let storage = read.storage.clone();
    let (name, doc, obj) = array_of_file(path, object, stream_name, read)?;
    let parts = TensorParts::of(&obj, &doc.refs).map_err(|e| e.in_object(&name))?;
    rdarrow_format::atomic_write(sink, &storage, |w| parts.write(w).map(|_| ()))?;
    let damage = doc.damage_for(&name);
    Ok(WrittenTensor { name, shape: parts.shape, damage })
}

/// One R array of the file at `path`: the one named `object`, else the
/// file's only array (an `.rds` file's object), with its document (whose
/// reference table it uses; salvaging, [`rdarrow_format::Document::damage_for`]
/// says what was lost). Salvaged, an array is taken only whole (its data
/// and `dim` read): the one the damage cut short is an error naming it,
/// never an array of another shape, and without a name the file's only
/// array is not known (those after the damage are lost).
pub fn array_of_file(
    path: &(impl rdarrow_format::Origin + ?Sized),
    object: Option<&str>,
    stream_name: &str,
    read: rdarrow_format::ReadOptions,
) -> Result<(String, rdarrow_format::Document, RObject)> {
    let mut doc = rdarrow_format::read_file_filtered(path, &read, &mut rdarrow_format::Wanted::one(object))?;
    // the one named, else the file's only array
    let chosen = match object {
        Some(o) => Some(o.to_string()),
        None if doc.is_rds() => None,
        None => {
            doc.check_trust(stream_name)?;
            let names = doc.object_names(stream_name);
            let arrays = doc.convertible(&is_tensor_value);
            if doc.salvaged.is_some() && arrays.len() < 2 {
                return Err(doc.choice_lost(stream_name));
            }
            match arrays.len() {
                1 => Some(names[arrays[0]].clone()),
                0 => {
                    return Err(Error::usage(format!(
                        "the file holds no array (an integer, logical, double, complex or raw vector with dim); its objects: {}",
                        rdarrow_format::read::document::quoted(&names)
                    )))
                }
                n => {
                    let cands: Vec<String> = arrays.iter().map(|&i| names[i].clone()).collect();
                    return Err(Error::usage(format!(
                        "the file holds {n} arrays; choose one by name: {}",
                        rdarrow_format::read::document::quoted(&cands)
                    )));
                }
            }
        }
    };
    let (name, obj) = doc.take_table_object(chosen.as_deref(), stream_name, &is_tensor_value)?;
    if doc.salvaged.as_ref().is_some_and(|s| s.kept_part_of(&name, doc.is_rds())) {
        return Err(Error::usage(format!(
            "it is where the file is damaged, and only part of it was read: an array is taken only whole, its data and dim read; {}",
            doc.damage.as_deref().unwrap_or("the file is damaged")
        ))
        .in_object(&name));
    }
    Ok((name, doc, obj))
}

/// A Tensor message's header, read and checked against the file.
#[derive(Debug, Clone)]
pub struct TensorHeader {
    /// The element type.
    pub element: DataType,
    pub shape: Vec<usize>,
    /// Byte strides (row-major when the message gives none).
    pub strides: Vec<usize>,
    pub names: Vec<Option<String>>,
    /// Where the values start in the file, and their bytes.
    pub data_offset: u64,
    pub data_len: u64,
    /// The custom metadata's `"r"`, when the message has it.
    pub r: Option<String>,
}

/// The byte width of a tensor element type.
fn width_of(dt: &DataType) -> usize {
    dt.primitive_width().unwrap_or(0)
}

/// The element type of a flatbuffer `Type`, or why it is not one.
fn element_of(t: &arrow_ipc::Tensor<'_>) -> Result<DataType> {
    use arrow_ipc as fb;
    let dt = match t.type_type() {
        fb::Type::Int => {
            let i = t
                .type_as_int()
                .ok_or_else(|| Error::corrupt("the tensor's Int type is missing"))?;
            match (i.bitWidth(), i.is_signed()) {
                (8, true) => DataType::Int8,
                (16, true) => DataType::Int16,
                (32, true) => DataType::Int32,
                (64, true) => DataType::Int64,
                (8, false) => DataType::UInt8,
                (16, false) => DataType::UInt16,
                (32, false) => DataType::UInt32,
                (64, false) => DataType::UInt64,
                (b, _) => {
                    return Err(Error::corrupt(format!(
                        "the tensor's integers are {b} bits wide (8, 16, 32 or 64 are valid)"
                    )))
                }
            }
        }
        fb::Type::FloatingPoint => {
            let f = t
                .type_as_floating_point()
                .ok_or_else(|| Error::corrupt("the tensor's FloatingPoint type is missing"))?;
            match f.precision() {
                fb::Precision::HALF => DataType::Float16,
                fb::Precision::SINGLE => DataType::Float32,
                fb::Precision::DOUBLE => DataType::Float64,
                p => {
                    return Err(Error::corrupt(format!(
                        "the tensor's floating-point precision {} is not one Arrow defines",
                        p.0
                    )))
                }
            }
        }
        fb::Type::Bool => DataType::Boolean,
        other => {
            let name = other.variant_name().unwrap_or("unknown");
            return Err(Error::unsupported(format!(
                "the tensor's elements are of type {name} (type id {}): a tensor of numbers is read",
                other.0
            )));
        }
    };
    Ok(dt)
}

/// Where a message's bytes are read from, by position: a file, or bytes
/// in memory.
pub trait MessageBytes {
    /// Its length in bytes.
    fn size(&self) -> std::io::Result<u64>;
    /// `buf.len()` bytes from byte `at`.
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()>;
}

impl MessageBytes for std::fs::File {
    fn size(&self) -> std::io::Result<u64> {
        self.metadata().map(|m| m.len())
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        rdarrow_format::base::positional::read_exact_at(self, buf, at)
    }
}

impl MessageBytes for &[u8] {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len() as u64)
    }
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        let from = usize::try_from(at).ok().filter(|&a| a <= self.len());
        match from.and_then(|a| self.get(a..a.checked_add(buf.len())?)) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

/// Whether `f` (which starts as an IPC message does) holds a Tensor
/// message: its metadata says so.
pub fn is_tensor_message(f: &dyn MessageBytes) -> bool {
    let mut head = [0u8; 8];
    if f.read_at(&mut head, 0).is_err() || head[..4] != [0xff; 4] {
        return false;
    }
    let n = i32::from_le_bytes(head[4..8].try_into().unwrap());
    // (a message's metadata is small; a huge length is no Tensor's)
    if !(1..=1 << 24).contains(&n) {
        return false;
    }
    let mut meta = vec![0u8; n as usize];
    f.read_at(&mut meta, 8).is_ok()
        && arrow_ipc::root_as_message(&meta)
            .is_ok_and(|m| m.header_type() == arrow_ipc::MessageHeader::Tensor)
}

/// Read and check the header of the Tensor message in `f`.
pub fn read_header(f: &dyn MessageBytes) -> Result<TensorHeader> {
    let io = |e: std::io::Error| Error::io(&e, "cannot read the tensor");
    let len = f.size().map_err(io)?;
    let mut head = [0u8; 8];
    if len < 8 {
        return Err(Error::corrupt(format!(
            "not an Arrow Tensor message: {len} bytes, fewer than a message's 8-byte prefix"
        )));
    }
    f.read_at(&mut head, 0).map_err(io)?;
    // the continuation marker, then the length (before Arrow 0.15: the
    // length alone)
    let (meta_at, meta_len) = if head[..4] == [0xff; 4] {
        (8u64, i32::from_le_bytes(head[4..8].try_into().unwrap()))
    } else {
        (4u64, i32::from_le_bytes(head[..4].try_into().unwrap()))
    };
    if meta_len <= 0 || meta_at + meta_len as u64 > len {
        return Err(Error::corrupt(format!(
            "not an Arrow Tensor message: its metadata length {meta_len} (bytes {}..{}) does not fit the file's {len} bytes",
            meta_at - 4,
            meta_at
        ))
        .at(meta_at - 4));
    }
    let mut meta = vec![0u8; meta_len as usize];
    f.read_at(&mut meta, meta_at).map_err(io)?;
    let body_at = meta_at + meta_len as u64;
    let msg = arrow_ipc::root_as_message(&meta).map_err(|e| {
        Error::corrupt(format!(
            "the message's metadata (bytes {meta_at}..{body_at}) is not a valid Arrow flatbuffer: {e}"
        ))
        .at(meta_at)
    })?;
    let Some(t) = msg.header_as_tensor() else {
        let kind = msg.header_type().variant_name().unwrap_or("unknown");
        let hint = match msg.header_type() {
            arrow_ipc::MessageHeader::Schema | arrow_ipc::MessageHeader::RecordBatch => {
                ": an Arrow IPC stream of a table (read it with ipc_to_rdata())"
            }
            _ => "",
        };
        return Err(Error::usage(format!(
            "the file holds an Arrow {kind} message, not a Tensor{hint}"
        )));
    };
    let body_len = msg.bodyLength();
    if body_len < 0 || body_at + body_len as u64 > len {
        return Err(Error::new(
            rdarrow_format::ErrorKind::Truncated,
            format!(
                "the tensor's body is {body_len} bytes from byte {body_at}, past the file's {len} bytes (the file is truncated)"
            ),
        )
        .at(body_at));
    }
    let element = element_of(&t)?;
    let width = width_of(&element).max(1);
    let dims = t.shape();
    let mut shape = Vec::with_capacity(dims.len());
    let mut names = Vec::with_capacity(dims.len());
    for d in dims.iter() {
        let size = usize::try_from(d.size()).map_err(|_| {
            Error::corrupt(format!(
                "the tensor's shape has a negative dimension ({})",
                d.size()
            ))
        })?;
        shape.push(size);
        names.push(d.name().filter(|n| !n.is_empty()).map(str::to_string));
    }
    if names.iter().all(Option::is_none) {
        names.clear();
    }
    let count = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
        .ok_or_else(|| {
            Error::corrupt(format!(
                "the tensor's shape {} has more elements than a file can hold",
                dims_text(&shape)
            ))
        })?;
    let strides: Vec<usize> = match t.strides() {
        None => {
            // row-major
            let mut s = vec![0usize; shape.len()];
            let mut step = width;
            for i in (0..shape.len()).rev() {
                s[i] = step;
                step = step.saturating_mul(shape[i].max(1));
            }
            s
        }
        Some(s) => {
            if s.len() != shape.len() {
                return Err(Error::corrupt(format!(
                    "the tensor has {} strides for its {} dimensions",
                    s.len(),
                    shape.len()
                )));
            }
            let mut out = Vec::with_capacity(s.len());
            for (i, st) in s.iter().enumerate() {
                if st < 0 {
                    return Err(Error::unsupported(format!(
                        "the tensor's stride {st} of dimension {} is negative: R arrays cannot express it",
                        i + 1
                    )));
                }
                if st as usize % width != 0 {
                    return Err(Error::unsupported(format!(
                        "the tensor's stride {st} of dimension {} is not a multiple of its {width}-byte elements: R arrays cannot express it",
                        i + 1
                    )));
                }
                out.push(st as usize);
            }
            out
        }
    };
    let buf = t.data();
    let (off, blen) = (buf.offset(), buf.length());
    if off < 0 || blen < 0 || (off as u64).saturating_add(blen as u64) > body_len as u64 {
        return Err(Error::corrupt(format!(
            "the tensor's buffer (offset {off}, {blen} bytes) lies outside its {body_len}-byte body"
        ))
        .at(body_at));
    }
    // the last byte any element reads
    if count > 0 {
        let extent = shape
            .iter()
            .zip(&strides)
            .try_fold(width as u64, |a, (&d, &s)| {
                (d as u64 - 1)
                    .checked_mul(s as u64)
                    .and_then(|x| x.checked_add(a))
            });
        match extent {
            Some(e) if e <= blen as u64 => {}
            _ => {
                return Err(Error::corrupt(format!(
                    "the tensor's shape {} and strides {:?} reach past its {blen}-byte buffer",
                    dims_text(&shape),
                    strides
                )))
            }
        }
    }
    let r = msg.custom_metadata().and_then(|kvs| {
        kvs.iter()
            .find(|kv| kv.key() == Some(R_KEY))
            .and_then(|kv| kv.value().map(str::to_string))
    });
    Ok(TensorHeader {
        element,
        shape,
        strides,
        names,
        data_offset: body_at + off as u64,
        data_len: blen as u64,
        r,
    })
}

/// The R type and attributes the message's `"r"` says, when it is
/// rdarrow's and agrees with the tensor.
struct RSaid {
    sxptype: u8,
    object: bool,
    attributes: Option<RObject>,
    refs: RefTable,
}

fn r_said(text: &str) -> Result<RSaid> {
    // (read as a schema's "r" is read)
    let doc = crate::metadata::document::read_r_text(text, "the tensor's \"r\" metadata")?;
    let refs = doc.refs.clone();
    let entries = list_entries(&doc.root, &refs);
    let get = |k: &str| entries.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let ty = get("type")
        .and_then(|t| t.as_strings())
        .and_then(|s| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned()))
        .ok_or_else(|| Error::corrupt("the tensor's \"r\" metadata names no R type"))?;
    let sxptype = match ty.as_str() {
        "logical" => sxp::LGL,
        "integer" => sxp::INT,
        "double" => sxp::REAL,
        "complex" => sxp::CPLX,
        "raw" => sxp::RAW,
        other => {
            return Err(Error::corrupt(format!(
                "the tensor's \"r\" metadata names R type '{other}', which no tensor holds"
            )))
        }
    };
    let object = matches!(get("object"), Some(RObject::Vector(v)) if matches!(&v.data, VectorData::Integer(x) if x.first() == Some(&1)));
    let attributes = get("attributes")
        .filter(|a| matches!(a, RObject::Pairlist(_)))
        .cloned();
    Ok(RSaid {
        sxptype,
        object,
        attributes,
        refs,
    })
}

/// The R array of the Tensor message in the file at `path`, with the
/// reference table its attributes use. At most `max_memory` bytes of
/// values are made.
pub fn read_tensor_file(path: &std::path::Path, max_memory: u64) -> Result<(RObject, RefTable)> {
    let label = path.display().to_string();
    let f =
        std::fs::File::open(path).map_err(|e| Error::io(&e, &format!("cannot open '{label}'")))?;
    read_tensor(&f, &label, max_memory)
}

/// The R array of the Tensor message in `f` (`label`: what it is, for
/// errors), as [`read_tensor_file`] makes it.
pub fn read_tensor(
    f: &dyn MessageBytes,
    label: &str,
    max_memory: u64,
) -> Result<(RObject, RefTable)> {
    let h = read_header(f)?;
    let said = match &h.r {
        Some(text) => Some(r_said(text)?),
        None => None,
    };
    let width = width_of(&h.element);
    // a complex array: R's interleaved parts are the last dimension, moved
    // first
    let complex = said.as_ref().is_some_and(|s| s.sxptype == sxp::CPLX);
    let (shape, strides, width_out) = if complex {
        if h.element != DataType::Float64 || h.shape.last() != Some(&2) {
            return Err(Error::corrupt(
                "the tensor says it holds complex values, but its last dimension is not of 2 doubles",
            ));
        }
        let k = h.shape.len() - 1;
        let mut shape = vec![2];
        shape.extend_from_slice(&h.shape[..k]);
        let mut strides = vec![h.strides[k]];
        strides.extend_from_slice(&h.strides[..k]);
        (shape, strides, 8)
    } else {
        (h.shape.clone(), h.strides.clone(), width)
    };
    let count: u64 = shape.iter().map(|&d| d as u64).product();
    // what R cannot hold, refused before anything is allocated
    types::tensor_r_kind(&h.element).map_err(Error::unsupported)?;
    let bytes = count.saturating_mul(width_out as u64);
    if bytes > max_memory {
        return Err(Error::limit_of(
            rdarrow_format::base::error::LimitKind::Memory,
            format!(
                "the tensor's {count} values take {bytes} bytes, more than the {max_memory} bytes of memory allowed"
            ),
        ));
    }
    let io = |e: std::io::Error| Error::io(&e, &format!("cannot read '{label}'"));
    let contiguous = {
        let mut step = width_out;
        shape.iter().zip(&strides).all(|(&d, &s)| {
            let ok = d <= 1 || s == step;
            step = step.saturating_mul(d);
            ok
        })
    };
    // the values in R's order, in memory of the source element's width
    let mut values = arrow_buffer::MutableBuffer::from_len_zeroed(bytes as usize);
    if count > 0 {
        if contiguous {
            f.read_at(values.as_slice_mut(), h.data_offset)
                .map_err(io)?;
        } else {
            let mut src = vec![0u8; h.data_len as usize];
            f.read_at(&mut src, h.data_offset).map_err(io)?;
            gather(&src, width_out, &shape, &strides, values.as_slice_mut());
        }
    }
    let values: Buffer = values.into();
    // the dimensions R's `dim` says (a complex array's parts are not one)
    let dims = if complex {
        &h.shape[..h.shape.len() - 1]
    } else {
        &h.shape[..]
    };
    let len = dims.iter().product::<usize>() as u64;
    // the array rdarrow wrote: its R type and attributes, where they agree
    // with the tensor
    if let Some(s) = said {
        if let Some(data) = said_values(s.sxptype, &h.element, &values) {
            let obj = RObject::Vector(Box::new(Vector {
                flags: Flags {
                    levels: 0,
                    object: s.object,
                },
                data,
                attributes: s.attributes,
            }));
            let agrees = match rdarrow_format::checks::consistency::dims(&obj, &s.refs, len) {
                Ok(Some(d)) => d == dims,
                Ok(None) => dims.len() == 1,
                Err(_) => false,
            };
            if agrees {
                // attributes from a stranger's file: what R can build, and
                // no code where R keeps none
                rdarrow_format::checks::validate::check_for_r(&obj, &s.refs).map_err(|e| {
                    Error::corrupt(format!("the tensor's \"r\" metadata: {}", e.message))
                })?;
                return Ok((obj, s.refs));
            }
        }
    }
    // any other: the values as the type mapping makes an Arrow array of
    // them (int64 integer where every value fits, else integer64), with
    // `dim` and names(dimnames) when the dimensions have names
    let mut m = ObjectMaker::with_refs(RefTable::default());
    let field = arrow_schema::Field::new("tensor", h.element.clone(), false);
    let mut obj =
        crate::from_arrow::column::column(&mut m, &field, primitive(&h.element, values)?.as_ref())?;
    let dim: Vec<i32> = dims
        .iter()
        .map(|&d| i32::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            Error::unsupported("a dimension of the tensor is longer than R's dimensions (2^31 - 1)")
        })?;
    crate::metadata::attributes::set_vector_attribute(&mut m, &mut obj, "dim", rdarrow_format::tree::make::ints(dim));
    if !h.names.is_empty() {
        let n: Vec<&str> = (0..dims.len())
            .map(|i| h.names.get(i).and_then(|n| n.as_deref()).unwrap_or(""))
            .collect();
        let list = m.named_list(&n, vec![RObject::Null; dims.len()]);
        crate::metadata::attributes::set_vector_attribute(&mut m, &mut obj, "dimnames", list);
    }
    // (a dimension's name R cannot hold: an embedded NUL)
    rdarrow_format::checks::validate::check_for_r(&obj, &m.refs)
        .map_err(|e| Error::unsupported(format!("the tensor's dimension names: {}", e.message)))?;
    Ok((obj, m.refs))
}

/// The values (in R's order) as R's own vector of `sxptype`, when the
/// element type is the one rdarrow writes for it ([`types::tensor_element`]).
fn said_values(sxptype: u8, element: &DataType, values: &Buffer) -> Option<VectorData> {
    use arrow_buffer::ScalarBuffer;
    let integer64 = sxptype == sxp::REAL && *element == DataType::Int64;
    if types::tensor_element(sxptype, integer64).as_ref() != Some(element) {
        return None;
    }
    let n = |w: usize| values.len() / w;
    let v = values.clone();
    Some(match sxptype {
        sxp::LGL => VectorData::Logical(ScalarBuffer::new(v, 0, n(4))),
        sxp::INT => VectorData::Integer(ScalarBuffer::new(v, 0, n(4))),
        // an integer64's int64 bits in doubles
        sxp::REAL => VectorData::Real(ScalarBuffer::new(v, 0, n(8))),
        sxp::CPLX => VectorData::Complex(ScalarBuffer::new(v, 0, n(8))),
        _ => VectorData::Raw(v),
    })
}

/// The values of a tensor of `element` as an Arrow array (no copy).
fn primitive(element: &DataType, values: Buffer) -> Result<arrow_array::ArrayRef> {
    use arrow_array::types::*;
    use arrow_array::{ArrayRef, ArrowPrimitiveType, PrimitiveArray};
    fn of<T: ArrowPrimitiveType>(b: Buffer) -> ArrayRef {
        let n = b.len() / std::mem::size_of::<T::Native>();
        std::sync::Arc::new(PrimitiveArray::<T>::new(
            arrow_buffer::ScalarBuffer::new(b, 0, n),
            None,
        ))
    }
    Ok(match element {
        DataType::Int8 => of::<Int8Type>(values),
        DataType::Int16 => of::<Int16Type>(values),
        DataType::Int32 => of::<Int32Type>(values),
        DataType::Int64 => of::<Int64Type>(values),
        DataType::UInt8 => of::<UInt8Type>(values),
        DataType::UInt16 => of::<UInt16Type>(values),
        DataType::UInt32 => of::<UInt32Type>(values),
        DataType::Float32 => of::<Float32Type>(values),
        DataType::Float64 => of::<Float64Type>(values),
        other => {
            return Err(Error::unsupported(format!(
                "a tensor of {other} has no R array"
            )))
        }
    })
}

/// Write the Tensor message in the file at `input` as an R data file.
/// Returns the array's dimensions.
pub fn tensor_file_to_rdata(
    input: &std::path::Path,
    output: &std::path::Path,
    o: &rdarrow_format::write::ObjectFileOptions,
    max_memory: u64,
) -> Result<Vec<usize>> {
    let (obj, refs) = read_tensor_file(input, max_memory)?;
    let len = obj.vector_len(&refs);
    let dims = rdarrow_format::checks::consistency::dims(&obj, &refs, len)?.unwrap_or(vec![len as usize]);
    rdarrow_format::write::write_object_file(output, obj, refs, o)?;
    Ok(dims)
}

#[cfg(test)]
mod tests;
