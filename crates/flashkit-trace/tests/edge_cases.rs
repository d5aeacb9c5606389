//! The defined behaviour of awkward input, one test each: empty and header-only files, a
//! truncated gzip, non-UTF-8 bytes, absurd offsets, zero-length requests, malformed lines
//! (stop, or count with `skip_bad_lines`), fio iologs, the generic CSV, and detection.

use flashkit_trace::formats::{Format, TraceOptions, detect, examine, open};
use flashkit_trace::{Op, Request, TraceError};
use std::io::Write;
use std::path::{Path, PathBuf};

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().expect("tempdir"))
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    }

    fn gzip(&self, name: &str, text: &[u8]) -> PathBuf {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text).expect("compress");
        self.file(name, &encoder.finish().expect("finish"))
    }
}

fn all(path: &Path, options: &TraceOptions) -> Result<Vec<Request>, TraceError> {
    open(path, options)?.collect()
}

fn forced(format: Format) -> TraceOptions {
    TraceOptions {
        format: Some(format),
        ..TraceOptions::default()
    }
}

const MSR: &str = "128166385295514663,hm,0,Write,9056014336,2048,2833\n\
                   128166385295514878,hm,0,Read,11855351808,512,2617\n";

#[test]
fn an_empty_file_is_an_empty_trace() {
    let dir = Dir::new();
    for (name, bytes) in [("empty", &b""[..]), ("blank", b"\n  \n\r\n")] {
        let path = dir.file(name, bytes);
        let stream = open(&path, &TraceOptions::default()).expect("opens");
        assert_eq!(stream.format(), None, "nothing to detect a format from");
        assert_eq!(stream.count(), 0);
        assert!(
            examine(&path)
                .expect("examines")
                .explain()
                .contains("empty trace")
        );
        for format in Format::ALL.into_iter().filter(|&f| f != Format::Binary) {
            assert_eq!(
                all(&path, &forced(format)).expect("empty").len(),
                0,
                "{format}"
            );
        }
    }
}

#[test]
fn a_header_only_file_is_an_empty_trace_of_its_format() {
    let dir = Dir::new();
    for (text, format) in [
        (
            "Timestamp,Response,IOType,LUN,Offset,Size\n",
            Format::Systor,
        ),
        ("version,time,op,size,lbn\n", Format::CloudPhysics),
        ("time_ns,op,offset,size,volume\n", Format::Csv),
        ("fio version 3 iolog\n", Format::FioV3),
    ] {
        let path = dir.file("header", text.as_bytes());
        let mut stream = open(&path, &TraceOptions::default()).expect("opens");
        assert_eq!(stream.format(), Some(format));
        assert_eq!(stream.by_ref().count(), 0);
        assert_eq!(stream.report().header_lines, 1);
    }
}

#[test]
fn a_truncated_gzip_is_an_error_after_the_lines_before_it() {
    let dir = Dir::new();
    let text = MSR.repeat(20_000);
    let whole = dir.gzip("whole.csv.gz", text.as_bytes());
    let bytes = std::fs::read(&whole).expect("read");
    let cut = dir.file("cut.csv.gz", &bytes[..bytes.len() / 2]);
    let results: Vec<_> = open(&cut, &TraceOptions::default())
        .expect("opens")
        .collect();
    let (ok, errors): (Vec<_>, Vec<_>) = results.iter().partition(|r| r.is_ok());
    assert!(
        !ok.is_empty() && ok.len() < 40_000,
        "{} requests before the cut",
        ok.len()
    );
    assert_eq!(errors.len(), 1, "the stream ends with one error");
    let message = results
        .last()
        .expect("some")
        .as_ref()
        .expect_err("error")
        .to_string();
    assert!(
        message.contains("cut.csv.gz")
            && message.contains("truncated gzip")
            && message.contains("after line"),
        "{message}"
    );
    assert_eq!(
        all(&whole, &TraceOptions::default()).expect("whole").len(),
        40_000
    );
}

