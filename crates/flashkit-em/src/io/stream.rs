//! Sequential record streams over a [`BlockIo`]: a reader that fetches one `B_r` block at a
//! time and a writer that fills one `B_w` block at a time, for the scans of the graph
//! algorithms.

use super::{AlignedBuf, BlockIo};
use crate::EmError;
use crate::record::Record;

/// Reads `count` records of type `R` from `offset` (a multiple of `B_r`), a block at a time.
pub struct RecordReader<R> {
    offset: u64,
    count: u64,
    next: u64,
    buf: AlignedBuf,
    position: usize,
    available: usize,
    _record: std::marker::PhantomData<R>,
}

impl<R: Record> RecordReader<R> {
    /// A reader of `count` records at `offset`.
    pub fn new(block_bytes: u64, offset: u64, count: u64) -> Self {
        RecordReader {
            offset,
            count,
            next: 0,
            buf: AlignedBuf::new(block_bytes as usize),
            position: 0,
            available: 0,
            _record: std::marker::PhantomData,
        }
    }

    /// The next record, reading a block when the current one is used up.
    pub fn next(&mut self, io: &mut (impl BlockIo + ?Sized)) -> Result<Option<R>, EmError> {
        if self.position == self.available {
            if self.next >= self.count {
                return Ok(None);
            }
            let br = io.block_sizes().read_bytes;
            let per_block = br / R::BYTES as u64;
            let block = self.next / per_block;
            io.read(
                self.offset + block * br,
                &mut self.buf.bytes_mut()[..br as usize],
            )?;
            self.available = per_block.min(self.count - block * per_block) as usize;
            self.position = 0;
        }
        let record = self.buf.records::<R>()[self.position];
        self.position += 1;
        self.next += 1;
        Ok(Some(record))
    }
}

/// Appends records at `offset` (a multiple of `B_w`), writing whole `B_w` blocks.
pub struct RecordWriter<R> {
    offset: u64,
    written: u64,
    buf: AlignedBuf,
    filled: usize,
    _record: std::marker::PhantomData<R>,
}

impl<R: Record> RecordWriter<R> {
    /// A writer starting at `offset`.
    pub fn new(block_bytes: u64, offset: u64) -> Self {
        RecordWriter {
            offset,
            written: 0,
            buf: AlignedBuf::new(block_bytes as usize),
            filled: 0,
            _record: std::marker::PhantomData,
        }
    }

    /// Append a record.
    pub fn push(&mut self, io: &mut (impl BlockIo + ?Sized), record: R) -> Result<(), EmError> {
        let bw = io.block_sizes().write_bytes;
        let per_block = (bw / R::BYTES as u64) as usize;
        self.buf.records_mut::<R>()[self.filled] = record;
        self.filled += 1;
        if self.filled == per_block {
            self.flush(io)?;
        }
        Ok(())
    }

    fn flush(&mut self, io: &mut (impl BlockIo + ?Sized)) -> Result<(), EmError> {
        let bw = io.block_sizes().write_bytes;
        let at = self.offset + self.written * R::BYTES as u64;
        io.write(at, &self.buf.bytes()[..bw as usize])?;
        self.written += self.filled as u64;
        self.filled = 0;
        Ok(())
    }

    /// Write the last, partly filled block; returns the records written.
    pub fn finish(mut self, io: &mut (impl BlockIo + ?Sized)) -> Result<u64, EmError> {
        if self.filled > 0 {
            self.flush(io)?;
        }
        Ok(self.written)
    }

    /// Bytes the records will occupy on the device, in whole `B_w` blocks.
    pub fn padded_bytes(records: u64, block_bytes: u64) -> u64 {
        (records * R::BYTES as u64).div_ceil(block_bytes) * block_bytes
    }
}
