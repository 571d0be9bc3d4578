//! R objects as Python values, for `read_objects()`.
//!
//! The default (`Shape::NumPy`): each atomic vector is an [`RVector`], its
//! payload a [`Payload`] that NumPy takes without a copy (the engine's
//! buffer, kept alive by the array made over it), with R's `NA` as a mask
//! the engine computes (the NA patterns live in the format crate), its
//! names, dim, dimnames, class, levels and zone beside it; a data frame is
//! an [`RFrame`] (the Arrow table `read_table()` makes of it, and its row
//! names); an S4 object an [`RS4`] of its class and slots. The Python
//! package (`rdarrow/_values.py`) makes NumPy and pandas values of these.
//!
//! `Shape::Plain`: plain Python values, for users without NumPy: a vector
//! is a list (a named one a dict), `NA` is `None`, a factor its levels'
//! strings, a Date a `datetime.date`, a POSIXct an aware
//! `datetime.datetime` (UTC), a list a list (a named one a dict), a data
//! frame a dict of columns, an S4 object an [`RS4`] of plain slots.
//!
//! What has no value (functions, environments, calls) is `None`, and its
//! kind is reported so the caller can warn.

use arrow_buffer::Buffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use pyo3::IntoPyObjectExt;
use rdarrow_arrow::checks::consistency;
use rdarrow_arrow::tree::object_path::quote_name;
use rdarrow_arrow::tree::na;
use rdarrow_arrow::tree::sxp;
use rdarrow_arrow::tree::RObject;
use rdarrow_arrow::tree::RefTable;
use rdarrow_arrow::tree::StringVector;
use rdarrow_arrow::tree::VectorData;
use rdarrow_arrow::table_from_object;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::Document;
use rdarrow_arrow::ErrorKind;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// Nesting deeper than this is refused (the conversion recurses).
const MAX_DEPTH: usize = 2000;

/// What `read_objects()` makes of R's vectors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// [`RVector`]s over the engine's buffers, for NumPy and pandas.
    NumPy,
    /// Lists, dicts and Python scalars.
    Plain,
}

/// An atomic payload as NumPy takes it without a copy: NumPy's array
/// interface over the engine's buffer, which this object owns and the
/// array made over it keeps alive. The memory is the caller's alone (no
/// other value holds it), so the array is writable.
#[pyclass(frozen, module = "rdarrow._rdarrow")]
pub struct Payload {
    buffer: Buffer,
    typestr: &'static str,
    len: usize,
}

/// NumPy's type string of a native-order number of `bytes` bytes of `kind`
/// (`f`, `i`, `c`, `b`).
fn typestr(kind: char, bytes: usize) -> &'static str {
    let little = cfg!(target_endian = "little");
    match (kind, bytes, little) {
        ('f', 8, true) => "<f8",
        ('f', 8, false) => ">f8",
        ('i', 4, true) => "<i4",
        ('i', 4, false) => ">i4",
        ('i', 8, true) => "<i8",
        ('i', 8, false) => ">i8",
        ('c', 16, true) => "<c16",
        ('c', 16, false) => ">c16",
        ('u', 1, _) => "|u1",
        _ => "|b1",
    }
}

#[pymethods]
impl Payload {
    /// NumPy's array interface (version 3): shape, type and address.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (self.len,))?;
        d.set_item("typestr", self.typestr)?;
        d.set_item("data", (self.buffer.as_ptr() as usize, false))?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// The address of the first value (for the tests that no copy was made).
    #[getter]
    fn address(&self) -> usize {
        self.buffer.as_ptr() as usize
    }
}

impl Payload {
    fn new(buffer: Buffer, typestr: &'static str, width: usize) -> Self {
        let len = buffer.len() / width;
        Payload {
            buffer,
            typestr,
            len,
        }
    }
}

/// One atomic R vector: its type (`kind`: `logical`, `integer`,
/// `integer64`, `double`, `complex`, `character`), its values (`data`: a
/// [`Payload`], or for strings a list of `str`/`None`), R's `NA` as a
/// mask (`na`: a [`Payload`] of booleans, `None` when there is none), and
/// the attributes that shape it.
#[pyclass(frozen, get_all, module = "rdarrow._rdarrow")]
pub struct RVector {
    kind: String,
    data: Py<PyAny>,
    na: Option<Py<PyAny>>,
    names: Option<Py<PyAny>>,
    dim: Option<Vec<usize>>,
    dimnames: Option<Py<PyAny>>,
    dimnames_names: Option<Py<PyAny>>,
    classes: Vec<String>,
    levels: Option<Py<PyAny>>,
    tzone: Option<String>,
    units: Option<String>,
}

