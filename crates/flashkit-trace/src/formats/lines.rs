//! Lines out of a byte stream, without an allocation per line.
//!
//! The reader keeps one buffer (256 KiB, grown only for a line longer than that, up to
//! [`MAX_LINE_BYTES`]) and hands out each line as a slice of it: `memchr` finds the newline,
//! a `\r` before it is dropped, a UTF-8 byte order mark opening the first line is skipped,
//! and a last line without a newline still counts. Bytes are
//! never decoded as UTF-8: formats look at the bytes of the fields they read, so a non-UTF-8
//! byte in a field nobody reads (a host or process name) is harmless, and one in a number
//! is reported like any other bad character.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// The longest line accepted: longer is not a text trace (or a corrupt one).
pub const MAX_LINE_BYTES: usize = 1 << 20;
const BUFFER_BYTES: usize = 256 << 10;
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Why no line could be read.
#[derive(Debug)]
pub enum LineError {
    /// The underlying read failed (a truncated gzip stream lands here).
    Io(io::Error),
    /// A line is longer than [`MAX_LINE_BYTES`].
    TooLong,
}

/// Splits a byte stream into lines.
pub struct LineReader<R> {
    input: R,
    buffer: Vec<u8>,
    /// Start of the bytes not yet handed out.
    start: usize,
    /// End of the bytes read so far.
    end: usize,
    eof: bool,
    line_number: u64,
}

impl<R: Read> LineReader<R> {
    /// Lines of `input`.
    pub fn new(input: R) -> Self {
        LineReader {
            input,
            buffer: vec![0; BUFFER_BYTES],
            start: 0,
            end: 0,
            eof: false,
            line_number: 0,
        }
    }

    /// The number of the line last handed out (1-based; 0 before the first).
    pub fn line_number(&self) -> u64 {
        self.line_number
    }

    /// The next line without its terminator, or `None` at the end of the input.
    #[inline]
    pub fn next_line(&mut self) -> Option<Result<&[u8], LineError>> {
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buffer[self.start..self.end]) {
                let line_start = self.start;
                let mut line_end = self.start + at;
                self.start = line_end + 1;
                self.line_number += 1;
                if line_end > line_start && self.buffer[line_end - 1] == b'\r' {
                    line_end -= 1;
                }
                let line_start = self.after_bom(line_start, line_end);
                return Some(Ok(&self.buffer[line_start..line_end]));
            }
            if self.eof {
                return self.last_line();
            }
            if let Err(error) = self.fill() {
                // Nothing more can be read: the partial line in the buffer is not a line.
                self.eof = true;
                self.start = self.end;
                return Some(Err(error));
            }
        }
    }

    /// A final line that has no newline.
    fn last_line(&mut self) -> Option<Result<&[u8], LineError>> {
        if self.start == self.end {
            return None;
        }
        let line_start = self.start;
        let mut line_end = self.end;
        self.start = self.end;
        self.line_number += 1;
        if self.buffer[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        let line_start = self.after_bom(line_start, line_end);
        Some(Ok(&self.buffer[line_start..line_end]))
    }

    /// Where the line at `start..end` begins once a UTF-8 byte order mark is skipped: some
    /// Windows tools (Excel's "CSV UTF-8") start a file with one, and it would otherwise be
    /// part of the first field ("\xef\xbb\xbftime_ns" is no column, nor a number).
    #[inline]
    fn after_bom(&self, start: usize, end: usize) -> usize {
        if self.line_number == 1 && self.buffer[start..end].starts_with(UTF8_BOM) {
            start + UTF8_BOM.len()
        } else {
            start
        }
    }

    /// Move the partial line to the front and read more after it.
    fn fill(&mut self) -> Result<(), LineError> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            if self.buffer.len() >= MAX_LINE_BYTES {
                return Err(LineError::TooLong);
            }
            let grown = (self.buffer.len() * 2).min(MAX_LINE_BYTES);
            self.buffer.resize(grown, 0);
        }
        loop {
            match self.input.read(&mut self.buffer[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LineError::Io(e)),
            }
        }
    }
}

/// Whether `prefix` starts with the gzip signature.
pub fn is_gzip(prefix: &[u8]) -> bool {
    prefix.starts_with(&[0x1f, 0x8b])
}

