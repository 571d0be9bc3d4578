//! An R object written as `.RData`/`.rds` by R's own serializer: the
//! stream's bytes go from R straight into the compressor (whose worker
//! threads compress blocks while R is still serializing) and into the
//! file, never held whole. The file holds exactly what `save()` /
//! `saveRDS()` would write, compressed on all cores.

use crate::errors::error_value;
use extendr_api::prelude::*;
use extendr_ffi::{R_Serialize, R_outpstream_st, R_pstream_format_t, Rboolean, SEXP};
use rdarrow_arrow::compression::parallel::ParallelCompressor;
use rdarrow_arrow::write::ObjectFileOptions;
use rdarrow_arrow::Error;
use rdarrow_arrow::ErrorKind;
use rdarrow_arrow::WritebackFile;
use std::io::{BufWriter, Write};
use std::os::raw::{c_int, c_void};

#[allow(improper_ctypes)]
extern "C" {
    fn R_InitOutPStream(
        stream: *mut R_outpstream_st,
        data: *mut c_void,
        format: R_pstream_format_t,
        version: c_int,
        out_char: Option<unsafe extern "C" fn(*mut R_outpstream_st, c_int)>,
        out_bytes: Option<unsafe extern "C" fn(*mut R_outpstream_st, *mut c_void, c_int)>,
        persist_hook: Option<unsafe extern "C" fn(SEXP, SEXP) -> SEXP>,
        persist_data: SEXP,
    );
    fn R_ToplevelExec(
        fun: Option<unsafe extern "C" fn(*mut c_void)>,
        data: *mut c_void,
    ) -> Rboolean;
    fn R_CheckUserInterrupt();
}

type Compressed<'f, 'g> = ParallelCompressor<BufWriter<&'f mut WritebackFile<'g>>>;

/// Where R's serializer writes: the compressor, the first failure, and the
/// progress shown meanwhile.
struct Sink<'f, 'g> {
    out: Compressed<'f, 'g>,
    failure: Option<std::io::Error>,
    written: u64,
    progress: crate::job::Progress,
}

/// What the top-level call serializes, and into which stream.
struct Job {
    object: SEXP,
    stream: *mut R_outpstream_st,
}

unsafe extern "C" fn out_bytes(stream: *mut R_outpstream_st, buf: *mut c_void, n: c_int) {
    // an interrupt (or an earlier failure) ends the serialization here:
    // R's interrupt check jumps to the top-level call around it, over
    // this frame, which owns nothing by then
    if rdarrow_arrow::base::cancel::interrupted() {
        R_CheckUserInterrupt();
    }
    let sink = &mut *((*stream).data as *mut Sink);
    if sink.failure.is_some() || n <= 0 {
        return;
    }
    let bytes = std::slice::from_raw_parts(buf as *const u8, n as usize);
    sink.written += bytes.len() as u64;
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sink.progress.tick(sink.written as f64);
        sink.out.write_all(bytes)
    }));
    match res {
        Ok(Ok(())) => {}
        Ok(Err(e)) => sink.failure = Some(e),
        Err(_) => sink.failure = Some(std::io::Error::other("the compressor failed")),
    }
}

unsafe extern "C" fn out_char(stream: *mut R_outpstream_st, c: c_int) {
    let mut b = c as u8;
    out_bytes(stream, &mut b as *mut u8 as *mut c_void, 1);
}

unsafe extern "C" fn serialize_job(data: *mut c_void) {
    let job = &mut *(data as *mut Job);
    R_Serialize(job.object, job.stream);
}

fn io_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::Interrupted && rdarrow_arrow::base::cancel::interrupted() {
        Error::new(ErrorKind::Interrupted, "interrupted by the user")
    } else {
        Error::io(&e, "cannot write")
    }
}

