//! What a read is asked to do: where decoded values go (the [`Consumer`]
//! and its [`Placement`]), and the limits and modes of one read
//! ([`ReadOptions`]).

use crate::wire::header::StreamHeader;
use crate::wire::decode::Input;
use crate::base::error::Result;
use crate::tree::*;
use crate::base::limits::physical_memory;

/// Where the payloads of the columns of top-level lists (a data frame's
/// columns, a list's elements) go, as a [`Consumer`] asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Decoded once, into the tree's buffers (Arrow buffers, which a
    /// consumer takes without a copy).
    #[default]
    Decode,
    /// The atomic columns' payloads left in the stream
    /// ([`VectorData::Deferred`]), to be read back by element range
    /// (binary and XDR streams; ASCII ones decode).
    Defer,
    /// As `Defer`, and the atomic elements of lists nested in those lists
    /// too, to any depth (the columns of a data frame inside a list, the
    /// vectors of a list of lists), so that one element can be read
    /// without decoding its siblings.
    DeferNested,
}

/// A column of a top-level list, handed to the [`Consumer`] on the parsing
/// thread as soon as it has been read.
pub struct Column<'a> {
    /// The column's node; the consumer may take its payload, leaving
    /// [`VectorData::Consumed`] in its place, or the whole object, leaving
    /// [`RObject::Taken`].
    pub object: &'a mut RObject,
    /// The reference table so far.
    pub refs: &'a RefTable,
    /// The stream's header.
    pub header: &'a StreamHeader,
    /// For a column whose payload stayed in the stream, read by
    /// [`crate::read_file_deferred`]: a store that already holds that
    /// payload, so that other threads can work on the column while the
    /// parse goes on.
    pub store: Option<crate::read::spill::PayloadStore>,
}

/// The one way decoded values reach their consumer (the Arrow bridge, the
/// bindings): the reader asks it where the columns' payloads go
/// ([`Consumer::placement`]) and hands it each column as soon as it is
/// read ([`Consumer::column`]), where it may convert the column and
/// release its payload, or start work on a payload left in the stream.
pub trait Consumer: Send + Sync {
    /// Where the payloads of the columns go.
    fn placement(&self) -> Placement {
        Placement::Decode
    }
    /// Whether it takes the columns at all ([`Consumer::column`]); a
    /// consumer that only places payloads does not.
    fn takes_columns(&self) -> bool {
        true
    }
    /// A column, just read.
    fn column(&self, column: Column<'_>) {
        let _ = column;
    }
    /// Memory for the payload of an atomic vector (logical, integer,
    /// double, complex or raw) of R type `sxptype` and `len` elements,
    /// outside attributes, environments and byte code, where the consumer
    /// wants the result to live (an R vector it allocated): the reader
    /// decodes the payload into it, once, and leaves a
    /// [`VectorData::Consumed`] holding the allocation's value. `None`
    /// (the default): the reader allocates.
    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        let _ = (sxptype, len);
        None
    }
    /// Where the strings of a character vector of `len` elements go, in
    /// the same places as [`Consumer::allocate`]'s payloads, from a stream
    /// whose header is `header`: the reader hands the sink each string as
    /// it is read and leaves the [`Consumed`] the sink ends with. `None`
    /// (the default): the reader keeps the strings in the tree.
    fn strings(&self, len: u64, header: &StreamHeader) -> Option<Box<dyn StringSink>> {
        let _ = (len, header);
        None
    }
}

/// The consumer's destination for one character vector's strings (see
/// [`Consumer::strings`]).
pub trait StringSink {
    /// The next string, as written (`None`: `NA`), with its encoding
    /// levels.
    fn push(&mut self, bytes: Option<&[u8]>, levels: u16);
    /// Every string has been pushed: what the tree keeps in place of the
    /// payload.
    fn finish(self: Box<Self>) -> Consumed;
}

/// Memory a [`Consumer`] gives the reader for one vector's payload (see
/// [`Consumer::allocate`]).
pub struct Allocation {
    ptr: std::ptr::NonNull<u8>,
    bytes: usize,
    owner: std::sync::Arc<dyn arrow_buffer::alloc::Allocation>,
    value: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

impl Allocation {
    /// `bytes` bytes at `ptr`, held by `value` (the consumer's handle,
    /// which the tree keeps: [`crate::tree::Consumed::value`]).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `bytes` bytes, aligned
    /// to 8 bytes, and stay valid, and be neither read nor written by
    /// anyone else, for as long as `value` (or a clone of the tree's
    /// handle on it) lives.
    pub unsafe fn new<T>(ptr: std::ptr::NonNull<u8>, bytes: usize, value: T) -> Self
    where
        T: std::any::Any + Send + Sync + std::panic::RefUnwindSafe,
    {
        let value = std::sync::Arc::new(value);
        Allocation {
            ptr,
            bytes,
            owner: value.clone(),
            value,
        }
    }

    /// The memory, as `n` elements of `T`, if it has room for them and is
    /// aligned for them.
    fn slice<T: Copy>(&mut self, n: usize) -> Option<&mut [T]> {
        let fits = n.checked_mul(std::mem::size_of::<T>()) == Some(self.bytes)
            && (self.ptr.as_ptr() as usize) % std::mem::align_of::<T>() == 0;
        // SAFETY: valid, exclusive and aligned memory of exactly that size
        // (the contract of `new`); T is a plain number type
        fits.then(|| unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr() as *mut T, n) })
    }

    /// The tree's payload of type `t` and `len` elements decoded into
    /// this memory.
    ///
    /// # Safety
    /// The payload was decoded into the whole of the memory.
    unsafe fn into_consumed(self, t: u8, len: u64) -> Consumed {
        Consumed::placed(t, len, self.value, self.ptr, self.bytes, self.owner)
    }
}

