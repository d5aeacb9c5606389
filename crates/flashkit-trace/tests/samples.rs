//! Every format's parser on the real public excerpts in `../shared/traces/` (see its
//! README), format detected from the content.
//!
//! The expected counts and byte totals were worked out once, independently of flashkit,
//! with awk over the (decompressed) files, e.g. for MSR
//! `awk -F, '{n[$4]++; b[$4]+=$6} END {for (k in n) print k, n[k], b[k]}' hm_0.sample1000.csv`,
//! for sector-based formats multiplying the size column by 512, and for blkparse counting
//! only `D` events whose ninth field is `+` (the RWBS letter after an optional leading `F`
//! giving the operation). The CloudPhysics write total overflows awk's 32-bit printf and was
//! summed with Python's csv module instead. Each test names its command.
//!
//! When a sample is missing the test fails if `CI=true` and is skipped (with a message)
//! otherwise.

use flashkit_trace::formats::{Format, ParseReport, TraceOptions, open};
use flashkit_trace::{Op, Request};
use std::path::PathBuf;

fn sample(relative: &str) -> Option<PathBuf> {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/"
    ))
    .join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI: the shared trace sample {} is missing",
        path.display()
    );
    eprintln!(
        "skipping: shared trace sample {} is not here",
        path.display()
    );
    None
}

struct Totals {
    format: Option<Format>,
    requests: Vec<Request>,
    report: ParseReport,
}

impl Totals {
    fn of(op: Op, requests: &[Request]) -> (u64, u64) {
        let matching = requests.iter().filter(|r| r.op == op);
        (
            matching.clone().count() as u64,
            matching.map(|r| u64::from(r.size)).sum(),
        )
    }

    fn reads(&self) -> (u64, u64) {
        Self::of(Op::Read, &self.requests)
    }

    fn writes(&self) -> (u64, u64) {
        Self::of(Op::Write, &self.requests)
    }
}

fn read(relative: &str, options: &TraceOptions) -> Option<Totals> {
    let path = sample(relative)?;
    let mut stream = open(&path, options).expect("opens");
    let requests: Vec<Request> = stream.by_ref().map(|r| r.expect("parses")).collect();
    Some(Totals {
        format: stream.format(),
        requests,
        report: stream.report(),
    })
}

fn detected(relative: &str) -> Option<Totals> {
    read(relative, &TraceOptions::default())
}

#[test]
fn msr_cambridge() {
    // awk -F, '{n[$4]++; b[$4]+=$6} END {for (k in n) print k, n[k], b[k]}'
    let Some(t) = detected("msr/hm_0.sample1000.csv") else {
        return;
    };
    assert_eq!(t.format, Some(Format::Msr));
    assert_eq!(t.requests.len(), 1000);
    assert_eq!(t.reads(), (508, 6_108_672));
    assert_eq!(t.writes(), (492, 3_580_928));
    assert_eq!(
        t.requests[0].time_ns,
        128_166_385_295_514_663 * 100,
        "FILETIME ticks of 100 ns"
    );
    let Some(t) = detected("msr/rsrch_0.sample1000.csv") else {
        return;
    };
    assert_eq!(t.reads(), (84, 1_774_592));
    assert_eq!(t.writes(), (916, 10_679_296));
}

#[test]
fn umass_spc_with_asus_as_volumes() {
    // awk -F, '{gsub(/ /,""); n[$4]++; b[$4]+=$3; a[$1]++} END {...}'
    let Some(t) = detected("spc/WebSearch1.first10.spc") else {
        return;
    };
    assert_eq!(t.format, Some(Format::Spc));
    assert_eq!(t.reads(), (10, 139_264));
    assert_eq!(t.requests[1].offset, 31_244_784 * 512);
    let Some(t) = detected("spc/WebSearch1.first24783.derived.spc.gz") else {
        return;
    };
    assert_eq!(t.reads(), (24_779, 382_085_120));
    assert_eq!(t.writes(), (4, 32_768));
    let per_asu = |asu: u16| t.requests.iter().filter(|r| r.volume == asu).count();
    assert_eq!((per_asu(0), per_asu(1), per_asu(2)), (8340, 8231, 8187));
    assert_eq!((per_asu(3), per_asu(4), per_asu(5)), (8, 7, 10));
    let only = read(
        "spc/WebSearch1.first24783.derived.spc.gz",
        &TraceOptions {
            volume: Some(2),
            ..TraceOptions::default()
        },
    )
    .expect("present");
    assert_eq!(only.requests.len(), 8187, "--asu 2 keeps ASU 2 only");
    assert_eq!(only.report.other_volumes, 24_783 - 8187);
}

#[test]
fn fiu_iodedup() {
    // zcat | awk '{n[$6]++; b[$6]+=$5*512} END {...}'
    let Some(t) = detected("fiu/cheetah.cs.fiu.edu-110108-113008.2.first9998.blkparse.gz") else {
        return;
    };
    assert_eq!(
        t.format,
        Some(Format::Fiu),
        "detected from content despite the .blkparse name"
    );
    assert_eq!(t.reads(), (8896, 36_438_016));
    assert_eq!(t.writes(), (1102, 4_513_792));
}