/// A data frame as `read_table()` makes it: an Arrow C stream capsule of
/// its table (the engine's buffers, no copy), its own row names (`None`
/// for R's automatic 1, 2, ...) and the name of the pandas index they
/// were written from.
#[pyclass(frozen, get_all, module = "rdarrow._rdarrow")]
pub struct RFrame {
    stream: Py<PyAny>,
    row_names: Py<PyAny>,
    index_name: Option<String>,
}

/// An R array as a tensor (`read_objects(as_tensor=True)`,
/// `to_tensor()`): its values as R holds them (`data`, a [`Payload`] of
/// the element type, no copy), the tensor's `shape`, byte `strides` (R's
/// column-major order) and dimension `names`, as the Arrow bridge's
/// `tensor::TensorParts` lays them out.
#[pyclass(frozen, get_all, module = "rdarrow._rdarrow")]
pub struct RTensor {
    data: Py<PyAny>,
    shape: Vec<usize>,
    strides: Vec<usize>,
    names: Vec<Option<String>>,
}

impl RTensor {
    /// The tensor of the R array `obj`.
    pub fn of(py: Python<'_>, obj: &RObject, refs: &RefTable) -> PyResult<RTensor> {
        let t = rdarrow_arrow::files::tensor::TensorParts::of(obj, refs).map_err(crate::errors::py_err)?;
        let (kind, width) = match t.element {
            arrow_schema::DataType::Int32 => ('i', 4),
            arrow_schema::DataType::Int64 => ('i', 8),
            arrow_schema::DataType::UInt8 => ('u', 1),
            _ => ('f', 8),
        };
        Ok(RTensor {
            data: Payload::new(t.data, typestr(kind, width), width).into_py_any(py)?,
            shape: t.shape,
            strides: t.strides,
            names: t.names,
        })
    }
}

/// An S4 object: its class, the class's package, and its slots by name;
/// for a sparse matrix of the Matrix package (or a class extending one)
/// the letter of its storage (`sparse`: `C`, `R` or `T`), its slots checked
/// to agree (the format crate's `structure`) so that scipy may take them
/// as they are.
#[pyclass(frozen, get_all, module = "rdarrow._rdarrow")]
pub struct RS4 {
    class_name: Option<String>,
    package: Option<String>,
    slots: Py<PyAny>,
    sparse: Option<&'static str>,
}

pub struct ToPython<'a> {
    pub refs: &'a RefTable,
    pub native: Option<&'a [u8]>,
    /// The kinds of objects that became `None`.
    pub dropped: BTreeSet<String>,
    pub shape: Shape,
    /// The document the objects came from, for data frames' tables
    /// (`None`: data frames are lists of columns).
    pub doc: Option<&'a Document>,
    /// Where the object being converted is, as R code reaches it
    /// (`pbmc@assays$RNA@counts`): what a structure's error names.
    pub path: String,
    /// Arrays (vectors with `dim` the Arrow bridge lays out as tensors)
    /// become [`RTensor`]s.
    pub tensors: bool,
}

/// A conversion that tracks where inside the object it is, as R code
/// reaches it (`pbmc@assays$RNA@counts`), for its errors.
pub trait Tracked: Sized {
    fn path_mut(&mut self) -> &mut String;

    /// `f` with `step` (`$name`, `@slot`, `[[k]]`) added to the path.
    fn within<T>(&mut self, step: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path_mut().len();
        self.path_mut().push_str(step);
        let out = f(self);
        self.path_mut().truncate(len);
        out
    }
}

impl Tracked for ToPython<'_> {
    fn path_mut(&mut self) -> &mut String {
        &mut self.path
    }
}

impl<'a> ToPython<'a> {
    /// Plain values of objects whose references are `refs`.
    pub fn plain(refs: &'a RefTable) -> Self {
        ToPython {
            refs,
            native: None,
            dropped: Default::default(),
            shape: Shape::Plain,
            doc: None,
            path: String::new(),
            tensors: false,
        }
    }

