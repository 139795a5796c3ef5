//! `scalebench replay`: a capture's operations against a database, at k times its speed.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_exec::Phase;
use scalebench_session::error::SessionError;
use scalebench_session::replay::ReplayRequest;
use scalebench_session::request::Processes;

use crate::args::ReplayArgs;
use crate::commands::run::{finish_run, phase_files};

pub fn replay_command(args: &ReplayArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let (format, copies) = (args.shape.capture_format, args.shape.copies);
    let replay = ReplayRequest::new(
        args.capture.clone(),
        format,
        args.speed,
        copies.unwrap_or(1),
    )?;
    if args.check {
        let (text, refused) = scalebench_session::replay::check_text(&replay)?;
        println!("{text}");
        return match refused {
            Some(why) => Err(SessionError::Usage(why)),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    let request = args.phase.request(argv);
    request.check(Processes::One, &[Phase::Run])?;
    let kept = args.phase.output.is_none();
    phase_files(&args.phase).kept_results(kept)?.check()?;
    let (_metrics, wiring) = scalebench_session::wiring::serve_metrics(args.phase.metrics_listen)?;
    let executed = scalebench_session::replay::replay(&request, &replay, wiring)?;
    finish_run(executed, &args.phase, &args.thresholds, &[Phase::Run], None)
}
