//! Bytes of an Arrow IPC file or stream -> record batches -> R data frame
//! tree -> serialized R stream (format chosen from the input length).
#![no_main]

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::SchemaRef;
use libfuzzer_sys::fuzz_target;
use rdarrow_core::arrow::from_arrow::frame_from_batches;
use rdarrow_core::{Container, Format, StreamHeader};
use std::io::Cursor;

fn read_ipc(data: &[u8]) -> Option<(SchemaRef, Vec<RecordBatch>)> {
    if data.starts_with(b"ARROW1") {
        let r = FileReader::try_new(Cursor::new(data), None).ok()?;
        let schema = r.schema();
        let batches = r.collect::<Result<Vec<_>, _>>().ok()?;
        Some((schema, batches))
    } else {
        let r = StreamReader::try_new(Cursor::new(data), None).ok()?;
        let schema = r.schema();
        let batches = r.collect::<Result<Vec<_>, _>>().ok()?;
        Some((schema, batches))
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((schema, batches)) = read_ipc(data) else { return };
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
    let _ = rdarrow_core::write::write_stream(Vec::new(), Container::Stream, &header, &frame.object, &frame.refs);
});
