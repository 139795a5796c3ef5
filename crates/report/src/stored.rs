//! What the results store returns and the experiment page reads: stored runs, elastic transitions,
//! Dory's stable sizes, and the swept parameters both know by name. Plain rows: the session's store
//! reads and writes them (SQLite), this crate draws them.

/// The swept parameter that names a run's data size (`[[data]]`).
pub const DATA_SIZE: &str = "data";

/// The sweep key that redeploys each database's cluster at every size (Swaminathan's scaling
/// analysis: cluster size as an axis, everything else held equal).
pub const CLUSTER_SIZE: &str = "nodes";

/// A stored run, as `results list` and the statistics read it.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub cell: String,
    pub repetition: u32,
    /// The cell's parts, as its columns hold them.
    pub database: String,
    pub configuration: String,
    pub workload: String,
    /// Swept parameter -> value.
    pub params: std::collections::BTreeMap<String, String>,
    pub status: String,
    pub error: Option<String>,
    pub throughput_ops_s: Option<f64>,
    /// Operations of the measured phase that succeeded and that failed.
    pub ok: Option<u64>,
    pub failed: Option<u64>,
    pub bounded_by: Option<String>,
    pub client_bound: bool,
    /// What a record added on disk: after the measured phase's steps (a load's: settled, unless
    /// not compacted).
    pub bytes_per_record: Option<f64>,
    /// A measured load's figure as inserted (flushed, not compacted): Lourenco's.
    pub bytes_per_record_as_inserted: Option<f64>,
    pub result: Option<String>,
}

/// A stored elastic transition.
#[derive(Debug, Clone)]
pub struct ElasticRow {
    pub cell: String,
    pub repetition: u32,
    pub action: String,
    pub nodes_before: i64,
    pub nodes_after: i64,
    pub stabilisation_s: Option<f64>,
    pub elasticity: Option<f64>,
    /// JSON.
    pub events: String,
    /// The step of its run (1 unless the run had several).
    pub step: u32,
    /// The event against the experiment's service level (JSON), when it has one.
    pub verdict: Option<String>,
}

/// A cell's elastic transitions of one step, averaged over its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMeans {
    pub step: u32,
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub stabilisation_s: Option<f64>,
    pub elasticity: Option<f64>,
    pub never_stable: u64,
    /// (met, judged) against the service level, when the experiment gives one.
    pub service_level: Option<(u64, u64)>,
}

/// A cell's stable size, averaged over its repetitions (Dory's performance table).
#[derive(Debug, Clone, PartialEq)]
pub struct SizeMeans {
    pub nodes: usize,
    pub records: u64,
    pub in_flight: u64,
    pub set_size: u64,
    pub mean_s: f64,
    pub sd_s: f64,
    pub scalability: Option<f64>,
    pub runs: u64,
}
