//! What a load from memory costs on this machine, now: the context every wall-clock figure
//! needs.
//!
//! A mapping's time per call is mostly the latency of its dependent probes into a table
//! larger than the private caches. On a shared or virtualised machine that latency moves
//! with what the neighbours do: on the Xeon VM of bench/RESULTS.md the same binary read the
//! homes workload in 0.12 us one hour and 0.19-0.28 us the next, while a dependent load at
//! 8 MiB went from 37 to about 200 ns. A timing reported without the machine's state beside
//! it cannot be compared with anything, so `flashkit reproduce vet` measures it before and
//! after its timed runs ([`probe`]) and prints and records both.
//!
//! The measurement is a pointer chase: one 4-byte link a 64-byte line, the lines of a
//! buffer visited in one random cycle ([`chase`]), so each load depends on the one before
//! and no hardware prefetcher can guess the next. Time per load, once the buffer outgrows a
//! cache level, is that level's miss latency, address-translation misses included.
//!
//! What it is not: part of any model, or of any deterministic report.

use flashkit_core::{SimRng, SimRngExt};
use rand::seq::SliceRandom;
use serde::Serialize;
use std::time::Instant;

/// `u32` words a 64-byte line: one link a line, at its start.
const LINE_WORDS: usize = 16;

/// Working sets [`probe`] measures: inside a core's private cache (256 KiB), beyond it but
/// inside a typical shared last-level cache (8 MiB), and beyond most (64 MiB).
pub const PROBE_BYTES: [usize; 3] = [256 << 10, 8 << 20, 64 << 20];

/// Dependent loads [`probe`] times at each working set, after one untimed pass over (at
/// most as many) lines to bring the buffer into whatever cache will hold it.
pub const PROBE_LOADS: usize = 1_000_000;

/// One working set's load latency.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LoadLatency {
    /// Bytes of the chased buffer.
    pub working_set_bytes: u64,
    /// Nanoseconds a dependent load, averaged over the timed loads.
    pub ns: f64,
}

/// The links of a random single cycle through `lines` lines: `links[i * LINE_WORDS]` is the
/// line after line `i`. Every line is visited once before the chase returns to its start,
/// so a chase of any length touches the whole buffer rather than a short loop that fits a
/// cache. Deterministic in `seed`.
pub fn chase(lines: usize, seed: u64) -> Vec<u32> {
    assert!(
        lines > 0 && lines <= u32::MAX as usize,
        "invariant: 1..=2^32-1 lines, got {lines}"
    );
    let mut order: Vec<u32> = (0..lines as u32).collect();
    order.shuffle(&mut SimRng::for_stream(seed, "memory-latency"));
    let mut links = vec![0u32; lines * LINE_WORDS];
    for (i, &from) in order.iter().enumerate() {
        links[from as usize * LINE_WORDS] = order[(i + 1) % lines];
    }
    links
}

/// The 64-byte lines of a buffer of `bytes`: rounded down to whole lines, at least one.
fn lines_in(bytes: usize) -> usize {
    (bytes / (LINE_WORDS * 4)).max(1)
}

/// The line after line `at` in a chase built by [`chase`].
#[inline(always)]
fn next_line(links: &[u32], at: u32) -> u32 {
    links[at as usize * LINE_WORDS]
}

/// Nanoseconds per load of `loads` loads that took `elapsed_ns` (the whole time when no
/// load was timed).
fn per_load_ns(elapsed_ns: u128, loads: usize) -> f64 {
    elapsed_ns as f64 / loads.max(1) as f64
}

/// Nanoseconds a dependent load over a buffer of `bytes` (rounded down to whole 64-byte
/// lines, at least one), timed over `loads` loads after a warm-up pass.
pub fn load_latency_ns(bytes: usize, loads: usize) -> f64 {
    let lines = lines_in(bytes);
    let links = chase(lines, 1);
    let mut at = 0u32;
    for _ in 0..lines.min(loads) {
        at = next_line(&links, at);
    }
    let clock = Instant::now();
    for _ in 0..loads {
        at = next_line(&links, at);
    }
    let ns = per_load_ns(clock.elapsed().as_nanos(), loads);
    std::hint::black_box(at);
    ns
}

