//! The flash models as a calculator: a sort's exact schedule and volumes in every I/O mode
//! (the mergesort's schedule does not depend on the data), and the bounds of the paper's
//! lemmas for sorting, BFS, DFS, B-tree search and priority queues.

use super::{ModelParams, em_error, gb, kinds, records_bytes};
use crate::repro::LabError;
use flashkit_core::units::format_size;
use flashkit_em::io::IoStats;
use flashkit_em::model::{Cost, FlashModel};
use flashkit_em::record::RecordKind;
use flashkit_em::sort::files::IoMode;
use flashkit_em::sort::{FanIn, Plan};
use flashkit_report::Table;
use serde::{Deserialize, Serialize};

/// What to predict: a sort of `records` records, and a graph of `vertices` vertices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSpec {
    /// Records to sort.
    pub records: u64,
    /// Their type.
    #[serde(with = "kinds::RecordKindDef")]
    pub record: RecordKind,
    /// Vertices of the graph of the BFS and DFS bounds (4-byte ids: at most 2^32).
    pub vertices: u64,
    /// The model.
    pub params: ModelParams,
}

impl Default for ModelSpec {
    /// 2^28 u32 records (1 GiB) and a graph of 2^22 vertices, under the paper's SSD.
    fn default() -> Self {
        ModelSpec {
            records: 1 << 28,
            record: RecordKind::U32,
            vertices: 1 << 22,
            params: ModelParams::default(),
        }
    }
}

/// One I/O mode's sort: its schedule, the I/O reaching the device, and that I/O's cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModePrediction {
    /// The mode.
    pub mode: IoMode,
    /// The schedule (the model's fan-in).
    pub plan: Plan,
    /// The I/O at the device (under the translation layer, writes of whole `B_w` blocks).
    pub io: IoStats,
    /// Its cost under both models.
    pub cost: Cost,
}

/// The bounds with every constant 1: how costs scale, not what a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bounds {
    /// Lemma 3's sorting bound `N log_(M/B_r)(N/B_r)`, bytes.
    pub sort_bytes: f64,
    /// The same merging `M/B_w` ways.
    pub sort_bytes_with_b_w: f64,
    /// BFS's cluster parameter `mu` with `B_r` blocks.
    pub bfs_mu_br: u64,
    /// ... and with `B_w` blocks.
    pub bfs_mu_bw: u64,
    /// Lemma 4's BFS bound, bytes.
    pub bfs_bytes: f64,
    /// DFS on `2|V|` edges: `|E| B_r + |V| B_w`, bytes.
    pub dfs_bytes: u64,
    /// ... with `B_w` blocks only.
    pub dfs_bytes_with_b_w: u64,
    /// B-tree search over `records` 16-byte entries, two-level layout, bytes.
    pub btree_two_level_bytes: f64,
    /// ... a B-tree of `B_w` nodes, bytes.
    pub btree_b_w_bytes: f64,
    /// Priority queue of `records` 8-byte items, amortised bytes an operation: merging.
    pub pq_merging_bytes: f64,
    /// ... distributing.
    pub pq_distributing_bytes: f64,
}

/// The calculator's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelReport {
    /// What was asked.
    pub spec: ModelSpec,
    /// The model.
    pub model: FlashModel,
    /// The sort's input, bytes.
    pub input_bytes: u64,
    /// The sort in every mode, in [`IoMode::ALL`]'s order.
    pub modes: Vec<ModePrediction>,
    /// The lemmas' bounds.
    pub bounds: Bounds,
}

