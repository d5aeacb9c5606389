//! Double buffering: a worker thread that owns the [`BlockIo`] and carries out transfers in
//! the order they were submitted, while the caller computes.
//!
//! The caller submits a transfer with a buffer and a tag and later waits for that tag; the
//! buffer comes back with the data. Because one worker serves requests first in, first out,
//! the sequence of I/Os the device sees is exactly the submission order: counts and traces
//! are as deterministic as with synchronous calls.

use super::{AlignedBuf, BlockIo, TwinReport};
use crate::EmError;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};

enum Request {
    Read {
        client: usize,
        tag: u64,
        offset: u64,
        len: usize,
        buf: AlignedBuf,
    },
    Write {
        client: usize,
        tag: u64,
        offset: u64,
        len: usize,
        buf: AlignedBuf,
    },
    Discard {
        offset: u64,
        len: u64,
    },
}

struct Reply {
    tag: u64,
    buf: AlignedBuf,
    result: Result<(), EmError>,
}

/// The caller's end of an I/O worker.
pub struct Pipeline {
    client: usize,
    requests: Sender<Request>,
    /// Where writes go when the backend has a twin that writes while the worker reads.
    writes: Option<Sender<Request>>,
    replies: Receiver<Reply>,
    arrived: BTreeMap<u64, AlignedBuf>,
    outstanding: usize,
}

/// Run `body` with a [`Pipeline`] whose worker thread owns `io` for the duration.
pub fn with_pipeline<I, T>(
    io: &mut I,
    body: impl FnOnce(&mut Pipeline) -> Result<T, EmError>,
) -> Result<T, EmError>
where
    I: BlockIo + ?Sized,
{
    with_pipelines(io, 1, |pipes| body(&mut pipes[0]))
}

/// Threads that read for a backend with twins: the device's own handle and twins. Two
/// readers took the merge of 2^28 u64 from 3.2 to 2.8 s here; four did no better.
const READERS: usize = 2;
/// Threads that write for a backend with twins (two were slower than one here).
const WRITERS: usize = 1;

/// Run `body` with `clients` pipelines (at least one) served by one worker thread that owns
/// `io` for the duration; each pipeline can move to a thread of its own. A backend with twin
/// handles gets more workers: `READERS` that share the reads, and one that writes.
pub fn with_pipelines<I, T>(
    io: &mut I,
    clients: usize,
    body: impl FnOnce(&mut [Pipeline]) -> Result<T, EmError>,
) -> Result<T, EmError>
where
    I: BlockIo + ?Sized,
{
    assert!(clients > 0, "a pipeline needs at least one client");
    // Twins: the writers first, then the extra readers.
    let mut twins: Vec<Box<dyn BlockIo>> = Vec::new();
    if let Some(writer) = io.twin()? {
        twins.push(writer);
        for _ in 1..WRITERS + READERS - 1 {
            twins.extend(io.twin()?);
        }
    }
    let (request_tx, request_rx) = channel::<Request>();
    let (write_tx, write_rx) = channel::<Request>();
    let mut reply_txs = Vec::with_capacity(clients);
    let mut pipelines = Vec::with_capacity(clients);
    for client in 0..clients {
        let (reply_tx, reply_rx) = channel::<Reply>();
        reply_txs.push(reply_tx);
        pipelines.push(Pipeline {
            client,
            requests: request_tx.clone(),
            writes: (!twins.is_empty()).then(|| write_tx.clone()),
            replies: reply_rx,
            arrived: BTreeMap::new(),
            outstanding: 0,
        });
    }
    drop((request_tx, write_tx));
    let (reads, writes) = (Mutex::new(request_rx), Mutex::new(write_rx));
    let (result, served) = std::thread::scope(|scope| {
        let replies = &reply_txs;
        let mut workers = Vec::with_capacity(1 + twins.len());
        let reader = &mut *io;
        let queue = &reads;
        workers.push(scope.spawn(move || serve(reader, queue, replies)));
        for (i, twin) in twins.iter_mut().enumerate() {
            let queue = if i < WRITERS { &writes } else { &reads };
            workers.push(scope.spawn(move || serve(&mut **twin, queue, replies)));
        }
        let result = body(&mut pipelines);
        let mut drained = Ok(());
        for pipeline in &mut pipelines {
            let outcome = pipeline.drain();
            if drained.is_ok() {
                drained = outcome;
            }
        }
        drop(pipelines);
        let mut served = Ok(());
        for worker in workers {
            let outcome = worker
                .join()
                .expect("invariant: an I/O worker does not panic");
            if served.is_ok() {
                served = outcome;
            }
        }
        (result.and_then(|v| drained.map(|()| v)), served)
    });
    for twin in twins {
        io.absorb(TwinReport {
            stats: twin.stats(),
            description: twin.describe(),
        });
    }
    let value = result?;
    served?;
    Ok(value)
}

