//! Bytes of an Arrow IPC file or stream -> record batches -> R data frame
//! tree -> serialized R stream (format chosen from the input length).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::from_arrow::frame::frame_from_batches;
use rdarrow_arrow::files::ipc::read_ipc_bytes;
use rdarrow_arrow::Container;
use rdarrow_arrow::Format;
use rdarrow_arrow::StreamHeader;

/// libfuzzer-sys aborts on every panic, caught or not. The Arrow IPC reader
/// panics on some malformed buffers, and arrow on some malformed types;
/// the engine catches those (`read_ipc_bytes`, `empty_column`) and reports a
/// corrupt file, so they are let through here. Every other panic
/// still aborts (a finding).
fn allow_caught_ipc_reader_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let bt = std::backtrace::Backtrace::force_capture().to_string();
            // (inlined frames show short names: match the engine's wrapper)
            if bt.contains("read_ipc_unguarded") || bt.contains("empty_column") {
                return;
            }
            eprintln!("{info}\n{bt}");
            std::process::abort();
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    allow_caught_ipc_reader_panics();
    // the engine's reader (it turns the IPC reader's panics into errors),
    // with a decoding memory limit below libFuzzer's malloc limit
    let Ok((schema, batches)) = read_ipc_bytes(data.to_vec(), "the input", 1 << 30) else { return };
    let Ok(frame) = frame_from_batches(&schema, &batches) else { return };
    let (format, version) = match data.len() % 4 {
        0 => (Format::Xdr, 3),
        1 => (Format::Binary, 3),
        2 => (Format::Ascii, 3),
        _ => (Format::Xdr, 2),
    };
    let header = StreamHeader {
        format,
        crlf: false,
        leading_newline: false,
        version,
        writer_version: 0x0004_0202,
        min_reader_version: if version == 3 { 0x0003_0500 } else { 0x0002_0300 },
        native_encoding: (version == 3).then(|| b"UTF-8".to_vec()),
        ascii_hex: false,
    };
    let _ = rdarrow_arrow::write::write_stream(Vec::new(), Container::Stream, &header, &frame.object, &frame.refs);
});
