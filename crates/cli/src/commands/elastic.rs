//! `scalebench elastic`: the session's elastic run from the arguments, its result file.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_session::elastic::run_elastic;
use scalebench_session::error::SessionError;

use crate::args::ElasticArgs;

pub fn elastic_command(args: &ElasticArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    scalebench_session::files::check_outputs(
        args.phase.output.as_deref(),
        args.phase.hdr_log.as_deref(),
    )?;
    let mut request = args.request(argv);
    let _metrics = crate::commands::run::serve_metrics(&args.phase, &mut request.run)?;
    let out = run_elastic(&request)?;
    if let Some(path) = &args.phase.output {
        scalebench_session::files::write_json(path, &out)?;
    }
    Ok(if out.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
