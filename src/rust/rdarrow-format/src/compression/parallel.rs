//! Compression on several cores, as a writer: the stream is cut into
//! blocks of [`BLOCK_SIZE`] bytes, compressed by worker threads and joined
//! in order into one gzip member, bzip2 stream or xz stream (see
//! [`crate::compression::blocks`]). The output depends on the data and the level only,
//! never on the thread count.

use crate::compression::Compression;
use crate::compression::blocks::{compress_piece, Joiner, CompressedBlock};
pub use crate::compression::blocks::{HeaderPatch, BLOCK_SIZE};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

type Job = (u64, Vec<u8>);
type Done = (u64, io::Result<CompressedBlock>);

/// A writer that compresses blocks on `threads` worker threads.
pub struct ParallelCompressor<W: Write> {
    sink: W,
    kind: Compression,
    level: Option<u32>,
    joiner: Joiner,
    block: Vec<u8>,
    jobs: Option<SyncSender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    next_submit: u64,
    next_write: u64,
    pending: BTreeMap<u64, CompressedBlock>,
    in_flight: usize,
    max_in_flight: usize,
}

impl<W: Write> ParallelCompressor<W> {
    /// A compressor of `kind` into `sink` on `threads` threads.
    pub fn new(sink: W, kind: Compression, level: Option<u32>, threads: usize) -> io::Result<Self> {
        Self::indexed_if(sink, kind, level, threads, false)
    }

    /// As [`ParallelCompressor::new`], with room for a gzip index in the
    /// header: [`ParallelCompressor::finish_indexed`] then gives the header
    /// to write over the output's start (for outputs that can be written
    /// again there, such as a file).
    pub fn indexed(
        sink: W,
        kind: Compression,
        level: Option<u32>,
        threads: usize,
    ) -> io::Result<Self> {
        Self::indexed_if(sink, kind, level, threads, true)
    }

    /// [`ParallelCompressor::indexed`] when `indexed`, else
    /// [`ParallelCompressor::new`].
    pub fn indexed_if(
        sink: W,
        kind: Compression,
        level: Option<u32>,
        threads: usize,
        indexed: bool,
    ) -> io::Result<Self> {
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
                                    // blocks submitted while writing are full,
                                    // never the last
                                    let piece = compress_piece(&data, kind, level, false);
                                    if tx.send((idx, piece)).is_err() {
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
            joiner: Joiner::new(kind, level, indexed),
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
        while let Some(p) = self.pending.remove(&self.next_write) {
            self.joiner.push(&mut self.sink, p, false)?;
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
    pub fn finish(self) -> io::Result<W> {
        self.finish_indexed().map(|(w, _)| w)
    }

    /// As [`ParallelCompressor::finish`], with the header to write over
    /// the output's start when it was made [`ParallelCompressor::indexed`].
    pub fn finish_indexed(mut self) -> io::Result<(W, Option<HeaderPatch>)> {
        let mut patch = None;
        if self.kind != Compression::None {
            while self.in_flight > 0 {
                self.collect_one()?;
            }
            // the rest (possibly nothing) is the last piece, compressed here
            let last = compress_piece(&self.block, self.kind, self.level, true)?;
            self.joiner.push(&mut self.sink, last, true)?;
            let joiner = std::mem::replace(
                &mut self.joiner,
                Joiner::new(Compression::None, None, false),
            );
            patch = joiner.finish(&mut self.sink)?;
        }
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        self.sink.flush()?;
        Ok((self.sink, patch))
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
    fn output_is_one_stream_independent_of_threads_and_reads_back() {
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
