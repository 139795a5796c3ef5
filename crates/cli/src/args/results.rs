//! The options of `report`, `compare`, `merge` and `merge-logs`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::phase::*;
use scalebench_session::request::{parse_alpha, parse_percent};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result (load/run/merge), an elastic result, a saturation search's result, or a results
    /// file (SQLite) of experiments.
    #[arg(value_name = "RESULT.json|results.db")]
    pub input: PathBuf,
    /// With a results file: the experiment (default: the only one, else an error naming them).
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// The report (HTML), written atomically.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Also write each chart's data as DIR/<chart>.csv.
    #[arg(long, value_name = "DIR")]
    pub csv_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline result (JSON).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// The result judged against it.
    #[arg(value_name = "B.json")]
    pub b: PathBuf,
    /// Significance level of the tests.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Differences smaller than this share of A's value (percent) never count as significant.
    #[arg(long, value_name = "PCT", default_value_t = 1.0, value_parser = parse_percent)]
    pub min_change: f64,
    /// Exit with code 1 when a metric of B is significantly worse than A's by more than PCT percent.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_above: Option<f64>,
    /// Table or JSON on standard output.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result files of clients that ran together.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// The merged result file.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub summary: SummaryArgs,
}

#[derive(Debug, Args)]
pub struct MergeLogsArgs {
    /// Interval logs of one operation (the same file of each client).
    #[arg(required = true, num_args = 1.., value_name = "LOG.hlog")]
    pub files: Vec<PathBuf>,
    /// The merged interval log.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
}
