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

enum Reply {
    /// A transfer done (or failed).
    Done {
        tag: u64,
        buf: AlignedBuf,
        result: Result<(), EmError>,
    },
    /// A worker stopped early: the transfers it took will never be answered.
    Stopped,
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
    /// A worker stopped early (every wait fails from then on).
    stopped: bool,
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
            stopped: false,
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
            // A worker's panic is a bug in the backend: raise it here, with its message.
            let outcome = worker
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
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
    // A worker's own error comes first: the caller's is then only that the worker stopped.
    served?;
    result
}

/// Tells every client that its worker stopped early, on an error or a panic: requests the
/// worker took will never be answered, and a client waiting for one would wait forever
/// (the other workers, and the reply channels, are still alive).
struct StopNotice<'a> {
    replies: &'a [Sender<Reply>],
    finished: bool,
}

impl Drop for StopNotice<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for reply in self.replies {
            let _ = reply.send(Reply::Stopped);
        }
    }
}

/// Serve requests from `queue` until every sender is gone. Several workers may share one
/// queue: each takes the next request under the lock and serves it outside. A worker that
/// stops early (a discard's error, a panic in the backend) tells every client so.
fn serve<I: BlockIo + ?Sized>(
    io: &mut I,
    queue: &Mutex<Receiver<Request>>,
    replies: &[Sender<Reply>],
) -> Result<(), EmError> {
    let mut notice = StopNotice {
        replies,
        finished: false,
    };
    loop {
        let next = queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        let Ok(request) = next else {
            notice.finished = true;
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
        let _ = replies[client].send(Reply::Done { tag, buf, result });
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
            let (done, buf) = self.next_reply()?;
            self.arrived.insert(done, buf);
        }
    }

    /// Wait for every outstanding transfer and drop the buffers nobody waited for, so that
    /// their tags can be used again.
    pub fn drain(&mut self) -> Result<(), EmError> {
        while self.outstanding > 0 {
            self.next_reply()?;
        }
        self.arrived.clear();
        Ok(())
    }

    /// The next transfer done, with its tag; its error if it failed, and an error for this
    /// and every later call once a worker has stopped early.
    fn next_reply(&mut self) -> Result<(u64, AlignedBuf), EmError> {
        if !self.stopped {
            match self.replies.recv() {
                Ok(Reply::Done { tag, buf, result }) => {
                    self.outstanding -= 1;
                    result?;
                    return Ok((tag, buf));
                }
                Ok(Reply::Stopped) | Err(_) => self.stopped = true,
            }
        }
        Err(EmError::Device(
            "the I/O worker stopped before a transfer was done".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{BlockSizes, IoStats, SimIo};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar};
    use std::time::Duration;

    /// A backend that panics on reads or fails discards, with twins like itself if asked.
    struct Faulty {
        panic_on_read: bool,
        fail_discard: bool,
        twins: bool,
    }

    impl BlockIo for Faulty {
        fn block_sizes(&self) -> BlockSizes {
            BlockSizes::same(4096).expect("valid")
        }
        fn read(&mut self, _offset: u64, _buf: &mut [u8]) -> Result<(), EmError> {
            assert!(!self.panic_on_read, "a bug in the backend's read");
            Ok(())
        }
        fn write(&mut self, _offset: u64, _buf: &[u8]) -> Result<(), EmError> {
            Ok(())
        }
        fn discard(&mut self, _offset: u64, _len: u64) -> Result<(), EmError> {
            if self.fail_discard {
                return Err(EmError::Device("the discard failed".into()));
            }
            Ok(())
        }
        fn sync(&mut self) -> Result<(), EmError> {
            Ok(())
        }
        fn stats(&self) -> IoStats {
            IoStats::default()
        }
        fn twin(&self) -> Result<Option<Box<dyn BlockIo>>, EmError> {
            Ok(self.twins.then(|| {
                Box::new(Faulty {
                    panic_on_read: self.panic_on_read,
                    fail_discard: self.fail_discard,
                    twins: false,
                }) as Box<dyn BlockIo>
            }))
        }
        fn describe(&self) -> String {
            "faulty".into()
        }
    }

    /// Run `io` through a pipeline whose client discards, then reads and waits; the outcome,
    /// or the panic's message, within 20 s (a hang fails the test rather than stalling it).
    fn read_through(mut io: Faulty) -> Result<Result<(), EmError>, String> {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_pipeline(&mut io, |pipe| {
                    pipe.discard(0, 4096);
                    pipe.read(1, 0, 4096, AlignedBuf::new(4096));
                    pipe.read(2, 4096, 4096, AlignedBuf::new(4096));
                    pipe.wait(1)?;
                    pipe.wait(2).map(drop)
                })
            }));
            let _ = tx.send(outcome.map_err(|p| {
                p.downcast_ref::<&str>()
                    .map(|m| m.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into())
            }));
        });
        rx.recv_timeout(Duration::from_secs(20))
            .expect("the pipeline hung: no outcome within 20 s")
    }

    #[test]
    fn a_backend_that_panics_raises_its_panic_instead_of_hanging_the_client() {
        for twins in [false, true] {
            let outcome = read_through(Faulty {
                panic_on_read: true,
                fail_discard: false,
                twins,
            });
            let message = outcome.expect_err("the panic reaches the caller");
            assert!(message.contains("a bug in the backend's read"), "{message}");
        }
    }

    #[test]
    fn a_failed_discard_stops_the_worker_and_its_error_reaches_the_caller() {
        for twins in [false, true] {
            let outcome = read_through(Faulty {
                panic_on_read: false,
                fail_discard: true,
                twins,
            });
            let error = outcome.expect("no panic").expect_err("the discard's error");
            assert!(error.to_string().contains("the discard failed"), "{error}");
        }
        // Without the fault, the same run succeeds.
        let outcome = read_through(Faulty {
            panic_on_read: false,
            fail_discard: false,
            twins: true,
        });
        assert!(matches!(outcome, Ok(Ok(()))));
    }

    /// What the handles of a [`Handles`] backend share: which handle served each transfer,
    /// how many handles exist and how many twins came back, and the reads started so far.
    #[derive(Default)]
    struct HandleLog {
        served: Mutex<Vec<(usize, &'static str, u64)>>,
        handles: AtomicUsize,
        absorbed: AtomicUsize,
        reads_started: Mutex<usize>,
        read_started: Condvar,
    }

    /// A backend with twins that logs which handle served each transfer. A read waits (up to
    /// 10 s) until a second read has started, so two reads in flight take two reading
    /// threads; a write at or past `refuse_from` fails.
    struct Handles {
        id: usize,
        log: Arc<HandleLog>,
        refuse_from: u64,
    }

    impl Handles {
        fn new(refuse_from: u64) -> Handles {
            let log = Arc::new(HandleLog::default());
            log.handles.store(1, Ordering::SeqCst);
            Handles {
                id: 0,
                log,
                refuse_from,
            }
        }

        fn served(&self) -> Vec<(usize, &'static str, u64)> {
            self.log.served.lock().expect("log").clone()
        }
    }

    impl BlockIo for Handles {
        fn block_sizes(&self) -> BlockSizes {
            BlockSizes::same(512).expect("valid")
        }
        fn read(&mut self, offset: u64, _buf: &mut [u8]) -> Result<(), EmError> {
            let mut started = self.log.reads_started.lock().expect("reads");
            *started += 1;
            self.log.read_started.notify_all();
            let (started, _) = self
                .log
                .read_started
                .wait_timeout_while(started, Duration::from_secs(10), |n| *n < 2)
                .expect("reads");
            drop(started);
            self.log
                .served
                .lock()
                .expect("log")
                .push((self.id, "read", offset));
            Ok(())
        }
        fn write(&mut self, offset: u64, _buf: &[u8]) -> Result<(), EmError> {
            self.log
                .served
                .lock()
                .expect("log")
                .push((self.id, "write", offset));
            if offset >= self.refuse_from {
                return Err(EmError::Device(format!("write at {offset} refused")));
            }
            Ok(())
        }
        fn stats(&self) -> IoStats {
            IoStats::default()
        }
        fn twin(&self) -> Result<Option<Box<dyn BlockIo>>, EmError> {
            let id = self.log.handles.fetch_add(1, Ordering::SeqCst);
            Ok(Some(Box::new(Handles {
                id,
                log: Arc::clone(&self.log),
                refuse_from: self.refuse_from,
            })))
        }
        fn absorb(&mut self, _twin: TwinReport) {
            self.log.absorbed.fetch_add(1, Ordering::SeqCst);
        }
        fn describe(&self) -> String {
            format!("handle {}", self.id)
        }
    }

    #[test]
    fn a_backend_with_twins_reads_on_two_threads_and_writes_on_a_third() {
        let mut io = Handles::new(u64::MAX);
        with_pipeline(&mut io, |pipe| {
            for tag in 0..3 {
                pipe.write(tag, tag * 512, 512, AlignedBuf::new(512));
            }
            pipe.read(10, 0, 512, AlignedBuf::new(512));
            pipe.read(11, 512, 512, AlignedBuf::new(512));
            for tag in [0, 1, 2, 10, 11] {
                pipe.wait(tag)?;
            }
            Ok(())
        })
        .expect("pipeline");
        // Two twins made (one writer, one more reader), both handed back.
        assert_eq!(
            io.log.handles.load(Ordering::SeqCst),
            1 + WRITERS + READERS - 1
        );
        assert_eq!(io.log.absorbed.load(Ordering::SeqCst), 2);
        let served = io.served();
        // Every write went to the first twin, in order; the two reads were in flight at once
        // on the device's own handle and the second twin.
        let writes: Vec<_> = served.iter().filter(|s| s.1 == "write").collect();
        assert_eq!(
            writes,
            [&(1, "write", 0), &(1, "write", 512), &(1, "write", 1024)]
        );
        let mut readers: Vec<usize> = served
            .iter()
            .filter(|s| s.1 == "read")
            .map(|s| s.0)
            .collect();
        readers.sort_unstable();
        assert_eq!(readers, [0, 2]);
    }

    #[test]
    fn drain_waits_for_every_transfer_returns_a_failure_and_frees_the_tags() {
        let mut io = Handles::new(4096);
        with_pipeline(&mut io, |pipe| {
            pipe.write(1, 0, 512, AlignedBuf::new(512));
            pipe.write(2, 4096, 512, AlignedBuf::new(512));
            pipe.write(3, 512, 512, AlignedBuf::new(512));
            let error = pipe.drain().expect_err("the refused write's error");
            assert!(
                error.to_string().contains("write at 4096 refused"),
                "{error}"
            );
            // The failure came back; a later drain waits for the rest.
            pipe.drain()?;
            // A reply that arrived while waiting for a later tag is dropped by a drain.
            pipe.write(4, 1024, 512, AlignedBuf::new(512));
            pipe.write(5, 1536, 512, AlignedBuf::new(512));
            pipe.wait(5)?;
            pipe.drain()?;
            let mut marked = AlignedBuf::new(512);
            marked.bytes_mut().fill(7);
            pipe.preset(4, marked);
            assert!(pipe.wait(4)?.bytes().iter().all(|&b| b == 7));
            Ok(())
        })
        .expect("pipeline");
        let offsets: Vec<u64> = io.served().iter().map(|s| s.2).collect();
        assert_eq!(offsets, [0, 4096, 512, 1024, 1536]);
    }

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
