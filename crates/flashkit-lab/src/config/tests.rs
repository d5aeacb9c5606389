//! The config file read and resolved: flags over file over defaults, and errors at their lines.

use super::*;
use flashkit_ftl::{FtlKind, GcPolicy, HybridConfig};
use flashkit_sim::Precondition;
use flashkit_trace::formats::layout::AddressMapping;
use flashkit_trace::workload::{Pattern, SizeDist};

/// `--precondition-overwrites` given on the command line used to be ignored under a
/// file's `no_precondition`; `--no-precondition` still wins over the file's overwrites.
#[test]
fn preconditioning_flags_win_over_the_file() {
    let run = |text: &str| -> RunSection { toml::from_str(text).expect("valid") };
    let fresh = run("no_precondition = true");
    let three = RunSection {
        precondition_overwrites: Some(3.0),
        ..RunSection::default()
    };
    let overwrites = |p: Option<Precondition>| p.map(|p| p.random_overwrites);
    assert_eq!(overwrites(precondition(&three, &fresh)), Some(3.0));
    assert_eq!(
        overwrites(precondition(&RunSection::default(), &fresh)),
        None
    );
    let no = RunSection {
        no_precondition: true,
        ..RunSection::default()
    };
    assert_eq!(
        overwrites(precondition(&no, &run("precondition_overwrites = 2.0"))),
        None
    );
    assert_eq!(
        overwrites(precondition(
            &RunSection::default(),
            &run("precondition_overwrites = 2.0")
        )),
        Some(2.0)
    );
    assert_eq!(
        overwrites(precondition(&RunSection::default(), &RunSection::default())),
        Some(Precondition::default().random_overwrites)
    );
}

#[test]
fn flags_win_over_the_file_and_the_file_over_defaults() {
    let file: ConfigFile = toml::from_str(
        "[device]\ncapacity = \"2G\"\npreset = \"fast-paper\"\n[workload]\nrequests = \"10k\"\nworkload = \"zipf\"\n",
    )
    .expect("valid config");
    let flags = DeviceSection {
        capacity: Some(Size(4 << 30)),
        ..DeviceSection::default()
    };
    let device = device_spec(&flags, &file.device).expect("valid");
    assert_eq!(device.capacity_bytes, 4 << 30);
    assert_eq!(device.preset, "fast-paper");
    assert!((device.over_provisioning - 0.07).abs() < 1e-12);
    let w = workload_spec(&WorkloadSection::default(), &file.workload, 1 << 30).expect("valid");
    assert_eq!(w.requests, 10_000);
    assert_eq!(w.pattern, Pattern::Zipf { theta: 0.99 });
}

#[test]
fn log_block_options_resolve_from_flags_and_file() {
    let file: ConfigFile =
        toml::from_str("[ftl]\nlog_blocks = 16\nsw_log_block = \"off\"\n").expect("valid");
    let (_, options) = ftl_options(&FtlSection::default(), &file.ftl);
    assert_eq!(options.hybrid.log_blocks, 16);
    assert!(!options.hybrid.sw_log_block);
    let flags = FtlSection {
        log_blocks: Some(4),
        ..FtlSection::default()
    };
    let (_, options) = ftl_options(&flags, &file.ftl);
    assert_eq!(options.hybrid.log_blocks, 4);
    let (_, options) = ftl_options(&FtlSection::default(), &FtlSection::default());
    assert_eq!(options.hybrid, HybridConfig::default());
}

#[test]
fn trace_options_come_from_flags_and_the_trace_section() {
    let file: ConfigFile = toml::from_str(
        "[trace]\nformat = \"disksim\"\ntime_unit = \"ns\"\nsort_by_time = true\naddress_map = \"identity\"\n",
    )
    .expect("valid config");
    let flags = TraceSection {
        asu: Some(2),
        ..TraceSection::default()
    };
    let (options, mapping) = trace_options(&flags, &file.trace);
    assert_eq!(
        options.format,
        Some(flashkit_trace::formats::Format::DiskSim)
    );
    assert_eq!(
        options.time_unit,
        Some(flashkit_trace::formats::TimeUnit::Ns)
    );
    assert!(options.sort_by_time && !options.skip_bad_lines);
    assert_eq!(
        (options.volume, mapping),
        (Some(2), AddressMapping::Identity)
    );
    let bad = toml::from_str::<ConfigFile>("[trace]\nformat = \"nope\"\n").expect_err("bad");
    assert!(bad.to_string().contains("unknown trace format"), "{bad}");
}

#[test]
fn unknown_config_keys_are_refused() {
    let error = toml::from_str::<ConfigFile>("[device]\ncapacty = \"2G\"\n").expect_err("typo");
    assert!(error.to_string().contains("capacty"), "{error}");
}

