//! One gzip member, one bzip2 stream or one xz stream made of blocks
//! compressed independently, on several cores, and read back on several
//! cores: how each block is compressed (a [`CompressedBlock`]), how the pieces are
//! joined into the one member or stream every reader reads (a [`Joiner`]),
//! and, for gzip, where the blocks start (an index in the header's extra
//! field, which every gzip reader skips) and the reader that uses it.
//!
//! The stream is cut into blocks of [`BLOCK_SIZE`] bytes; the last block
//! (possibly empty) is the final one. So the bytes depend on the data and
//! the level only, never on the thread count or on which writer made them.
//!
//! - gzip, as pigz joins blocks: each block is a raw deflate stream of its
//!   own (no back-reference into the block before it), ended by a sync
//!   flush (an empty stored block, so it ends on a byte boundary) except
//!   the last, which ends the member. One CRC-32 (combined from the
//!   blocks') and one length cover the whole. When the output can be
//!   written again at its start (a file, not an upload), the header holds
//!   an index: subfield `Rd` of the extra field, see [`GzipIndex`].
//! - bzip2, as lbzip2 joins blocks: each block is cut where its run-length
//!   encoded size fills one bzip2 block, each part compressed alone, and
//!   the compressed blocks are joined bit by bit under one stream header
//!   and one end-of-stream mark with the combined CRC.
//! - xz, as `xz -T0` writes: each block is an xz block (its sizes in its
//!   header), under one stream header, with one index and footer.
//! - zstd: each block is a frame of its own (R and every zstd reader read
//!   concatenated frames).
//!
//! The codecs' own block logic, each beside its checks: [`gzip`](super::gzip),
//! [`bzip2`](super::bzip2), [`xz`](super::xz); what they share is
//! [`piece`](super::piece). This module compresses a block with its
//! codec and joins the pieces.

use crate::compression::bzip2::*;
use crate::compression::gzip::*;
use crate::compression::piece::check_interrupt;
pub use crate::compression::piece::{CompressedBlock, HeaderPatch, BLOCK_SIZE};
use crate::compression::xz::*;
use crate::compression::Compression;
use std::io::{self, Write};

/// Compress one block; `last`: it ends the stream (gzip only).
pub fn compress_piece(
    data: &[u8],
    kind: Compression,
    level: Option<u32>,
    last: bool,
) -> io::Result<CompressedBlock> {
    check_interrupt()?;
    let level = level.unwrap_or(kind.default_level());
    match kind {
        Compression::None => Ok(CompressedBlock {
            bytes: data.to_vec(),
            len: data.len() as u64,
            ..CompressedBlock::default()
        }),
        Compression::Gzip => deflate_piece(data, level, last),
        Compression::Bzip2 => bzip2_piece(data, level),
        Compression::Xz => xz_piece(data, level),
        Compression::Zstd => {
            let mut c = crate::compression::Compressor::new(
                Vec::with_capacity(data.len() / 3),
                kind,
                Some(level),
            )?;
            for part in data.chunks(1 << 18) {
                check_interrupt()?;
                c.write_all(part)?;
            }
            Ok(CompressedBlock {
                bytes: c.finish()?,
                len: data.len() as u64,
                ..CompressedBlock::default()
            })
        }
        // (a .qdata file's blocks are cut by its encoding, write::qdata,
        // never from a flat stream)
        Compression::Qs2 => Ok(CompressedBlock {
            bytes: crate::compression::qx::compress_blocks(data, level as i32)?,
            len: data.len() as u64,
            ..CompressedBlock::default()
        }),
        Compression::Lzma
        | Compression::LazyLoadZlib
        | Compression::Zlib
        | Compression::Qs
        | Compression::Qdata
        | Compression::Fst => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this compression is read-only; write gzip, bzip2, xz or zstd",
        )),
    }
}


// --------------------------------------------------------------- joiner

