//! Which operations the write check can follow. Inserts, updates, read-modify-writes (their
//! values computed from what they read included), deletes, batches and sequences of these are
//! recorded with the values they wrote; reads, scans, multi-gets and statements that only read
//! write nothing. An increment adds to a value the client never learns, and a statement or
//! transaction that writes changes what its SQL or CQL says, which the client does not model:
//! `--verify-writes` refuses a workload that runs one, naming it.

use scalebench_workload::named::NamedOperation;
use scalebench_workload::{CoreWorkload, OpKind};

/// The refusal of `--verify-writes` for `workload`, one line naming the operation and what to do
/// (`None`: every write can be checked).
pub fn refusal(workload: &CoreWorkload) -> Option<String> {
    unverifiable(workload)
        .map(|why| format!("{why}; run it without --verify-writes (elastic: --no-verify-writes)"))
}

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
                        "operation '{}' (sequence), its step '{}' {why}",
                        op.name, step.name
                    )
                })
            }),
            _ => unfollowed(op).map(|why| format!("operation '{}' {why}", op.name)),
        })?;
    Some(format!("--verify-writes cannot check {why}"))
}

/// Why the check cannot follow `op`'s writes, if it cannot: its kind and the reason.
fn unfollowed(op: &NamedOperation) -> Option<String> {
    match op.kind {
        OpKind::Increment => Some(
            "(increment): it adds to a value in the database, which the client never learns"
                .into(),
        ),
        OpKind::Statement if !op.statement.as_ref().is_some_and(|s| s.only_reads()) => Some(
            "(statement): it writes what its SQL or CQL says, which the client does not model"
                .into(),
        ),
        OpKind::Transaction => op.steps.iter().position(|s| !s.only_reads()).map(|i| {
            format!(
                "(transaction): its step {} writes what its SQL says, which the client does not model",
                i + 1
            )
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(operations: &str) -> CoreWorkload {
        let text = format!(
            "[record]\ntable = \"t\"\nrecords = 5\n\n[[record.column]]\nname = \"hits\"\n\
             type = \"int\"\ngenerator.uniform = {{ min = 0, max = 9 }}\n\n\
             [[run.operation]]\nname = \"look\"\nkind = \"read\"\nweight = 0.5\n\n{operations}"
        );
        let file = scalebench_workload::file::WorkloadFile::parse(&text, "t.toml").unwrap();
        let mut p = scalebench_workload::Properties::new();
        file.apply(&mut p, "t.toml");
        CoreWorkload::from_properties(&p).unwrap()
    }

    #[test]
    fn an_operation_whose_writes_are_not_known_is_named_with_its_step() {
        let sequence = workload(
            "[[run.operation]]\nname = \"hit\"\nkind = \"increment\"\nweight = 0\nadd = { hits = 1 }\n\n\
             [[run.operation]]\nname = \"visit\"\nkind = \"sequence\"\nweight = 0.5\n\
             operations = [\"look\", \"hit\"]\n",
        );
        assert_eq!(
            unverifiable(&sequence).as_deref(),
            Some("--verify-writes cannot check operation 'visit' (sequence), its step 'hit' (increment): it adds to a value in the database, which the client never learns")
        );
        let transaction = workload(
            "[[run.operation]]\nname = \"move\"\nkind = \"transaction\"\nweight = 0.5\n\
             steps = [\"SELECT hits FROM t WHERE YCSB_KEY = :key\", \"UPDATE t SET hits = 0 WHERE YCSB_KEY = :key\"]\n",
        );
        let why = unverifiable(&transaction).unwrap();
        assert!(
            why.starts_with(
                "--verify-writes cannot check operation 'move' (transaction): its step 2 writes"
            ),
            "{why}"
        );
        let reads = workload(
            "[[run.operation]]\nname = \"busy\"\nkind = \"statement\"\nweight = 0.5\n\
             sql = \"SELECT hits FROM t WHERE hits > 5\"\n",
        );
        assert_eq!(unverifiable(&reads), None);
        assert!(refusal(&sequence)
            .unwrap()
            .ends_with("(elastic: --no-verify-writes)"));
    }
}