/// [`load_latency_ns`] at each of [`PROBE_BYTES`], [`PROBE_LOADS`] loads each: well under a
/// second on a machine whose memory is slow (about 0.2 s at 200 ns a load).
pub fn probe() -> Vec<LoadLatency> {
    PROBE_BYTES
        .iter()
        .map(|&bytes| LoadLatency {
            working_set_bytes: bytes as u64,
            ns: load_latency_ns(bytes, PROBE_LOADS),
        })
        .collect()
}

/// [`probe`] just before and just after a timed section: on a shared machine the state can
/// change while it runs, and a pair that disagrees says so.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryLatency {
    /// Measured before the timed section.
    pub before: Vec<LoadLatency>,
    /// Measured after it.
    pub after: Vec<LoadLatency>,
}

impl MemoryLatency {
    /// Probe, run `timed`, probe again.
    pub fn around<R>(timed: impl FnOnce() -> R) -> (R, MemoryLatency) {
        let before = probe();
        let result = timed();
        let after = probe();
        (result, MemoryLatency { before, after })
    }

    /// `a dependent load took 6.2 / 39.9 / 171.1 ns at 256 KiB / 8 MiB / 64 MiB just before
    /// the timed work, ... just after`.
    pub fn describe(&self) -> String {
        format!(
            "a dependent load took {} just before the timed work, {} just after",
            describe(&self.before),
            describe(&self.after)
        )
    }
}

/// `6.2 / 39.9 / 171.1 ns at 256 KiB / 8 MiB / 64 MiB`.
pub fn describe(latencies: &[LoadLatency]) -> String {
    let ns: Vec<String> = latencies.iter().map(|l| format!("{:.1}", l.ns)).collect();
    let sizes: Vec<String> = latencies
        .iter()
        .map(|l| working_set_name(l.working_set_bytes))
        .collect();
    format!("{} ns at {}", ns.join(" / "), sizes.join(" / "))
}

/// A working set as the tables print it: `256 KiB`, `8 MiB` (whole KiB or MiB).
pub fn working_set_name(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// Memory this process may still take: the least of what the kernel says is available
/// (`MemAvailable` in `/proc/meminfo`), what the cgroup it runs in leaves under its limit
/// (`memory.max` less `memory.current`, cgroup v2), and what its address-space limit leaves
/// (`ulimit -v`: the soft `Max address space` of `/proc/self/limits` less `VmSize`). Each
/// with its source, for the message that refuses a run; `None` where none can be read
/// (not Linux).
pub fn available_memory() -> Option<(u64, &'static str)> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    MemoryFiles {
        meminfo: read("/proc/meminfo"),
        cgroup_max: read("/sys/fs/cgroup/memory.max"),
        cgroup_current: read("/sys/fs/cgroup/memory.current"),
        limits: read("/proc/self/limits"),
        status: read("/proc/self/status"),
    }
    .available()
}

/// The texts [`available_memory`] reads, each `None` where it could not be read.
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles {
    /// `/proc/meminfo`.
    pub meminfo: Option<String>,
    /// `/sys/fs/cgroup/memory.max` (`max` when the cgroup has no limit).
    pub cgroup_max: Option<String>,
    /// `/sys/fs/cgroup/memory.current`.
    pub cgroup_current: Option<String>,
    /// `/proc/self/limits`.
    pub limits: Option<String>,
    /// `/proc/self/status`.
    pub status: Option<String>,
}

