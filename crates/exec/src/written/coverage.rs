//! Which operations the write check can follow. Inserts, updates, read-modify-writes (their
//! values computed from what they read included), deletes, batches and sequences of these are
//! recorded with the values they wrote; reads, scans, multi-gets and statements that only read
//! write nothing. An increment adds to a value the client never learns, and a statement or
//! transaction that writes changes what its SQL or CQL says, which the client does not model:
//! `--verify-writes` refuses a workload that runs one, naming it.

use scalebench_workload::named::NamedOperation;
use scalebench_workload::{CoreWorkload, OpKind};

/// Why `--verify-writes` cannot check `workload`'s run: the first operation whose writes it
/// cannot follow, named (`None`: it can check them all).
pub fn unverifiable(workload: &CoreWorkload) -> Option<String> {
    let named = &workload.named;
    let why = named
        .iter()
        .filter(|(_, weight)| *weight > 0.0)
        .find_map(|(op, _)| match op.kind {
            OpKind::Sequence => op.sequence.iter().find_map(|&i| {
                let step = &named.get(i)?.0;
                unfollowed(step).map(|why| {
                    format!(
                        "operation '{}' (sequence): its step '{}' {why}",
                        op.name, step.name
                    )
                })
            }),
            _ => unfollowed(op).map(|why| format!("operation '{}' {why}", op.name)),
        })?;
    Some(format!(
        "--verify-writes cannot check {why}; run it without --verify-writes (elastic: --no-verify-writes)"
    ))
}

/// Why the check cannot follow `op`'s writes, if it cannot.
fn unfollowed(op: &NamedOperation) -> Option<String> {
    match op.kind {
        OpKind::Increment => Some(
            "(increment) adds to a value in the database, which the client never learns".into(),
        ),
        OpKind::Statement if !op.statement.as_ref().is_some_and(|s| s.only_reads()) => Some(
            "(statement) writes what its own SQL or CQL says, which the client does not model"
                .into(),
        ),
        OpKind::Transaction => op.steps.iter().find(|s| !s.only_reads()).map(|s| {
            format!(
                "(transaction) writes in its step '{}', whose SQL the client does not model",
                s.name
            )
        }),
        _ => None,
    }
}