    /// A structure check's error (the format crate's `structure`) at the
    /// object being converted.
    fn inconsistent(&self, e: rdarrow_arrow::Error) -> PyErr {
        crate::errors::py_err(consistency::at_place(&self.path, e))
    }

    /// The vector's dim, dimnames, names and factor codes checked, before
    /// any of them shapes a value.
    fn check(&self, obj: &RObject, data: &VectorData) -> PyResult<()> {
        consistency::check_vector(obj, self.refs, data).map_err(|e| self.inconsistent(e))
    }

    pub fn value(&mut self, py: Python<'_>, obj: &RObject, depth: usize) -> PyResult<Py<PyAny>> {
        if depth > MAX_DEPTH {
            return Err(crate::errors::py_err(rdarrow_arrow::Error::limit(format!(
                "the object nests more than {MAX_DEPTH} levels deep"
            ))));
        }
        if self.tensors && rdarrow_arrow::files::tensor::is_tensor_value(obj, self.refs) {
            return RTensor::of(py, obj, self.refs)?.into_py_any(py);
        }
        Ok(match obj {
            RObject::Null => py.None(),
            RObject::Vector(v) => {
                self.check(obj, &v.data)?;
                self.vector(py, obj, &v.data, depth)?
            }
            RObject::Altrep(a) => {
                let data = rdarrow_arrow::tree::altrep::expand(a, self.refs)
                    .map_err(|e| self.inconsistent(e))?;
                self.check(obj, &data)?;
                self.vector(py, obj, &data, depth)?
            }
            RObject::Pairlist(p) if p.cells.first().is_some_and(|c| c.sxptype == sxp::LIST) => {
                // a pairlist of values: a dict by tag
                let d = PyDict::new(py);
                for (k, c) in p.cells.iter().enumerate() {
                    let key = match &c.tag {
                        Some(RObject::Ref(id)) => self
                            .refs
                            .symbol_name(*id)
                            .map(|b| String::from_utf8_lossy(b).into_owned())
                            .unwrap_or_else(|| k.to_string()),
                        _ => k.to_string(),
                    };
                    let step = format!("${}", quote_name(&key));
                    let v = self.within(&step, |me| me.value(py, &c.car, depth + 1))?;
                    d.set_item(key, v)?;
                }
                d.into_any().unbind()
            }
            RObject::S4(s) => self.s4(py, obj, s.attributes.as_ref(), depth)?,
            other => {
                self.dropped.insert(
                    rdarrow_arrow::tree::sxp::type_name(other.sxptype(self.refs)).to_string(),
                );
                py.None()
            }
        })
    }

    /// An S4 object: its class, the class's package and its slots (a
    /// sparse matrix's entries, like every vector, as [`RVector`]s over
    /// the engine's buffers).
    fn s4(
        &mut self,
        py: Python<'_>,
        obj: &RObject,
        attrs: Option<&RObject>,
        depth: usize,
    ) -> PyResult<Py<PyAny>> {
        let refs = self.refs;
        let class = obj.class(refs);
        let package = consistency::class_package(obj, refs);
        // a sparse matrix (or a class extending one) whose slots agree, so
        // that scipy may take them as they are
        let sparse = consistency::sparse_storage(obj, refs);
        if let Some(storage) = sparse {
            consistency::check_sparse(obj, refs, storage).map_err(|e| self.inconsistent(e))?;
        }
        let slots = PyDict::new(py);
        if let Some(a) = attrs {
            for (name, value) in rdarrow_arrow::tree::pairlist_entries(a, refs) {
                let Some(name) = name else { continue };
                if name == b"class" {
                    continue;
                }
                let name = String::from_utf8_lossy(name).into_owned();
                // R keeps a slot's NULL as a symbol of that name
                let null = matches!(value, RObject::Ref(id)
                    if refs.symbol_name(*id) == Some(rdarrow_arrow::tree::S4_NULL));
                let value = if null {
                    py.None()
                } else {
                    let step = format!("@{}", quote_name(&name));
                    self.within(&step, |me| me.value(py, value, depth + 1))?
                };
                slots.set_item(name, value)?;
            }
        }
        RS4 {
            class_name: class.first().cloned(),
            package,
            slots: slots.into_any().unbind(),
            sparse: sparse.map(|s| s.letter()),
        }
        .into_py_any(py)
    }

