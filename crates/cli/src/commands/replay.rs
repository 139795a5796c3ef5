//! `scalebench replay`: a capture's operations against a database, at k times its speed.

use std::ffi::OsString;
use std::process::ExitCode;

use scalebench_exec::Phase;
use scalebench_session::error::SessionError;
use scalebench_session::replay::ReplayRequest;

use crate::args::ReplayArgs;
use crate::commands::run::run_command;

pub fn replay_command(args: &ReplayArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let (format, copies) = (args.shape.capture_format, args.shape.copies);
    let replay = ReplayRequest::new(
        args.capture.clone(),
        format,
        args.speed,
        copies.unwrap_or(1),
    )?;
    if args.check {
        let (text, refused) =
            scalebench_session::replay::check_text(&replay, args.phase.db.as_deref())?;
        println!("{text}");
        return match refused {
            Some(why) => Err(SessionError::Usage(why)),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    let phases = &[Phase::Run];
    let extras = (&args.clients, &args.thresholds);
    run_command(&args.phase, extras, (None, Some(replay)), phases, argv)
}
