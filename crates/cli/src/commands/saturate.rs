//! `scalebench saturate`: the session's saturation search from the arguments (from this process or
//! from the clients of a launcher), its table, and the exit code of how it ended.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_session::error::SessionError;
use scalebench_study::ending;
use scalebench_study::saturate::{follow, search, StepClients};

use crate::args::SaturateArgs;
use crate::commands::run::{phase_files, with_json_output};
use crate::output::{emit, end_with};

pub fn saturate_command(args: &SaturateArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let clients = StepClients::chosen(&args.clients.choice())?;
    let request = args.request(argv, clients)?;
    // Before any output path is made.
    request.check()?;
    if request.clients.follows() {
        return end_with(ending::of_follower(&follow(&request)?));
    }
    request.check_clients(args.phase.metrics_listen.is_some())?;
    let found = with_json_output(
        &args.phase,
        phase_files(&args.phase),
        request,
        search,
        &scalebench_report::saturation_page::titled,
    )?;
    emit(&scalebench_report::text::saturation_table(&found));
    end_with(ending::of_search(&found))
}
