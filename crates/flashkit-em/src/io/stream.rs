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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{BlockSizes, SimIo};

    #[test]
    fn records_written_in_b_w_blocks_read_back_in_b_r_blocks() {
        // 256 records a 2 KiB write block, 64 a 512 B read block.
        let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        let at = 4096;
        let mut writer = RecordWriter::<u64>::new(2048, at);
        for i in 0..1000u64 {
            writer.push(&mut io, i * 3).expect("push");
        }
        // Three whole blocks so far; the fourth, 232 records, written padded by `finish`.
        assert_eq!(io.stats().write_ios, 3);
        assert_eq!(writer.finish(&mut io).expect("finish"), 1000);
        assert_eq!(io.stats().write_ios, 4);
        assert_eq!(io.written_extent_bytes(), at + 4 * 2048);
        assert_eq!(RecordWriter::<u64>::padded_bytes(1000, 2048), 4 * 2048);
        assert_eq!(RecordWriter::<u64>::padded_bytes(1024, 2048), 4 * 2048);
        assert_eq!(RecordWriter::<u64>::padded_bytes(1025, 2048), 5 * 2048);
        assert_eq!(RecordWriter::<u64>::padded_bytes(0, 2048), 0);

        // Read back whole.
        let mut reader = RecordReader::<u64>::new(512, at, 1000);
        let mut read = Vec::new();
        while let Some(record) = reader.next(&mut io).expect("next") {
            read.push(record);
        }
        assert_eq!(read, (0..1000).map(|i| i * 3).collect::<Vec<u64>>());
        // 16 blocks of 64 (the last holds 40), and nothing read past the end.
        assert_eq!(io.stats().read_ios, 16);
        assert_eq!(reader.next(&mut io).expect("next"), None);
        assert_eq!(io.stats().read_ios, 16);

        // A reader of 70 records stops after its second block's sixth record.
        let mut reader = RecordReader::<u64>::new(512, at + 512, 70);
        let mut read = Vec::new();
        while let Some(record) = reader.next(&mut io).expect("next") {
            read.push(record);
        }
        assert_eq!(read, (64..134).map(|i| i * 3).collect::<Vec<u64>>());
        assert_eq!(io.stats().read_ios, 18);
        // A writer with nothing pushed writes nothing.
        let writer = RecordWriter::<u64>::new(2048, 0);
        assert_eq!(writer.finish(&mut io).expect("finish"), 0);
        assert_eq!(io.stats().write_ios, 4);
    }
}