#[test]
fn blkparse_dispatch_events() {
    // zcat -f | awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" {if ($9=="+") {...} else nd++}'
    let Some(t) = detected("blkparse/wiscsee_blkparse-output.txt") else {
        return;
    };
    assert_eq!(t.format, Some(Format::Blkparse));
    assert_eq!(t.reads(), (161, 659_456));
    assert_eq!(t.writes(), (512, 134_217_728));
    assert_eq!(
        t.report.no_data, 4,
        "four `D N 0 (00 ..)` pass-through events"
    );
    assert!(t.report.summary_lines > 60, "the summary block is ignored");
    for (file, reads, writes) in [
        (
            "blkparse/msclaudz_blkparseout_btrfs.txt",
            (1301, 1_050_824_704),
            (523, 256_434_176),
        ),
        (
            "blkparse/msclaudz_blkparseout_ext4.txt.gz",
            (9039, 1_047_625_728),
            (848, 251_944_960),
        ),
        (
            "blkparse/msclaudz_blkparseout_f2fs.txt.gz",
            (4722, 537_161_728),
            (1005, 439_848_960),
        ),
    ] {
        let Some(t) = detected(file) else {
            return;
        };
        assert_eq!((t.reads(), t.writes()), (reads, writes), "{file}");
        assert!(
            t.report.other_events > 0,
            "{file}: I and C events are counted"
        );
    }
}

#[test]
fn systor17_file_order_and_sorted() {
    // awk -F, 'NR>1 {n[$3]++; b[$3]+=$6} END {...}'
    let Some(t) = detected("systor/systor17-traces-sample.csv") else {
        return;
    };
    assert_eq!(t.format, Some(Format::Systor));
    assert_eq!(t.reads(), (826, 36_355_584));
    assert_eq!(t.writes(), (173, 2_766_848));
    assert_eq!(t.report.header_lines, 1);
    let out_of_order = t
        .requests
        .windows(2)
        .filter(|w| w[1].time_ns < w[0].time_ns)
        .count();
    assert!(out_of_order > 0, "file order is kept by default");
    let sorted = read(
        "systor/systor17-traces-sample.csv",
        &TraceOptions {
            sort_by_time: true,
            ..TraceOptions::default()
        },
    )
    .expect("present");
    assert!(
        sorted
            .requests
            .windows(2)
            .all(|w| w[0].time_ns <= w[1].time_ns)
    );
    assert_eq!(sorted.requests.len(), 999);
    assert_eq!(sorted.reads(), t.reads());
    let Some(t) = detected("systor/systor17-additional-sample.csv") else {
        return;
    };
    assert_eq!(t.reads(), (700, 18_406_400));
    assert_eq!(t.writes(), (299, 2_286_080));
}

#[test]
fn tencent_cbs() {
    // zcat | awk -F, '{n[$4]++; b[$4]+=$3*512} END {...}'
    let Some(t) = detected("tencent/cloud_storage-sample.csv.gz") else {
        return;
    };
    assert_eq!(t.format, Some(Format::Tencent));
    assert_eq!(t.reads(), (24_521, 646_755_328));
    assert_eq!(t.writes(), (25_479, 871_636_992));
    let volumes: std::collections::BTreeSet<u16> = t.requests.iter().map(|r| r.volume).collect();
    assert_eq!(
        volumes.len(),
        2038,
        "awk -F, '{{print $5}}' | sort -u | wc -l"
    );
}

#[test]
fn cloudphysics() {
    // python3: csv.reader over the gzip file, skipping the header, summing int(row[3]) by op
    let Some(t) = detected("cloudphysics/cloudPhysicsIO.csv.gz") else {
        return;
    };
    assert_eq!(t.format, Some(Format::CloudPhysics));
    assert_eq!(t.reads(), (46_974, 1_797_412_352));
    assert_eq!(t.writes(), (66_898, 2_408_565_760));
}

#[test]
fn disksim() {
    // awk '{o=$5%2; n[o]++; b[o]+=$4*512} END {...}'
    let Some(t) = detected("disksim/tpcc-small.trace") else {
        return;
    };
    assert_eq!(t.format, Some(Format::DiskSim));
    assert_eq!(t.reads(), (4381, 36_315_136));
    assert_eq!(t.writes(), (2618, 23_403_520));
    assert_eq!(
        t.requests[0].time_ns,
        938_513_000 * 1_000_000,
        "milliseconds by default"
    );
    let Some(t) = read(
        "disksim/wsrch-small.trace.gz",
        &TraceOptions {
            time_unit: Some(flashkit_trace::formats::TimeUnit::Ns),
            ..TraceOptions::default()
        },
    ) else {
        return;
    };
    assert_eq!(t.reads(), (24_779, 382_085_120));
    assert_eq!(t.writes(), (4, 32_768));
    assert_eq!(t.requests[0].time_ns, 11_413_000, "MQSim's nanoseconds");
    assert_eq!(
        t.requests.last().map(|r| r.offset),
        Some(34_371_424 * 512),
        "the last line has no newline and still counts"
    );
}
