//! R objects as plain Python values, for `read_objects()`: a vector is a
//! list (a named one a dict), `NA` is `None`, a factor its levels' strings,
//! a Date a `datetime.date`, a POSIXct an aware `datetime.datetime` (UTC),
//! a list a list (a named one a dict), a data frame a dict of columns.
//! An S4 object is a dict of its class and slots (a sparse matrix's
//! entries as typed bytes, for the Python package to make a scipy.sparse
//! matrix of). What has no plain value (functions, environments, calls)
//! is `None`, and its kind is reported so the caller can warn.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use pyo3::IntoPyObjectExt;
use rdarrow_arrow::tree::{na, sxp, RObject, RefTable, StringVector, VectorData};
use std::collections::BTreeSet;

/// Nesting deeper than this is refused (the conversion recurses).
const MAX_DEPTH: usize = 2000;

pub struct ToPython<'a> {
    pub refs: &'a RefTable,
    pub native: Option<&'a [u8]>,
    /// The kinds of objects that became `None`.
    pub dropped: BTreeSet<String>,
}

impl<'a> ToPython<'a> {
    pub fn value(&mut self, py: Python<'_>, obj: &RObject, depth: usize) -> PyResult<Py<PyAny>> {
        if depth > MAX_DEPTH {
            return Err(crate::py_err(rdarrow_arrow::Error::limit(format!(
                "the object nests more than {MAX_DEPTH} levels deep"
            ))));
        }
        Ok(match obj {
            RObject::Null => py.None(),
            RObject::Vector(v) => self.vector(py, obj, &v.data, depth)?,
            RObject::Altrep(a) => {
                let data = rdarrow_arrow::altrep::expand(a, self.refs).map_err(crate::py_err)?;
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
                    d.set_item(key, self.value(py, &c.car, depth + 1)?)?;
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

    /// An S4 object: `{"__class__": <class>, "__package__": <package>,
    /// "__slots__": {<slot>: <value>}}`, which the Python package turns
    /// into a scipy.sparse matrix (a sparse matrix of the Matrix package)
    /// or a dict of its slots. The slots that hold a sparse matrix's
    /// entries are `(<numpy dtype>, <bytes>)`, read without a list per
    /// value.
    fn s4(
        &mut self,
        py: Python<'_>,
        obj: &RObject,
        attrs: Option<&RObject>,
        depth: usize,
    ) -> PyResult<Py<PyAny>> {
        let refs = self.refs;
        let sparse = rdarrow_arrow::arrow::sparse::storage_of(obj, refs).is_some();
        let class = obj.class(refs);
        let package = obj
            .attribute(refs, "class")
            .and_then(|c| c.attribute(refs, "package"))
            .and_then(|p| p.as_strings())
            .and_then(|s| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned()));
        let slots = PyDict::new(py);
        if let Some(a) = attrs {
            for (name, value) in rdarrow_arrow::tree::pairlist_entries(a, refs) {
                let Some(name) = name else { continue };
                if name == b"class" {
                    continue;
                }
                let name = String::from_utf8_lossy(name).into_owned();
                let entries = sparse && matches!(name.as_str(), "i" | "j" | "p" | "x");
                let v = match (entries, value) {
                    (true, RObject::Vector(v)) => match &v.data {
                        VectorData::Integer(x) => {
                            ("=i4", PyBytes::new(py, x.inner().as_slice())).into_py_any(py)?
                        }
                        VectorData::Logical(x) => {
                            ("?i4", PyBytes::new(py, x.inner().as_slice())).into_py_any(py)?
                        }
                        VectorData::Real(x) => {
                            ("=f8", PyBytes::new(py, x.inner().as_slice())).into_py_any(py)?
                        }
                        _ => self.value(py, value, depth + 1)?,
                    },
                    _ => self.value(py, value, depth + 1)?,
                };
                slots.set_item(name, v)?;
            }
        }
        let d = PyDict::new(py);
        d.set_item("__class__", class.first().cloned())?;
        d.set_item("__package__", package)?;
        d.set_item("__slots__", slots)?;
        Ok(d.into_any().unbind())
    }

    fn strings_of(&self, s: &StringVector) -> Vec<Option<String>> {
        (0..s.len())
            .map(|i| {
                s.get(i).map(|b| {
                    let (_, utf8) = rdarrow_arrow::encoding::to_utf8(b, s.levels(i), self.native);
                    String::from_utf8_lossy(&utf8).into_owned()
                })
            })
            .collect()
    }

    fn vector(
        &mut self,
        py: Python<'_>,
        obj: &RObject,
        data: &VectorData,
        depth: usize,
    ) -> PyResult<Py<PyAny>> {
        let refs = self.refs;
        let class = obj.class_attr(refs);
        let has = |c: &str| class.iter().any(|x| x == c);
        let names = obj
            .attribute(refs, "names")
            .and_then(|n| n.as_strings())
            .map(|s| self.strings_of(s));
        let items: Vec<Py<PyAny>> = match data {
            VectorData::Integer(x) if has("factor") => {
                let levels = obj
                    .attribute(refs, "levels")
                    .and_then(|l| l.as_strings())
                    .map(|s| self.strings_of(s))
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
                .map(|it| self.value(py, it, depth + 1))
                .collect::<PyResult<_>>()?,
            VectorData::Expression(_) => {
                self.dropped.insert("expression".into());
                return Ok(py.None());
            }
            VectorData::Skipped { .. } | VectorData::Deferred(_) | VectorData::Consumed(_) => {
                return Err(crate::py_err(rdarrow_arrow::Error::internal(
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
