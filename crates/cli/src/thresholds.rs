//! `--threshold` and `--sla FILE` on `run`, `load` and `experiment`: pass/fail on the run's own figures, as k6's
//! thresholds gate CI. Judged by scalebench_measure::thresholds; kept in the result (and so on its
//! page); a broken one exits 4 when the run itself succeeded.

use clap::Args;
use scalebench_measure::result::RunResult;
use scalebench_measure::thresholds::Threshold;
use scalebench_study::elastic::request;

#[derive(Debug, Args, Clone, Default)]
pub struct ThresholdArgs {
    /// Pass or fail on a figure, e.g. 'read.p99<10ms' (repeatable; a broken one exits 4).
    ///
    /// k6's thresholds: [OPERATION.]FIGURE<VALUE with FIGURE one of p50, p90, p95, p99, p99.9,
    /// p99.99, max, mean (latency: us, ms, s; on an open loop from the intended start), throughput
    /// (ops/s), errors (a count, or a share with %); <, <=, >, >=. E.g. 'read.p99<10ms',
    /// 'p99.9<=50ms', 'throughput>=1000', 'errors<0.1%'. Repeat for several; each is judged on every
    /// phase (in an experiment, on each run's measured phase), and a broken one exits 4
    /// (docs/thresholds.md).
    #[arg(long = "threshold", value_name = "EXPR", value_parser = <Threshold as std::str::FromStr>::from_str, help_heading = "Output")]
    pub thresholds: Vec<Threshold>,
    /// A service-level file (the format of `elastic --sla`): its [run] thresholds are judged as
    /// --threshold's.
    #[arg(long = "sla", value_name = "FILE", value_parser = parse_run_service_level, hide_short_help = true, help_heading = "Output")]
    pub service_level: Option<request::ServiceLevelFile>,
}

/// `--sla FILE` on `run` or `load`: a file without `[run]` thresholds judges nothing here.
fn parse_run_service_level(s: &str) -> Result<request::ServiceLevelFile, String> {
    let file = request::parse_service_level(s)?;
    if file.level.run.thresholds.is_empty() {
        return Err(format!(
            "{s}: no [run] thresholds (its other sections judge the events of `elastic`)"
        ));
    }
    Ok(file)
}

impl ThresholdArgs {
    /// Judges the thresholds asked for on `result`'s phases and keeps the verdicts in it.
    pub fn judge(&self, result: &mut RunResult) {
        let all = self.all();
        if !all.is_empty() {
            result.thresholds = Some(scalebench_measure::thresholds::report(
                &all,
                self.file(),
                &result.phases,
            ));
        }
    }

    /// The thresholds an experiment judges each of its runs against (with its file's own).
    pub fn for_cells(&self) -> scalebench_study::experiment::thresholds::CellThresholds {
        scalebench_study::experiment::thresholds::CellThresholds {
            thresholds: self.all(),
            file: self.file(),
        }
    }

    fn all(&self) -> Vec<Threshold> {
        let mut all = self.thresholds.clone();
        if let Some(file) = &self.service_level {
            all.extend(file.level.run.parsed());
        }
        all
    }

    fn file(&self) -> Option<String> {
        self.service_level
            .as_ref()
            .map(|f| f.path.display().to_string())
    }
}