/// A value out of range in a config file is reported at its line, naming the key: these
/// errors came after the merge with the flags, naming neither the file's line nor the
/// key, and some blamed a flag nobody gave (`--hot "80:20"`).
#[test]
fn bad_values_in_a_config_file_name_their_line_and_key() {
    for (text, line, needle) in [
        (
            "[workload]\nrequests = 5\nread_fraction = 1.5\n",
            3,
            "1.5 is not a fraction from 0 to 1",
        ),
        (
            "[workload]\nhot = \"80:20\"\n",
            2,
            "\"80:20\" is not ACCESS/SPACE percentages",
        ),
        (
            "[workload]\n\nsizes = \"4K:x\"\n",
            3,
            "item \"4K:x\": weight \"x\" is not a whole number",
        ),
        ("[workload]\nread_sizes = \"9G\"\n", 2, "is not below 4 GiB"),
        (
            "[ftl]\ngc_threshold = 0\n",
            2,
            "gc_threshold 0 is below the minimum of 2 blocks",
        ),
        // Found by an outside bad-input hunt: these were checked only after the merge
        // with the flags, and the error named neither the file nor the line.
        (
            "[device]\nop = 100\n",
            2,
            "over-provisioning 100 is not a fraction between 0 and 4",
        ),
        ("[device]\ncapacity = 0\n", 2, "0 B: a size must be above 0"),
        (
            "[device]\npage_size = \"3000\"\n",
            2,
            "page size 3000 B is not a power of two",
        ),
        (
            "[device]\npreset = \"nand\"\n",
            2,
            "unknown device preset \"nand\"",
        ),
        (
            "[device]\nendurance = 0\n",
            2,
            "0 is below the minimum of 1",
        ),
        (
            "[device]\npages_per_block = 1\n",
            2,
            "pages per block 1 is outside",
        ),
        ("[ftl]\nlog_blocks = 0\n", 2, "0 is below the minimum of 1"),
        (
            "[run]\nprecondition_overwrites = -1.0\n",
            2,
            "-1 is not a finite number",
        ),
        (
            "[workload]\nrequests = 0\n",
            2,
            "0 is below the minimum of 1",
        ),
        ("[workload]\nsize = \"0\"\n", 2, "a size must be above 0"),
        (
            "[workload]\nsizes = \"4K:1,0:1\"\n",
            2,
            "item \"0:1\": a size must be above 0",
        ),
        (
            "[workload]\nsizes = \"4K:0\"\n",
            2,
            "gives no size a positive weight",
        ),
        (
            "[workload]\ntheta = -1.0\n",
            2,
            "-1 is not a finite exponent above 0",
        ),
        (
            "[workload]\ntheta = nan\n",
            2,
            "NaN is not a finite exponent above 0",
        ),
        (
            "[workload]\ncenter = 1.5\n",
            2,
            "1.5 is not a fraction of the span",
        ),
        (
            "[workload]\nstddev = 0.0\n",
            2,
            "0 is not a fraction of the span above 0",
        ),
        ("[workload]\nspan = 0\n", 2, "a size must be above 0"),
        (
            "[workload]\nalign = \"3K\"\n",
            2,
            "3072 B is not a power of two",
        ),
        ("[workload]\nchunk_size = 0\n", 2, "a size must be above 0"),
        ("[workload]\nfile_size = 0\n", 2, "a size must be above 0"),
        (
            "[workload]\nfile_size = \"0-4M\"\n",
            2,
            "a size must be above 0",
        ),
        (
            "[workload]\nfile_size = \"4M-2M\"\n",
            2,
            "4194304-2097152 B is an empty range: MIN is above MAX",
        ),
        (
            "[workload]\nfile_size = \"2M-x\"\n",
            2,
            "is not SIZE or MIN-MAX",
        ),
        (
            "[workload]\ncluster_size = 0\n",
            2,
            "a size must be above 0",
        ),
        ("[workload]\ndata_align = 0\n", 2, "a size must be above 0"),
        (
            "[workload]\nmetadata_percent = 10.0\n",
            2,
            "unknown field `metadata_percent`",
        ),
    ] {
        let error = toml::from_str::<ConfigFile>(text)
            .expect_err(text)
            .to_string();
        assert!(
            error.contains(&format!("line {line}")) && error.contains(needle),
            "{text}: {error}"
        );
    }
    let file: ConfigFile = toml::from_str("[ftl]\ngc = \"greedy, fifo\"\n").expect("a list");
    assert_eq!(file.ftl.gc, [GcPolicy::Greedy, GcPolicy::Fifo]);
}