    fn strings_of(&self, s: &StringVector) -> Vec<Option<String>> {
        (0..s.len())
            .map(|i| {
                s.get(i).map(|b| {
                    let (_, utf8) =
                        rdarrow_arrow::tree::encoding::to_utf8(b, s.levels(i), self.native);
                    String::from_utf8_lossy(&utf8).into_owned()
                })
            })
            .collect()
    }

    /// The strings of a character vector, compact (ALTREP) ones expanded
    /// (`as.character(1:2)` levels are R's deferred strings).
    fn texts(&self, obj: &RObject) -> Option<Vec<Option<String>>> {
        match data_of(obj, self.refs)? {
            Cow::Borrowed(VectorData::Character(s)) => Some(self.strings_of(s)),
            Cow::Owned(VectorData::Character(s)) => Some(self.strings_of(&s)),
            _ => None,
        }
    }

    /// A character attribute of `obj` as a list of strings.
    fn strings_attr(
        &self,
        py: Python<'_>,
        obj: &RObject,
        name: &str,
    ) -> PyResult<Option<Py<PyAny>>> {
        obj.attribute(self.refs, name)
            .and_then(|n| self.texts(n))
            .map(|s| s.into_py_any(py))
            .transpose()
    }

    fn vector(
        &mut self,
        py: Python<'_>,
        obj: &RObject,
        data: &VectorData,
        depth: usize,
    ) -> PyResult<Py<PyAny>> {
        if self.shape == Shape::NumPy {
            if let Some(v) = self.shaped(py, obj, data)? {
                return Ok(v);
            }
        }
        self.plain_vector(py, obj, data, depth)
    }

    /// An atomic vector as an [`RVector`], a data frame as an [`RFrame`];
    /// `None` for a list (made by [`Self::plain_vector`]).
    fn shaped(
        &mut self,
        py: Python<'_>,
        obj: &RObject,
        data: &VectorData,
    ) -> PyResult<Option<Py<PyAny>>> {
        let refs = self.refs;
        let class = obj.class_attr(refs);
        let has = |c: &str| class.iter().any(|x| x == c);
        let (kind, payload, na): (&str, Py<PyAny>, Option<Vec<bool>>) = match data {
            VectorData::Logical(x) | VectorData::Integer(x) => (
                if matches!(data, VectorData::Logical(_)) {
                    "logical"
                } else {
                    "integer"
                },
                Payload::new(x.inner().clone(), typestr('i', 4), 4).into_py_any(py)?,
                mask(x.iter().map(|&v| v == na::INTEGER)),
            ),
            VectorData::Real(x) if has("integer64") => (
                "integer64",
                Payload::new(x.inner().clone(), typestr('i', 8), 8).into_py_any(py)?,
                mask(x.iter().map(|&v| v.to_bits() as i64 == na::INTEGER64)),
            ),
            VectorData::Real(x) => (
                "double",
                Payload::new(x.inner().clone(), typestr('f', 8), 8).into_py_any(py)?,
                mask(x.iter().map(|&v| na::is_na_real(v))),
            ),
            VectorData::Complex(x) => (
                "complex",
                Payload::new(x.inner().clone(), typestr('c', 16), 16).into_py_any(py)?,
                mask(
                    x.chunks_exact(2)
                        .map(|c| na::is_na_real(c[0]) || na::is_na_real(c[1])),
                ),
            ),
            VectorData::Character(s) => ("character", self.strings_of(s).into_py_any(py)?, None),
            VectorData::List(_) if has("data.frame") => {
                let Some(doc) = self.doc else { return Ok(None) };
                return self.frame(py, doc, obj);
            }
            _ => return Ok(None),
        };
        let na = na
            .map(|m| {
                let bytes: Vec<u8> = m.into_iter().map(u8::from).collect();
                Payload::new(Buffer::from_vec(bytes), typestr('b', 1), 1).into_py_any(py)
            })
            .transpose()?;
        let dim = obj
            .attribute(refs, "dim")
            .and_then(|d| match data_of(d, refs)?.as_ref() {
                VectorData::Integer(x) => Some(x.iter().map(|&v| v.max(0) as usize).collect()),
                VectorData::Real(x) => Some(x.iter().map(|&v| v.max(0.0) as usize).collect()),
                _ => None,
            });
        let (dimnames, dimnames_names) = match obj.attribute(refs, "dimnames") {
            Some(dn) => {
                let parts: Vec<Py<PyAny>> = match data_of(dn, refs).as_deref() {
                    Some(VectorData::List(items)) => items
                        .iter()
                        .map(|it| match self.texts(it) {
                            Some(s) => s.into_py_any(py),
                            None => Ok(py.None()),
                        })
                        .collect::<PyResult<_>>()?,
                    _ => Vec::new(),
                };
                (
                    Some(PyList::new(py, parts)?.into_any().unbind()),
                    self.strings_attr(py, dn, "names")?,
                )
            }
            None => (None, None),
        };
        let text = |name: &str| {
            obj.attribute(refs, name)
                .and_then(|t| self.texts(t))
                .and_then(|s| s.into_iter().next().flatten())
        };
        Ok(Some(
            RVector {
                kind: kind.to_string(),
                data: payload,
                na,
                names: self.strings_attr(py, obj, "names")?,
                dim,
                dimnames,
                dimnames_names,
                levels: if has("factor") {
                    self.strings_attr(py, obj, "levels")?
                } else {
                    None
                },
                tzone: text("tzone"),
                units: text("units"),
                classes: class,
            }
            .into_py_any(py)?,
        ))
    }

