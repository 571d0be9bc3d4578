//! Python values as R objects, for `write_rds()`/`write_rdata()` of any
//! value. The Python package (`rdarrow/_values.py`) decides what each
//! value becomes (the one table of the mapping, both ways) and hands this
//! module a small tree of nodes:
//!
//! - `None`: `NULL`;
//! - `("vector", type, data, mask, attrs)`: an atomic vector (`type`
//!   `logical`, `integer`, `double`, `complex`, `raw` or `integer64`;
//!   `data` a contiguous NumPy array of the type's native numbers, taken
//!   as it is, no copy; `mask` `None` or booleans, `True` where R's `NA`
//!   goes), a character vector (`data` a list of `str`/`None`) or a list
//!   (`data` a list of nodes); a sixth element `True` makes it the data
//!   part of an S4 object (R's S4 bit);
//! - `("s4", attrs)`: an S4 object without a data part, its slots the
//!   attributes (a `None` slot kept as R keeps a slot's `NULL`);
//! - `("frame", capsule, attrs)`: a table (an Arrow C stream) made an R
//!   object as every table is (the Arrow bridge), `attrs` set over its own.
//!
//! `attrs` is a list of `(name, node)`. R's `NA` patterns are the format
//! crate's; what R cannot hold (a dim that disagrees with the length, ...)
//! is refused by the format crate's checks, naming the place.

use crate::errors::py_err;
use crate::values::Tracked;
use arrow_buffer::{Buffer, ScalarBuffer};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList, PyString, PyTuple};
use rdarrow_arrow::tree::make::strings;
use rdarrow_arrow::tree::make::ObjectMaker;
use rdarrow_arrow::tree::levels;
use rdarrow_arrow::tree::na;
use rdarrow_arrow::tree::set_attribute;
use rdarrow_arrow::tree::AttrOnly;
use rdarrow_arrow::tree::Flags;
use rdarrow_arrow::tree::RObject;
use rdarrow_arrow::tree::VectorData;
use rdarrow_arrow::Error;
use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;
use std::sync::Arc;

/// Nesting deeper than this is refused (the conversion recurses).
const MAX_DEPTH: usize = 2000;

/// A NumPy array kept alive by the buffer made over its memory.
struct Held(#[allow(dead_code)] AssertUnwindSafe<Py<PyAny>>);

/// Makes the engine's objects of the Python package's nodes.
pub struct FromPython<'m> {
    pub maker: &'m mut ObjectMaker,
    /// Where the node being made is (`$a[[2]]`), for errors.
    path: String,
}

fn usage(msg: String) -> PyErr {
    py_err(Error::usage(msg))
}

impl Tracked for FromPython<'_> {
    fn path_mut(&mut self) -> &mut String {
        &mut self.path
    }
}

impl<'m> FromPython<'m> {
    pub fn new(maker: &'m mut ObjectMaker) -> Self {
        FromPython {
            maker,
            path: String::new(),
        }
    }