/// Joins pieces, in order, into one member or stream.
pub struct Joiner {
    kind: Compression,
    level: u32,
    /// Bytes written so far.
    written: u64,
    /// Pieces joined so far.
    pieces: u64,
    started: bool,
    /// gzip: the whole's CRC and length; whether an index is kept, its
    /// room, and every block's start.
    crc: flate2::Crc,
    indexed: bool,
    room: usize,
    starts: Vec<u64>,
    /// bzip2: bits not yet a whole byte, and the combined CRC.
    bits: BitWriter,
    bz_crc: u32,
    /// xz: each block's unpadded and uncompressed sizes.
    xz_blocks: Vec<(u64, u64)>,
    /// qs2: whether the output can be written again (for the hash in the
    /// header), and the hash of the blocks so far.
    patchable: bool,
    qx_hash: crate::compression::qx::BodyHash,
}

impl Joiner {
    /// A joiner for `kind`; `indexed`: reserve a gzip index (the caller
    /// writes [`Joiner::finish`]'s patch over the file's start).
    pub fn new(kind: Compression, level: Option<u32>, indexed: bool) -> Joiner {
        Joiner {
            kind,
            level: level.unwrap_or(kind.default_level()),
            written: 0,
            pieces: 0,
            started: false,
            crc: flate2::Crc::new(),
            indexed: indexed && kind == Compression::Gzip,
            room: 0,
            starts: Vec::new(),
            bits: BitWriter::default(),
            bz_crc: 0,
            xz_blocks: Vec::new(),
            patchable: indexed,
            qx_hash: crate::compression::qx::body_hash(),
        }
    }

    fn emit(&mut self, out: &mut dyn Write, b: &[u8]) -> io::Result<()> {
        self.written += b.len() as u64;
        out.write_all(b)
    }

    /// The stream's header, before the first piece (`last`: that piece is
    /// the only one).
    fn start(&mut self, out: &mut dyn Write, first: &CompressedBlock, last: bool) -> io::Result<()> {
        self.started = true;
        let head = match self.kind {
            Compression::Gzip => {
                if self.indexed && !last {
                    // 8 bytes per 2 KiB of the first block: at most 0.4 %
                    self.room = (first.bytes.len() / 2048).clamp(1, 255);
                }
                gzip_header(self.room, None)
            }
            Compression::Bzip2 => vec![b'B', b'Z', b'h', b'0' + self.level.clamp(1, 9) as u8],
            Compression::Xz => {
                let mut h = vec![0u8; 12];
                let flags = xz_stream_flags(0);
                // SAFETY: a 12-byte buffer, as liblzma writes
                let rc = unsafe { liblzma_sys::lzma_stream_header_encode(&flags, h.as_mut_ptr()) };
                if rc != liblzma_sys::LZMA_OK {
                    return Err(io::Error::other("xz cannot write its header"));
                }
                h
            }
            Compression::Qs2 => crate::compression::qx::QxHeader::written(crate::compression::qx::QxFormat::Qs2).to_vec(),
            _ => Vec::new(),
        };
        self.emit(out, &head)
    }

    /// Append the next piece (`last`: it ends the stream).
    pub fn push(&mut self, out: &mut dyn Write, piece: CompressedBlock, last: bool) -> io::Result<()> {
        if !self.started {
            self.start(out, &piece, last)?;
        }
        self.pieces += 1;
        match self.kind {
            Compression::Gzip => {
                self.starts.push(self.written);
                self.crc.combine(&piece.gz_crc);
                self.emit(out, &piece.bytes)
            }
            Compression::Bzip2 => {
                self.bits.put_range(&piece.bytes, 0, piece.bits);
                self.bz_crc = self.bz_crc.rotate_left((piece.count % 32) as u32) ^ piece.crc;
                let whole = std::mem::take(&mut self.bits.out);
                self.emit(out, &whole)
            }
            Compression::Xz => {
                if piece.len > 0 {
                    self.xz_blocks.push((piece.count, piece.len));
                }
                self.emit(out, &piece.bytes)
            }
            Compression::Qs2 => {
                std::hash::Hasher::write(&mut self.qx_hash, &piece.bytes);
                self.emit(out, &piece.bytes)
            }
            _ => self.emit(out, &piece.bytes),
        }
    }