/// A rule that ties options together is checked after the merge with the flags; the
/// file's lines at fault are found by checking again without each option (the hunt
/// found these errors naming neither the file nor a line).
#[test]
fn errors_of_merged_options_name_the_file_lines_at_fault() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    let (device, ftl, workload) = (
        DeviceSection::default(),
        FtlSection::default(),
        WorkloadSection::default(),
    );
    let flags = RunFlags {
        device: &device,
        ftl: &ftl,
        workload: &workload,
        kinds: &[FtlKind::Page, FtlKind::Fast],
        trace: false,
    };
    for (text, blamed, needle) in [
        (
            "[run]\nseed = 3\n[device]\ncapacity = \"1K\"\n",
            &["line 4 ([device] capacity = \"1K\")"][..],
            "logical capacity 1024 B",
        ),
        (
            "[ftl]\nlog_blocks = 100000\n",
            &["line 2 ([ftl] log_blocks = 100000)"],
            "fast: invalid FTL configuration",
        ),
        (
            "[workload]\nread_fraction = 0.7\nrequests = 5\ntrim_fraction = 0.5\n",
            &[
                "line 2 ([workload] read_fraction = 0.7) and line 4 ([workload] \
                 trim_fraction = 0.5)",
            ],
            "read_fraction + trim_fraction exceeds 1",
        ),
        (
            "[workload]\nsize = \"5000\"\n",
            &["line 2 ([workload] size = \"5000\")"],
            "request size 5000 B is not a positive multiple of 4096 B",
        ),
    ] {
        std::fs::write(&path, text).expect("write");
        let file = ConfigFile::load(Some(&path)).expect("reads");
        let error = check_runs_blamed(&flags, &file)
            .expect_err(text)
            .to_string();
        let place = format!("config file {}, {}: ", path.display(), blamed.join(" and "));
        assert!(
            error.starts_with(&place) && error.contains(needle),
            "{text}: {error}"
        );
    }
    // An error of the flags alone is not blamed on the file.
    std::fs::write(&path, "[run]\nseed = 3\n").expect("write");
    let file = ConfigFile::load(Some(&path)).expect("reads");
    let workload = WorkloadSection {
        read_fraction: Some(Fraction(0.9)),
        trim_fraction: Some(Fraction(0.2)),
        ..WorkloadSection::default()
    };
    let flags = RunFlags {
        workload: &workload,
        ..flags
    };
    let error = check_runs_blamed(&flags, &file)
        .expect_err("flags")
        .to_string();
    assert_eq!(
        error,
        "invalid workload: read_fraction + trim_fraction exceeds 1"
    );
}

/// Found by the mutation hunt: a byte that is not UTF-8 was reported without a line.
#[test]
fn a_byte_that_is_not_utf8_is_reported_at_its_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.toml");
    std::fs::write(&path, b"[device]\ncapacity = \"64M\"\n# caf\xe9\n").expect("write");
    let error = ConfigFile::load(Some(&path))
        .expect_err("not UTF-8")
        .to_string();
    assert!(
        error.ends_with("c.toml: line 3, column 6: byte 0xe9 is not UTF-8 (TOML files are UTF-8)"),
        "{error}"
    );
}

/// A section that is not a table is refused in the words toml's errors always used.
#[test]
fn a_section_that_is_not_a_table_is_named_as_before() {
    for (section, name) in [
        ("device", "DeviceArgs"),
        ("ftl", "FtlArgs"),
        ("run", "RunArgs"),
        ("workload", "WorkloadArgs"),
        ("trace", "TraceArgs"),
    ] {
        let error = toml::from_str::<ConfigFile>(&format!("{section} = 3\n"))
            .expect_err(section)
            .to_string();
        assert!(
            error.contains(&format!(
                "invalid type: integer `3`, expected struct {name}"
            )),
            "{error}"
        );
    }
}

#[test]
fn ftl_options_no_ftl_of_the_run_uses_are_refused_by_flag_name() {
    let flags = FtlSection {
        log_blocks: Some(4),
        vet_nodes: vec![flashkit_ftl::VetNodes::Pd],
        gc: vec![GcPolicy::Fifo],
        ..FtlSection::default()
    };
    let error = check_ftl_options(&flags, &[FtlKind::Page], "--ftl page").expect_err("unused");
    assert!(matches!(error, ConfigError::Unused(_)));
    assert_eq!(
        error.to_string(),
        "--log-blocks is an option for bast, fast and ofast, which --ftl page does not run; \
         --vet-nodes is an option for vet, which --ftl page does not run: drop them"
    );
    check_ftl_options(&flags, &[FtlKind::Page, FtlKind::Fast, FtlKind::Vet], "x")
        .expect("each option has its FTL");
    assert_eq!(flags.given(), ["--gc", "--log-blocks", "--vet-nodes"]);
    let file: ConfigFile =
        toml::from_str("[ftl]\ngc = \"greedy,fifo\"\nvet_table = [\"swiss\"]\n").expect("valid");
    assert_eq!(
        listed_ftl_options(&FtlSection::default(), &file.ftl),
        ["--gc"]
    );
    // The flags' one value wins over the file's list.
    assert!(listed_ftl_options(&flags, &file.ftl).is_empty());
}

