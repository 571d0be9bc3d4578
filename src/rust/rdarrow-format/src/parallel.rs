//! Compression on several cores: the stream is cut into fixed-size blocks,
//! each compressed on its own into an independent gzip member, bzip2
//! stream or xz stream, written in order. R reads such concatenations;
//! the output depends on the block size only, never on the thread count.

use crate::compression::{Compression, Compressor};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Uncompressed bytes per independently compressed block.
pub const BLOCK_SIZE: usize = 8 << 20;

type Job = (u64, Vec<u8>);
type Done = (u64, io::Result<Vec<u8>>);

/// A writer that compresses blocks on `threads` worker threads.
pub struct ParallelCompressor<W: Write> {
    sink: W,
    kind: Compression,
    level: Option<u32>,
    block: Vec<u8>,
    jobs: Option<SyncSender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    next_submit: u64,
    next_write: u64,
    pending: BTreeMap<u64, Vec<u8>>,
    in_flight: usize,
    max_in_flight: usize,
}

/// One block as an independent gzip member, by libdeflate (whole-buffer
/// compression, about twice zlib's speed at the same level).
fn gzip_block(data: &[u8], level: u32) -> io::Result<Vec<u8>> {
    let lvl = libdeflater::CompressionLvl::new(level.min(12) as i32)
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
    let mut c = libdeflater::Compressor::new(lvl);
    let mut out = vec![0u8; c.gzip_compress_bound(data.len())];
    let n = c
        .gzip_compress(data, &mut out)
        .map_err(|e| io::Error::other(format!("cannot compress: {e:?}")))?;
    out.truncate(n);
    // held until written in order: not at the size of the bound
    out.shrink_to_fit();
    Ok(out)
}

pub(crate) fn compress_block(
    data: &[u8],
    kind: Compression,
    level: Option<u32>,
) -> io::Result<Vec<u8>> {
    if kind == Compression::Gzip {
        if crate::cancel::interrupted() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "interrupted by the user",
            ));
        }
        return gzip_block(data, level.unwrap_or(kind.default_level()));
    }
    let mut c = Compressor::for_input(
        Vec::with_capacity(data.len() / 3),
        kind,
        level,
        Some(data.len()),
    )?;
    // fed in pieces so an interrupt is seen quickly; the output is the same
    for piece in data.chunks(1 << 18) {
        if crate::cancel::interrupted() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "interrupted by the user",
            ));
        }
        c.write_all(piece)?;
    }
    c.finish()
}

impl<W: Write> ParallelCompressor<W> {
    /// A compressor of `kind` into `sink` on `threads` threads.
    pub fn new(sink: W, kind: Compression, level: Option<u32>, threads: usize) -> io::Result<Self> {
        let threads = threads.max(1);
        let (job_tx, job_rx) = sync_channel::<Job>(threads * 2);
        let (done_tx, done_rx): (Sender<Done>, Receiver<Done>) = channel();
        let job_rx = std::sync::Arc::new(std::sync::Mutex::new(job_rx));
        let mut workers = Vec::new();
        if kind != Compression::None {
            for i in 0..threads {
                let rx = job_rx.clone();
                let tx = done_tx.clone();
                workers.push(
                    std::thread::Builder::new()
                        .name(format!("rdarrow-compress-{i}"))
                        .spawn(move || loop {
                            let job = { rx.lock().map(|r| r.recv()) };
                            match job {
                                Ok(Ok((idx, data))) => {
                                    if tx.send((idx, compress_block(&data, kind, level))).is_err() {
                                        return;
                                    }
                                }
                                _ => return,
                            }
                        })?,
                );
            }
        }
        Ok(ParallelCompressor {
            sink,
            kind,
            level,
            block: Vec::with_capacity(if kind == Compression::None {
                0
            } else {
                BLOCK_SIZE
            }),
            jobs: Some(job_tx),
            results: done_rx,
            workers,
            next_submit: 0,
            next_write: 0,
            pending: BTreeMap::new(),
            in_flight: 0,
            // each thread busy and one block waiting: memory holds a few
            // blocks whatever the file's size
            max_in_flight: threads + 1,
        })
    }

    fn write_ready(&mut self) -> io::Result<()> {
        while let Some(b) = self.pending.remove(&self.next_write) {
            self.sink.write_all(&b)?;
            self.next_write += 1;
        }
        Ok(())
    }

    fn collect_one(&mut self) -> io::Result<()> {
        let (idx, res) = self
            .results
            .recv()
            .map_err(|_| io::Error::other("a compression thread stopped"))?;
        self.in_flight -= 1;
        self.pending.insert(idx, res?);
        self.write_ready()
    }

    fn submit_block(&mut self) -> io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        while self.in_flight >= self.max_in_flight {
            self.collect_one()?;
        }
        let data = std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK_SIZE));
        self.jobs
            .as_ref()
            .expect("jobs channel open")
            .send((self.next_submit, data))
            .map_err(|_| io::Error::other("the compression threads stopped"))?;
        self.next_submit += 1;
        self.in_flight += 1;
        Ok(())
    }

    /// Compress what is left, write everything, and return the sink.
    pub fn finish(mut self) -> io::Result<W> {
        if self.kind != Compression::None {
            // an empty stream still needs one valid (empty) member
            if self.next_submit == 0 && self.block.is_empty() {
                let empty = compress_block(&[], self.kind, self.level)?;
                self.sink.write_all(&empty)?;
            }
            self.submit_block()?;
            while self.in_flight > 0 {
                self.collect_one()?;
            }
        }
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        self.sink.flush()?;
        Ok(self.sink)
    }
}

impl<W: Write> Write for ParallelCompressor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.kind == Compression::None {
            return self.sink.write(buf);
        }
        let mut rest = buf;
        while !rest.is_empty() {
            let room = BLOCK_SIZE - self.block.len();
            let k = room.min(rest.len());
            self.block.extend_from_slice(&rest[..k]);
            rest = &rest[k..];
            if self.block.len() == BLOCK_SIZE {
                self.submit_block()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn output_is_independent_of_threads_and_reads_back() {
        let data: Vec<u8> = (0..(BLOCK_SIZE * 2 + 12345))
            .map(|i| (i % 251) as u8 ^ (i / 7919) as u8)
            .collect();
        for kind in [Compression::Gzip, Compression::Bzip2, Compression::Xz] {
            let mut outs = Vec::new();
            for threads in [1, 2, 3] {
                let mut c = ParallelCompressor::new(Vec::new(), kind, Some(1), threads).unwrap();
                c.write_all(&data).unwrap();
                outs.push(c.finish().unwrap());
            }
            assert_eq!(outs[0], outs[1]);
            assert_eq!(outs[0], outs[2]);
            let (detected, mut r) =
                crate::compression::decompressor(std::io::Cursor::new(outs[0].clone())).unwrap();
            assert_eq!(detected, kind);
            let mut back = Vec::new();
            r.read_to_end(&mut back).unwrap();
            assert_eq!(back, data);
        }
    }
}