#[test]
fn concatenated_gzip_files_are_read_whole_as_gzip_d_reads_them() {
    // docs/reproduction/vet.md tells whoever has a trace published in daily parts (FIU
    // homes) to `cat` the parts into one file: every member must be read, in order, not
    // just the first.
    let dir = Dir::new();
    let first = std::fs::read(dir.gzip("a.csv.gz", MSR.repeat(3).as_bytes())).expect("read");
    let second = MSR.replace("Write", "Read").replace(",hm,0,", ",hm,1,");
    let second = std::fs::read(dir.gzip("b.csv.gz", second.as_bytes())).expect("read");
    let joined = dir.file("joined.csv.gz", &[first, second].concat());
    let requests = all(&joined, &TraceOptions::default()).expect("whole");
    assert_eq!(
        requests.len(),
        8,
        "six from the first member, two from the second"
    );
    assert_eq!(
        requests[..6].iter().filter(|r| r.op == Op::Write).count(),
        3
    );
    assert!(requests[6..].iter().all(|r| r.op == Op::Read));
}

#[test]
fn a_gzip_cut_before_its_first_line_is_an_error_not_an_empty_trace() {
    // Found by the CLI's bad-input sweep: a gzip file cut inside its header (or right after
    // the signature) decompressed to nothing, so detection called it an empty trace and
    // every command succeeded on it.
    let dir = Dir::new();
    let whole = dir.gzip("whole.csv.gz", MSR.repeat(100).as_bytes());
    let bytes = std::fs::read(&whole).expect("read");
    for keep in [2, 15] {
        let cut = dir.file("cut.csv.gz", &bytes[..keep]);
        for result in [
            open(&cut, &TraceOptions::default()).map(|_| ()),
            examine(&cut).map(|_| ()),
        ] {
            let message = result.expect_err("refused").to_string();
            assert!(
                message.contains("cut.csv.gz")
                    && message.contains("before line 1")
                    && message.contains("truncated gzip"),
                "{keep} bytes: {message}"
            );
        }
    }
}

#[test]
fn non_utf8_bytes_are_harmless_where_ignored_and_errors_where_read() {
    let dir = Dir::new();
    let path = dir.file("host.csv", b"1,h\xffst,0,Read,0,512,1\n");
    let requests = all(&path, &forced(Format::Msr)).expect("the host name is not read");
    assert_eq!(requests.len(), 1);
    let path = dir.file("size.csv", b"1,host,0,Read,0,5\xff2,1\n");
    let message = all(&path, &forced(Format::Msr))
        .expect_err("bad size")
        .to_string();
    assert!(
        message.contains("size.csv: line 1: field Size: \"5\\xff2\" is not a whole number"),
        "{message}"
    );
}

#[test]
fn absurd_offsets_are_refused_when_they_overflow_and_kept_otherwise() {
    let dir = Dir::new();
    // 2^55 sectors of 512 B overflow 64-bit bytes.
    let path = dir.file("far.spc", b"0,36028797018963968,512,R,0.1\n");
    let message = all(&path, &forced(Format::Spc))
        .expect_err("overflow")
        .to_string();
    assert!(
        message.contains("line 1: field LBA") && message.contains("overflow"),
        "{message}"
    );
    let path = dir.file("end.csv", b"1,h,0,Read,18446744073709551000,4096,1\n");
    let message = all(&path, &forced(Format::Msr))
        .expect_err("end overflow")
        .to_string();
    assert!(message.contains("field offset"), "{message}");
    // Far but representable: kept (replay maps it onto the device, or says what to change).
    let path = dir.file("far.csv", b"1,h,0,Read,1152921504606846976,4096,1\n");
    assert_eq!(
        all(&path, &forced(Format::Msr)).expect("kept")[0].offset,
        1 << 60
    );
}

#[test]
fn zero_length_requests_pass_through() {
    let dir = Dir::new();
    let path = dir.file("zero.csv", b"1,h,0,Write,4096,0,1\n");
    let requests = all(&path, &TraceOptions::default()).expect("valid");
    assert_eq!((requests[0].op, requests[0].size), (Op::Write, 0));
}