/// The figures of `spec`, or the field at fault.
pub fn predict(spec: &ModelSpec) -> Result<ModelReport, LabError> {
    let model = spec.params.model()?;
    let v = spec.vertices;
    if v > 1 << 32 {
        return Err(LabError::spec(
            "vertices",
            format!("{v} is more than 4-byte vertex ids can number (2^32)"),
        ));
    }
    if v == 0 {
        return Err(LabError::spec(
            "vertices",
            "0: the BFS and DFS predictions need a graph of one vertex or more",
        ));
    }
    let input_bytes = records_bytes(spec.records, spec.record)?;
    let mut modes = Vec::new();
    for mode in IoMode::ALL {
        let sizes = mode.algorithm_sizes(model.sizes);
        let plan = Plan::new(
            spec.records,
            spec.record.bytes(),
            sizes,
            model.memory_bytes,
            FanIn::Model,
        )
        .map_err(em_error)?;
        let io = mode.device_prediction(&plan, model.sizes);
        let cost = model.cost(&io);
        modes.push(ModePrediction {
            mode,
            plan,
            io,
            cost,
        });
    }
    let (dfs_bytes, dfs_bytes_with_b_w) = model.dfs_bytes(v, 2 * v);
    let (btree_two_level_bytes, btree_b_w_bytes) = model.btree_search_bytes(spec.records, 16);
    let (pq_merging_bytes, pq_distributing_bytes) = model.pq_bytes_per_op(spec.records, 8);
    let bounds = Bounds {
        sort_bytes: model.sort_bound_bytes(input_bytes),
        sort_bytes_with_b_w: model.sort_bound_bytes_with_b_w(input_bytes),
        bfs_mu_br: model.bfs_mu(v, model.sizes.read_bytes, 4),
        bfs_mu_bw: model.bfs_mu(v, model.sizes.write_bytes, 4),
        bfs_bytes: model.bfs_bound_items(v, 4) * 4.0,
        dfs_bytes,
        dfs_bytes_with_b_w,
        btree_two_level_bytes,
        btree_b_w_bytes,
        pq_merging_bytes,
        pq_distributing_bytes,
    };
    Ok(ModelReport {
        spec: spec.clone(),
        model,
        input_bytes,
        modes,
        bounds,
    })
}

impl ModelReport {
    /// The sort in every mode: schedule, volumes in GB, I/Os and costs.
    pub fn table(&self) -> Table {
        let mut table = Table::new([
            "mode",
            "runs",
            "fan-in",
            "passes",
            "RDV [GB]",
            "WRV [GB]",
            "read I/Os",
            "write I/Os",
            "general x+cy",
            "unit [GB]",
        ]);
        for m in &self.modes {
            table.push([
                m.mode.name().to_string(),
                m.plan.runs.to_string(),
                m.plan.fan_in.to_string(),
                m.plan.merge_passes().to_string(),
                gb(m.io.read_bytes),
                gb(m.io.write_bytes),
                m.io.read_ios.to_string(),
                m.io.write_ios.to_string(),
                format!("{:.0}", m.cost.general),
                gb(m.cost.unit_bytes),
            ]);
        }
        table
    }

