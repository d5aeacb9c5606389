//! The fat-list paper's workloads (section 0.6) and a phase runner that charges each phase
//! its word reads, word writes and erases, split into normal operation and space
//! reclaiming, and turns them into time with the NOR part's costs.
//!
//! What it is not: a wall-clock benchmark. Every figure here is simulated time; how fast
//! the simulator runs is measured by the caller.
//!
//! Key decision: workloads are generated from one seed through named streams, so a phase's
//! figures are identical on every run; the sensor stream is synthetic (the Intel Berkeley
//! lab trace the paper used is not available here) and says so in its description.

use crate::nor::{
    FatList, FatListConfig, IndexError, Key, MuTree, MuTreeConfig, NorIndex, ProbeStats, SoftList,
    SoftListConfig, Value,
};
use flashkit_core::{OpCounters, SimRng, SimRngExt, Timing};
use flashkit_device::{NorDevice, NorGeometry};
use rand::Rng;
use rand::seq::SliceRandom;
use rand_distr::{Distribution, Normal};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Which index to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Structure {
    /// [`FatList`].
    FatList,
    /// [`SoftList`].
    SoftList,
    /// [`MuTree`].
    MuTree,
}

impl Structure {
    /// Every structure.
    pub const ALL: [Structure; 3] = [Structure::FatList, Structure::SoftList, Structure::MuTree];
}

impl fmt::Display for Structure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Structure::FatList => "fatlist",
            Structure::SoftList => "softlist",
            Structure::MuTree => "mutree",
        })
    }
}

impl FromStr for Structure {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "fatlist" => Ok(Structure::FatList),
            "softlist" => Ok(Structure::SoftList),
            "mutree" => Ok(Structure::MuTree),
            other => Err(format!(
                "unknown structure {other:?} (expected fatlist, softlist or mutree)"
            )),
        }
    }
}

/// Everything needed to build one index on a fresh device.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct IndexSpec {
    /// The structure.
    pub structure: Structure,
    /// Fat-list parameters (used when `structure` is a fat list).
    pub fat: FatListConfig,
    /// Soft-list parameters.
    pub soft: SoftListConfig,
    /// Mu-tree parameters.
    pub mu: MuTreeConfig,
    /// Seed of the structure's random choices (levels, block choice).
    pub seed: u64,
}

impl IndexSpec {
    /// The paper's defaults for `structure`.
    pub fn new(structure: Structure, seed: u64) -> IndexSpec {
        IndexSpec {
            structure,
            fat: FatListConfig::default(),
            soft: SoftListConfig::default(),
            mu: MuTreeConfig::default(),
            seed,
        }
    }

    /// Build the index on a fresh device of `geometry`.
    pub fn build(&self, geometry: NorGeometry) -> Result<Box<dyn NorIndex>, IndexError> {
        let nor = NorDevice::new(geometry);
        Ok(match self.structure {
            Structure::FatList => Box::new(FatList::create(nor, self.fat, self.seed)?),
            Structure::SoftList => Box::new(SoftList::create(nor, self.soft, self.seed)?),
            Structure::MuTree => Box::new(MuTree::create(nor, self.mu)?),
        })
    }
}

/// What one phase cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseReport {
    /// Phase name.
    pub name: String,
    /// Operations issued.
    pub operations: u64,
    /// Word reads, word writes and erases of the phase (host = normal operation, gc = space
    /// reclaiming, metadata = boot-up initialization).
    pub counters: OpCounters,
    /// Soft-pointer probes of the phase.
    pub probes: ProbeStats,
    /// Simulated time of the phase, seconds.
    pub time: PhaseTime,
}

/// Simulated time by operation kind and by normal operation / space reclaiming.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhaseTime {
    /// Word reads during normal operation, seconds.
    pub read_s: f64,
    /// Word writes during normal operation, seconds.
    pub write_s: f64,
    /// Erases during normal operation, seconds (none: only reclaiming erases).
    pub erase_s: f64,
    /// Word reads while reclaiming space, seconds.
    pub gc_read_s: f64,
    /// Word writes while reclaiming space, seconds.
    pub gc_write_s: f64,
    /// Erases while reclaiming space, seconds.
    pub gc_erase_s: f64,
}