    /// A data frame as `read_table()` makes it (`None`: one that does not
    /// convert, left to be a dict of its columns).
    fn frame(
        &mut self,
        py: Python<'_>,
        doc: &Document,
        obj: &RObject,
    ) -> PyResult<Option<Py<PyAny>>> {
        let opts = TableOptions {
            default_tz: rdarrow_arrow::session_zone(),
            time_unit: Some(arrow_schema::TimeUnit::Nanosecond),
            ..Default::default()
        };
        let table = match table_from_object(doc, obj, &opts) {
            Ok(t) => t,
            // damaged: an error naming the frame
            Err(e)
                if matches!(
                    e.kind,
                    ErrorKind::Corrupt | ErrorKind::Truncated | ErrorKind::Limit
                ) =>
            {
                return Err(self.inconsistent(e))
            }
            // a frame that does not convert: a dict of its columns
            Err(_) => return Ok(None),
        };
        let row_names = frame_row_names(py, &table.schema)?;
        let index_name = frame_index_name(&table.schema)?;
        let capsule = crate::streams::stream_capsule(py, table.batches, table.schema)?;
        Ok(Some(
            RFrame {
                stream: capsule.into_any().unbind(),
                row_names,
                index_name,
            }
            .into_py_any(py)?,
        ))
    }

