//! `scalebench compare` (two runs, tested for significant differences) and `scalebench report`
//! (the session's page of a result or an experiment, written as HTML and CSV).

use std::process::ExitCode;

use scalebench_report::compare::{compare, measured_phase, MIN_TEST_INTERVALS};
use scalebench_session::error::SessionError;
use scalebench_study::pages::{page_of, read_result, write_page};

use crate::args::{CompareArgs, CompareFormat, ReportArgs};
use crate::output::emit;

pub fn compare_command(args: &CompareArgs) -> Result<ExitCode, SessionError> {
    let (a, b) = (read_result(&args.a)?, read_result(&args.b)?);
    let no_phase = |p: &std::path::Path| {
        SessionError::Usage(format!("{}: the result has no phase", p.display()))
    };
    let pa = measured_phase(&a).ok_or_else(|| no_phase(&args.a))?;
    let pb = measured_phase(&b).ok_or_else(|| no_phase(&args.b))?;
    let c = compare(pa, pb, args.alpha, args.min_change / 100.0);
    let text = match args.format {
        CompareFormat::Json => {
            serde_json::to_string_pretty(&c).map_err(|e| SessionError::Failed(e.to_string()))?
                + "\n"
        }
        CompareFormat::Table => {
            c.table(&args.a.display().to_string(), &args.b.display().to_string())
        }
    };
    emit(&text);
    if let Some(m) = c.metrics.iter().find(|m| m.untestable()) {
        crate::note!(
            "warning: only {} and {} full intervals of {}: too few for a significance test (at least {MIN_TEST_INTERVALS}); run longer or use a shorter --interval",
            m.a_series.n, m.b_series.n, m.operation
        );
    }
    let Some(pct) = args.fail_above else {
        return Ok(ExitCode::SUCCESS);
    };
    let regressions = c.gate(pct);
    for line in &regressions {
        crate::note!("{line}");
    }
    Ok(ExitCode::from(u8::from(!regressions.is_empty())))
}

/// `scalebench report`: a result, an elastic result or an experiment as one HTML page.
pub fn report_command(args: &ReportArgs) -> Result<ExitCode, SessionError> {
    scalebench_session::outputs::CommandFiles::new()
        .output("-o", Some(&args.output))
        .output_dir("--csv-dir", args.csv_dir.as_deref())
        .input("the report's input", Some(&args.input))
        .check()?;
    let page = page_of(&args.input, args.experiment.as_deref())?;
    let charts = write_page(&page, &args.output, args.csv_dir.as_deref())?;
    crate::note!(
        "report written to {} ({charts} charts)",
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
