//! Decoding the payloads a [`PayloadStore`] holds, as the parser decodes
//! them (the store itself keeps bytes: [`crate::read::spill`]).

use crate::base::error::{Error, Result};
use crate::read::{decode_placed, strings_at};
use crate::tree::*;
use arrow_buffer::{Buffer, ScalarBuffer};
use crate::read::spill::PayloadStore;

impl PayloadStore {
    /// Elements `[start, start + n)` of a deferred payload, decoded as the
    /// parser decodes them.
    pub fn read(&self, d: &Deferred, start: u64, n: u64) -> Result<VectorData> {
        if n == 0 {
            return Ok(empty_payload(d.sxptype));
        }
        let end = start
            .checked_add(n)
            .filter(|&e| e <= d.len)
            .ok_or_else(|| Error::internal("rows past the end of a column"))?;
        let width = match d.sxptype {
            crate::tree::sxp::LGL | crate::tree::sxp::INT => 4,
            crate::tree::sxp::REAL => 8,
            crate::tree::sxp::CPLX => 16,
            crate::tree::sxp::RAW => 1,
            _ => 0,
        };
        let data = if width > 0 {
            let mut inp = self.input(d.start + start * width, d.start + end * width);
            match d.sxptype {
                crate::tree::sxp::LGL => VectorData::Logical(ScalarBuffer::from(inp.read_ints(n)?)),
                crate::tree::sxp::INT => VectorData::Integer(ScalarBuffer::from(inp.read_ints(n)?)),
                crate::tree::sxp::REAL => {
                    VectorData::Real(ScalarBuffer::from(inp.read_doubles(n)?))
                }
                crate::tree::sxp::CPLX => {
                    VectorData::Complex(ScalarBuffer::from(inp.read_doubles(n * 2)?))
                }
                _ => VectorData::Raw(Buffer::from_vec(inp.read_raw(n)?)),
            }
        } else {
            let k = (start / Deferred::STRIDE) as usize;
            let from = *d
                .marks
                .get(k)
                .ok_or_else(|| Error::internal("a string column lacks its marks"))?;
            let last = end.div_ceil(Deferred::STRIDE) as usize;
            let to = d.marks.get(last).copied().unwrap_or(d.end);
            let mut inp = self.input(from, to);
            VectorData::Character(strings_at(
                &mut inp,
                start - k as u64 * Deferred::STRIDE,
                n,
            )?)
        };
        Ok(data)
    }

    /// A whole atomic payload decoded into the consumer's memory; `None`
    /// where the consumer gives none (or for strings).
    fn read_placed(
        &self,
        d: &Deferred,
        consumer: &dyn crate::read::Consumer,
    ) -> Result<Option<VectorData>> {
        let Some(width) = crate::tree::sxp::atomic_width(d.sxptype) else {
            return Ok(None);
        };
        let mut inp = self.input(d.start, d.start + d.len.saturating_mul(width));
        decode_placed(&mut inp, consumer, d.sxptype, d.len)
    }

    /// Decode the payloads of `obj` left in the stream: its own, and
    /// those of the elements of its lists, to any depth.
    pub fn materialize(&self, obj: &mut crate::tree::RObject) -> Result<()> {
        self.materialize_into(obj, None)
    }

    /// [`Self::materialize`], each atomic payload decoded into memory the
    /// consumer gives where it gives it ([`crate::read::Consumer::allocate`]):
    /// once, into the memory the result lives in.
    pub fn materialize_into(
        &self,
        obj: &mut crate::tree::RObject,
        consumer: Option<&std::sync::Arc<dyn crate::read::Consumer>>,
    ) -> Result<()> {
        use crate::tree::RObject;
        let mut todo: Vec<&mut RObject> = vec![obj];
        while let Some(o) = todo.pop() {
            // the payloads of elements and of attributes (an S4 object's
            // slots)
            let attrs = match o {
                RObject::Vector(v) => {
                    if let VectorData::Deferred(d) = &v.data {
                        let d = d.clone();
                        v.data = match consumer
                            .and_then(|c| self.read_placed(&d, c.as_ref()).transpose())
                        {
                            Some(placed) => placed?,
                            None => self.read(&d, 0, d.len)?,
                        };
                    }
                    if let VectorData::List(items) | VectorData::Expression(items) = &mut v.data {
                        todo.extend(items.iter_mut());
                    }
                    v.attributes.as_mut()
                }
                RObject::S4(s) => s.attributes.as_mut(),
                RObject::Pairlist(p) => {
                    for c in &mut p.cells {
                        todo.push(&mut c.car);
                        if let Some(a) = c.attributes.as_mut() {
                            todo.push(a);
                        }
                    }
                    todo.push(&mut p.tail);
                    None
                }
                RObject::Altrep(a) => Some(&mut a.attributes),
                _ => None,
            };
            if let Some(a) = attrs {
                todo.push(a);
            }
        }
        Ok(())
    }
}

/// An empty payload of R type `t`.
fn empty_payload(t: u8) -> VectorData {
    use crate::tree::{sxp, StringLevels, StringOffsets, StringVector};
    match t {
        sxp::LGL => VectorData::Logical(ScalarBuffer::from(Vec::new())),
        sxp::INT => VectorData::Integer(ScalarBuffer::from(Vec::new())),
        sxp::REAL => VectorData::Real(ScalarBuffer::from(Vec::new())),
        sxp::CPLX => VectorData::Complex(ScalarBuffer::from(Vec::new())),
        sxp::STR => VectorData::Character(StringVector {
            offsets: StringOffsets::Small(arrow_buffer::OffsetBuffer::new_empty()),
            data: Buffer::from_vec(Vec::<u8>::new()),
            validity: None,
            levels: StringLevels::Uniform(0),
        }),
        _ => VectorData::Raw(Buffer::from_vec(Vec::<u8>::new())),
    }
}

