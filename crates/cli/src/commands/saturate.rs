//! `scalebench saturate`: the session's saturation search from the arguments, and its table.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_session::error::SessionError;
use scalebench_study::saturate::search;

use crate::args::SaturateArgs;
use crate::commands::run::with_json_output;
use crate::output::emit;

pub fn saturate_command(args: &SaturateArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let found = with_json_output(&args.phase, args.request(argv), |r| &mut r.run, search)?;
    emit(&scalebench_report::text::saturation_table(&found));
    Ok(ExitCode::SUCCESS)
}
