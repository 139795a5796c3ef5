//! The report page of a result file, an elastic result or an experiment in a results database:
//! what `scalebench report` writes, built from the file's typed contents.

use std::path::Path;

use scalebench_measure::RunResult;
use scalebench_report::experiment_page::ExperimentData;
use scalebench_report::html::Page;
use scalebench_report::run_page::{run_banners, run_sections, RunExtras};

use crate::elastic::ElasticResult;
use crate::experiment::store::Store;
use crate::experiment::{cells, discard_first_of};
use scalebench_session::error::SessionError;

/// A result file (JSON) as a run; bad input (exit 2) when it is none.
pub fn read_result(path: &Path) -> Result<RunResult, SessionError> {
    RunResult::read(path).map_err(|e| SessionError::Usage(e.to_string()))
}

/// The page of `input`: a results database (SQLite; `experiment` chooses among several), an
/// elastic result, a saturation search or a run result.
pub fn page_of(input: &Path, experiment: Option<&str>) -> Result<Page, SessionError> {
    let mut head = [0u8; 16];
    // Sniffed only in a regular file: opening a FIFO blocks until a writer comes (the bounded read
    // below refuses anything else, naming it).
    let regular = std::fs::metadata(input).is_ok_and(|m| m.is_file());
    let is_sqlite = regular
        && std::fs::File::open(input)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
        && head.starts_with(b"SQLite format 3");
    if is_sqlite {
        return experiment_page(input, experiment);
    }
    let text = scalebench_measure::files::read_bounded(
        input,
        scalebench_measure::result::MAX_RESULT_BYTES,
    )
    .map_err(|e| SessionError::Usage(format!("{}: {e}", input.display())))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        SessionError::Usage(format!("{}: not a result file ({e})", input.display()))
    })?;
    if json["schema"] == crate::elastic::SCHEMA {
        let result: ElasticResult = serde_json::from_value(json)
            .map_err(|e| SessionError::Usage(format!("{}: {e}", input.display())))?;
        return Ok(scalebench_report::elastic_page::titled(&result));
    }
    if json["schema"]
        .as_str()
        .is_some_and(scalebench_measure::saturation::is_search_schema)
    {
        let search: scalebench_measure::saturation::Search = serde_json::from_value(json)
            .map_err(|e| SessionError::Usage(format!("{}: {e}", input.display())))?;
        return Ok(scalebench_report::saturation_page::titled(&search));
    }
    let r = RunResult::from_json(&text)
        .map_err(|e| SessionError::Usage(format!("{}: {e}", input.display())))?;
    let title = run_title(&r);
    Ok(result_page(&r, title))
}

/// A run's page title: its workload and database (the URL as the result keeps it, without a
/// password), never the path of the file it was read from.
pub fn run_title(r: &RunResult) -> String {
    let p = &r.parameters;
    format!("scalebench: workload {} on {}", p.workload, p.db)
}

/// A run's (or load's, or merged run's) page.
pub fn result_page(r: &RunResult, title: String) -> Page {
    Page {
        title,
        banners: run_banners(r),
        sections: run_sections(r, "run", &RunExtras::default()),
    }
}

/// `--report FILE` of a run: its page written; returns how many charts it drew.
pub fn write_run_page(r: &RunResult, output: &Path) -> Result<usize, SessionError> {
    write_page(&result_page(r, run_title(r)), output, None)
}

/// Writes `page` to `output` (HTML, atomically) and each chart's data as `csv_dir/<chart>.csv`;
/// returns how many charts it drew.
pub fn write_page(
    page: &Page,
    output: &Path,
    csv_dir: Option<&Path>,
) -> Result<usize, SessionError> {
    let drawn: Vec<_> = page.charts().filter(|c| !c.is_empty()).collect();
    if let Some(dir) = csv_dir {
        for c in &drawn {
            scalebench_session::files::write_atomically(
                &dir.join(format!("{}.csv", c.id)),
                &c.csv(),
            )?;
        }
    }
    scalebench_session::files::write_atomically(output, &page.html())?;
    Ok(drawn.len())
}

/// An experiment's page: its data read through the results store.
fn experiment_page(input: &Path, experiment: Option<&str>) -> Result<Page, SessionError> {
    Ok(scalebench_report::experiment_page::page(&read_experiment(
        input, experiment,
    )?))
}

/// An experiment as the results store holds it (`experiment` chooses among several).
fn read_experiment(input: &Path, experiment: Option<&str>) -> Result<ExperimentData, SessionError> {
    let store = Store::open_read_only(input).map_err(SessionError::Usage)?;
    let names: Vec<String> = store
        .experiments()
        .map_err(SessionError::Failed)?
        .into_iter()
        .map(|e| e.0)
        .collect();
    let name = match (experiment, names.as_slice()) {
        (Some(n), _) => n.to_string(),
        (None, [only]) => only.clone(),
        (None, _) => {
            return Err(SessionError::Usage(format!(
                "{} holds {} experiments ({}): choose one with --experiment",
                input.display(),
                names.len(),
                names.join(", ")
            )))
        }
    };
    let discard = discard_first_of(&store, &name);
    let cells = cells(&store, &name, discard)?;
    let runs = store.runs(&name, true).map_err(SessionError::Failed)?;
    let results = runs
        .iter()
        .filter(|r| r.status == "ok")
        .filter_map(|r| {
            let json = r.result.as_ref()?;
            Some((
                r.cell.clone(),
                r.repetition,
                serde_json::from_str(json).ok()?,
            ))
        })
        .collect();
    let elastic = store.elastic_runs(&name).map_err(SessionError::Failed)?;
    let sizes = cells
        .iter()
        .map(|c| (c.cell.clone(), store.size_means(&name, &c.cell, discard)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    Ok(ExperimentData {
        name,
        discard,
        cells,
        runs,
        results,
        elastic,
        sizes,
    })
}

/// Where a command whose result is one JSON document (saturate, elastic) puts it.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonOutputs<'a> {
    /// `--output`: the result.
    pub output: Option<&'a Path>,
    /// `--report`: its page.
    pub report: Option<&'a Path>,
    /// `--metrics-listen`: served while the work runs.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--ycsb-load`: refused (such a command has no load phase's text).
    pub ycsb_load: Option<&'a Path>,
}

/// Such a command: its output paths checked first (`files`: what it reads and writes), its live
/// metrics served while `work` runs `request`, the result written to `--output` and its `page`
/// to `--report`; the result, and what to say of the page written.
pub fn with_json_output<Q, T: serde::Serialize>(
    outputs: JsonOutputs,
    files: scalebench_session::outputs::CommandFiles,
    request: Q,
    work: impl FnOnce(&Q, &scalebench_session::wiring::RunWiring) -> Result<T, SessionError>,
    page: &dyn Fn(&T) -> Page,
) -> Result<(T, Option<String>), SessionError> {
    scalebench_session::outputs::check_ycsb_load(outputs.ycsb_load, false)?;
    files.check()?;
    let (_metrics, wiring) = scalebench_session::wiring::serve_metrics(outputs.metrics_listen)?;
    let result = work(&request, &wiring)?;
    if let Some(path) = outputs.output {
        scalebench_session::files::write_json(path, &result)?;
    }
    let said = match outputs.report {
        Some(path) => {
            let charts = write_page(&page(&result), path, None)?;
            Some(format!(
                "report written to {} ({charts} charts)",
                path.display()
            ))
        }
        None => None,
    };
    Ok((result, said))
}