#[test]
fn workload_flags_the_pattern_would_ignore_are_refused() {
    let refused = |flags: WorkloadSection, file: &str| {
        let file: WorkloadSection = toml::from_str(file).expect("valid");
        workload_spec(&flags, &file, 1 << 30)
            .expect_err("refused")
            .to_string()
    };
    let theta = WorkloadSection {
        theta: Some(0.5),
        ..WorkloadSection::default()
    };
    assert_eq!(
        refused(theta, ""),
        "--theta applies to --workload zipf, but the workload is hot-cold (the default)"
    );
    let theta = WorkloadSection {
        theta: Some(0.5),
        ..WorkloadSection::default()
    };
    // The file names the pattern: no longer "the default".
    assert_eq!(
        refused(theta, "workload = \"uniform\""),
        "--theta applies to --workload zipf, but the workload is uniform"
    );
    let camera = WorkloadSection {
        workload: Some("camera".into()),
        size: Some(Size(8192)),
        read_fraction: Some(Fraction(0.1)),
        ..WorkloadSection::default()
    };
    assert_eq!(
        refused(camera, ""),
        "--read-fraction, --size are options for the other workloads: the camera workload \
         only writes (its sizes are --file-size, --chunk-size and --cluster-size), so drop them"
    );
    assert_eq!(
        refused(WorkloadSection::default(), "size = \"8K\"\nsizes = \"4K\""),
        "the config file's [workload] gives both size and sizes; keep one"
    );
    // The file may hold another pattern's defaults; the flags' size wins over its sizes.
    let file: WorkloadSection =
        toml::from_str("theta = 0.5\nsizes = \"4K\"\nrequests = 7").expect("valid");
    let flags = WorkloadSection {
        size: Some(Size(8192)),
        ..WorkloadSection::default()
    };
    let spec = workload_spec(&flags, &file, 1 << 30).expect("valid");
    assert_eq!(spec.size, SizeDist::Fixed { bytes: 8192 });
    assert_eq!(spec.requests, 7);
}

#[test]
fn a_span_beyond_the_device_is_refused() {
    let flags = WorkloadSection {
        span: Some(Size(2 << 20)),
        ..WorkloadSection::default()
    };
    let error = device_workload(&flags, &WorkloadSection::default(), 1 << 20)
        .expect_err("too large")
        .to_string();
    assert_eq!(
        error,
        "the workload's span, 2MiB, is larger than the device's logical capacity, 1MiB: \
         raise --capacity or lower --span"
    );
    device_workload(&flags, &WorkloadSection::default(), 2 << 20).expect("fits");
}

/// With the `clap` feature the sections are the flags: one declaration for both.
#[cfg(feature = "clap")]
#[test]
fn the_sections_are_the_flags() {
    use clap::Parser;
    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        device: DeviceSection,
        #[command(flatten)]
        ftl: FtlSection,
        #[command(flatten)]
        workload: WorkloadSection,
    }
    let flags = Flags::try_parse_from([
        "x",
        "--capacity",
        "2G",
        "--gc",
        "greedy,fifo",
        "--read-fraction",
        "0.5",
    ])
    .expect("valid");
    assert_eq!(flags.device.capacity, Some(Size(2 << 30)));
    assert_eq!(flags.ftl.gc, [GcPolicy::Greedy, GcPolicy::Fifo]);
    assert_eq!(flags.workload.read_fraction, Some(Fraction(0.5)));
    assert!(Flags::try_parse_from(["x", "--gc-threshold", "1"]).is_err());
}