/// Open `path` for reading as text, decompressing gzip (recognised by its signature, not
/// its name; concatenated gzip members are read one after another, as `gzip -d` does).
pub fn open_text(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match file.read(&mut magic[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let file = File::open(path)?;
    if got == 2 && is_gzip(&magic) {
        let buffered = BufReader::with_capacity(256 << 10, file);
        Ok(Box::new(flate2::bufread::MultiGzDecoder::new(buffered)))
    } else {
        Ok(Box::new(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `text`; a reader handing out more lines than `text` has bytes is
    /// stuck, and fails the test at once.
    fn lines(text: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = LineReader::new(text);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line() {
            out.push(line.expect("line").to_vec());
            assert!(out.len() <= text.len(), "more lines than bytes");
        }
        out
    }

    #[test]
    fn splits_lines_with_and_without_terminators() {
        assert_eq!(lines(b""), Vec::<Vec<u8>>::new());
        assert_eq!(
            lines(b"a\nb\r\n\nc"),
            vec![b"a".to_vec(), b"b".to_vec(), vec![], b"c".to_vec()]
        );
        assert_eq!(lines(b"\n"), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn a_byte_order_mark_opening_the_first_line_is_skipped() {
        assert_eq!(
            lines(b"\xef\xbb\xbftime,op\r\n\xef\xbb\xbfx\n"),
            vec![b"time,op".to_vec(), b"\xef\xbb\xbfx".to_vec()],
            "only the first line's"
        );
        assert_eq!(lines(b"\xef\xbb\xbfa"), vec![b"a".to_vec()]);
        assert_eq!(lines(b"\xef\xbb\xbf"), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn long_lines_grow_the_buffer_and_too_long_lines_fail() {
        let long = vec![b'x'; BUFFER_BYTES + 10];
        let mut text = long.clone();
        text.extend_from_slice(b"\nshort\n");
        assert_eq!(lines(&text), vec![long, b"short".to_vec()]);
        let huge = vec![b'y'; MAX_LINE_BYTES + 1];
        let mut reader = LineReader::new(&huge[..]);
        assert!(matches!(reader.next_line(), Some(Err(LineError::TooLong))));
    }

    #[test]
    fn numbers_lines_across_buffer_refills() {
        let text: Vec<u8> = (0..100_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let mut reader = LineReader::new(&text[..]);
        let mut n = 0u64;
        while let Some(line) = reader.next_line() {
            assert_eq!(line.expect("line"), n.to_string().as_bytes());
            n += 1;
            assert_eq!(reader.line_number(), n);
        }
        assert_eq!(n, 100_000);
    }

    /// A last line without a newline loses its `\r` too, and is numbered.
    #[test]
    fn a_last_line_without_newline_is_trimmed_and_numbered() {
        assert_eq!(lines(b"a\nb\r"), vec![b"a".to_vec(), b"b".to_vec()]);
        // Checked where the bytes past the line are not a `\r`: alone in the buffer, and
        // after a longer line whose bytes stay past the moved one.
        assert_eq!(lines(b"b\r"), vec![b"b".to_vec()]);
        assert_eq!(lines(b"abc\nd\r"), vec![b"abc".to_vec(), b"d".to_vec()]);
        assert_eq!(lines(b"\r\n\n"), vec![Vec::<u8>::new(), Vec::new()]);
        let mut reader = LineReader::new(&b"a\nbc"[..]);
        assert_eq!(reader.line_number(), 0);
        assert_eq!(reader.next_line().expect("a").expect("read"), b"a");
        assert_eq!(reader.line_number(), 1);
        assert_eq!(reader.next_line().expect("bc").expect("read"), b"bc");
        assert_eq!(reader.line_number(), 2);
        assert!(reader.next_line().is_none());
        assert_eq!(reader.line_number(), 2);
    }

    /// Short lines never grow the buffer, however much text there is: the partial line at
    /// its end moves to the front before each read.
    #[test]
    fn short_lines_keep_the_buffer_its_first_size() {
        let text: Vec<u8> = (0..400_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        assert!(text.len() > 2 * MAX_LINE_BYTES);
        let mut reader = LineReader::new(&text[..]);
        let mut n = 0u64;
        while let Some(line) = reader.next_line() {
            assert_eq!(line.expect("line"), n.to_string().as_bytes());
            n += 1;
        }
        assert_eq!(n, 400_000);
        assert_eq!(reader.buffer.len(), BUFFER_BYTES);
    }

    /// A long line doubles the buffer (up to `MAX_LINE_BYTES`, and a line that fills it
    /// exactly, newline included, is still read).
    #[test]
    fn a_long_line_doubles_the_buffer() {
        let mut text = vec![b'x'; BUFFER_BYTES + 10];
        text.push(b'\n');
        let mut reader = LineReader::new(&text[..]);
        assert_eq!(
            reader.next_line().expect("line").expect("read").len(),
            BUFFER_BYTES + 10
        );
        assert_eq!(reader.buffer.len(), 2 * BUFFER_BYTES);
        let mut text = vec![b'x'; MAX_LINE_BYTES - 1];
        text.push(b'\n');
        text.extend_from_slice(b"after");
        let mut reader = LineReader::new(&text[..]);
        assert_eq!(
            reader.next_line().expect("line").expect("read").len(),
            MAX_LINE_BYTES - 1
        );
        assert_eq!(reader.buffer.len(), MAX_LINE_BYTES);
        assert_eq!(reader.next_line().expect("line").expect("read"), b"after");
    }

    /// A reader that returns what it is told, one read at a time, then end of file.
    struct Scripted(std::collections::VecDeque<io::Result<&'static [u8]>>);

    impl Read for Scripted {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            match self.0.pop_front() {
                None => Ok(0),
                Some(Ok(bytes)) => {
                    buffer[..bytes.len()].copy_from_slice(bytes);
                    Ok(bytes.len())
                }
                Some(Err(error)) => Err(error),
            }
        }
    }

    /// An interrupted read is read again; any other read error is the reader's last word,
    /// and the partial line before it is not a line.
    #[test]
    fn interrupted_reads_are_retried_and_other_errors_end_the_lines() {
        let mut reader = LineReader::new(Scripted(
            [
                Ok(&b"a\nb"[..]),
                Err(io::Error::from(io::ErrorKind::Interrupted)),
                Ok(&b"c\n"[..]),
            ]
            .into(),
        ));
        assert_eq!(reader.next_line().expect("a").expect("read"), b"a");
        assert_eq!(reader.next_line().expect("bc").expect("read"), b"bc");
        assert!(reader.next_line().is_none());
        let mut reader = LineReader::new(Scripted(
            [
                Ok(&b"a\nb"[..]),
                Err(io::Error::from(io::ErrorKind::InvalidData)),
                Ok(&b"c\n"[..]),
            ]
            .into(),
        ));
        assert_eq!(reader.next_line().expect("a").expect("read"), b"a");
        match reader.next_line() {
            Some(Err(LineError::Io(error))) => assert_eq!(error.kind(), io::ErrorKind::InvalidData),
            other => panic!("expected the read error, got {other:?}"),
        }
        assert!(reader.next_line().is_none());
    }
}