#[test]
fn a_bad_line_stops_the_stream_unless_bad_lines_are_skipped() {
    let dir = Dir::new();
    let text = format!("{MSR}1,hm,0,Wrote,0,512,1\n{MSR}1,hm,0,Read\n{MSR}");
    let path = dir.file("bad.csv", text.as_bytes());
    let results: Vec<_> = open(&path, &forced(Format::Msr)).expect("opens").collect();
    assert_eq!(results.len(), 3, "two requests, then the error");
    let message = results[2].as_ref().expect_err("error").to_string();
    assert_eq!(
        message,
        format!(
            "{}: line 3: field Type: \"Wrote\" is not Read or Write",
            path.display()
        )
    );
    let options = TraceOptions {
        skip_bad_lines: true,
        ..forced(Format::Msr)
    };
    let mut stream = open(&path, &options).expect("opens");
    let requests: Vec<Request> = stream.by_ref().map(|r| r.expect("skipped")).collect();
    assert_eq!(requests.len(), 6);
    let report = stream.report();
    assert_eq!(report.bad_lines, 2);
    assert!(
        report
            .first_bad_line
            .as_deref()
            .is_some_and(|m| m.contains("line 3")),
        "{report:?}"
    );
}

#[test]
fn a_real_fio_version_3_log() {
    // Written by fio 3.33: fio --name=j --filename=/tmp/fiotest/data --size=1M --bs=4k
    // --rw=randrw --number_ios=12 --write_iolog=v3.log --ioengine=sync --fsync=4
    let log = "fio version 3 iolog\n21 /tmp/fiotest/data add\n151 /tmp/fiotest/data open\n\
        156 /tmp/fiotest/data read 61440 4096\n407 /tmp/fiotest/data read 774144 4096\n\
        676 /tmp/fiotest/data read 880640 4096\n773 /tmp/fiotest/data write 491520 4096\n\
        794 /tmp/fiotest/data read 417792 4096\n880 /tmp/fiotest/data read 884736 4096\n\
        974 /tmp/fiotest/data write 397312 4096\n984 /tmp/fiotest/data write 368640 4096\n\
        993 /tmp/fiotest/data write 954368 4096\n998 /tmp/fiotest/data sync 954368 0\n\
        1361 /tmp/fiotest/data read 69632 4096\n1475 /tmp/fiotest/data sync 69632 0\n\
        3534 /tmp/fiotest/data write 892928 4096\n3553 /tmp/fiotest/data read 679936 4096\n\
        3703 /tmp/fiotest/data close\n";
    let dir = Dir::new();
    let path = dir.file("v3.log", log.as_bytes());
    let mut stream = open(&path, &TraceOptions::default()).expect("opens");
    assert_eq!(stream.format(), Some(Format::FioV3));
    let requests: Vec<Request> = stream.by_ref().map(|r| r.expect("valid")).collect();
    let count = |op| requests.iter().filter(|r| r.op == op).count();
    assert_eq!(
        (count(Op::Read), count(Op::Write), count(Op::Flush)),
        (7, 5, 2)
    );
    assert_eq!(requests[0].time_ns, 156_000);
    assert_eq!(stream.report().file_actions, 3);
    assert_eq!(
        stream.volume_names(),
        Some(vec!["/tmp/fiotest/data".to_string()])
    );
}

#[test]
fn a_fio_version_2_log() {
    // The layout of fio's HOWTO ("Trace file format v2"), as fio before 3.31 wrote it.
    let log = "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n\
               /dev/sdb write 0 4096\n/dev/sdb wait 1000 0\n/dev/sdc read 8192 8192\n\
               /dev/sdb trim 0 4096\n/dev/sdb sync 0 0\n/dev/sdb close\n";
    let dir = Dir::new();
    let path = dir.file("v2.log", log.as_bytes());
    let requests = all(&path, &TraceOptions::default()).expect("valid");
    let ops: Vec<(Op, u64, u16)> = requests
        .iter()
        .map(|r| (r.op, r.time_ns, r.volume))
        .collect();
    assert_eq!(
        ops,
        vec![
            (Op::Write, 0, 0),
            (Op::Read, 1_000_000, 1),
            (Op::Trim, 1_000_000, 0),
            (Op::Flush, 1_000_000, 0)
        ]
    );
}

#[test]
fn generic_csv_with_comments_and_units() {
    let dir = Dir::new();
    let path = dir.file(
        "mine.csv",
        b"# converted by hand\ntime_ms,op,offset_sectors,size_sectors\n1.5,w,8,8\n\n2,read,0,1\n",
    );
    let requests = all(&path, &TraceOptions::default()).expect("valid");
    assert_eq!(
        requests,
        vec![
            Request {
                time_ns: 1_500_000,
                op: Op::Write,
                offset: 4096,
                size: 4096,
                volume: 0
            },
            Request {
                time_ns: 2_000_000,
                op: Op::Read,
                offset: 0,
                size: 512,
                volume: 0
            },
        ]
    );
}

