//! Space on disk a deployment takes, as a result records it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Bytes on disk of a deployment, as `du` counts them (allocated blocks, hard links once).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Space {
    /// `after load` or `after run`.
    pub taken: String,
    /// How the files were brought to rest before they were measured (after a load); absent when
    /// nothing was done first (after a run, `cluster space`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<SpaceState>,
    pub total_bytes: u64,
    /// Total by kind over all nodes (see `NodeSpace::parts`).
    pub parts: BTreeMap<String, u64>,
    /// Records the database holds (load: records loaded; run: plus successful inserts).
    pub records: u64,
    /// `total_bytes / records`, when there are records: fixed overhead included (preallocated
    /// commit-log segments, WAL, system tables), which dominates small data sets.
    pub bytes_per_record: Option<f64>,
    pub nodes: Vec<NodeSpace>,
    /// After a load: what its records added, measured against the space before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marginal: Option<MarginalSpace>,
    /// A settled load's space as the insertion left it: measured after the flush, before the
    /// compaction (Lourenco's measure). Its own `marginal` is against the same space before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_inserted: Option<Box<Space>>,
}

/// What was done to a deployment's files before their space was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpaceState {
    /// Flushed, not compacted: what the servers held in memory (memtables, dirty buffers, the
    /// dataset) written to their files, which then hold the records as inserted.
    AsInserted,
    /// Flushed and compacted (major compaction, VACUUM, AOF rewrite, as the database has it).
    Settled,
}

impl SpaceState {
    /// How the state reads in a sentence.
    pub fn phrase(self) -> &'static str {
        match self {
            SpaceState::AsInserted => "as inserted (flushed, not compacted)",
            SpaceState::Settled => "settled (flushed and compacted)",
        }
    }
}

/// The parts of a database's files that hold its records (the others: its log, its own tables).
pub const RECORD_PARTS: [&str; 2] = ["data", "index"];

/// The space a load's records added: measured before the load (the emptied table and the
/// database's own files, flushed) and after it, so fixed overhead cancels out.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MarginalSpace {
    pub before_bytes: u64,
    pub before_parts: BTreeMap<String, u64>,
    /// The records the load wrote.
    pub records: u64,
    /// What a record costs: the growth of the parts that hold records (`data`, `index`: the
    /// benchmark table's rows, its indexes and per-record metadata such as bloom filters), per
    /// record (Lourenco's "data + metadata + indexes", studies.md section 4); the log, the
    /// database's own files (`system`) and other tables are left out.
    pub bytes_per_record: Option<f64>,
    /// Each part's growth per record, the log included.
    pub parts_per_record: BTreeMap<String, f64>,
}

impl MarginalSpace {
    /// The growth from `before` to `after`, over `records` records.
    pub fn between(before: &Space, after: &Space, records: u64) -> MarginalSpace {
        let per = |grown: f64| (records > 0).then(|| grown / records as f64);
        let parts: std::collections::BTreeSet<&String> =
            before.parts.keys().chain(after.parts.keys()).collect();
        let growth = |part: &str| {
            after.parts.get(part).copied().unwrap_or(0) as f64
                - before.parts.get(part).copied().unwrap_or(0) as f64
        };
        let records_parts: f64 = RECORD_PARTS.iter().map(|p| growth(p)).sum();
        MarginalSpace {
            before_bytes: before.total_bytes,
            before_parts: before.parts.clone(),
            records,
            bytes_per_record: per(records_parts),
            parts_per_record: parts
                .iter()
                .filter_map(|p| Some(((*p).clone(), per(growth(p))?)))
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NodeSpace {
    pub node: String,
    /// The data directory measured.
    pub dir: String,
    pub bytes: u64,
    /// Disjoint parts that add up to `bytes`: `data`, `index`, `log` (commit log, WAL, AOF),
    /// `system` (the database's own tables), `other`, as far as the database's files tell.
    pub parts: BTreeMap<String, u64>,
}

impl Space {
    /// What a record costs on disk: the load's marginal bytes per record when it was measured (fixed
    /// overhead cancelled out), else the total over the records.
    pub fn per_record(&self) -> Option<f64> {
        match &self.marginal {
            Some(m) => m.bytes_per_record,
            None => self.bytes_per_record,
        }
    }

    /// What a record added as the insertion left it (flushed, not compacted): this space's own
    /// figure when it was measured so (`--no-compact`), else its `as_inserted` one's.
    pub fn as_inserted_per_record(&self) -> Option<f64> {
        match self.state {
            Some(SpaceState::AsInserted) => self.per_record(),
            _ => self.as_inserted.as_ref().and_then(|s| s.per_record()),
        }
    }

    /// Sums the nodes' figures.
    pub fn from_nodes(taken: &str, nodes: Vec<NodeSpace>, records: u64) -> Space {
        let mut parts = BTreeMap::new();
        for n in &nodes {
            for (k, v) in &n.parts {
                *parts.entry(k.clone()).or_insert(0) += v;
            }
        }
        let total_bytes = nodes.iter().map(|n| n.bytes).sum();
        Space {
            taken: taken.to_string(),
            state: None,
            total_bytes,
            parts,
            records,
            bytes_per_record: (records > 0).then(|| total_bytes as f64 / records as f64),
            nodes,
            marginal: None,
            as_inserted: None,
        }
    }
}
