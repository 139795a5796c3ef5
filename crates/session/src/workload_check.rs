//! `scalebench workload check FILE [--db URL]`: a workload file checked as every command checks
//! it, before anything connects; with a database URL, also the binding's options and what it
//! makes of the record.

use std::path::Path;

use scalebench_exec::Phase;
use scalebench_workload::file::WorkloadFile;
use scalebench_workload::{CoreWorkload, Properties};

use crate::error::SessionError;
use crate::request::RunRequest;
use crate::settings::Settings;

/// A checked workload file: what it declares and the properties it sets.
#[derive(Debug, Clone)]
pub struct CheckedWorkload {
    pub file: WorkloadFile,
    /// The properties the file sets, in order (`columns` abbreviated).
    pub properties: Vec<(String, String)>,
    pub workload: CoreWorkload,
    /// The binding `--db` picks, when given.
    pub binding: Option<&'static str>,
    /// What `load` and `run` of the file on that binding would warn about, in that order, each
    /// once (issue 63: `check --db redis` said "ok" and the load warned a second later).
    pub warnings: Vec<String>,
    /// Which operations run their key_value alternative on that binding, one line each.
    pub alternatives: Vec<String>,
}

/// Checks `path` (and, with `db`, a load and a run of it on that database's binding) without
/// connecting to anything.
/// `allow_files` are directories besides the file's own whose files it may name.
pub fn check_workload_file(
    path: &Path,
    db: Option<&str>,
    allow_files: &[std::path::PathBuf],
) -> Result<CheckedWorkload, SessionError> {
    let access = scalebench_workload::dictionary::FileAccess::new(allow_files.to_vec())
        .map_err(SessionError::Usage)?;
    let file = WorkloadFile::read_with(path, &access)?;
    let properties = file
        .properties()
        .into_iter()
        .map(|(k, v)| {
            let shown = scalebench_workload::dictionary::shown_value(&k, &v).into_owned();
            (k, shown)
        })
        .collect();
    let mut props = Properties::new();
    file.apply(&mut props, &path.display().to_string());
    let workload = CoreWorkload::from_properties(&props)?;
    let mut request = RunRequest::new(&path.display().to_string());
    request.db = db.map(str::to_string);
    request.allow_files = allow_files.to_vec();
    // Without --db, as on the null binding: the run's own checks (a rate profile needs a
    // duration, ...) still apply.
    for phase in [Phase::Load, Phase::Run] {
        Settings::check(&request, None, phase)?;
    }
    let mut warnings: Vec<String> = Vec::new();
    let (binding, alternatives) = match db {
        Some(_) => {
            for phase in [Phase::Load, Phase::Run] {
                for w in Settings::checked(&request, None, phase)?.phase_warnings() {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
            }
            let run = Settings::checked(&request, None, Phase::Run)?;
            (Some(run.binding.name), run.alternatives)
        }
        None => (None, Vec::new()),
    };
    Ok(CheckedWorkload {
        file,
        properties,
        workload,
        binding,
        warnings,
        alternatives,
    })
}
