//! `scalebench saturate`: the session's saturation search from the arguments, and its table.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_session::error::SessionError;
use scalebench_study::saturate::{search, Search};

use crate::args::SaturateArgs;
use crate::commands::run::with_json_output;
use crate::output::emit;

pub fn saturate_command(args: &SaturateArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let found = with_json_output(&args.phase, args.request(argv), |r| &mut r.run, search)?;
    emit(&render(&found));
    Ok(ExitCode::SUCCESS)
}

pub fn render(s: &Search) -> String {
    let unit = if s.kind == scalebench_study::saturate::SearchKind::Threads {
        "threads"
    } else {
        "offered ops/s"
    };
    let mut out = format!(
        "{:>14} {:>14} {:>12} {:>12} {:>8}\n",
        unit, "achieved ops/s", "p99 (us)", "mean (us)", "failed"
    );
    for (i, st) in s.steps.iter().enumerate() {
        out.push_str(&format!(
            "{:>14.0} {:>14.1} {:>12.0} {:>12.0} {:>8}{}\n",
            st.offered,
            st.achieved_ops_s,
            st.p99_us,
            st.mean_us,
            st.failed,
            if Some(i) == s.knee { "  <- knee" } else { "" }
        ));
    }
    match s.knee {
        Some(k) => out.push_str(&format!(
            "knee: {:.0} {unit}, {:.1} ops/s sustained; stopped: {}\n",
            s.steps[k].offered, s.steps[k].achieved_ops_s, s.stopped_by
        )),
        None => out.push_str(&format!("no step held; stopped: {}\n", s.stopped_by)),
    }
    out
}