/// Serialize `object` (the pairlist `save()` writes, or the one object of
/// an `.rds`) into `file`, atomically. Main thread only.
fn write_serialized(object: &Robj, file: &str, o: &ObjectFileOptions) -> Result<(), Error> {
    let format = if o.ascii {
        R_pstream_format_t::R_pstream_ascii_format
    } else {
        R_pstream_format_t::R_pstream_xdr_format
    };
    crate::job::watch_interrupts();
    let res = rdarrow_arrow::atomic_write(std::path::Path::new(file), &o.storage, |f| {
        // a file (not an upload) gets the gzip index, written at the end
        let indexed = f.can_patch();
        let out = ParallelCompressor::indexed_if(
            BufWriter::with_capacity(1 << 20, &mut *f),
            o.compression,
            o.effective_level(),
            o.threads,
            indexed,
        )
        .map_err(|e| Error::io(&e, "cannot start compression"))?;
        let mut sink = Sink {
            out,
            failure: None,
            written: 0,
            progress: crate::job::Progress::new("Writing"),
        };
        if let Some(magic) = o.container().magic() {
            sink.out.write_all(&magic).map_err(io_error)?;
        }
        let mut stream = std::mem::MaybeUninit::<R_outpstream_st>::zeroed();
        // R's own error, if its serializer stops with one, is raised by the
        // caller as rdarrow's condition: not printed on the way as well
        let shown = eval_string("base::isTRUE(base::getOption('show.error.messages', TRUE))")
            .ok()
            .and_then(|r| r.as_bool())
            .unwrap_or(true);
        let _ = eval_string("base::options(show.error.messages = FALSE)");
        let completed = unsafe {
            R_InitOutPStream(
                stream.as_mut_ptr(),
                &mut sink as *mut Sink as *mut c_void,
                format,
                o.version,
                Some(out_char),
                Some(out_bytes),
                None,
                extendr_ffi::R_NilValue,
            );
            let mut job = Job {
                object: object.get(),
                stream: stream.as_mut_ptr(),
            };
            R_ToplevelExec(Some(serialize_job), &mut job as *mut Job as *mut c_void)
        };
        let _ = eval_string(&format!(
            "base::options(show.error.messages = {})",
            if shown { "TRUE" } else { "FALSE" }
        ));
        let interrupted = rdarrow_arrow::base::cancel::interrupted();
        let failed = completed == Rboolean::FALSE || sink.failure.is_some();
        if failed {
            // compression threads still busy stop at their next check
            rdarrow_arrow::base::cancel::cancel();
        }
        if completed == Rboolean::FALSE {
            return Err(if interrupted {
                Error::new(ErrorKind::Interrupted, "interrupted by the user")
            } else if let Some(e) = sink.failure.take() {
                io_error(e)
            } else {
                // R's serializer stopped with an error of its own: R's words
                Error::new(ErrorKind::Unsupported, r_error_message())
            });
        }
        if let Some(e) = sink.failure.take() {
            return Err(io_error(e));
        }
        let Sink { out, progress, .. } = sink;
        let w = out.finish_indexed().map_err(io_error);
        progress.done();
        let (w, patch) = w?;
        let f = w
            .into_inner()
            .map_err(|e| Error::io(e.error(), "cannot write"))?;
        match patch {
            Some(p) => f.patch(&p).map_err(|e| Error::io(&e, "cannot write")),
            None => Ok(()),
        }
    });
    // a failure stopped the compression threads through the cancel flag:
    // cleared, so that the session's next call does not see it
    rdarrow_arrow::base::cancel::reset();
    res
}

/// The message of R's last error (as `geterrmessage()` gives it, without
/// its "Error in ...:" prefix).
fn r_error_message() -> String {
    let text = eval_string("base::geterrmessage()")
        .ok()
        .and_then(|r| r.as_str().map(str::to_string))
        .unwrap_or_default();
    let text = text.trim();
    let text = text
        .strip_prefix("Error")
        .and_then(|t| t.split_once(": "))
        .map_or(text, |(_, m)| m.trim());
    if text.is_empty() {
        "R's serializer stopped with an error".to_string()
    } else {
        format!("R cannot serialize the object: {text}")
    }
}