#[test]
fn detection_explains_itself_and_refuses_unknown_text() {
    let dir = Dir::new();
    let path = dir.file("t.csv", MSR.as_bytes());
    let detection = detect(&path).expect("detects");
    assert_eq!(detection.format, Some(Format::Msr));
    let text = detection.explain();
    assert!(
        text.contains("chosen: msr") && text.contains("spc"),
        "{text}"
    );
    let path = dir.file("poem.txt", b"the quick brown fox\njumps over\n");
    let message = detect(&path).expect_err("unknown").to_string();
    assert!(
        message.contains("poem.txt")
            && message.contains("give --format")
            && message.contains("msr (line 1"),
        "{message}"
    );
    let options = TraceOptions {
        time_unit: Some(flashkit_trace::formats::TimeUnit::Us),
        ..TraceOptions::default()
    };
    let path = dir.file("t2.csv", MSR.as_bytes());
    assert!(
        open(&path, &options)
            .err()
            .expect("refused")
            .to_string()
            .contains("--time-unit")
    );
}

#[test]
fn binary_traces_open_through_the_same_door_with_volume_selection() {
    let dir = Dir::new();
    let path = dir.0.path().join("t.fkt");
    let mut writer = flashkit_trace::binary::TraceWriter::create(&path, 1, "test").expect("create");
    for i in 0..10u64 {
        let volume = (i % 3) as u16;
        let r = Request {
            time_ns: i,
            op: Op::Write,
            offset: i * 4096,
            size: 4096,
            volume,
        };
        writer.push(&r).expect("push");
    }
    writer.finish().expect("finish");
    let mut stream = open(&path, &TraceOptions::default()).expect("opens");
    assert_eq!(stream.format(), Some(Format::Binary));
    assert_eq!(stream.by_ref().count(), 10);
    assert_eq!((stream.report().lines, stream.report().requests), (10, 10));
    let options = TraceOptions {
        volume: Some(1),
        ..TraceOptions::default()
    };
    let mut stream = open(&path, &options).expect("opens");
    let kept: Vec<Request> = stream.by_ref().map(|r| r.expect("valid")).collect();
    assert_eq!(
        kept.iter().map(|r| r.time_ns).collect::<Vec<_>>(),
        vec![1, 4, 7]
    );
    let report = stream.report();
    assert_eq!(
        (report.lines, report.requests, report.other_volumes),
        (10, 3, 7)
    );
}

#[test]
fn an_early_bad_line_is_reported_by_number_not_as_an_unknown_format() {
    // Found while testing the CLI: a malformed fourth line made detection refuse every
    // format ("cannot tell the trace format"), hiding the line at fault.
    let dir = Dir::new();
    let path = dir.file(
        "early.csv",
        format!("{MSR}1,hm,0,Read,12x4,4096,1\n{MSR}").as_bytes(),
    );
    let detection = detect(&path).expect("mostly msr");
    assert_eq!(detection.format, Some(Format::Msr));
    assert!(detection.explain().contains("accepting most of the sample"));
    let message = all(&path, &TraceOptions::default())
        .expect_err("bad line")
        .to_string();
    assert!(message.contains("line 3: field Offset"), "{message}");
}

/// Found by an outside bad-input hunt: detection sampled only the first 64 KiB, so a file
/// whose first 64 KiB held no complete non-blank line was detected as "empty" and read as a
/// trace of no requests (exit 0): an MSR trace with a 70 KB host name, a trace behind 70,000
/// blank lines, 2 MB of zero bytes.
#[test]
fn a_trace_is_found_past_long_first_lines_and_many_blank_lines() {
    let dir = Dir::new();
    let mut long_host = MSR.replacen(",hm,", &format!(",{},", "h".repeat(70_000)), 1);
    long_host.push_str(MSR);
    let blanks = format!("{}{MSR}", "\n".repeat(70_000));
    for (name, text) in [("long-host.csv", long_host), ("blanks.csv", blanks)] {
        for path in [
            dir.file(name, text.as_bytes()),
            dir.gzip(name, text.as_bytes()),
        ] {
            let detection = detect(&path).expect("detected");
            assert_eq!(detection.format, Some(Format::Msr), "{name}");
            let requests = all(&path, &TraceOptions::default()).expect(name);
            assert_eq!(
                requests.len(),
                MSR.lines().count() * (1 + name.contains("long") as usize)
            );
        }
    }
    let zeros = dir.file("zeros", &vec![0u8; 2_000_000]);
    let message = detect(&zeros).expect_err("no trace").to_string();
    assert!(
        message.contains("line 1") && message.contains("longer than 1048576 bytes"),
        "{message}"
    );
    let message = all(&zeros, &TraceOptions::default())
        .expect_err("no trace")
        .to_string();
    assert!(message.contains("line 1"), "{message}");
    // Zero bytes in lines of ordinary length are no format's line either.
    let nul_lines = dir.file("nul-lines", &[0u8, 0, 0, b'\n'].repeat(1000));
    let message = detect(&nul_lines).expect_err("no trace").to_string();
    assert!(
        message.contains("cannot tell the trace format"),
        "{message}"
    );
}

