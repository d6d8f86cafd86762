//! Commands written on worker threads, in order, in bounded memory.
//!
//! Rendering and redacting one command's output is one thread's work (a terminal's state
//! depends on every byte before it), but commands are independent of each other: each worker
//! takes the next command and sends what it makes of it (a digest, a batch of events, or with
//! [`write()`] and [`Chunks`] 64 KiB chunks of text) over a bounded channel of that command; the
//! calling thread takes the messages of the oldest command in flight until its worker is done,
//! then the next command's. So the result is what one thread would make, in the same order.
//!
//! Memory: at most [`IN_FLIGHT`] commands (a caller may say fewer) are handed out at once,
//! and each holds at most
//! [`QUEUED`] messages waiting (a worker ahead of the calling thread waits), whatever the size
//! of an output. No deadlock: commands are taken oldest first, so the oldest in flight always
//! has a worker, and the calling thread drains exactly that one.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::error::Result;

/// Bytes of one chunk.
pub(crate) const CHUNK: usize = 64 * 1024;
/// Messages (chunks) of one command waiting for the calling thread, at most.
pub(crate) const QUEUED: usize = 4;
/// Commands handed out (being written, or waiting for a worker) at most, when each sends
/// chunks or batches of at most [`CHUNK`] bytes: at most `IN_FLIGHT * QUEUED * CHUNK` (16 MiB)
/// wait, typically far less (most outputs are short). Room enough for the other workers to
/// go on while one renders a huge output.
pub(crate) const IN_FLIGHT: usize = 64;

/// What a worker sends for its command.
enum Part<M> {
    Message(M),
    Failed(crate::error::Error),
}

/// Where a worker sends what it made of its command, in order.
pub(crate) struct Sink<M> {
    tx: SyncSender<Part<M>>,
}

impl<M> Sink<M> {
    /// Sends `m` to the calling thread, waiting while [`QUEUED`] messages of this command wait
    /// there. Fails once the calling thread stopped (its output failed).
    pub(crate) fn send(&mut self, m: M) -> io::Result<()> {
        self.tx
            .send(Part::Message(m))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the export stopped"))
    }
}

/// A writer over a [`Sink`] of byte chunks: [`CHUNK`] bytes per message (the rest with
/// [`Chunks::finish`]).
pub(crate) struct Chunks<'a> {
    buf: Vec<u8>,
    sink: &'a mut Sink<Vec<u8>>,
}

impl<'a> Chunks<'a> {
    pub(crate) fn new(sink: &'a mut Sink<Vec<u8>>) -> Chunks<'a> {
        Chunks {
            buf: Vec::with_capacity(CHUNK),
            sink,
        }
    }

    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.sink.send(full)
    }

    /// Sends what is left.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.send()
    }
}

impl Write for Chunks<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let room = CHUNK - self.buf.len();
            let n = room.min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() == CHUNK {
                self.send()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How many worker threads: the machine's cores, at most 4.
pub(crate) fn workers() -> usize {
    crate::context::support::parallel::workers()
}

/// Runs `work(i, sink)` for each item `i` of `0..n` on `workers` threads (at least one), at
/// most `in_flight` items handed out at once, and hands what each sent to `take(i, message)` on the calling thread, in item order: all of
/// item 0's messages, then item 1's, and so on. `start(i)` runs on the calling thread before
/// item `i`'s first message is taken (for what depends on the items before it). The first
/// error, from `work`, `start` or `take`, stops everything and is returned.
pub(crate) fn run<M, W>(
    n: usize,
    workers: usize,
    in_flight: usize,
    work: W,
    start: &mut dyn FnMut(usize) -> Result<()>,
    take: &mut dyn FnMut(usize, M) -> Result<()>,
) -> Result<()>
where
    M: Send,
    W: Fn(usize, &mut Sink<M>) -> Result<()> + Sync,
{
    let in_flight = in_flight.max(1);
    let (job_tx, job_rx) = mpsc::sync_channel::<(usize, SyncSender<Part<M>>)>(in_flight);
    let job_rx = Arc::new(Mutex::new(job_rx));
    let work = &work;
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            let jobs = Arc::clone(&job_rx);
            scope.spawn(move || {
                loop {
                    // The lock is held only while waiting for the next job.
                    let job = jobs.lock().ok().and_then(|rx| rx.recv().ok());
                    let Some((i, tx)) = job else {
                        return;
                    };
                    let mut sink = Sink { tx };
                    if let Err(e) = work(i, &mut sink) {
                        // The calling thread may be gone already: then nobody needs to hear it.
                        let _ = sink.tx.send(Part::Failed(e));
                    }
                }
            });
        }
        let mut pending: VecDeque<Receiver<Part<M>>> = VecDeque::with_capacity(in_flight);
        let mut next = 0;
        let result = (|| -> Result<()> {
            for i in 0..n {
                while pending.len() < in_flight && next < n {
                    let (tx, rx) = mpsc::sync_channel(QUEUED);
                    // Never blocks: at most `in_flight` jobs wait, and the channel holds as many.
                    job_tx
                        .send((next, tx))
                        .map_err(|_| io::Error::other("the export's workers stopped"))?;
                    pending.push_back(rx);
                    next += 1;
                }
                start(i)?;
                let rx = pending.pop_front().expect("item i is in flight");
                // Ends when the worker is done with item i (it drops its sender).
                for part in rx {
                    match part {
                        Part::Message(m) => take(i, m)?,
                        Part::Failed(e) => return Err(e),
                    }
                }
            }
            Ok(())
        })();
        // Workers waiting for a job, or blocked on a command nobody takes from, stop.
        drop(job_tx);
        drop(pending);
        result
    })
}