    /// A vector as plain Python values.
    fn plain_vector(
        &mut self,
        py: Python<'_>,
        obj: &RObject,
        data: &VectorData,
        depth: usize,
    ) -> PyResult<Py<PyAny>> {
        let refs = self.refs;
        let class = obj.class_attr(refs);
        let has = |c: &str| class.iter().any(|x| x == c);
        let names = obj.attribute(refs, "names").and_then(|n| self.texts(n));
        let items: Vec<Py<PyAny>> = match data {
            VectorData::Integer(x) if has("factor") => {
                let levels = obj
                    .attribute(refs, "levels")
                    .and_then(|l| self.texts(l))
                    .unwrap_or_default();
                x.iter()
                    .map(|&c| {
                        let level = (c != na::INTEGER && c >= 1)
                            .then(|| levels.get(c as usize - 1).cloned().flatten())
                            .flatten();
                        level.into_py_any(py)
                    })
                    .collect::<PyResult<_>>()?
            }
            VectorData::Logical(x) => x
                .iter()
                .map(|&b| (b != na::INTEGER).then_some(b != 0).into_py_any(py))
                .collect::<PyResult<_>>()?,
            VectorData::Integer(x) => x
                .iter()
                .map(|&i| (i != na::INTEGER).then_some(i).into_py_any(py))
                .collect::<PyResult<_>>()?,
            // bit64's integer64: the double's bits are the integer, its
            // smallest value NA
            VectorData::Real(x) if has("integer64") => x
                .iter()
                .map(|&v| {
                    let i = v.to_bits() as i64;
                    (i != i64::MIN).then_some(i).into_py_any(py)
                })
                .collect::<PyResult<_>>()?,
            VectorData::Real(x) if has("Date") || has("POSIXct") => {
                let dt = py.import("datetime")?;
                let epoch_day = dt.getattr("date")?.call1((1970, 1, 1))?;
                let utc = dt.getattr("timezone")?.getattr("utc")?;
                let from_ts = dt.getattr("datetime")?.getattr("fromtimestamp")?;
                let delta = dt.getattr("timedelta")?;
                x.iter()
                    .map(|&v| {
                        if na::is_na_real(v) || !v.is_finite() {
                            return Ok(py.None());
                        }
                        if has("Date") {
                            let days = v.floor();
                            if days.abs() > 3.0e6 {
                                return Ok(py.None()); // past datetime's years
                            }
                            Ok(epoch_day
                                .call_method1("__add__", (delta.call1((days as i64,))?,))?
                                .unbind())
                        } else {
                            if v.abs() > 2.5e11 {
                                return Ok(py.None());
                            }
                            Ok(from_ts.call1((v, &utc))?.unbind())
                        }
                    })
                    .collect::<PyResult<_>>()?
            }
            VectorData::Real(x) => x
                .iter()
                .map(|&v| (!na::is_na_real(v)).then_some(v).into_py_any(py))
                .collect::<PyResult<_>>()?,
            VectorData::Complex(x) => x
                .chunks_exact(2)
                .map(|c| {
                    if na::is_na_real(c[0]) || na::is_na_real(c[1]) {
                        Ok(py.None())
                    } else {
                        Ok(pyo3::types::PyComplex::from_doubles(py, c[0], c[1])
                            .into_any()
                            .unbind())
                    }
                })
                .collect::<PyResult<_>>()?,
            VectorData::Character(s) => self
                .strings_of(s)
                .into_iter()
                .map(|v| v.into_py_any(py))
                .collect::<PyResult<_>>()?,
            VectorData::Raw(b) => return Ok(PyBytes::new(py, b.as_slice()).into_any().unbind()),
            VectorData::List(items) => items
                .iter()
                .enumerate()
                .map(|(k, it)| {
                    let step = match names.as_ref().and_then(|n| n.get(k)).cloned().flatten() {
                        Some(n) if !n.is_empty() => format!("${}", quote_name(&n)),
                        _ => format!("[[{}]]", k + 1),
                    };
                    self.within(&step, |me| me.value(py, it, depth + 1))
                })
                .collect::<PyResult<_>>()?,
            VectorData::Expression(_) => {
                self.dropped.insert("expression".into());
                return Ok(py.None());
            }
            VectorData::Skipped { .. } | VectorData::Deferred(_) | VectorData::Consumed(_) => {
                return Err(crate::errors::py_err(rdarrow_arrow::Error::internal(
                    "a payload was not read",
                )))
            }
        };
        // named: a dict, when the names are all there and distinct (a data
        // frame's columns by name)
        if let Some(names) = names.filter(|n| n.len() == items.len()) {
            let distinct: BTreeSet<&str> = names.iter().flatten().map(String::as_str).collect();
            if distinct.len() == names.len()
                && names
                    .iter()
                    .all(|n| n.as_deref().is_some_and(|s| !s.is_empty()))
            {
                let d = PyDict::new(py);
                for (n, v) in names.into_iter().zip(items) {
                    d.set_item(n.expect("checked"), v)?;
                }
                return Ok(d.into_any().unbind());
            }
        }
        Ok(PyList::new(py, items)?.into_any().unbind())
    }
}

/// `Some` mask when any value is `NA`.
fn mask(na: impl Iterator<Item = bool> + Clone) -> Option<Vec<bool>> {
    na.clone().any(|b| b).then(|| na.collect())
}

/// A table's own row names (not 1..n) from its `"r"` metadata, as plain
/// values, for a pandas index.
pub fn frame_row_names(py: Python<'_>, schema: &arrow_schema::Schema) -> PyResult<Py<PyAny>> {
    match rdarrow_arrow::metadata::document::row_names(schema).map_err(crate::errors::py_err)? {
        Some((rn, refs)) => ToPython::plain(&refs).value(py, &rn, 0),
        None => Ok(py.None()),
    }
}

/// The name of the pandas index a table's row names were written from,
/// from its `"r"` metadata.
pub fn frame_index_name(schema: &arrow_schema::Schema) -> PyResult<Option<String>> {
    rdarrow_arrow::metadata::document::index_name(schema).map_err(crate::errors::py_err)
}

/// The payload of a vector node (a compact one expanded).
fn data_of<'o>(obj: &'o RObject, refs: &RefTable) -> Option<Cow<'o, VectorData>> {
    consistency::payload(obj, refs).ok().flatten()
}
