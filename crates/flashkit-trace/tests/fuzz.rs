//! A stable-Rust fuzz harness for the text parsers (cargo-fuzz needs nightly): proptest
//! feeds arbitrary bytes, and real lines of every format mutated byte by byte, to every
//! parser, forced and detected. Properties: nothing panics; every rejection names the file
//! and carries a line number; every accepted request has an end that fits 64 bits.
//!
//! Raise the case count with `PROPTEST_CASES=100000 cargo test -p flashkit-trace --test fuzz
//! --release` for a longer campaign.

use flashkit_trace::TraceError;
use flashkit_trace::formats::{Format, TraceOptions, open};
use proptest::prelude::*;
use std::path::Path;

/// One real line (or header plus line) of every text format.
const REAL: &[(Format, &str)] = &[
    (
        Format::Msr,
        "128166385295514663,hm,0,Write,9056014336,2048,2833\n",
    ),
    (Format::Spc, "1,31244784,32768,R,0.011565\n"),
    (
        Format::Fiu,
        "89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221\n",
    ),
    (
        Format::Blkparse,
        "  8,33  30        1     0.001368096  5025  D   R 540544 + 8 [systemd-udevd]\nCPU4 (8,33):\n",
    ),
    (
        Format::FioV2,
        "fio version 2 iolog\n/dev/sdb add\n/dev/sdb write 0 4096\n/dev/sdb wait 100 0\n",
    ),
    (
        Format::FioV3,
        "fio version 3 iolog\n156 /tmp/fiotest/data read 61440 4096\n",
    ),
    (
        Format::Systor,
        "Timestamp,Response,IOType,LUN,Offset,Size\n1455591804.310701000,0.006475000,R,0,203468398592,32768\n",
    ),
    (Format::Tencent, "1538323199,13896880,128,0,1063\n"),
    (
        Format::CloudPhysics,
        "version,time,op,size,lbn\n1,5633898,2a,6656,40409911\n",
    ),
    (Format::DiskSim, "938513000 4 264719034 16 0\n"),
    (
        Format::Csv,
        "time_ns,op,offset,size,volume\n7,write,4096,512,3\n",
    ),
];

fn check(path: &Path, options: &TraceOptions) -> Result<(), TestCaseError> {
    let results: Vec<_> = match open(path, options) {
        Ok(stream) => stream.collect(),
        Err(error) => vec![Err(error)],
    };
    for result in results {
        match result {
            Ok(r) => prop_assert!(r.offset.checked_add(u64::from(r.size)).is_some()),
            Err(error) => {
                let message = error.to_string();
                prop_assert!(message.contains(&path.display().to_string()), "{}", message);
                match &error {
                    TraceError::Record { location, .. } => {
                        prop_assert!(location.starts_with("line "), "{}", message)
                    }
                    TraceError::Format { message: m, .. } => {
                        prop_assert!(m.contains("line"), "{}", message)
                    }
                    _ => prop_assert!(false, "unexpected kind of error: {}", message),
                }
            }
        }
    }
    Ok(())
}

fn every_way(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fuzz.trace");
    std::fs::write(&path, bytes).expect("write");
    check(&path, &TraceOptions::default())?;
    for format in Format::ALL.into_iter().filter(|&f| f != Format::Binary) {
        for skip_bad_lines in [false, true] {
            let options = TraceOptions {
                format: Some(format),
                skip_bad_lines,
                ..TraceOptions::default()
            };
            check(&path, &options)?;
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Insert { at: usize, byte: u8 },
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (
            any::<usize>(),
            prop_oneof![
                Just(b','),
                Just(b' '),
                Just(b'\n'),
                Just(b'9'),
                Just(b'.'),
                any::<u8>()
            ]
        )
            .prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        (any::<usize>(), 1usize..8).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1usize..24).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
    ]
}

fn apply(text: &mut Vec<u8>, m: &Mutation) {
    if text.is_empty() {
        return;
    }
    match *m {
        Mutation::Flip { at, bit } => {
            let at = at % text.len();
            text[at] ^= 1 << bit;
        }
        Mutation::Insert { at, byte } => text.insert(at % (text.len() + 1), byte),
        Mutation::Delete { at, len } => {
            let at = at % text.len();
            let end = (at + len).min(text.len());
            text.drain(at..end);
        }
        Mutation::Duplicate { at, len } => {
            let at = at % text.len();
            let end = (at + len).min(text.len());
            let copy = text[at..end].to_vec();
            text.splice(at..at, copy);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        every_way(&bytes)?;
    }

    #[test]
    fn mutated_real_lines_never_panic(
        which in 0..REAL.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
        repeat in 1usize..4,
    ) {
        let mut text = REAL[which].1.repeat(repeat).into_bytes();
        for m in &mutations {
            apply(&mut text, m);
        }
        every_way(&text)?;
    }

    #[test]
    fn gzip_of_mutated_lines_never_panics(
        which in 0..REAL.len(),
        mutations in proptest::collection::vec(mutation(), 0..4),
        cut in any::<usize>(),
    ) {
        use std::io::Write;
        let mut text = REAL[which].1.repeat(3).into_bytes();
        for m in &mutations {
            apply(&mut text, m);
        }
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&text).expect("compress");
        let mut gz = encoder.finish().expect("finish");
        gz.truncate(2 + cut % gz.len().max(1));
        every_way(&gz)?;
    }
}
