//! `scalebench elastic`: the session's elastic run from the arguments, its result file.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_session::elastic::run_elastic;
use scalebench_session::error::SessionError;

use crate::args::ElasticArgs;
use crate::commands::run::with_json_output;

pub fn elastic_command(args: &ElasticArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let out = with_json_output(&args.phase, args.request(argv), |r| &mut r.run, run_elastic)?;
    Ok(if out.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