    /// The model's line, the table, and the bounds, as `flashkit em model` prints them.
    pub fn render(&self) -> String {
        let (m, s, b) = (&self.model, &self.spec, &self.bounds);
        let mut out = format!(
            "flash model: M = {}, B_r = {}, B_w = {}, c = {}; sorting {} {} records ({} GB)\n",
            format_size(m.memory_bytes),
            format_size(m.sizes.read_bytes),
            format_size(m.sizes.write_bytes),
            m.write_penalty,
            s.records,
            s.record.name(),
            gb(self.input_bytes)
        );
        out += "\nmultiway mergesort (exact: the schedule does not depend on the data)\n";
        out += &self.table().render();
        out += &format!(
            "Lemma 3 bound N log_(M/B_r)(N/B_r): {} GB; merging M/B_w ways instead: {} GB\n",
            gb(b.sort_bytes as u64),
            gb(b.sort_bytes_with_b_w as u64)
        );
        let v = s.vertices;
        out += "\nbounds with every constant 1 (how costs scale, not what a run measures):\n";
        out += &format!(
            "BFS on {v} vertices (4-byte ids): mu = {} with B_r, {} with B_w; Lemma 4: {} GB\n",
            b.bfs_mu_br,
            b.bfs_mu_bw,
            gb(b.bfs_bytes as u64)
        );
        out += &format!(
            "DFS on {v} vertices, {} edges: |E| B_r + |V| B_w = {} GB; with B_w blocks {} GB\n",
            2 * v,
            gb(b.dfs_bytes),
            gb(b.dfs_bytes_with_b_w)
        );
        out += &format!(
            "B-tree search over {} entries: two-level {} KiB, B_w-node B-tree {} KiB\n",
            s.records,
            (b.btree_two_level_bytes / 1024.0).round(),
            (b.btree_b_w_bytes / 1024.0).round()
        );
        out += &format!(
            "priority queue, amortised bytes per operation: merging {:.1}, distributing \
             {:.1}\n",
            b.pq_merging_bytes, b.pq_distributing_bytes
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> ModelSpec {
        ModelSpec {
            records: 1 << 20,
            record: RecordKind::U64,
            vertices: 1 << 10,
            params: ModelParams {
                memory: 1 << 20,
                br: 4 << 10,
                bw: 64 << 10,
                c: 3.0,
            },
        }
    }

    #[test]
    fn every_mode_gets_the_exact_schedule_and_its_cost() {
        let report = predict(&small()).expect("valid");
        assert_eq!(report.input_bytes, 8 << 20);
        let modes: Vec<IoMode> = report.modes.iter().map(|m| m.mode).collect();
        assert_eq!(modes, IoMode::ALL);
        for m in &report.modes {
            // One read and one write of the input a pass: run formation and each merge.
            let passes = 1 + m.plan.merge_passes() as u64;
            assert!(m.io.read_bytes >= passes * report.input_bytes, "{m:?}");
            assert_eq!(m.cost.read_ios, m.io.read_ios);
            assert_eq!(
                m.cost.general,
                m.io.read_ios as f64 + 3.0 * m.io.write_ios as f64
            );
        }
        let tl = &report.modes[0];
        assert_eq!(tl.io.write_ios, tl.io.write_bytes.div_ceil(64 << 10));
        let table = report.table();
        assert_eq!(table.rows.len(), 4);
        assert_eq!(table.rows[3][0], "flash");
        assert!(report.bounds.bfs_mu_br <= report.bounds.bfs_mu_bw);
        assert!(report.bounds.sort_bytes > 0.0);
        let text = report.render();
        assert!(text.starts_with("flash model: M = 1MiB, B_r = 4KiB, B_w = 64KiB, c = 3"));
        assert!(text.contains("DFS on 1024 vertices, 2048 edges"), "{text}");
    }

    /// Every figure is the model's own, computed here again from the model; the table and
    /// the text read them.
    #[test]
    fn the_figures_are_the_models_own_and_the_text_reads_them() {
        let spec = small();
        let report = predict(&spec).expect("valid");
        let model = spec.params.model().expect("valid");
        let (v, n) = (spec.vertices, spec.records);
        let input = n * 8;
        let (dfs, dfs_bw) = model.dfs_bytes(v, 2 * v);
        let (two_level, b_w_tree) = model.btree_search_bytes(n, 16);
        let (merging, distributing) = model.pq_bytes_per_op(n, 8);
        let b = report.bounds;
        assert_eq!(
            b,
            Bounds {
                sort_bytes: model.sort_bound_bytes(input),
                sort_bytes_with_b_w: model.sort_bound_bytes_with_b_w(input),
                bfs_mu_br: model.bfs_mu(v, 4 << 10, 4),
                bfs_mu_bw: model.bfs_mu(v, 64 << 10, 4),
                bfs_bytes: model.bfs_bound_items(v, 4) * 4.0,
                dfs_bytes: dfs,
                dfs_bytes_with_b_w: dfs_bw,
                btree_two_level_bytes: two_level,
                btree_b_w_bytes: b_w_tree,
                pq_merging_bytes: merging,
                pq_distributing_bytes: distributing,
            }
        );
        let rows = report.table().rows;
        for (m, row) in report.modes.iter().zip(&rows) {
            let plan = Plan::new(
                n,
                8,
                m.mode.algorithm_sizes(model.sizes),
                1 << 20,
                FanIn::Model,
            )
            .expect("valid");
            let io = m.mode.device_prediction(&plan, model.sizes);
            assert_eq!((&m.plan, m.io, m.cost), (&plan, io, model.cost(&io)));
            assert_eq!(
                *row,
                [
                    m.mode.name().to_string(),
                    plan.runs.to_string(),
                    plan.fan_in.to_string(),
                    plan.merge_passes().to_string(),
                    gb(io.read_bytes),
                    gb(io.write_bytes),
                    io.read_ios.to_string(),
                    io.write_ios.to_string(),
                    format!("{:.0}", m.cost.general),
                    gb(m.cost.unit_bytes),
                ]
            );
        }
        let text = report.render();
        for line in [
            format!("sorting {n} u64 records ({} GB)\n", gb(input)),
            format!(
                "Lemma 3 bound N log_(M/B_r)(N/B_r): {} GB; merging M/B_w ways instead: {} GB\n",
                gb(b.sort_bytes as u64),
                gb(b.sort_bytes_with_b_w as u64)
            ),
            format!(
                "BFS on {v} vertices (4-byte ids): mu = {} with B_r, {} with B_w; Lemma 4: {} \
                 GB\n",
                b.bfs_mu_br,
                b.bfs_mu_bw,
                gb(b.bfs_bytes as u64)
            ),
            format!(
                "DFS on {v} vertices, {} edges: |E| B_r + |V| B_w = {} GB; with B_w blocks {} \
                 GB\n",
                2 * v,
                gb(dfs),
                gb(dfs_bw)
            ),
            format!(
                "B-tree search over {n} entries: two-level {} KiB, B_w-node B-tree {} KiB\n",
                (two_level / 1024.0).round(),
                (b_w_tree / 1024.0).round()
            ),
            format!("merging {merging:.1}, distributing {distributing:.1}\n"),
        ] {
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        assert!(text.contains(&report.table().render()));
        // The graph's bounds: one vertex to 2^32.
        for vertices in [1, 1 << 32] {
            predict(&ModelSpec {
                vertices,
                ..small()
            })
            .expect("a graph the ids can number");
        }
        assert!(
            predict(&ModelSpec {
                vertices: (1 << 32) + 1,
                ..small()
            })
            .is_err()
        );
    }

    #[test]
    fn a_spec_reads_with_defaults_and_refuses_unknown_fields() {
        let spec: ModelSpec =
            serde_json::from_str(r#"{"record": "kv16", "params": {"c": 2.0}}"#).expect("valid");
        assert_eq!(spec.record, RecordKind::KeyPayload);
        assert_eq!(spec.records, 1 << 28);
        assert_eq!(spec.params.memory, 512 << 20);
        assert!(serde_json::from_str::<ModelSpec>(r#"{"nodes": 3}"#).is_err());
        let round: ModelSpec =
            serde_json::from_value(serde_json::to_value(&spec).expect("serializes"))
                .expect("round trip");
        assert_eq!(round, spec);
    }

    #[test]
    fn impossible_graphs_and_inputs_name_their_field() {
        for (spec, field) in [
            (
                ModelSpec {
                    vertices: 0,
                    ..small()
                },
                "vertices",
            ),
            (
                ModelSpec {
                    vertices: 1 << 40,
                    ..small()
                },
                "vertices",
            ),
            (
                ModelSpec {
                    records: 1 << 62,
                    ..small()
                },
                "records",
            ),
        ] {
            match predict(&spec) {
                Err(LabError::Spec { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{other:?}"),
            }
        }
    }
}
