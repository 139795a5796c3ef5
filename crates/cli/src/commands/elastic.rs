//! `scalebench elastic`: the session's elastic run from the arguments, its result file.

use std::ffi::OsString;
use std::process::ExitCode;

use std::io::Write;

use scalebench_report::text::{sizes_summary, step_summary};
use scalebench_session::error::SessionError;
use scalebench_study::elastic::request::StepObserver;
use scalebench_study::elastic::run_elastic_from;

use crate::args::ElasticArgs;
use crate::commands::run::{phase_files, with_json_output};

pub fn elastic_command(args: &ElasticArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let mut request = args.request(argv);
    // Each step's summary as it ends, Dory's per-size table at the end (a closed reader ends
    // only the output).
    request.on_step = Some(StepObserver(std::sync::Arc::new(|step| {
        let _ = std::io::stdout().write_all(step_summary(step).as_bytes());
    })));
    let clients = args.clients.choice().launcher()?;
    let files = phase_files(&args.phase).input(
        "--sla",
        args.service_level.as_ref().map(|s| s.path.as_path()),
    );
    let out = with_json_output(
        &args.phase,
        files,
        request,
        |r, wiring| run_elastic_from(r, wiring, clients.as_ref().map(|c| c as _)),
        &scalebench_report::elastic_page::titled,
    )?;
    let _ = std::io::stdout().write_all(sizes_summary(&out.sizes).as_bytes());
    crate::output::end_with(scalebench_study::ending::of_elastic(&out))
}
