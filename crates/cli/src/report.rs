//! `scalebench compare` and `scalebench report`: the reporting crate's output on the command line.

use std::process::ExitCode;

use scalebench_measure::RunResult;
use scalebench_report::compare::{compare, measured_phase};

use crate::args::{CompareArgs, CompareFormat};
use crate::error::CliError;
use crate::output::emit;

fn read(path: &std::path::Path) -> Result<RunResult, CliError> {
    RunResult::read(path).map_err(|e| CliError::Usage(e.to_string()))
}

pub fn compare_command(args: &CompareArgs) -> Result<ExitCode, CliError> {
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    let no_phase =
        |p: &std::path::Path| CliError::Usage(format!("{}: the result has no phase", p.display()));
    let pa = measured_phase(&a).ok_or_else(|| no_phase(&args.a))?;
    let pb = measured_phase(&b).ok_or_else(|| no_phase(&args.b))?;
    let c = compare(pa, pb, args.alpha, args.min_change / 100.0);
    let text = match args.format {
        CompareFormat::Json => {
            serde_json::to_string_pretty(&c).map_err(|e| CliError::Failed(e.to_string()))? + "\n"
        }
        CompareFormat::Table => {
            let mut t = format!(
                "A = {}\nB = {}\n{:<20} {:<17} {:>14} {:>14} {:>9} {:>9}  verdict\n",
                args.a.display(),
                args.b.display(),
                "operation",
                "metric",
                "A",
                "B",
                "change",
                "p"
            );
            for m in &c.metrics {
                let verdict = match (m.significant, m.regression) {
                    (true, true) => "worse (significant)",
                    (true, false) => "better (significant)",
                    _ => "no significant difference",
                };
                t.push_str(&format!(
                    "{:<20} {:<17} {:>14.1} {:>14.1} {:>8.1}% {:>9.4}  {verdict}\n",
                    m.operation,
                    m.metric,
                    m.a,
                    m.b,
                    m.change * 100.0,
                    m.p_value
                ));
            }
            for op in &c.unmatched {
                t.push_str(&format!("{op}: in one run only\n"));
            }
            t
        }
    };
    emit(&text);
    match args.fail_above {
        Some(pct) => {
            let bad = c.regressions_beyond(pct / 100.0);
            if bad.is_empty() {
                Ok(ExitCode::SUCCESS)
            } else {
                for m in bad {
                    eprintln!(
                        "regression: {} {} {:+.1}% (p = {:.4}), beyond {pct}%",
                        m.operation,
                        m.metric,
                        m.change * 100.0,
                        m.p_value
                    );
                }
                Ok(ExitCode::from(1))
            }
        }
        None => Ok(ExitCode::SUCCESS),
    }
}