/// Every value at the bounds it may take is accepted, in each of its spellings (a number or
/// a string, a flag's words or a boolean), and reads as the value it says.
#[test]
fn values_at_their_bounds_are_accepted_as_what_they_say() {
    let low: ConfigFile = toml::from_str(
        r#"
[device]
preset = "mlc-4k"
capacity = 4096
op = 0.0
page_size = "512"
pages_per_block = 2
endurance = 1
[ftl]
gc = ["greedy", "fifo"]
gc_threshold = 2
wear_leveling = 8
log_blocks = 1
sw_log_block = true
[run]
precondition_overwrites = 0.0
[workload]
workload = "camera"
requests = "2.5k"
size = "4K"
read_fraction = 0.0
theta = 1e-9
hot = " 0 / 100 "
center = 0.0
stddev = 1e-9
file_size = 4096
chunk_size = 1
span = "1G"
align = 1
"#,
    )
    .expect("valid");
    let (d, f, w) = (&low.device, &low.ftl, &low.workload);
    assert_eq!(d.preset.as_deref(), Some("mlc-4k"));
    assert_eq!(
        (
            d.capacity,
            d.op,
            d.page_size,
            d.pages_per_block,
            d.endurance
        ),
        (
            Some(Size(4096)),
            Some(0.0),
            Some(Size(512)),
            Some(2),
            Some(1)
        )
    );
    assert_eq!(f.gc, [GcPolicy::Greedy, GcPolicy::Fifo]);
    assert_eq!(
        (
            f.gc_threshold,
            f.wear_leveling,
            f.log_blocks,
            f.sw_log_block
        ),
        (
            Some(2),
            Some(WearSetting(Some(8))),
            Some(1),
            Some(OnOff(true))
        )
    );
    assert_eq!(low.run.precondition_overwrites, Some(0.0));
    assert_eq!(w.workload.as_deref(), Some("camera"));
    assert_eq!((w.requests, w.size), (Some(Count(2500)), Some(Size(4096))));
    assert_eq!(w.read_fraction, Some(Fraction(0.0)));
    assert_eq!(
        (w.theta, w.center, w.stddev),
        (Some(1e-9), Some(0.0), Some(1e-9))
    );
    assert_eq!(
        w.hot,
        Some(HotSplit {
            access_percent: 0.0,
            space_percent: 100.0
        })
    );
    assert_eq!(
        w.file_size,
        Some(SizeRange {
            min: 4096,
            max: 4096
        })
    );
    assert_eq!(
        (w.chunk_size, w.span, w.align),
        (Some(Size(1)), Some(Size(1 << 30)), Some(Size(1)))
    );
    let high: ConfigFile = toml::from_str(
        r#"
[device]
op = 4.0
page_size = "1MiB"
pages_per_block = 65536
[ftl]
gc = "cost-benefit"
wear_leveling = "off"
sw_log_block = "off"
[workload]
read_fraction = 1
hot = "100/0"
center = 1.0
stddev = 1.0
file_size = " 4K - 8K "
align = "2GiB"
"#,
    )
    .expect("valid");
    let (d, f, w) = (&high.device, &high.ftl, &high.workload);
    assert_eq!(
        (d.op, d.page_size, d.pages_per_block),
        (Some(4.0), Some(Size(1 << 20)), Some(65536))
    );
    assert_eq!(f.gc, [GcPolicy::CostBenefit]);
    assert_eq!(
        (f.wear_leveling, f.sw_log_block),
        (Some(WearSetting(None)), Some(OnOff(false)))
    );
    assert_eq!(w.read_fraction, Some(Fraction(1.0)));
    assert_eq!(
        w.hot,
        Some(HotSplit {
            access_percent: 100.0,
            space_percent: 0.0
        })
    );
    assert_eq!((w.center, w.stddev), (Some(1.0), Some(1.0)));
    assert_eq!(
        w.file_size,
        Some(SizeRange {
            min: 4096,
            max: 8192
        })
    );
    assert_eq!(w.align, Some(Size(1 << 31)));
}

/// Just past each bound, a value is refused with its own words.
#[test]
fn values_just_past_their_bounds_are_refused() {
    for (text, needle) in [
        ("[device]\nop = 4.000001\n", "over-provisioning 4.000001"),
        ("[device]\nop = -0.1\n", "over-provisioning -0.1"),
        ("[device]\nop = nan\n", "over-provisioning NaN"),
        ("[device]\npage_size = 256\n", "page size 256 B"),
        ("[device]\npage_size = \"2MiB\"\n", "page size 2097152 B"),
        ("[device]\npage_size = \"4GiB\"\n", "page size 4294967296 B"),
        (
            "[device]\npages_per_block = 65537\n",
            "pages per block 65537",
        ),
        ("[ftl]\ngc_threshold = 1\n", "gc_threshold 1 is below"),
        ("[ftl]\ngc = 3\n", "invalid type"),
        (
            "[ftl]\nwear_leveling = \"x\"\n",
            "wear leveling \"x\" is neither",
        ),
        (
            "[ftl]\nsw_log_block = \"yes\"\n",
            "\"yes\" is neither \"on\" nor \"off\"",
        ),
        (
            "[run]\nprecondition_overwrites = inf\n",
            "inf is not a finite number",
        ),
        (
            "[workload]\nworkload = \"zipfian\"\n",
            "unknown workload \"zipfian\"",
        ),
        (
            "[workload]\nread_fraction = 1.01\n",
            "1.01 is not a fraction",
        ),
        (
            "[workload]\ntrim_fraction = -0.01\n",
            "-0.01 is not a fraction",
        ),
        ("[workload]\ntheta = 0.0\n", "0 is not a finite exponent"),
        ("[workload]\ntheta = inf\n", "inf is not a finite exponent"),
        ("[workload]\nhot = \"100.5/0\"\n", "is not ACCESS/SPACE"),
        ("[workload]\nhot = \"50/-1\"\n", "is not ACCESS/SPACE"),
        (
            "[workload]\ncenter = -0.01\n",
            "-0.01 is not a fraction of the span",
        ),
        (
            "[workload]\nstddev = 1.01\n",
            "1.01 is not a fraction of the span",
        ),
        (
            "[workload]\nalign = \"4GiB\"\n",
            "4294967296 B is not a power of two",
        ),
        ("[workload]\nalign = 0\n", "0 B is not a power of two"),
        (
            "[workload]\nsizes = \"5GiB\"\n",
            "5368709120 B is not below 4 GiB",
        ),
        ("[workload]\nfile_size = 0\n", "0 B: a size must be above 0"),
    ] {
        let error = toml::from_str::<ConfigFile>(text)
            .expect_err(text)
            .to_string();
        assert!(error.contains(needle), "{text}: {error}");
    }
}

