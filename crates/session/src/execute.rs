//! What a request asks for, executed: its phases, or a replay of its capture
//! ([`RunRequest::replay`]), which feeds the run phase from the capture and runs it. Whoever
//! executes a request that may be a replay (a command, a client process, a study's step) comes
//! here.

use scalebench_exec::Phase;

use crate::error::SessionError;
use crate::phase::{execute_phases, ExecutedPhases};
use crate::request::RunRequest;
use crate::wiring::RunWiring;

/// Executes `phases` of `args`, or its replay.
pub fn execute(
    args: &RunRequest,
    wiring: &RunWiring,
    phases: &[Phase],
) -> Result<ExecutedPhases, SessionError> {
    let Some(replay) = &args.replay else {
        return execute_phases(args, wiring, phases);
    };
    if phases != [Phase::Run] {
        return Err(SessionError::Usage(
            "a replay runs the run phase alone (load the database first)".into(),
        ));
    }
    crate::replay::replay(args, replay, wiring.clone())
}