    /// End the stream: its trailer, and for an indexed gzip file the
    /// header to write over its start.
    pub fn finish(mut self, out: &mut dyn Write) -> io::Result<Option<HeaderPatch>> {
        if !self.started {
            let empty = compress_piece(&[], self.kind, Some(self.level), true)?;
            self.push(out, empty, true)?;
        }
        match self.kind {
            Compression::Gzip => {
                let mut t = self.crc.sum().to_le_bytes().to_vec();
                t.extend(self.crc.amount().to_le_bytes());
                self.emit(out, &t)?;
                if self.room == 0 {
                    return Ok(None);
                }
                // every `stride`-th start, the room's worth
                let inner = &self.starts[1..];
                let stride = inner.len().div_ceil(self.room).max(1);
                let starts: Vec<u64> = inner
                    .iter()
                    .skip(stride - 1)
                    .step_by(stride)
                    .copied()
                    .collect();
                let index = GzipIndex {
                    stride: stride as u32,
                    starts,
                };
                Ok(Some(HeaderPatch {
                    offset: 0,
                    bytes: gzip_header(self.room, Some(&index)),
                }))
            }
            Compression::Bzip2 => {
                let mut bits = std::mem::take(&mut self.bits);
                bits.put(BZ_END_MAGIC >> 24, 24);
                bits.put(BZ_END_MAGIC & 0xff_ffff, 24);
                bits.put(self.bz_crc as u64, 32);
                let tail = bits.finish();
                self.emit(out, &tail)?;
                Ok(None)
            }
            Compression::Xz => {
                let tail = self.xz_tail()?;
                self.emit(out, &tail)?;
                Ok(None)
            }
            // the hash of every byte after the header, in the header (an
            // upload, which cannot be written again, keeps 0: not stored)
            Compression::Qs2 if self.patchable => Ok(Some(HeaderPatch {
                offset: crate::compression::qx::HASH_AT as u64,
                bytes: crate::compression::qx::stored_hash(std::hash::Hasher::finish(&self.qx_hash)).to_vec(),
            })),
            _ => Ok(None),
        }
    }

    /// The xz index and stream footer.
    fn xz_tail(&self) -> io::Result<Vec<u8>> {
        // SAFETY: liblzma's index, made, encoded into a buffer of its
        // encoded size, and freed here
        unsafe {
            let idx = liblzma_sys::lzma_index_init(std::ptr::null());
            if idx.is_null() {
                return Err(io::Error::other("xz cannot make its index"));
            }
            let mut res = Ok(());
            for &(unpadded, len) in &self.xz_blocks {
                if liblzma_sys::lzma_index_append(idx, std::ptr::null(), unpadded, len)
                    != liblzma_sys::LZMA_OK
                {
                    res = Err(io::Error::other("xz cannot index a block"));
                    break;
                }
            }
            let size = liblzma_sys::lzma_index_size(idx) as usize;
            let mut buf = vec![0u8; size + 12];
            let mut pos = 0usize;
            if res.is_ok()
                && liblzma_sys::lzma_index_buffer_encode(idx, buf.as_mut_ptr(), &mut pos, size)
                    != liblzma_sys::LZMA_OK
            {
                res = Err(io::Error::other("xz cannot write its index"));
            }
            liblzma_sys::lzma_index_end(idx, std::ptr::null());
            res?;
            let flags = xz_stream_flags(size as u64);
            if liblzma_sys::lzma_stream_footer_encode(&flags, buf.as_mut_ptr().add(size))
                != liblzma_sys::LZMA_OK
            {
                return Err(io::Error::other("xz cannot write its footer"));
            }
            Ok(buf)
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use crate::compression::parallel::ParallelCompressor;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((i % 251) as u8 ^ (i / 7919) as u8).wrapping_mul((i / 65_536 % 3) as u8 + 1))
            .collect()
    }

    /// `data` compressed as a file would be (the gzip index patched in).
    fn compressed(data: &[u8], kind: Compression) -> Vec<u8> {
        let mut c = ParallelCompressor::indexed(Vec::new(), kind, Some(1), 2).unwrap();
        c.write_all(data).unwrap();
        let (mut out, patch) = c.finish_indexed().unwrap();
        if let Some(p) = patch {
            out[..p.bytes.len()].copy_from_slice(&p.bytes);
        }
        out
    }