    fn here(&self, what: &str) -> PyErr {
        let at = if self.path.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.path)
        };
        usage(format!("cannot write the value{at}: {what}"))
    }

    /// The object of one node.
    pub fn object(&mut self, node: &Bound<'_, PyAny>, depth: usize) -> PyResult<RObject> {
        if depth > MAX_DEPTH {
            return Err(py_err(Error::limit(format!(
                "the value nests more than {MAX_DEPTH} levels deep"
            ))));
        }
        if node.is_none() {
            return Ok(RObject::Null);
        }
        let t = node
            .cast::<PyTuple>()
            .map_err(|_| self.here("not a node of the value table"))?;
        let tag: String = t.get_item(0)?.extract()?;
        match (tag.as_str(), t.len()) {
            ("vector", 5 | 6) => {
                let kind: String = t.get_item(1)?.extract()?;
                let data = self.data(&kind, &t.get_item(2)?, &t.get_item(3)?, depth)?;
                let attrs = self.attributes(&t.get_item(4)?, depth)?;
                let mut obj = self.vector(data, attrs);
                // an S4 object whose data part is this vector
                if t.len() == 6 && t.get_item(5)?.is_truthy()? {
                    if let RObject::Vector(v) = &mut obj {
                        v.flags.levels |= levels::S4_OBJECT;
                    }
                }
                Ok(obj)
            }
            ("s4", 2) => {
                let mut attrs = self.attributes(&t.get_item(1)?, depth)?;
                // a slot's NULL is kept as R keeps it: a symbol of that name
                for (_, v) in attrs.iter_mut() {
                    if matches!(v, RObject::Null) {
                        let name = String::from_utf8_lossy(rdarrow_arrow::tree::S4_NULL);
                        *v = self.maker.symbol(&name);
                    }
                }
                Ok(RObject::S4(Box::new(AttrOnly {
                    flags: Flags {
                        levels: levels::S4_OBJECT,
                        object: true,
                    },
                    attributes: self.pairlist(attrs),
                })))
            }
            ("frame", 3) => {
                let capsule = t.get_item(1)?;
                let capsule = capsule
                    .cast::<PyCapsule>()
                    .map_err(|_| self.here("a table is not an Arrow C stream"))?;
                let (schema, batches) = crate::streams::import_stream(capsule)?;
                let mut obj =
                    rdarrow_arrow::from_arrow::frame::object_with(self.maker, &schema, &batches)
                        .map_err(|e| self.engine(e))?;
                drop(batches);
                for (name, value) in self.attributes(&t.get_item(2)?, depth)? {
                    let tag = self.maker.symbol(&name);
                    if let RObject::Vector(v) = &mut obj {
                        if name == "class" {
                            v.flags.object = true;
                        }
                        set_attribute(
                            &mut v.attributes,
                            tag,
                            name.as_bytes(),
                            &self.maker.refs,
                            value,
                        );
                    }
                }
                Ok(obj)
            }
            _ => Err(self.here(&format!("unknown node '{tag}'"))),
        }
    }

    fn engine(&self, e: Error) -> PyErr {
        if self.path.is_empty() {
            py_err(e)
        } else {
            py_err(Error {
                message: format!("{}: {}", self.path, e.message),
                ..e
            })
        }
    }

    fn vector(&mut self, data: VectorData, attrs: Vec<(String, RObject)>) -> RObject {
        let (names, values): (Vec<String>, Vec<RObject>) = attrs.into_iter().unzip();
        let attrs = names.iter().map(String::as_str).zip(values).collect();
        self.maker.vector(data, attrs)
    }

    fn pairlist(&mut self, attrs: Vec<(String, RObject)>) -> Option<RObject> {
        let (names, values): (Vec<String>, Vec<RObject>) = attrs.into_iter().unzip();
        let items = names.iter().map(String::as_str).zip(values).collect();
        self.maker.tagged_pairlist(items)
    }

    fn attributes(
        &mut self,
        attrs: &Bound<'_, PyAny>,
        depth: usize,
    ) -> PyResult<Vec<(String, RObject)>> {
        let mut out = Vec::new();
        if attrs.is_none() {
            return Ok(out);
        }
        let list = attrs
            .cast::<PyList>()
            .map_err(|_| self.here("attributes are not a list"))?;
        for item in list.iter() {
            let (name, value): (String, Bound<'_, PyAny>) = item.extract()?;
            if name.is_empty() {
                return Err(self.here("an attribute without a name"));
            }
            let step = format!("@attr({name})");
            let obj = self.within(&step, |me| me.object(&value, depth + 1))?;
            out.push((name, obj));
        }
        Ok(out)
    }

    /// A vector's payload: NumPy's memory as it is, R's `NA` set where
    /// the mask says (on a copy: the caller's array is left alone).
    fn data(
        &mut self,
        kind: &str,
        data: &Bound<'_, PyAny>,
        mask: &Bound<'_, PyAny>,
        depth: usize,
    ) -> PyResult<VectorData> {
        let mask: Option<Vec<bool>> = if mask.is_none() {
            None
        } else {
            Some(
                self.numbers(mask, "b", 1)?
                    .iter()
                    .map(|&b| b != 0)
                    .collect(),
            )
        };
        let n_mask = mask.as_ref().map(Vec::len);
        let fit = |me: &Self, n: usize| -> PyResult<()> {
            match n_mask {
                Some(m) if m != n => Err(me.here(&format!("a mask of {m} values for {n} values"))),
                _ => Ok(()),
            }
        };
        Ok(match kind {
            "logical" | "integer" => {
                let v: ScalarBuffer<i32> = self.sized(data, "i", 4)?;
                fit(self, v.len())?;
                let x = masked(v, mask.as_deref(), na::INTEGER);
                if kind == "logical" {
                    VectorData::Logical(x)
                } else {
                    VectorData::Integer(x)
                }
            }
            "double" => {
                let v: ScalarBuffer<f64> = self.sized(data, "f", 8)?;
                fit(self, v.len())?;
                VectorData::Real(masked(v, mask.as_deref(), na::real()))
            }
            "integer64" => {
                // bit64's integer64: the numbers' bits in a double vector
                let v: ScalarBuffer<f64> = self.sized(data, "i", 8)?;
                fit(self, v.len())?;
                VectorData::Real(masked(v, mask.as_deref(), na::integer64(None)))
            }
            "complex" => {
                let v: ScalarBuffer<f64> = self.sized(data, "c", 16)?;
                fit(self, v.len() / 2)?;
                VectorData::Complex(match &mask {
                    Some(m) => v
                        .chunks_exact(2)
                        .zip(m)
                        .flat_map(|(c, &na)| if na { [na::real(); 2] } else { [c[0], c[1]] })
                        .collect(),
                    None => v,
                })
            }
            "raw" => {
                if mask.is_some() {
                    return Err(self.here("raw vectors have no NA"));
                }
                VectorData::Raw(self.numbers(data, "u", 1)?)
            }
            "character" => {
                let list = data
                    .cast::<PyList>()
                    .map_err(|_| self.here("strings are not a list"))?;
                let mut texts: Vec<Option<String>> = Vec::with_capacity(list.len());
                for (k, s) in list.iter().enumerate() {
                    if s.is_none() {
                        texts.push(None);
                        continue;
                    }
                    let s = s.cast::<PyString>().map_err(|_| {
                        self.here(&format!(
                            "element {} of a character vector is not a str",
                            k + 1
                        ))
                    })?;
                    let text: String = s.extract().map_err(|e| {
                        self.here(&format!("element {} is not valid text: {e}", k + 1))
                    })?;
                    texts.push(Some(text));
                }
                if let Some(m) = &mask {
                    fit(self, texts.len())?;
                    for (t, &na) in texts.iter_mut().zip(m) {
                        if na {
                            *t = None;
                        }
                    }
                }
                match strings(texts.iter().map(|t| t.as_deref().map(str::as_bytes))) {
                    RObject::Vector(v) => v.data,
                    _ => unreachable!("strings() makes a vector"),
                }
            }
            "list" => {
                let list = data
                    .cast::<PyList>()
                    .map_err(|_| self.here("a list's elements are not a list"))?;
                let mut items = Vec::with_capacity(list.len());
                for (k, item) in list.iter().enumerate() {
                    let step = format!("[[{}]]", k + 1);
                    items.push(self.within(&step, |me| me.object(&item, depth + 1))?);
                }
                VectorData::List(items)
            }
            other => return Err(self.here(&format!("unknown vector type '{other}'"))),
        })
    }

    /// A NumPy array's numbers (see [`Self::numbers`]) as `T`s.
    fn sized<T: arrow_buffer::ArrowNativeType>(
        &self,
        data: &Bound<'_, PyAny>,
        kind: &str,
        width: usize,
    ) -> PyResult<ScalarBuffer<T>> {
        let b = self.numbers(data, kind, width)?;
        let n = b.len() / std::mem::size_of::<T>();
        Ok(ScalarBuffer::new(b, 0, n))
    }

    /// The memory of a contiguous NumPy array of native numbers (`kind`
    /// and `width`: NumPy's type letter and size), kept alive by the
    /// buffer; a copy only where NumPy's memory is not aligned for the
    /// numbers.
    fn numbers(&self, data: &Bound<'_, PyAny>, kind: &str, width: usize) -> PyResult<Buffer> {
        let iface = data
            .getattr("__array_interface__")
            .map_err(|_| self.here("numbers are not a NumPy array"))?;
        let iface = iface
            .cast::<PyDict>()
            .map_err(|_| self.here("numbers are not a NumPy array"))?;
        let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
            iface
                .get_item(k)?
                .ok_or_else(|| self.here(&format!("a NumPy array without '{k}'")))
        };
        let typestr: String = get("typestr")?.extract()?;
        let native = if cfg!(target_endian = "little") {
            '<'
        } else {
            '>'
        };
        let want = format!("{native}{kind}{width}");
        let want_any = format!("|{kind}{width}");
        if typestr != want && typestr != want_any {
            return Err(self.here(&format!(
                "numbers of NumPy type {typestr} where {want} was expected"
            )));
        }
        if let Some(s) = iface.get_item("strides")? {
            if !s.is_none() {
                return Err(self.here("numbers are not contiguous"));
            }
        }
        let shape: Vec<usize> = get("shape")?.extract()?;
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(|| self.here("an array too large"))?;
        let (addr, _readonly): (usize, bool) = get("data")?.extract()?;
        if n == 0 {
            return Ok(arrow_buffer::MutableBuffer::new(0).into());
        }
        let Some(ptr) = NonNull::new(addr as *mut u8) else {
            return Err(self.here("a NumPy array without memory"));
        };
        let align = width.min(8);
        if addr % align != 0 {
            // SAFETY: NumPy's array interface: `n` bytes at `addr`, alive
            // while `data` is
            let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), n) };
            // an Arrow buffer is aligned for every number
            return Ok(Buffer::from_slice_ref(bytes));
        }
        let owner = Arc::new(Held(AssertUnwindSafe(data.clone().unbind())));
        // SAFETY: NumPy's array interface says `n` bytes live at `addr`
        // while the array does; the buffer keeps the array alive
        Ok(unsafe { Buffer::from_custom_allocation(ptr, n, owner) })
    }
}

/// `v` with R's `na` where `mask` is true (a copy), or `v` itself.
fn masked<T: arrow_buffer::ArrowNativeType>(
    v: ScalarBuffer<T>,
    mask: Option<&[bool]>,
    na: T,
) -> ScalarBuffer<T> {
    match mask {
        Some(m) => v
            .iter()
            .zip(m)
            .map(|(&x, &is_na)| if is_na { na } else { x })
            .collect(),
        None => v,
    }
}