impl PhaseTime {
    fn of(c: &OpCounters, t: &Timing) -> PhaseTime {
        let s = |n: u64, ns: u64| n as f64 * ns as f64 * 1e-9;
        PhaseTime {
            read_s: s(c.reads.host, t.read_ns),
            write_s: s(c.programs.host, t.program_ns),
            erase_s: s(c.erases.host, t.erase_ns),
            gc_read_s: s(c.reads.gc, t.read_ns),
            gc_write_s: s(c.programs.gc, t.program_ns),
            gc_erase_s: s(c.erases.gc, t.erase_ns),
        }
    }

    /// Reads, both kinds.
    pub fn reads(&self) -> f64 {
        self.read_s + self.gc_read_s
    }

    /// Writes, both kinds.
    pub fn writes(&self) -> f64 {
        self.write_s + self.gc_write_s
    }

    /// Erases, both kinds.
    pub fn erases(&self) -> f64 {
        self.erase_s + self.gc_erase_s
    }

    /// Everything.
    pub fn total(&self) -> f64 {
        self.reads() + self.writes() + self.erases()
    }
}

/// Runs phases against one index and records what each cost.
pub struct PhaseRunner<'a> {
    index: &'a mut dyn NorIndex,
    timing: Timing,
    /// Every phase so far.
    pub phases: Vec<PhaseReport>,
}

impl<'a> PhaseRunner<'a> {
    /// A runner over `index`, charging `timing`.
    pub fn new(index: &'a mut dyn NorIndex, timing: Timing) -> PhaseRunner<'a> {
        PhaseRunner {
            index,
            timing,
            phases: Vec::new(),
        }
    }

    /// Run `body` as the phase `name` of `operations` operations.
    pub fn phase(
        &mut self,
        name: &str,
        operations: u64,
        body: impl FnOnce(&mut dyn NorIndex) -> Result<(), IndexError>,
    ) -> Result<&PhaseReport, IndexError> {
        let counters = *self.index.device().counters();
        let probes = self.index.stats().probes;
        body(&mut *self.index)?;
        let c = self.index.device().counters().since(&counters);
        self.phases.push(PhaseReport {
            name: name.to_string(),
            operations,
            counters: c,
            probes: self.index.stats().probes.since(&probes),
            time: PhaseTime::of(&c, &self.timing),
        });
        Ok(self.phases.last().expect("invariant: just pushed"))
    }

    /// The index.
    pub fn index(&mut self) -> &mut dyn NorIndex {
        &mut *self.index
    }
}

/// The micro-benchmark of section 0.6.3.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MicroSpec {
    /// Keys inserted sequentially (25,000).
    pub keys: u32,
    /// Updates, keys drawn from a Gaussian (800,000).
    pub updates: u64,
    /// Queries from the same Gaussian (800,000).
    pub queries: u64,
    /// Standard deviation of the Gaussian as a fraction of the key count (1/6); its mean is
    /// the median key.
    pub spread: f64,
    /// Power cycles between the update and query phases to measure boot-up initialization
    /// (0: none).
    pub boot_trials: u32,
    /// Workload seed.
    pub seed: u64,
}

impl Default for MicroSpec {
    fn default() -> Self {
        MicroSpec {
            keys: 25_000,
            updates: 800_000,
            queries: 800_000,
            spread: 1.0 / 6.0,
            boot_trials: 0,
            seed: 1,
        }
    }
}

/// The result of a micro-benchmark run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MicroReport {
    /// Insertion, update, query and deletion phases.
    pub phases: Vec<PhaseReport>,
    /// Mean word reads of one boot-up initialization, when measured.
    pub boot_word_reads: Option<f64>,
    /// Structure counters at the end.
    pub counters: Vec<(&'static str, u64)>,
    /// The index's state hash at the end ([`NorIndex::hash_state`], 16 hex digits).
    pub state_hash: String,
}

/// Keys from the micro-benchmark's Gaussian.
pub struct GaussianKeys {
    normal: Normal<f64>,
    keys: u32,
    rng: SimRng,
}