/// Serve requests from `queue` until every sender is gone. Several workers may share one
/// queue: each takes the next request under the lock and serves it outside.
fn serve<I: BlockIo + ?Sized>(
    io: &mut I,
    queue: &Mutex<Receiver<Request>>,
    replies: &[Sender<Reply>],
) -> Result<(), EmError> {
    loop {
        let next = queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        let Ok(request) = next else {
            return Ok(());
        };
        let (client, tag, buf, result) = match request {
            Request::Read {
                client,
                tag,
                offset,
                len,
                mut buf,
            } => {
                let result = io.read(offset, &mut buf.bytes_mut()[..len]);
                (client, tag, buf, result)
            }
            Request::Write {
                client,
                tag,
                offset,
                len,
                buf,
            } => {
                let result = io.write(offset, &buf.bytes()[..len]);
                (client, tag, buf, result)
            }
            Request::Discard { offset, len } => {
                io.discard(offset, len)?;
                continue;
            }
        };
        // A client that stopped listening (its thread failed) does not stop the others.
        let _ = replies[client].send(Reply { tag, buf, result });
    }
}

impl Pipeline {
    /// Read `len` bytes at `offset` into `buf`; collect it with [`Pipeline::wait`]`(tag)`.
    pub fn read(&mut self, tag: u64, offset: u64, len: usize, buf: AlignedBuf) {
        self.send(Request::Read {
            client: self.client,
            tag,
            offset,
            len,
            buf,
        });
    }

    /// Write the first `len` bytes of `buf` at `offset`; [`Pipeline::wait`]`(tag)` returns
    /// the buffer once written.
    pub fn write(&mut self, tag: u64, offset: u64, len: usize, buf: AlignedBuf) {
        self.send(Request::Write {
            client: self.client,
            tag,
            offset,
            len,
            buf,
        });
    }

    /// Discard a range (in submission order with the transfers).
    pub fn discard(&mut self, offset: u64, len: u64) {
        // A send fails only when the worker has stopped, which `wait` reports.
        let _ = self.requests.send(Request::Discard { offset, len });
    }

    /// Hand `buf` back under `tag` without a transfer, as if a read had just brought it: for
    /// a block another step already read.
    pub fn preset(&mut self, tag: u64, buf: AlignedBuf) {
        let previous = self.arrived.insert(tag, buf);
        assert!(previous.is_none(), "I/O tag {tag} already holds a buffer");
    }

    fn send(&mut self, request: Request) {
        self.outstanding += 1;
        let queue = match (&request, &self.writes) {
            (Request::Write { .. }, Some(writes)) => writes,
            _ => &self.requests,
        };
        let _ = queue.send(request);
    }

    /// The buffer of the transfer tagged `tag`, once it is done.
    pub fn wait(&mut self, tag: u64) -> Result<AlignedBuf, EmError> {
        loop {
            if let Some(buf) = self.arrived.remove(&tag) {
                return Ok(buf);
            }
            // Waiting for a transfer nobody asked for would block forever: a caller bug.
            assert!(
                self.outstanding > 0,
                "wait for I/O tag {tag}, which was never submitted"
            );
            let reply = self.replies.recv().map_err(|_| {
                EmError::Device("the I/O worker stopped before a transfer was done".into())
            })?;
            self.outstanding -= 1;
            reply.result?;
            self.arrived.insert(reply.tag, reply.buf);
        }
    }

    /// Wait for every outstanding transfer and drop the buffers nobody waited for, so that
    /// their tags can be used again.
    pub fn drain(&mut self) -> Result<(), EmError> {
        while self.outstanding > 0 {
            let reply = self.replies.recv().map_err(|_| {
                EmError::Device("the I/O worker stopped before a transfer was done".into())
            })?;
            self.outstanding -= 1;
            reply.result?;
        }
        self.arrived.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{BlockSizes, SimIo};

    #[test]
    fn transfers_happen_in_submission_order_and_buffers_come_back() {
        let mut io = SimIo::with_data(BlockSizes::same(4096).expect("valid"));
        with_pipeline(&mut io, |pipe| {
            let mut buf = AlignedBuf::new(8192);
            buf.bytes_mut().fill(9);
            pipe.write(1, 0, 8192, buf);
            pipe.read(2, 4096, 4096, AlignedBuf::new(4096));
            let read = pipe.wait(2)?;
            assert!(read.bytes().iter().all(|&b| b == 9));
            assert_eq!(pipe.wait(1)?.len(), 8192);
            Ok(())
        })
        .expect("pipeline");
        assert_eq!(io.stats().write_ios, 2);
        assert_eq!(io.stats().read_ios, 1);
    }
}