    #[test]
    fn one_member_or_stream_read_by_single_stream_readers() {
        for len in [0, 1, 1000, BLOCK_SIZE, 2 * BLOCK_SIZE + 77] {
            let data = sample(len);
            let gz = compressed(&data, Compression::Gzip);
            // a single-member reader reads all of it, and nothing follows
            let mut d = flate2::read::GzDecoder::new(&gz[..]);
            let mut back = Vec::new();
            d.read_to_end(&mut back).unwrap();
            assert!(back == data, "gzip, {len} bytes");
            let bz = compressed(&data, Compression::Bzip2);
            let mut back = Vec::new();
            bzip2::read::BzDecoder::new(&bz[..])
                .read_to_end(&mut back)
                .unwrap();
            assert!(back == data, "bzip2, {len} bytes");
            let xz = compressed(&data, Compression::Xz);
            let mut back = Vec::new();
            liblzma::read::XzDecoder::new(&xz[..])
                .read_to_end(&mut back)
                .unwrap();
            assert!(back == data, "xz, {len} bytes");
        }
    }

    #[test]
    fn gzip_index_records_block_starts_and_small_files_have_none() {
        let small = compressed(&sample(1000), Compression::Gzip);
        assert_eq!(small[3], 0, "one block: R's plain header");
        let data = sample(3 * BLOCK_SIZE + 5);
        let gz = compressed(&data, Compression::Gzip);
        let head = parse_gzip_head(&gz).unwrap();
        let index = head.index.expect("an index");
        assert_eq!(index.stride, 1);
        assert_eq!(index.starts.len(), 3);
        for &s in &index.starts {
            assert_eq!(&gz[s as usize - 4..s as usize], &[0, 0, 0xff, 0xff]);
        }
    }