impl GaussianKeys {
    /// Keys in `0..keys` around the median with standard deviation `spread * keys`.
    pub fn new(keys: u32, spread: f64, seed: u64, label: &str) -> GaussianKeys {
        let mean = f64::from(keys) / 2.0;
        let sd = (spread * f64::from(keys)).max(1e-9);
        GaussianKeys {
            normal: Normal::new(mean, sd).expect("invariant: a positive standard deviation"),
            keys,
            rng: SimRng::for_stream(seed, label),
        }
    }

    /// The next key (draws outside the key range are drawn again).
    pub fn next_key(&mut self) -> Key {
        loop {
            // A draw in [k, k + 1) is key k: the key, not the draw, is compared with the
            // range, the same test as `x < keys` for a whole `keys`.
            let x = self.normal.sample(&mut self.rng);
            let key = x as Key;
            if x >= 0.0 && key < self.keys {
                return key;
            }
        }
    }
}

/// Run the micro-benchmark: sequential inserts, Gaussian updates, (boots), Gaussian queries,
/// random deletion of every key. Every answer is checked against what was written.
pub fn micro(
    index: &mut dyn NorIndex,
    timing: Timing,
    spec: &MicroSpec,
) -> Result<MicroReport, IndexError> {
    // Draws outside the key range are drawn again: a spread far above the key count would
    // (almost) never land inside it, and NaN or a non-positive spread is no distribution.
    if !(spec.spread > 0.0 && spec.spread <= 1.0) {
        return Err(IndexError::Config {
            structure: "benchmark",
            field: "spread",
            reason: format!(
                "{} is not a fraction of the key count in (0, 1]",
                spec.spread
            ),
        });
    }
    // Updates and queries draw keys from 0..keys until one lands inside: with no key, no
    // draw ever would.
    if spec.keys == 0 && (spec.updates > 0 || spec.queries > 0) {
        return Err(IndexError::Config {
            structure: "benchmark",
            field: "keys",
            reason: "0 leaves no key for an update or a query to draw; give at least 1".into(),
        });
    }
    let mut values: Vec<Value> = vec![0; spec.keys as usize];
    let mut value_rng = SimRng::for_stream(spec.seed, "micro/values");
    let mut runner = PhaseRunner::new(index, timing);
    runner.phase("insert", u64::from(spec.keys), |ix| {
        for key in 0..spec.keys {
            values[key as usize] = value_rng.random();
            ix.put(key, values[key as usize])?;
        }
        Ok(())
    })?;
    let mut updates = GaussianKeys::new(spec.keys, spec.spread, spec.seed, "micro/updates");
    runner.phase("update", spec.updates, |ix| {
        for _ in 0..spec.updates {
            let key = updates.next_key();
            values[key as usize] = value_rng.random();
            ix.put(key, values[key as usize])?;
        }
        Ok(())
    })?;
    let mut boot_reads = 0u64;
    for _ in 0..spec.boot_trials {
        boot_reads += runner.index().power_cycle()?.word_reads;
    }
    let mut queries = GaussianKeys::new(spec.keys, spec.spread, spec.seed, "micro/queries");
    runner.phase("query", spec.queries, |ix| {
        for _ in 0..spec.queries {
            let key = queries.next_key();
            let got = ix.get(key)?;
            if got != Some(values[key as usize]) {
                return Err(mismatch(key, got, values[key as usize]));
            }
        }
        Ok(())
    })?;
    let mut order: Vec<Key> = (0..spec.keys).collect();
    order.shuffle(&mut SimRng::for_stream(spec.seed, "micro/deletes"));
    runner.phase("delete", u64::from(spec.keys), |ix| {
        for &key in &order {
            ix.remove(key)?;
        }
        Ok(())
    })?;
    let phases = runner.phases;
    Ok(MicroReport {
        phases,
        boot_word_reads: (spec.boot_trials > 0)
            .then(|| boot_reads as f64 / f64::from(spec.boot_trials)),
        counters: index.stats().counters,
        state_hash: crate::nor::state_hash(index),
    })
}

fn mismatch(key: Key, got: Option<Value>, want: Value) -> IndexError {
    IndexError::Corrupt {
        structure: "benchmark",
        detail: format!("key {key} read back as {got:?}, {want} was written"),
    }
}