/// R's own XDR serialization header for `version` (format, version,
/// R's version, the oldest reader, the native encoding): what
/// `serialize(NULL, NULL)` writes before its one item.
fn r_header(version: i32) -> Result<Vec<u8>, Error> {
    unsafe extern "C" fn header_bytes(stream: *mut R_outpstream_st, buf: *mut c_void, n: c_int) {
        let out = &mut *((*stream).data as *mut Vec<u8>);
        if n > 0 {
            out.extend_from_slice(std::slice::from_raw_parts(buf as *const u8, n as usize));
        }
    }
    unsafe extern "C" fn header_char(stream: *mut R_outpstream_st, c: c_int) {
        let mut b = c as u8;
        header_bytes(stream, &mut b as *mut u8 as *mut c_void, 1);
    }
    // R's own serializer, writing NULL (no parse, no R code): the header
    // as this session's R writes it, native encoding included
    let mut bytes: Vec<u8> = Vec::with_capacity(32);
    // SAFETY: the stream lives for the call, its data is `bytes`, and
    // serializing NULL allocates nothing R could collect
    unsafe {
        let mut stream: R_outpstream_st = std::mem::zeroed();
        R_InitOutPStream(
            &mut stream,
            &mut bytes as *mut Vec<u8> as *mut c_void,
            R_pstream_format_t::R_pstream_xdr_format,
            version,
            Some(header_char),
            Some(header_bytes),
            None,
            extendr_ffi::R_NilValue,
        );
        R_Serialize(extendr_ffi::R_NilValue, &mut stream);
    }
    if bytes.len() < 4 {
        return Err(Error::new(ErrorKind::Io, "cannot ask R for its serialization header"));
    }
    // the item: NULL's code, 254
    bytes.truncate(bytes.len() - 4);
    Ok(bytes)
}

/// The container magic (for `save()` files) and R's header.
fn stream_prefix(o: &ObjectFileOptions) -> Result<Vec<u8>, Error> {
    // the native walk writes XDR
    let xdr = ObjectFileOptions {
        ascii: false,
        ..o.clone()
    };
    let mut prefix = xdr
        .container()
        .magic()
        .map(|m| m.to_vec())
        .unwrap_or_default();
    prefix.extend(r_header(o.version)?);
    Ok(prefix)
}

/// Write `object` without R's serializer when the walk covers it (see
/// `save_native`): `Ok(false)` when it does not.
fn write_native(object: &Robj, file: &str, o: &ObjectFileOptions) -> Result<bool, Error> {
    let prefix = stream_prefix(o)?;
    // SAFETY: `object` is held (protected) by the caller until the layout is
    // dropped at the end of this function; the only R code that runs
    // meanwhile is the progress display, whose garbage collections never
    // free or move protected objects nor change what the writers read.
    let Some(layout) =
        (unsafe { crate::save_native::layout_object(object, &prefix, o.version, o.threads) })
    else {
        return Ok(false);
    };
    crate::job::watch_interrupts();
    let mut progress = crate::job::Progress::new("Writing");
    let res = rdarrow_arrow::write::layout::write_layout_file(
        std::path::Path::new(file),
        &o.storage,
        &layout,
        o.compression,
        o.effective_level(),
        o.threads,
        &mut |done| progress.tick(done as f64),
    );
    progress.done();
    res.map(|()| true)
}

/// The stream of `object` as the native walk lays it out (header
/// included), or NULL when the walk leaves it to R's serializer.
pub fn serialize_native(x: Robj, version: i32) -> Robj {
    let Ok(prefix) = r_header(version) else {
        return ().into();
    };
    // SAFETY: `x` is held here and no R code runs until the layout is dropped.
    let bytes =
        unsafe { crate::save_native::layout_object(&x, &prefix, version, 2) }.map(|l| l.to_vec());
    match bytes {
        Some(b) => Raw::from_bytes(&b).into(),
        None => ().into(),
    }
}