/// The flags' own spellings parse as the file's do.
#[test]
fn values_parse_from_their_flags() {
    assert_eq!("4K".parse::<Size>(), Ok(Size(4096)));
    assert_eq!("10M".parse::<Count>(), Ok(Count(10_000_000)));
    assert_eq!(" 0.5 ".parse::<Fraction>(), Ok(Fraction(0.5)));
    assert_eq!(
        "x".parse::<Fraction>(),
        Err("\"x\" is not a number".to_string())
    );
    assert_eq!(
        "2".parse::<Fraction>(),
        Err("2 is not a fraction from 0 to 1".to_string())
    );
    for (text, on) in [
        ("on", true),
        ("true", true),
        ("off", false),
        ("false", false),
    ] {
        assert_eq!(text.parse::<OnOff>(), Ok(OnOff(on)), "{text}");
    }
    assert!("1".parse::<OnOff>().is_err());
    assert_eq!("off".parse::<WearSetting>(), Ok(WearSetting(None)));
    assert_eq!("12".parse::<WearSetting>(), Ok(WearSetting(Some(12))));
    assert!("-1".parse::<WearSetting>().is_err());
    assert_eq!(
        "8K".parse::<SizeRange>(),
        Ok(SizeRange {
            min: 8192,
            max: 8192
        })
    );
    assert_eq!(
        "8K-4K".parse::<SizeRange>(),
        Err("8192-4096 B is an empty range: MIN is above MAX".to_string())
    );
    assert_eq!(
        "4K,8K:3".parse::<SizeList>().map(|l| l.0),
        Ok(SizeDist::Choice {
            sizes: vec![(4096, 1), (8192, 3)]
        })
    );
    assert_eq!(
        "4K:0,8K:0".parse::<SizeList>().map(|l| l.0),
        Err("\"4K:0,8K:0\" gives no size a positive weight".to_string())
    );
    assert_eq!(
        "4K:0,8K:1".parse::<SizeList>().map(|l| l.0),
        Ok(SizeDist::Choice {
            sizes: vec![(4096, 0), (8192, 1)]
        })
    );
}

/// Each section names the flags it was given, in its order, and only those.
#[test]
fn each_section_names_the_flags_it_was_given() {
    let all: ConfigFile = toml::from_str(
        r#"
[device]
preset = "mlc-4k"
capacity = 4096
op = 0.1
page_size = 4096
pages_per_block = 64
endurance = 9
[workload]
workload = "uniform"
requests = 5
size = 4096
sizes = "4K"
read_sizes = "4K"
read_fraction = 0.5
trim_fraction = 0.1
span = 4096
align = 4096
interarrival_ns = 3
theta = 1.0
hot = "80/20"
center = 0.5
stddev = 0.1
file_size = 4096
chunk_size = 4096
cluster_size = 4096
data_align = 4096
[trace]
format = "msr"
explain_format = true
asu = 1
skip_bad_lines = true
sort_by_time = true
time_unit = "us"
blkparse_event = "D"
address_map = "compact"
"#,
    )
    .expect("valid");
    assert_eq!(
        all.device.given(),
        [
            "--preset",
            "--capacity",
            "--op",
            "--page-size",
            "--pages-per-block",
            "--endurance"
        ]
    );
    assert_eq!(
        all.workload.given(),
        [
            "--workload",
            "--requests",
            "--size",
            "--sizes",
            "--read-sizes",
            "--read-fraction",
            "--trim-fraction",
            "--span",
            "--align",
            "--interarrival-ns",
            "--theta",
            "--hot",
            "--center",
            "--stddev",
            "--file-size",
            "--chunk-size",
            "--cluster-size",
            "--data-align"
        ]
    );
    assert_eq!(
        all.workload.pattern_options(),
        [
            ("--theta", "zipf"),
            ("--hot", "hot-cold"),
            ("--center", "gaussian"),
            ("--stddev", "gaussian"),
            ("--file-size", "camera"),
            ("--chunk-size", "camera"),
            ("--cluster-size", "camera"),
            ("--data-align", "camera")
        ]
    );
    assert_eq!(
        all.trace.given(),
        [
            "--format",
            "--explain-format",
            "--asu",
            "--skip-bad-lines",
            "--sort-by-time",
            "--time-unit",
            "--blkparse-event",
            "--address-map"
        ]
    );
    let none = ConfigFile::default();
    assert!(none.device.given().is_empty());
    assert!(none.workload.given().is_empty());
    assert!(none.trace.given().is_empty());
    assert!(none.ftl.given().is_empty());
    let one: ConfigFile = toml::from_str("[workload]\ncenter = 0.5\n").expect("valid");
    assert_eq!(one.workload.given(), ["--center"]);
    assert_eq!(one.workload.pattern_options(), [("--center", "gaussian")]);
}