/// An atomic payload of type `t` (logical, integer, double, complex,
/// raw) and `len` elements decoded from `inp` into memory `consumer`
/// gives ([`Consumer::allocate`]): once, where the result lives (the
/// parser's payloads, and those a [`crate::read::spill::PayloadStore`] reads
/// back). `None` where it gives none, or memory of another size: the
/// caller decodes as usual.
pub(crate) fn decode_placed(
    inp: &mut Input,
    consumer: &dyn Consumer,
    t: u8,
    len: u64,
) -> Result<Option<VectorData>> {
    if !matches!(t, sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX | sxp::RAW) {
        return Ok(None);
    }
    let Ok(n) = usize::try_from(len) else {
        return Ok(None);
    };
    let Some(mut mem) = consumer.allocate(t, len) else {
        return Ok(None);
    };
    let decoded = match t {
        sxp::LGL | sxp::INT => mem.slice::<i32>(n).map(|out| inp.read_ints_into(out)),
        sxp::REAL => mem.slice::<f64>(n).map(|out| inp.read_doubles_into(out)),
        sxp::CPLX => n
            .checked_mul(2)
            .and_then(|n2| mem.slice::<f64>(n2))
            .map(|out| inp.read_doubles_into(out)),
        _ => mem.slice::<u8>(n).map(|out| inp.read_raw_into(out)),
    };
    match decoded {
        None => return Ok(None),
        Some(r) => r?,
    }
    // SAFETY: the payload is decoded into the whole memory, which stays
    // valid while its owner lives (`Allocation::new`)
    Ok(Some(VectorData::Consumed(unsafe {
        mem.into_consumed(t, len)
    })))
}

/// A consumer with its columns' payloads placed as `placement` says.
pub struct Placed {
    /// Where the payloads go.
    pub placement: Placement,
    /// Who takes the columns.
    pub inner: std::sync::Arc<dyn Consumer>,
}

impl Consumer for Placed {
    fn placement(&self) -> Placement {
        self.placement
    }
    fn takes_columns(&self) -> bool {
        self.inner.takes_columns()
    }
    fn column(&self, column: Column<'_>) {
        self.inner.column(column)
    }
    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        self.inner.allocate(sxptype, len)
    }
    fn strings(&self, len: u64, header: &StreamHeader) -> Option<Box<dyn StringSink>> {
        self.inner.strings(len, header)
    }
}

/// The consumer that only says where payloads go.
impl Consumer for Placement {
    fn placement(&self) -> Placement {
        *self
    }
    fn takes_columns(&self) -> bool {
        false
    }
}

/// Limits and modes of one read.
#[derive(Clone)]
pub struct ReadOptions {
    /// Maximum nesting depth of the object tree (protects the stack).
    pub max_depth: usize,
    /// The most bytes of vector data one read may decode (`None`: the
    /// machine's physical memory). Protects against decompression bombs
    /// whose declared vectors are backed by real, but absurd, data.
    pub max_memory: Option<u64>,
    /// Who takes the decoded values: where the columns' payloads go and
    /// what happens to each column once read (`None`: decoded into the
    /// tree).
    pub consumer: Option<std::sync::Arc<dyn Consumer>>,
    /// For a URL: how long connecting, the response and each read of the
    /// body may take ([`crate::io::store::DEFAULT_TIMEOUT`] when `None`).
    pub timeout: Option<std::time::Duration>,
    /// For an object store URL (`s3://`, `gs://`, `az://`): its options
    /// (credentials, region, endpoint) beyond the environment's.
    pub storage: crate::io::store::StorageOptions,
    /// Parse on the calling thread, whose stack has room for `max_depth`
    /// levels of nesting ([`STACK_PER_LEVEL`] bytes each), rather than on
    /// a thread of its own with a deep stack (`false`: the safe choice for
    /// any caller and any depth, at the cost of starting a thread).
    pub parse_here: bool,
    /// What the objects handed on may hold ([`crate::checks::trust`]): checked
    /// when a consumer takes them from the document.
    pub trust: crate::checks::trust::Trust,
    /// Recover what is intact from a damaged file ([`salvage`]) instead of
    /// refusing it: the objects, list elements and data frame columns read
    /// whole before the damage, and the data of a stream whose checksum
    /// fails, each with [`crate::Document::damage`] saying what was lost.
    pub salvage: bool,
}

/// The stack one level of nesting may take while parsing: twice what it
/// takes in a release build, just under 2 KB (the test
/// `nesting_fits_its_stack_budget` checks it).
pub const STACK_PER_LEVEL: usize = 4096;

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_depth: 20_000,
            max_memory: None,
            consumer: None,
            timeout: None,
            storage: Default::default(),
            parse_here: false,
            trust: Default::default(),
            salvage: false,
        }
    }
}

impl ReadOptions {
    /// Where the consumer wants the columns' payloads.
    pub fn placement(&self) -> Placement {
        self.consumer
            .as_ref()
            .map_or(Placement::Decode, |c| c.placement())
    }

    /// The memory limit in force, in bytes.
    pub fn memory_limit(&self) -> u64 {
        self.max_memory.unwrap_or_else(physical_memory)
    }
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("max_depth", &self.max_depth)
            .field("max_memory", &self.max_memory)
            .field("placement", &self.placement())
            .field("consumer", &self.consumer.is_some())
            .field("salvage", &self.salvage)
            .finish()
    }
}