/// A file whose every request line is malformed is no trace, even with `skip_bad_lines`
/// (it read as an empty trace: the wrong `--format`, silently).
#[test]
fn a_file_of_malformed_lines_only_is_an_error_even_when_skipping_bad_lines() {
    let dir = Dir::new();
    let path = dir.file("spc.csv", b"1,31244784,32768,R,0.011565\n1,0,512,W,0.2\n");
    let options = TraceOptions {
        skip_bad_lines: true,
        ..forced(Format::Msr)
    };
    let message = all(&path, &options).expect_err("nothing read").to_string();
    assert!(
        message.contains("no line was read as msr") && message.contains("all 2 lines"),
        "{message}"
    );
    // One good line is a trace, its bad lines counted.
    let mixed = dir.file("mixed.csv", format!("1,0,512,W,0.2\n{MSR}").as_bytes());
    assert_eq!(all(&mixed, &options).expect("one good line").len(), 2);
}

/// Found by a mutation hunt: a Tencent trace with a malformed line among the first 50 was
/// undetectable (CloudPhysics accepted most of its rows too), or read as CloudPhysics rows of
/// commands without data: 0 requests, exit 0. A format that reads requests from the sample
/// is a better guess than one skipping every row.
#[test]
fn a_bad_line_does_not_turn_a_trace_into_another_format() {
    let dir = Dir::new();
    let rows = "1538323199,3070178,64,0,1063\n1538323199,3070179,64,0,1063\n\
                1538323199,3070180,64,1,1063\n1538323200,3070181,64,0,1063\n";
    for bad in [
        "1538323199,3070178,64,0,x\n",
        "1538323199,3070178,64,,1063\n",
        "1538323199,,64,0,1063\n",
    ] {
        let path = dir.file("t.csv", format!("{bad}{rows}").as_bytes());
        let detection = detect(&path).expect("detected");
        assert_eq!(detection.format, Some(Format::Tencent), "{bad}");
        assert!(
            detection.explain().contains("reading requests"),
            "{}",
            detection.explain()
        );
        let message = all(&path, &TraceOptions::default())
            .expect_err("the bad line")
            .to_string();
        assert!(message.contains("line 1: field"), "{message}");
    }
}

/// Detection samples the first 50 non-blank lines; a gzip file cut inside them is
/// detected from the lines before the cut (the cut is reported when the file is read).
#[test]
fn detection_samples_50_lines_or_those_before_a_cut() {
    let dir = Dir::new();
    let text: String = (0..60u64)
        .map(|i| {
            format!(
                "{},hm,{},Write,{},512,{}\n",
                128_166_385_295_514_663 + i * 7919,
                i % 3,
                i * 40_961,
                i * 31
            )
        })
        .collect();
    let plain = dir.file("t.csv", text.as_bytes());
    let detection = detect(&plain).expect("detects");
    assert_eq!(
        (detection.format, detection.sampled_lines),
        (Some(Format::Msr), 50)
    );
    let whole = dir.gzip("whole.csv.gz", text.as_bytes());
    let bytes = std::fs::read(&whole).expect("read");
    let cut = dir.file("cut.csv.gz", &bytes[..bytes.len() / 2]);
    let detection = detect(&cut).expect("detected from the lines before the cut");
    assert_eq!(detection.format, Some(Format::Msr));
    assert!(
        (1..50).contains(&detection.sampled_lines),
        "{} lines before the cut",
        detection.sampled_lines
    );
}