/// Every FTL option given, each FTL refuses exactly the options it does not read, by flag
/// and grouped with the FTLs they are for; a run of several FTLs refuses only what none
/// of them reads.
#[test]
fn each_ftl_reads_exactly_its_own_options() {
    let all: ConfigFile = toml::from_str(
        "[ftl]\ngc = \"greedy\"\ngc_threshold = 3\nwear_leveling = 8\nlog_blocks = 4\n\
         sw_log_block = \"on\"\nfull_sw = \"merge\"\nvet_insert = \"lis\"\n\
         vet_nodes = \"pd\"\nvet_table = \"swiss\"\nvet_search = \"paper\"\n",
    )
    .expect("valid");
    let ftl = &all.ftl;
    let gc = (
        vec!["--gc", "--gc-threshold", "--wear-leveling"],
        "page, vet and emt",
    );
    let log = (vec!["--log-blocks"], "bast, fast and ofast");
    let sw = (vec!["--sw-log-block", "--full-sw"], "fast and ofast");
    let vet = (
        vec!["--vet-insert", "--vet-nodes", "--vet-table", "--vet-search"],
        "vet",
    );
    for (kinds, expected) in [
        (
            vec![FtlKind::Page],
            vec![log.clone(), sw.clone(), vet.clone()],
        ),
        (
            vec![FtlKind::Block],
            vec![gc.clone(), log.clone(), sw.clone(), vet.clone()],
        ),
        (
            vec![FtlKind::Bast],
            vec![gc.clone(), sw.clone(), vet.clone()],
        ),
        (vec![FtlKind::Fast], vec![gc.clone(), vet.clone()]),
        (vec![FtlKind::OFast], vec![gc.clone(), vet.clone()]),
        (vec![FtlKind::Vet], vec![log.clone(), sw.clone()]),
        (
            vec![FtlKind::Emt],
            vec![log.clone(), sw.clone(), vet.clone()],
        ),
        (vec![FtlKind::Page, FtlKind::Fast], vec![vet.clone()]),
        (vec![FtlKind::Vet, FtlKind::Bast], vec![sw.clone()]),
    ] {
        assert_eq!(unused_ftl_options(ftl, &kinds), expected, "{kinds:?}");
    }
    assert_eq!(
        ftl.given(),
        [
            "--gc",
            "--gc-threshold",
            "--wear-leveling",
            "--log-blocks",
            "--sw-log-block",
            "--full-sw",
            "--vet-insert",
            "--vet-nodes",
            "--vet-table",
            "--vet-search"
        ]
    );
    let one = FtlSection {
        log_blocks: Some(4),
        ..FtlSection::default()
    };
    assert_eq!(
        check_ftl_options(&one, &[FtlKind::Page], "--ftl page")
            .expect_err("unused")
            .to_string(),
        "--log-blocks is an option for bast, fast and ofast, which --ftl page does not run: \
         drop it"
    );
    let two = FtlSection {
        log_blocks: Some(4),
        gc_threshold: Some(3),
        ..FtlSection::default()
    };
    assert_eq!(
        check_ftl_options(&two, &[FtlKind::Block], "--ftl block")
            .expect_err("unused")
            .to_string(),
        "--gc-threshold is an option for page, vet and emt, which --ftl block does not run; \
         --log-blocks is an option for bast, fast and ofast, which --ftl block does not run: \
         drop them"
    );
    check_ftl_options(&two, &[FtlKind::Page, FtlKind::Bast], "both").expect("all read");
}