/// [`run`] for workers that write bytes: item `i`'s bytes, `write(i, out)`, are copied to `out`
/// in item order, after `start(i, out)`. One item, or one worker, is written on the calling
/// thread, straight to `out`.
pub(crate) fn write<W>(
    n: usize,
    workers: usize,
    write: W,
    start: &mut dyn FnMut(usize, &mut dyn Write) -> Result<()>,
    out: &mut dyn Write,
) -> Result<()>
where
    W: Fn(usize, &mut dyn Write) -> Result<()> + Sync,
{
    if n <= 1 || workers <= 1 {
        for i in 0..n {
            start(i, out)?;
            write(i, out)?;
        }
        return Ok(());
    }
    let out = std::cell::RefCell::new(out);
    run(
        n,
        workers,
        IN_FLIGHT,
        |i, sink: &mut Sink<Vec<u8>>| {
            let mut chunks = Chunks::new(sink);
            write(i, &mut chunks)?;
            Ok(chunks.finish()?)
        },
        &mut |i| start(i, &mut **out.borrow_mut()),
        &mut |_, bytes: Vec<u8>| Ok(out.borrow_mut().write_all(&bytes)?),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_come_out_in_order_whatever_thread_wrote_them() {
        // Item sizes cross chunk boundaries; early items are slow, so workers finish out of
        // order.
        let sizes: Vec<usize> = (0..40).map(|i| (i * 37_117) % (3 * CHUNK)).collect();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        write(
            sizes.len(),
            3,
            |i, w| {
                if i % 5 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                w.write_all(&vec![b'a' + (i % 26) as u8; sizes[i]])?;
                Ok(())
            },
            &mut |i, w| {
                seen.push(i);
                w.write_all(b"|")?;
                Ok(())
            },
            &mut out,
        )
        .unwrap();
        let mut want = Vec::new();
        for (i, &s) in sizes.iter().enumerate() {
            want.push(b'|');
            want.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, s));
        }
        assert!(out == want, "{} vs {} bytes", out.len(), want.len());
        assert_eq!(seen, (0..sizes.len()).collect::<Vec<_>>());
    }

    #[test]
    fn a_failing_writer_or_item_stops_the_export() {
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                if self.0 < b.len() {
                    return Err(io::Error::other("disk full"));
                }
                self.0 -= b.len();
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        // Items far bigger than what is in flight: the workers must stop when the writer does.
        let err = write(
            100,
            2,
            |_, w| {
                for _ in 0..64 {
                    w.write_all(&[b'x'; CHUNK])?;
                }
                Ok(())
            },
            &mut |_, _| Ok(()),
            &mut Full(3 * CHUNK),
        )
        .unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
        let err = write(
            10,
            2,
            |i, w| {
                if i == 6 {
                    return Err(io::Error::other("item 6 is unreadable").into());
                }
                w.write_all(b"ok")?;
                Ok(())
            },
            &mut |_, _| Ok(()),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("item 6"), "{err}");
    }
}