    fn read_file(bytes: &[u8], name: &str) -> Option<io::Result<Vec<u8>>> {
        let path =
            std::env::temp_dir().join(format!("rdarrow-joined-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let r = IndexedGzipReader::open(f, bytes.len() as u64, 3);
        let _ = std::fs::remove_file(&path);
        r.map(|mut r| {
            let mut out = Vec::new();
            r.read_to_end(&mut out).map(|_| out)
        })
    }

    #[test]
    fn read_on_every_core_as_serially_and_mutated_offsets_never_read_wrongly() {
        let data = sample(4 * BLOCK_SIZE + 1234);
        let gz = compressed(&data, Compression::Gzip);
        assert!(read_file(&gz, "intact").expect("indexed").unwrap() == data);
        let head = parse_gzip_head(&gz).unwrap();
        let index = head.index.unwrap();
        // the offsets' place in the header
        let first = 10 + 2 + INDEX_FIXED;
        let starts = index.starts.clone();
        let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
        for k in 0..starts.len() {
            for v in [
                starts[k] + 1,
                starts[k] - 1,
                starts[(k + 1) % starts.len()],
                0,
                u64::MAX,
                gz.len() as u64 - 8,
                starts[k] + 4,
            ] {
                let mut m = gz.clone();
                m[first + 8 * k..first + 8 * k + 8].copy_from_slice(&v.to_le_bytes());
                cases.push((format!("start {k} = {v}"), m));
            }
        }
        for (what, byte, value) in [
            ("stride", 10 + 2 + 6, 2u8),
            ("count", 10 + 2 + 10, 9u8),
            ("count", 10 + 2 + 10, 1u8),
            ("version", 10 + 2 + 4, 7u8),
        ] {
            let mut m = gz.clone();
            m[byte] = value;
            cases.push((format!("{what} = {value}"), m));
        }
        // offsets that agree with the marks but not with the blocks: a
        // block boundary recorded one stride too early
        let mut m = gz.clone();
        m[first..first + 8].copy_from_slice(&starts[1].to_le_bytes());
        m[first + 8..first + 16].copy_from_slice(&starts[0].to_le_bytes());
        cases.push(("swapped".into(), m));
        for (what, bytes) in cases {
            match read_file(&bytes, "mutated") {
                None => {}
                Some(Ok(out)) => assert!(out == data, "{what}: read wrongly"),
                Some(Err(e)) => panic!("{what}: an intact file refused: {e}"),
            }
        }
        // damaged data (not the index) is an error, never wrong data
        let mut m = gz.clone();
        let mid = starts[1] as usize + 1000;
        m[mid] ^= 0x20;
        if let Some(Ok(out)) = read_file(&m, "damaged") {
            panic!("damaged data read as {} bytes", out.len());
        }
    }

    #[test]
    fn blocks_that_reach_back_are_read_serially_with_their_history() {
        // as pigz writes by default: each block primed with the 32 KiB
        // before it, so a block cannot be inflated on its own
        let data: Vec<u8> = (0..3 * BLOCK_SIZE + 99)
            .map(|i| ((i % 1000) as u8) ^ ((i / 3_000_000) as u8))
            .collect();
        let room = 4;
        let mut body = Vec::new();
        let mut starts = Vec::new();
        let head_len = gzip_header(room, None).len() as u64;
        let mut crc = flate2::Crc::new();
        let pieces: Vec<&[u8]> = data.chunks(BLOCK_SIZE).collect();
        for (k, piece) in pieces.iter().enumerate() {
            if k > 0 {
                starts.push(head_len + body.len() as u64);
            }
            let mut c = flate2::Compress::new(flate2::Compression::new(6), false);
            if k > 0 {
                let prev = pieces[k - 1];
                c.set_dictionary(&prev[prev.len() - WINDOW..]).unwrap();
            }
            let last = k + 1 == pieces.len();
            let mut out = Vec::with_capacity(piece.len() + 1024);
            c.compress_vec(
                piece,
                &mut out,
                if last {
                    flate2::FlushCompress::Finish
                } else {
                    flate2::FlushCompress::Sync
                },
            )
            .unwrap();
            body.extend(out);
            crc.update(piece);
        }
        let index = GzipIndex { stride: 1, starts };
        let mut gz = gzip_header(room, Some(&index));
        gz.extend(body);
        gz.extend(crc.sum().to_le_bytes());
        gz.extend(crc.amount().to_le_bytes());
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == data, "the file is valid gzip");
        // the second block cannot be inflated alone: the reader falls back
        let path = std::env::temp_dir().join(format!("rdarrow-joined-{}-hist", std::process::id()));
        std::fs::write(&path, &gz).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let (chunks, _, _) = plan_chunks(&f, gz.len() as u64).unwrap();
        assert!(inflate_chunk(&f, chunks[0], false).is_ok());
        assert!(inflate_chunk(&f, chunks[1], false).is_err());
        let _ = std::fs::remove_file(&path);
        let got = read_file(&gz, "history").expect("its index agrees with its layout");
        assert!(got.unwrap() == data);
    }

    #[test]
    fn libdeflate_streams_go_on_after_their_last_block() {
        // compressible and random data, every kind of last block (fixed,
        // dynamic, stored), at every level
        let mut seed = 7u64;
        let random: Vec<u8> = (0..200_000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 33) as u8
            })
            .collect();
        for data in [sample(10), sample(1000), sample(3_000_000), random] {
            for level in [0, 1, 6, 9, 12] {
                let piece = deflate_piece(&data, level, false).unwrap();
                assert!(piece.bytes.ends_with(&[0, 0, 0xff, 0xff]));
                // closed by a final empty stored block, it inflates to the data
                let mut closed = piece.bytes.clone();
                closed.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
                let mut d = flate2::Decompress::new(false);
                let mut out = vec![0u8; data.len() + 16];
                let status = d
                    .decompress(&closed, &mut out, flate2::FlushDecompress::Finish)
                    .unwrap();
                assert_eq!(
                    status,
                    flate2::Status::StreamEnd,
                    "{} bytes, level {level}",
                    data.len()
                );
                assert_eq!(d.total_in() as usize, closed.len());
                assert!(out[..d.total_out() as usize] == data[..]);
            }
        }
    }

    #[test]
    fn bzip2_parts_are_single_blocks_even_for_runs() {
        // runs of 4 bytes expand most under bzip2's run-length stage
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i / 4) as u8).collect();
        let piece = bzip2_piece(&data, 9).unwrap();
        assert!(piece.count >= 4, "{} blocks", piece.count);
        let bz = compressed(&data, Compression::Bzip2);
        let mut back = Vec::new();
        bzip2::read::BzDecoder::new(&bz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == data);
    }
}