/// A synthetic temperature stream standing in for the Intel Berkeley lab trace of the
/// macro-benchmark (section 0.6.4): `sensors` motes, one reading every 31 s each, a daily
/// cycle, a per-mote offset and a random walk, quantized at 0.01 degrees C (the SHT11's
/// resolution). The key is the quantized temperature, the value the reading's number.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SensorSpec {
    /// Motes (54).
    pub sensors: u32,
    /// Readings in total.
    pub readings: u64,
    /// Seconds between a mote's readings (31).
    pub period_s: u32,
    /// Widest range queried, in key units (0.01 degrees C).
    pub max_range: u32,
    /// Seed.
    pub seed: u64,
}

impl Default for SensorSpec {
    fn default() -> Self {
        SensorSpec {
            sensors: 54,
            readings: 200_000,
            period_s: 31,
            max_range: 100,
            seed: 1,
        }
    }
}

/// The sensor stream's keys, in collection order.
pub fn sensor_keys(spec: &SensorSpec) -> Vec<Key> {
    let mut rng = SimRng::for_stream(spec.seed, "sensor/stream");
    let offsets: Vec<f64> = (0..spec.sensors)
        .map(|_| rng.random_range(-2.0..2.0))
        .collect();
    let mut walk = vec![0.0f64; spec.sensors as usize];
    let mut keys = Vec::with_capacity(spec.readings as usize);
    let day = 86_400.0;
    for i in 0..spec.readings {
        let mote = (i % u64::from(spec.sensors)) as usize;
        let t = (i / u64::from(spec.sensors)) as f64 * f64::from(spec.period_s);
        walk[mote] = (walk[mote] + rng.random_range(-0.05..0.05)) * 0.999;
        let celsius =
            21.0 + 3.5 * (2.0 * std::f64::consts::PI * t / day).sin() + offsets[mote] + walk[mote];
        keys.push(((celsius + 39.6) * 100.0).round().max(0.0) as Key);
    }
    keys
}

/// The result of a macro-benchmark run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MacroReport {
    /// Insertion phase (a repeated key is an update), then range queries.
    pub phases: Vec<PhaseReport>,
    /// Distinct keys after insertion.
    pub distinct_keys: u64,
    /// Pairs returned by all range queries.
    pub pairs_returned: u64,
    /// The index's state hash at the end ([`NorIndex::hash_state`], 16 hex digits).
    pub state_hash: String,
}