/// Write an R object as `.RData` (named `name`) or `.rds`: laid out and
/// written on all cores when it is data (XDR), else by R's serializer.
pub fn save_object(x: Robj, file: &str, o: &ObjectFileOptions) -> Robj {
    let object = if o.rds {
        x
    } else {
        Pairlist::from_pairs([(o.name.as_str(), x)]).into()
    };
    save_stream(object, file, o)
}

/// Write `object` as the one item of a file: an `.rds`'s object, or the
/// tagged pairlist of a `save()` file (`o.rds` false), as `saveRDS()` and
/// `save()` write them.
pub fn save_stream(object: Robj, file: &str, o: &ObjectFileOptions) -> Robj {
    if o.compression.is_qs_container() && !o.rds {
        return error_value(&rdarrow_arrow::write::one_object(o.compression));
    }
    if matches!(o.compression, rdarrow_arrow::Compression::Qdata | rdarrow_arrow::Compression::Fst) {
        return match save_through_tree(&object, file, o) {
            Ok(left_out) => {
                // told by write_rds() as qd_save() tells it
                let mut out: Robj = file.into();
                if !left_out.is_empty() {
                    let _ = out.set_attrib("left_out", left_out);
                }
                out
            }
            Err(e) => error_value(&e),
        };
    }
    let native = if o.ascii {
        Ok(false)
    } else {
        write_native(&object, file, o)
    };
    let res = match native {
        Ok(true) => Ok(()),
        Ok(false) => write_serialized(&object, file, o),
        Err(e) => Err(e),
    };
    match res {
        Ok(()) => file.into(),
        Err(e) => error_value(&e),
    }
}

/// Write `object` as a `.qdata` or `.fst` file: its serialization (the
/// native walk's, else R's serializer's) read into the engine's tree,
/// which the engine writes in qdata's encoding or as fst's table
/// (refusing what the format cannot hold).
/// R's serializer writes version 2 here, where every ALTREP vector
/// (stringfish's and any other class) is written as the vector it stands
/// for, as `qd_save()` writes it. Returns what was left out.
fn save_through_tree(object: &Robj, file: &str, o: &ObjectFileOptions) -> Result<Vec<String>, Error> {
    let prefix = r_header(3)?;
    // SAFETY: `object` is held by the caller and no R code runs until the
    // layout is dropped
    let laid = unsafe { crate::save_native::layout_object(object, &prefix, 3, o.threads) }.map(|l| l.to_vec());
    let bytes = match laid {
        Some(b) => b,
        None => extendr_api::call!("base::serialize", object.clone(), (), version = 2)
            .ok()
            .and_then(|r| r.as_raw_slice().map(<[u8]>::to_vec))
            .ok_or_else(|| Error::new(ErrorKind::Unsupported, r_error_message()))?,
    };
    // a small object (the usual one) read and written on this thread, no
    // thread started; a large or deeply nested one on a worker's deep stack
    let small = bytes.len() as u64 <= rdarrow_arrow::SMALL_FILE;
    let defaults = rdarrow_arrow::ReadOptions::default();
    let here = if small {
        rdarrow_arrow::read_here(&defaults, |opts| rdarrow_arrow::read_bytes(bytes.clone(), opts))
    } else {
        None
    };
    let doc = match here {
        Some(doc) => doc?,
        None => rdarrow_arrow::read_bytes(bytes, &defaults)?,
    };
    let write = || {
        let path = std::path::Path::new(file);
        if o.compression == rdarrow_arrow::Compression::Fst {
            return rdarrow_arrow::write::fst::write_fst_file(path, &o.storage, &doc.root, &doc.refs, o.level)
                .map(|()| Vec::new());
        }
        rdarrow_arrow::write::qdata::write_qdata_file(path, &o.storage, &doc.root, &doc.refs, o.level, o.threads)
    };
    if small && !doc.root.nests_deeper_than(&doc.refs, crate::read::WRITE_HERE_MAX_DEPTH) {
        crate::job::watch_interrupts();
        return write();
    }
    crate::job::run("Writing", write)
}