/// Options given several values are named, the flags' count winning over the file's.
#[test]
fn options_with_several_values_are_named_with_the_flags_over_the_file() {
    let file: ConfigFile = toml::from_str(
        "[ftl]\ngc = \"greedy,fifo\"\nvet_insert = [\"lis\", \"bis\"]\n\
         vet_nodes = [\"pd\", \"pf\"]\nvet_table = [\"swiss\", \"std\"]\n\
         vet_search = [\"paper\", \"guided\"]\n",
    )
    .expect("valid");
    let none = FtlSection::default();
    assert_eq!(
        listed_ftl_options(&none, &file.ftl),
        [
            "--gc",
            "--vet-insert",
            "--vet-nodes",
            "--vet-table",
            "--vet-search"
        ]
    );
    assert_eq!(listed_ftl_options(&file.ftl, &none).len(), 5);
    let one: ConfigFile = toml::from_str(
        "[ftl]\ngc = \"greedy\"\nvet_insert = \"lis\"\nvet_nodes = \"pd\"\n\
         vet_table = \"swiss\"\nvet_search = \"paper\"\n",
    )
    .expect("valid");
    assert!(listed_ftl_options(&one.ftl, &file.ftl).is_empty());
    assert!(listed_ftl_options(&none, &one.ftl).is_empty());
    // Every combination of the VET's values, insertion scheme outermost.
    use flashkit_ftl::{InsertScheme as I, VetNodes as N, VetSearch as S, VetTable as T};
    let shape = |v: &flashkit_ftl::VetConfig| (v.insert, v.nodes, v.table, v.search);
    let all: Vec<_> = vet_variants(&none, &file.ftl).iter().map(shape).collect();
    assert_eq!(all.len(), 16);
    assert_eq!(
        all[..3],
        [
            (I::Lis, N::Pd, T::Swiss, S::Paper),
            (I::Lis, N::Pd, T::Swiss, S::Guided),
            (I::Lis, N::Pd, T::Std, S::Paper)
        ]
    );
    assert_eq!(all[4], (I::Lis, N::Pf, T::Swiss, S::Paper));
    assert_eq!(all[8], (I::Bis, N::Pd, T::Swiss, S::Paper));
    let default = flashkit_ftl::VetConfig::default();
    assert_eq!(vet_variants(&none, &none), [default]);
    let variants = vet_variants(&one.ftl, &file.ftl);
    assert_eq!(variants.len(), 1);
    let (policies, options) = ftl_options(&none, &file.ftl);
    assert_eq!(policies, [GcPolicy::Greedy, GcPolicy::Fifo]);
    assert_eq!(options.page.gc_policy, GcPolicy::Greedy);
    assert_eq!(options.vet, vet_variants(&none, &file.ftl)[0]);
}

/// The page FTL's options, the seed and the device: flags over file over defaults, each.
#[test]
fn page_options_seed_and_device_take_flags_over_file_over_defaults() {
    let file: ConfigFile = toml::from_str(
        "[device]\nop = 0.5\npage_size = 8192\npages_per_block = 32\nendurance = 9\n\
         [ftl]\ngc = \"fifo\"\ngc_threshold = 5\nwear_leveling = 6\nfull_sw = \"merge\"\n\
         [run]\nseed = 4\n",
    )
    .expect("valid");
    let (_, options) = ftl_options(&FtlSection::default(), &file.ftl);
    assert_eq!(options.page.gc_policy, GcPolicy::Fifo);
    assert_eq!(options.page.gc_threshold_blocks, 5);
    assert_eq!(options.page.wear_leveling_spread, Some(6));
    assert_eq!(options.hybrid.full_sw, flashkit_ftl::FullSw::Merge);
    let flags = FtlSection {
        gc: vec![GcPolicy::Greedy],
        gc_threshold: Some(7),
        wear_leveling: Some(WearSetting(None)),
        ..FtlSection::default()
    };
    let (policies, options) = ftl_options(&flags, &file.ftl);
    assert_eq!(policies, [GcPolicy::Greedy]);
    assert_eq!(
        (
            options.page.gc_threshold_blocks,
            options.page.wear_leveling_spread
        ),
        (7, None)
    );
    let (policies, options) = ftl_options(&FtlSection::default(), &FtlSection::default());
    assert!(policies.is_empty());
    assert_eq!(options.page, flashkit_ftl::PageFtlConfig::default());
    assert_eq!(seed(&RunSection::default(), &file.run), 4);
    let five = RunSection {
        seed: Some(5),
        ..RunSection::default()
    };
    assert_eq!(seed(&five, &file.run), 5);
    assert_eq!(seed(&RunSection::default(), &RunSection::default()), 1);
    let device = device_spec(&DeviceSection::default(), &file.device).expect("valid");
    assert_eq!(
        (
            device.over_provisioning,
            device.page_size_bytes,
            device.pages_per_block,
            device.endurance_cycles
        ),
        (0.5, Some(8192), Some(32), Some(9))
    );
    let flags = DeviceSection {
        op: Some(0.25),
        page_size: Some(Size(4096)),
        pages_per_block: Some(64),
        endurance: Some(3),
        preset: Some("mlc-4k".into()),
        ..DeviceSection::default()
    };
    let device = device_spec(&flags, &file.device).expect("valid");
    assert_eq!(
        (
            device.preset.as_str(),
            device.over_provisioning,
            device.page_size_bytes,
            device.pages_per_block,
            device.endurance_cycles
        ),
        ("mlc-4k", 0.25, Some(4096), Some(64), Some(3))
    );
    let huge = DeviceSection {
        page_size: Some(Size(1 << 32)),
        ..DeviceSection::default()
    };
    assert_eq!(
        device_spec(&huge, &DeviceSection::default())
            .expect_err("too large")
            .to_string(),
        "page size 4294967296 B is not below 4 GiB"
    );
}