impl MemoryFiles {
    /// The least memory these texts leave, and which of them says so; a source whose text
    /// is missing or does not parse is left out.
    pub fn available(&self) -> Option<(u64, &'static str)> {
        let kib_field = |text: &str, name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
                .map(|kib| kib * 1024)
        };
        let number = |text: &Option<String>| text.as_deref()?.trim().parse::<u64>().ok();
        let meminfo = self
            .meminfo
            .as_deref()
            .and_then(|t| kib_field(t, "MemAvailable:"))
            .map(|b| (b, "MemAvailable in /proc/meminfo"));
        let cgroup = number(&self.cgroup_max)
            .zip(number(&self.cgroup_current))
            .map(|(max, current)| (max.saturating_sub(current), "the cgroup's memory.max"));
        let address_space = self
            .limits
            .as_deref()
            .and_then(|limits| {
                let line = limits
                    .lines()
                    .find(|l| l.starts_with("Max address space"))?;
                line.split_whitespace().nth(3)?.parse::<u64>().ok()
            })
            .zip(self.status.as_deref().and_then(|t| kib_field(t, "VmSize:")))
            .map(|(limit, size)| {
                (
                    limit.saturating_sub(size),
                    "the address-space limit (ulimit -v)",
                )
            });
        [meminfo, cgroup, address_space]
            .into_iter()
            .flatten()
            .min_by_key(|&(bytes, _)| bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follow the links from line 0 and count the lines until the chase comes back.
    fn cycle_length(links: &[u32]) -> usize {
        let mut at = 0u32;
        let mut steps = 0;
        loop {
            at = links[at as usize * LINE_WORDS];
            steps += 1;
            if at == 0 || steps > links.len() {
                return steps;
            }
        }
    }

    #[test]
    fn a_chase_is_one_cycle_through_every_line() {
        for lines in [1, 2, 3, 64, 1000, 4096] {
            let links = chase(lines, 7);
            assert_eq!(links.len(), lines * LINE_WORDS);
            assert_eq!(cycle_length(&links), lines, "{lines} lines");
            // Only each line's first word is a link; the rest stay zero.
            for (i, &word) in links.iter().enumerate() {
                if i % LINE_WORDS != 0 {
                    assert_eq!(word, 0);
                }
            }
        }
    }

    #[test]
    fn a_chase_is_deterministic_in_its_seed() {
        assert_eq!(chase(500, 3), chase(500, 3));
        assert_ne!(chase(500, 3), chase(500, 4));
    }

    #[test]
    fn describe_names_each_working_set() {
        let probe = [
            LoadLatency {
                working_set_bytes: 256 << 10,
                ns: 6.24,
            },
            LoadLatency {
                working_set_bytes: 8 << 20,
                ns: 39.9,
            },
        ];
        assert_eq!(describe(&probe), "6.2 / 39.9 ns at 256 KiB / 8 MiB");
    }

    #[test]
    fn memory_latency_brackets_the_timed_work() {
        let mut ran = false;
        let (value, latency) = MemoryLatency::around(|| {
            ran = true;
            42
        });
        assert!(ran);
        assert_eq!(value, 42);
        for probe in [&latency.before, &latency.after] {
            let sets: Vec<u64> = probe.iter().map(|l| l.working_set_bytes).collect();
            assert_eq!(sets, PROBE_BYTES.map(|b| b as u64));
        }
        let text = latency.describe();
        assert!(text.starts_with("a dependent load took "), "{text}");
        assert!(text.contains(" just before the timed work, "), "{text}");
    }

    /// The working sets are the cache sizes the module's text names.
    #[test]
    fn the_probed_working_sets_are_256_kib_8_mib_and_64_mib() {
        assert_eq!(PROBE_BYTES, [262_144, 8_388_608, 67_108_864]);
    }

    /// A buffer's lines round down to whole 64-byte lines, one at least; a chase stepped
    /// line by line from line 0 visits every line once and comes back; the time per load
    /// divides by the loads, or by one when none was timed.
    #[test]
    fn lines_steps_and_time_per_load() {
        let lines: Vec<usize> = [0, 63, 64, 127, 128, 256 << 10].map(lines_in).into();
        assert_eq!(lines, [1, 1, 1, 1, 2, 4096]);
        let links = chase(1000, 1);
        let mut seen = vec![false; 1000];
        let mut at = 0u32;
        for _ in 0..1000 {
            assert!(!seen[at as usize], "line {at} twice");
            seen[at as usize] = true;
            at = next_line(&links, at);
        }
        assert_eq!(at, 0, "back at the start");
        assert_eq!(per_load_ns(1_000, 10), 100.0);
        assert_eq!(per_load_ns(7, 0), 7.0);
    }

    /// Each source's figure read from its text, in bytes; a source missing or unparsed (an
    /// unlimited cgroup or address space) left out; the least of those left, with its name.
    #[test]
    fn available_memory_is_the_least_of_what_each_source_leaves() {
        let text = |t: &str| Some(t.to_string());
        let meminfo = text("MemTotal:  24000000 kB\nMemFree:   1000 kB\nMemAvailable:   2000 kB\n");
        let limits = text(
            "Limit                     Soft Limit           Hard Limit           Units     \n\
             Max stack size            8388608              unlimited            bytes     \n\
             Max address space         5000000              unlimited            bytes     \n",
        );
        let status = text("Name:\tflashkit\nVmPeak:\t 9 kB\nVmSize:\t    3000 kB\n");
        assert_eq!(MemoryFiles::default().available(), None);
        let only_meminfo = MemoryFiles {
            meminfo: meminfo.clone(),
            ..MemoryFiles::default()
        };
        assert_eq!(
            only_meminfo.available(),
            Some((2_048_000, "MemAvailable in /proc/meminfo"))
        );
        // An unlimited cgroup and address space say nothing; a cgroup's limit without its
        // usage neither.
        let unlimited = MemoryFiles {
            meminfo: meminfo.clone(),
            cgroup_max: text("max\n"),
            cgroup_current: text("123\n"),
            limits: text(
                "Max address space         unlimited            unlimited            bytes\n",
            ),
            status: status.clone(),
        };
        assert_eq!(unlimited.available(), only_meminfo.available());
        let half_cgroup = MemoryFiles {
            cgroup_max: text("1000\n"),
            ..MemoryFiles::default()
        };
        assert_eq!(half_cgroup.available(), None);
        // A cgroup leaving 1,000,000 bytes is the least; one over its limit leaves nothing.
        let cgroup = MemoryFiles {
            meminfo: meminfo.clone(),
            cgroup_max: text("3000000\n"),
            cgroup_current: text("2000000\n"),
            limits: limits.clone(),
            status: status.clone(),
        };
        assert_eq!(
            cgroup.available(),
            Some((1_000_000, "the cgroup's memory.max"))
        );
        let over = MemoryFiles {
            cgroup_current: text("4000000\n"),
            ..cgroup.clone()
        };
        assert_eq!(over.available(), Some((0, "the cgroup's memory.max")));
        // The address space: 5,000,000 less 3,000 KiB of VmSize.
        let address = MemoryFiles {
            cgroup_max: text("9000000\n"),
            ..cgroup
        };
        assert_eq!(
            address.available(),
            Some((5_000_000 - 3_072_000, "the address-space limit (ulimit -v)"))
        );
        let no_size = MemoryFiles {
            status: None,
            ..address
        };
        assert_eq!(no_size.available(), only_meminfo.available());
    }

    /// This machine's reading: Linux has `/proc/meminfo`, and a running test leaves some
    /// memory and less than a petabyte.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_has_memory_available() {
        let (bytes, source) = available_memory().expect("Linux says");
        assert!(bytes > 1 << 20 && bytes < 1 << 50, "{bytes} from {source}");
        assert!(!source.is_empty());
    }

    #[test]
    fn a_load_latency_is_a_positive_time() {
        let ns = load_latency_ns(64 << 10, 10_000);
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
    }
}
