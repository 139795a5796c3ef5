//! `scalebench saturate`: the session's saturation search from the arguments (from this process or
//! from the clients of a launcher), its table, and the exit code of how it ended.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_exec::Phase;
use scalebench_session::error::SessionError;
use scalebench_session::request::Launch;
use scalebench_study::saturate::{search, SearchEnd, StepClients};

use crate::args::SaturateArgs;
use crate::commands::run::{launcher_of, with_json_output};
use crate::output::emit;

pub fn saturate_command(args: &SaturateArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let clients = match launcher_of(&args.clients)? {
        Some(launcher) => StepClients::Launched(launcher),
        None if args.clients.rendezvous.is_some() => {
            return Err(SessionError::Usage(
                "saturate --rendezvous without --ssh (each client started by srun or Kubernetes) is not supported yet: \
                 give --ssh HOSTS with --rendezvous, or --clients N for clients on this machine"
                    .into(),
            ))
        }
        None => StepClients::Here,
    };
    let request = args.request(argv, clients);
    if let StepClients::Launched(_) = &request.clients {
        request.run.check(Launch::Clients, &[Phase::Run])?;
        if args.phase.metrics_listen.is_some() {
            return Err(SessionError::Usage(
                "--metrics-listen is not supported with --clients or --rendezvous yet".into(),
            ));
        }
    }
    let found = with_json_output(&args.phase, request, |r| &mut r.run, search)?;
    emit(&scalebench_report::text::saturation_table(&found));
    Ok(ExitCode::from(match found.answer.ended_by {
        SearchEnd::Incomplete => scalebench_distributed::EXIT_INCOMPLETE,
        SearchEnd::Interrupted => 130,
        _ => 0,
    }))
}