/// Run the macro-benchmark: insert the sensor stream in order, then a phase of range
/// queries for each count in `rounds`, starting at keys of the stream. Range answers are
/// checked against a model.
pub fn sensor(
    index: &mut dyn NorIndex,
    timing: Timing,
    spec: &SensorSpec,
    rounds: &[u64],
) -> Result<MacroReport, IndexError> {
    if spec.readings == 0 && rounds.iter().any(|&count| count > 0) {
        return Err(IndexError::Config {
            structure: "benchmark",
            field: "readings",
            reason: "0 leaves no key for a range query to start at; give at least 1".into(),
        });
    }
    let keys = sensor_keys(spec);
    let mut model = std::collections::BTreeMap::new();
    let mut runner = PhaseRunner::new(index, timing);
    runner.phase("insert", spec.readings, |ix| {
        for (i, &key) in keys.iter().enumerate() {
            ix.put(key, i as Value)?;
            model.insert(key, i as Value);
        }
        Ok(())
    })?;
    let mut rng = SimRng::for_stream(spec.seed, "sensor/ranges");
    let mut out = Vec::new();
    let mut returned = 0u64;
    for &count in rounds {
        let name = format!("range x{count}");
        runner.phase(&name, count, |ix| {
            for _ in 0..count {
                let lo = keys[rng.random_range(0..keys.len())];
                let hi = lo.saturating_add(rng.random_range(0..=spec.max_range));
                out.clear();
                ix.range(lo, hi, &mut out)?;
                let want = model.range(lo..=hi).count();
                if out.len() != want {
                    return Err(IndexError::Corrupt {
                        structure: "benchmark",
                        detail: format!(
                            "range {lo}..={hi} returned {} pairs, {want} expected",
                            out.len()
                        ),
                    });
                }
                returned += out.len() as u64;
            }
            Ok(())
        })?;
    }
    Ok(MacroReport {
        phases: runner.phases,
        distinct_keys: model.len() as u64,
        pairs_returned: returned,
        state_hash: crate::nor::state_hash(index),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_device::NorPreset;

    const PINNED_FAT: u64 = 0x296b_e0c2_f30b_88fa;
    const PINNED_SOFT: u64 = 0xc936_7d0f_9281_cd22;
    const PINNED_MU: u64 = 0xc7ad_4d59_4e05_71f4;

    #[test]
    fn a_tiny_micro_benchmark_runs_on_every_structure_and_is_deterministic() {
        let spec = MicroSpec {
            keys: 600,
            updates: 3_000,
            queries: 2_000,
            boot_trials: 2,
            ..MicroSpec::default()
        };
        let geometry = NorGeometry::new(4096, 16).expect("valid");
        for structure in Structure::ALL {
            let run = || {
                let mut index = IndexSpec::new(structure, 7).build(geometry).expect("build");
                micro(index.as_mut(), NorPreset::K8C1215.timing, &spec).expect("runs")
            };
            let (a, b) = (run(), run());
            assert_eq!(a, b, "{structure}: same seed, same figures");
            assert_eq!(a.phases.len(), 4);
            assert!(a.phases[1].time.writes() > 0.0);
            assert!(a.boot_word_reads.expect("measured") > 0.0);
        }
    }

    /// Seconds of `n` operations at `ns` each.
    fn seconds(n: u64, ns: u64) -> f64 {
        n as f64 * ns as f64 / 1e9
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-12 * want.abs()
    }

    /// The micro-benchmark's figures, each against its own computation: the phases' names
    /// and operation counts; the phases' counters and the boots' reads add up to the
    /// device's; every time is the operations at the part's costs; the boot figure is the
    /// mean of the boots' reads, the run's only metadata reads; the probes add up to
    /// the structure's; its counters are its own.
    #[test]
    fn every_micro_figure_is_computed_from_what_the_run_did() {
        let spec = MicroSpec {
            keys: 300,
            updates: 3_000,
            queries: 700,
            boot_trials: 2,
            ..MicroSpec::default()
        };
        let geometry = NorGeometry::new(1024, 16).expect("valid");
        let timing = NorPreset::K8C1215.timing;
        for structure in Structure::ALL {
            let mut index = IndexSpec::new(structure, 7).build(geometry).expect("build");
            let created = *index.device().counters();
            let r = micro(index.as_mut(), timing, &spec).expect("runs");
            let names: Vec<(&str, u64)> = r
                .phases
                .iter()
                .map(|p| (p.name.as_str(), p.operations))
                .collect();
            assert_eq!(
                names,
                [
                    ("insert", 300),
                    ("update", 3_000),
                    ("query", 700),
                    ("delete", 300)
                ]
            );
            let boot = r.boot_word_reads.expect("measured");
            assert!(boot > 0.0, "{structure}: {boot}");
            let device = index.device().counters().since(&created);
            let sum = |f: fn(&OpCounters) -> u64| -> u64 {
                r.phases.iter().map(|p| f(&p.counters)).sum()
            };
            assert_eq!(sum(|c| c.reads.host), device.reads.host, "{structure}");
            assert_eq!(sum(|c| c.reads.gc), device.reads.gc, "{structure}");
            assert_eq!(
                sum(|c| c.reads.metadata),
                0,
                "{structure}: boots are not phases"
            );
            assert_eq!(device.reads.metadata as f64, 2.0 * boot, "{structure}");
            assert_eq!(sum(|c| c.programs.total()), device.programs.total());
            assert_eq!(sum(|c| c.erases.total()), device.erases.total());
            for p in &r.phases {
                let (c, t) = (&p.counters, &p.time);
                let want = [
                    seconds(c.reads.host, timing.read_ns),
                    seconds(c.programs.host, timing.program_ns),
                    seconds(c.erases.host, timing.erase_ns),
                    seconds(c.reads.gc, timing.read_ns),
                    seconds(c.programs.gc, timing.program_ns),
                    seconds(c.erases.gc, timing.erase_ns),
                ];
                let got = [
                    t.read_s,
                    t.write_s,
                    t.erase_s,
                    t.gc_read_s,
                    t.gc_write_s,
                    t.gc_erase_s,
                ];
                for (g, w) in got.iter().zip(want) {
                    assert!(close(*g, w), "{structure} {}: {got:?} {want:?}", p.name);
                }
                assert!(close(t.reads(), want[0] + want[3]));
                assert!(close(t.writes(), want[1] + want[4]));
                assert!(close(t.erases(), want[2] + want[5]));
                assert!(close(t.total(), want.iter().sum()));
            }
            let reclaimed: u64 = r.phases.iter().map(|p| p.counters.erases.gc).sum();
            assert!(reclaimed > 0, "{structure}: nothing reclaimed");
            let stats = index.stats();
            let probes =
                |f: fn(&ProbeStats) -> u64| -> u64 { r.phases.iter().map(|p| f(&p.probes)).sum() };
            let all = stats.probes;
            assert_eq!(probes(|p| p.pointers_visited), all.pointers_visited);
            assert_eq!(probes(|p| p.probes), all.probes);
            assert_eq!(probes(|p| p.successful), all.successful);
            assert_eq!(probes(|p| p.low), all.low);
            assert_eq!(probes(|p| p.over), all.over);
            assert_eq!(probes(|p| p.back), all.back);
            assert_eq!(probes(|p| p.null), all.null);
            assert_eq!(r.counters, stats.counters);
            assert_eq!(r.state_hash, crate::nor::state_hash(index.as_ref()));
        }
    }

    /// Gaussian keys stay in the key range, around the median with the spread asked; a
    /// spread of the whole key range is still accepted.
    #[test]
    fn gaussian_keys_fall_around_the_median_at_the_spread() {
        let mut g = GaussianKeys::new(6_000, 1.0 / 6.0, 1, "test");
        let keys: Vec<f64> = (0..20_000).map(|_| f64::from(g.next_key())).collect();
        assert!(keys.iter().all(|&k| (0.0..6_000.0).contains(&k)));
        let mean = keys.iter().sum::<f64>() / keys.len() as f64;
        let sd = (keys.iter().map(|k| (k - mean).powi(2)).sum::<f64>() / keys.len() as f64).sqrt();
        assert!((2_950.0..3_050.0).contains(&mean), "mean {mean}");
        assert!((950.0..1_050.0).contains(&sd), "sd {sd}");
        let mut wide = GaussianKeys::new(10, 1.0, 1, "test");
        assert!((0..100).all(|_| wide.next_key() < 10));
        let geometry = NorGeometry::new(4096, 16).expect("valid");
        let mut index = IndexSpec::new(Structure::FatList, 1)
            .build(geometry)
            .expect("build");
        let whole = MicroSpec {
            keys: 20,
            updates: 20,
            queries: 20,
            spread: 1.0,
            ..MicroSpec::default()
        };
        let r = micro(index.as_mut(), NorPreset::K8C1215.timing, &whole).expect("runs");
        assert_eq!(r.boot_word_reads, None, "no boot trials, no boot figure");
    }

    /// The sensor benchmark's phases are named by their query counts; a run with no query
    /// needs no reading.
    #[test]
    fn the_sensor_benchmark_names_its_phases() {
        let geometry = NorGeometry::new(4096, 16).expect("valid");
        let timing = NorPreset::K8C1215.timing;
        let spec = SensorSpec {
            readings: 2_000,
            ..SensorSpec::default()
        };
        let mut index = IndexSpec::new(Structure::MuTree, 1)
            .build(geometry)
            .expect("build");
        let r = sensor(index.as_mut(), timing, &spec, &[10, 30]).expect("runs");
        let names: Vec<(&str, u64)> = r
            .phases
            .iter()
            .map(|p| (p.name.as_str(), p.operations))
            .collect();
        assert_eq!(
            names,
            [("insert", 2_000), ("range x10", 10), ("range x30", 30)]
        );
        assert_eq!(r.state_hash, crate::nor::state_hash(index.as_ref()));
        let none = SensorSpec {
            readings: 0,
            ..SensorSpec::default()
        };
        let mut index = IndexSpec::new(Structure::MuTree, 1)
            .build(geometry)
            .expect("build");
        let r = sensor(index.as_mut(), timing, &none, &[0]).expect("no query, no reading needed");
        assert_eq!((r.distinct_keys, r.pairs_returned), (0, 0));
    }

    /// The synthetic sensor stream as its documentation describes it: 54 motes reading in
    /// turn every 31 s, temperatures around 21 degrees C with a daily swing of 3.5 degrees,
    /// a per-mote offset within 2 degrees and a small random walk, keyed at 0.01 degrees
    /// above -39.6 (the SHT11's scale). Over one day (150,552 readings) the keys stay in the
    /// model's band, the first half-day (the sine's positive half) reads warmer than the
    /// second by about 2 x 3.5 x 2/pi degrees, and the motes' means spread by their offsets.
    #[test]
    fn the_sensor_stream_follows_its_model() {
        let spec = SensorSpec {
            readings: 150_552,
            ..SensorSpec::default()
        };
        let keys = sensor_keys(&spec);
        assert_eq!(keys.len(), 150_552);
        let celsius = |k: Key| f64::from(k) / 100.0 - 39.6;
        // 21 +- 3.5 +- 2, and a walk well inside 1.5 degrees.
        assert!(keys.iter().all(|&k| (14.0..28.0).contains(&celsius(k))));
        let rounds = 150_552 / 54;
        let half = rounds / 2;
        let mean = |from: usize, to: usize| {
            let slice = &keys[from * 54..to * 54];
            slice.iter().map(|&k| celsius(k)).sum::<f64>() / slice.len() as f64
        };
        let (warm, cold) = (mean(0, half), mean(half, rounds));
        let swing = warm - cold;
        assert!(
            (3.5..5.4).contains(&swing),
            "day halves differ by {swing} degrees"
        );
        assert!(
            (20.0..22.0).contains(&((warm + cold) / 2.0)),
            "{warm} {cold}"
        );
        // The first round is at t = 0: each mote reads 21 degrees plus its offset and one
        // step of its walk.
        let first: Vec<f64> = keys[..54].iter().map(|&k| celsius(k) - 21.0).collect();
        assert!(first.iter().all(|d| d.abs() < 2.06), "{first:?}");
        let motes: Vec<f64> = (0..54)
            .map(|m| {
                keys[m..]
                    .iter()
                    .step_by(54)
                    .map(|&k| celsius(k))
                    .sum::<f64>()
                    / rounds as f64
            })
            .collect();
        let lo = motes.iter().copied().fold(f64::MAX, f64::min);
        let hi = motes.iter().copied().fold(f64::MIN, f64::max);
        assert!(
            (2.5..5.5).contains(&(hi - lo)),
            "mote means from {lo} to {hi}"
        );
        let at = |round: usize, mote: usize| celsius(keys[round * 54 + mote]);
        let step = (0..rounds - 1)
            .map(|r| (at(r + 1, 0) - at(r, 0)).abs())
            .fold(0.0, f64::max);
        assert!(
            step < 0.07,
            "one mote's reading moves at most {step} degrees in 31 s"
        );
        // The stream itself is pinned (the walk's steps and the offsets are symmetric, so a
        // change of sign keeps every statistic above): a change that alters it changes the
        // macro-benchmark's figures, and updates this constant deliberately.
        let mut h = flashkit_core::StateHasher::new();
        h.u32s(&keys);
        assert_eq!(
            h.finish(),
            0x084f_47ca_8531_ba36,
            "new fingerprint of the stream: {:#x}",
            h.finish()
        );
    }

    /// A fingerprint of every counter of every phase.
    fn fingerprint(report: &MicroReport) -> u64 {
        let mut h = flashkit_core::StateHasher::new();
        for p in &report.phases {
            h.counters(&p.counters);
            p.probes.hash_state(&mut h);
        }
        h.finish()
    }

    /// The smoke run's figures are pinned: a change that makes the simulator faster must not
    /// change what it simulates. A deliberate change of behaviour updates the constants (the
    /// failure message prints the new ones).
    #[test]
    fn smoke_figures_are_pinned() {
        let spec = MicroSpec {
            keys: 500,
            updates: 4_000,
            queries: 1_000,
            boot_trials: 1,
            ..MicroSpec::default()
        };
        let geometry = NorGeometry::new(4096, 16).expect("valid");
        let pinned = [
            (Structure::FatList, PINNED_FAT),
            (Structure::SoftList, PINNED_SOFT),
            (Structure::MuTree, PINNED_MU),
        ];
        let mut got = Vec::new();
        let mut hashes = Vec::new();
        for (structure, _) in pinned {
            let mut index = IndexSpec::new(structure, 3).build(geometry).expect("build");
            let report = micro(index.as_mut(), NorPreset::K8C1215.timing, &spec).expect("runs");
            got.push(fingerprint(&report));
            hashes.push(report.state_hash);
        }
        let want: Vec<u64> = pinned.iter().map(|p| p.1).collect();
        assert_eq!(got, want, "new fingerprints (fat, soft, mu): {got:#x?}");
        // The state at the end: the flash word for word and what RAM keeps.
        assert_eq!(
            hashes,
            ["f59f46f48bef4d46", "84b6ced08c7ca589", "98ef9a94d3753347"],
            "new state hashes (fat, soft, mu)"
        );
    }

    #[test]
    fn sensor_streams_repeat_values() {
        let spec = SensorSpec {
            readings: 5_000,
            ..SensorSpec::default()
        };
        let keys = sensor_keys(&spec);
        let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
        assert!(distinct.len() < keys.len() / 2, "temperatures repeat");
        let geometry = NorGeometry::new(4096, 16).expect("valid");
        let mut index = IndexSpec::new(Structure::FatList, 1)
            .build(geometry)
            .expect("build");
        let report = sensor(index.as_mut(), NorPreset::K8C1215.timing, &spec, &[50]).expect("runs");
        assert_eq!(report.distinct_keys, distinct.len() as u64);
        assert!(report.pairs_returned > 0);
    }

    #[test]
    fn bad_workload_parameters_are_config_errors() {
        // Found by the CLI's bad-input sweep: no readings panicked on an empty key range,
        // and a huge spread redrew Gaussian keys forever.
        let geometry = NorGeometry::new(4096, 16).expect("valid");
        let mut index = IndexSpec::new(Structure::FatList, 1)
            .build(geometry)
            .expect("build");
        let none = SensorSpec {
            readings: 0,
            ..SensorSpec::default()
        };
        let error = sensor(index.as_mut(), NorPreset::K8C1215.timing, &none, &[5]);
        assert!(
            matches!(
                error,
                Err(IndexError::Config {
                    field: "readings",
                    ..
                })
            ),
            "{error:?}"
        );
        // No keys with updates or queries to draw drew forever; with neither, the run is
        // empty.
        for (updates, queries) in [(1, 0), (0, 1)] {
            let spec = MicroSpec {
                keys: 0,
                updates,
                queries,
                ..MicroSpec::default()
            };
            let error = micro(index.as_mut(), NorPreset::K8C1215.timing, &spec);
            assert!(
                matches!(error, Err(IndexError::Config { field: "keys", .. })),
                "{error:?}"
            );
        }
        let empty = MicroSpec {
            keys: 0,
            updates: 0,
            queries: 0,
            boot_trials: 0,
            ..MicroSpec::default()
        };
        micro(index.as_mut(), NorPreset::K8C1215.timing, &empty).expect("an empty run");
        for spread in [0.0, -1.0, f64::NAN, 1e300] {
            let spec = MicroSpec {
                keys: 10,
                updates: 10,
                queries: 10,
                spread,
                ..MicroSpec::default()
            };
            let error = micro(index.as_mut(), NorPreset::K8C1215.timing, &spec);
            assert!(
                matches!(
                    error,
                    Err(IndexError::Config {
                        field: "spread",
                        ..
                    })
                ),
                "{spread}: {error:?}"
            );
        }
    }

    #[test]
    fn structures_parse() {
        for s in Structure::ALL {
            assert_eq!(s.to_string().parse::<Structure>(), Ok(s));
        }
        assert!("btree".parse::<Structure>().is_err());
    }
}
