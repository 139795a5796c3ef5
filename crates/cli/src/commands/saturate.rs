//! `scalebench saturate`: the session's saturation search from the arguments (from this process or
//! from the clients of a launcher), its table, and the exit code of how it ended.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_exec::Phase;
use scalebench_session::error::SessionError;
use scalebench_session::request::Launch;
use scalebench_study::saturate::{follow, search, SearchEnd, StepClients};

use crate::args::SaturateArgs;
use crate::commands::run::{phase_files, with_json_output};
use crate::output::emit;

pub fn saturate_command(args: &SaturateArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let clients = match args.clients.choice().launcher()? {
        Some(launcher) => StepClients::Launched(launcher),
        // This process is one client of a search whose clients meet in etcd (srun, Kubernetes).
        None => match &args.clients.rendezvous {
            Some(url) => StepClients::Rendezvous {
                url: scalebench_distributed::etcd::RendezvousUrl::parse(url)?,
                share: scalebench_session::clients::ClientShare::from_launcher(
                    args.clients.client_index,
                    args.clients.local.clients,
                    |name| std::env::var(name).ok(),
                )?,
                start_timeout: args.clients.local.start_timeout,
            },
            None => StepClients::Here,
        },
    };
    let request = args.request(argv, clients);
    // Before any output path is made.
    request.check()?;
    if request.clients.follows() {
        let followed = follow(&request)?;
        crate::note!(
            "this client ran {} run(s) of the search; client 0 ended it: {}",
            followed.runs,
            followed.ended_by
        );
        return Ok(ExitCode::from(if followed.interrupted {
            130
        } else if followed.incomplete {
            scalebench_distributed::EXIT_INCOMPLETE
        } else {
            0
        }));
    }
    if !matches!(request.clients, StepClients::Here) {
        request.run.check(Launch::Clients, &[Phase::Run])?;
        if args.phase.metrics_listen.is_some() {
            return Err(SessionError::Usage(
                "--metrics-listen is not supported with --clients or --rendezvous yet".into(),
            ));
        }
    }
    let found = with_json_output(
        &args.phase,
        phase_files(&args.phase),
        request,
        search,
        &|s| {
            scalebench_report::saturation_page::page(
                s,
                format!("scalebench saturate: {}", s.answer.objective),
            )
        },
    )?;
    emit(&scalebench_report::text::saturation_table(&found));
    Ok(ExitCode::from(match found.answer.ended_by {
        SearchEnd::Incomplete => scalebench_distributed::EXIT_INCOMPLETE,
        SearchEnd::Interrupted => 130,
        _ => 0,
    }))
}
