//! One operation: the binding calls it takes, and data-integrity checks of what came back.

use std::time::Duration;

use scalebench_binding::{Binding, TransactionControl};
use scalebench_workload::{
    named, FailureClass, Fields, Modification, OpError, OpKind, Operation, OperationGenerator,
};

use crate::written::{Effect, Intents, WriteLog};

/// Reusable buffers for what reads and scans return.
#[derive(Default)]
pub(crate) struct Buffers {
    fields: Fields,
    rows: Vec<(String, Fields)>,
    /// A sequence's record as its steps last read or wrote it, by column.
    carried: Fields,
    /// A sequence's statement's parameters, with the values carried.
    params: Fields,
    /// The operation's writes as it sends them (`--verify-writes`; else nothing is noted).
    pub intents: Intents,
}

impl Buffers {
    /// A slot's buffers: its operations' writes noted when `log` records them.
    pub fn for_slot(log: Option<&WriteLog>) -> Buffers {
        Buffers {
            intents: log.map_or_else(Intents::default, WriteLog::intents),
            ..Default::default()
        }
    }
}

pub(crate) async fn perform<B: Binding>(
    b: &mut B,
    op: &Operation,
    bufs: &mut Buffers,
    verify: Option<&OperationGenerator>,
) -> Result<(), OpError> {
    if op.kind == OpKind::Sequence {
        sequence(b, op, bufs, verify).await
    } else {
        perform_one(b, op, bufs, verify).await
    }
}

/// A sequence's steps in order on its key (in one transaction when it says so); the first that
/// fails is its failure. A column a step read or wrote is the value of that column's parameter
/// in the statements after it.
async fn sequence<B: Binding>(
    b: &mut B,
    op: &Operation,
    bufs: &mut Buffers,
    verify: Option<&OperationGenerator>,
) -> Result<(), OpError> {
    if !op.transaction {
        return steps(b, op, bufs, verify).await;
    }
    b.transaction_control(TransactionControl::Begin).await?;
    // The steps' writes are answered by the commit.
    bufs.intents.stage();
    let done = match steps(b, op, bufs, verify).await {
        Ok(()) => b.transaction_control(TransactionControl::Commit).await,
        Err(e) => {
            // The step's failure is the sequence's; a failed rollback adds nothing.
            let _ = b.transaction_control(TransactionControl::Rollback).await;
            Err(e)
        }
    };
    bufs.intents.settle(&done);
    done
}

/// A sequence's steps in order; the first that fails is their failure.
async fn steps<B: Binding>(
    b: &mut B,
    op: &Operation,
    bufs: &mut Buffers,
    verify: Option<&OperationGenerator>,
) -> Result<(), OpError> {
    bufs.carried.clear();
    for step in &op.sequence {
        bufs.fields.clear();
        if step.kind == OpKind::Statement && !bufs.carried.is_empty() {
            bufs.params.clear();
            bufs.params.extend(step.values.iter().map(|(c, v)| {
                let carried = bufs.carried.iter().find(|(i, _)| i == c);
                (*c, carried.map_or_else(|| v.clone(), |(_, v)| v.clone()))
            }));
            let rows = b.statement(step.statement, &bufs.params).await?;
            judged_count(step, rows)?;
        } else {
            perform_one(b, step, bufs, verify).await?;
        }
        carry(step, bufs);
    }
    Ok(())
}

/// What a sequence's step leaves of the record for the steps after it: the columns it read, then
/// those it wrote; an increment's columns are no longer known (the database added to them), and a
/// delete leaves nothing.
fn carry(step: &Operation, bufs: &mut Buffers) {
    let merge = |values: &Fields, carried: &mut Fields| {
        for (c, v) in values {
            match carried.iter_mut().find(|(i, _)| i == c) {
                Some((_, old)) => old.clone_from(v),
                None => carried.push((*c, v.clone())),
            }
        }
    };
    match step.kind {
        OpKind::Read => merge(&bufs.fields, &mut bufs.carried),
        OpKind::Update => merge(&step.values, &mut bufs.carried),
        OpKind::ReadModifyWrite => {
            merge(&bufs.fields, &mut bufs.carried);
            if !(step.append || step.modify.is_some()) {
                merge(&step.values, &mut bufs.carried);
            }
        }
        OpKind::Increment => {
            let added = step.modify.as_deref().unwrap_or_default();
            bufs.carried
                .retain(|(c, _)| !added.iter().any(|m| m.column == *c));
        }
        OpKind::Delete => bufs.carried.clear(),
        _ => {}
    }
}

async fn perform_one<B: Binding>(
    b: &mut B,
    op: &Operation,
    bufs: &mut Buffers,
    verify: Option<&OperationGenerator>,
) -> Result<(), OpError> {
    match op.kind {
        OpKind::Read => {
            if !expected_read(op, b.read(&op.key, op.read_fields, &mut bufs.fields).await)? {
                return Ok(());
            }
            check(verify, &op.key, &bufs.fields)
        }
        OpKind::Update => update(b, &op.key, &op.values, &mut bufs.intents).await,
        OpKind::Insert => {
            let noted = bufs.intents.write(&op.key, Effect::Insert, &op.values);
            let done = b.insert(&op.key, &op.values).await;
            bufs.intents.answered(noted, &done);
            done
        }
        OpKind::Scan => {
            b.scan(&op.key, op.scan_count, op.read_fields, &mut bufs.rows)
                .await?;
            judged_rows(op, &bufs.rows, verify)
        }
        OpKind::ReadModifyWrite => {
            if !expected_read(op, b.read(&op.key, op.read_fields, &mut bufs.fields).await)? {
                // Expected absent and absent: nothing to modify.
                return Ok(());
            }
            check(verify, &op.key, &bufs.fields)?;
            if let Some(changes) = &op.modify {
                modified(changes, &mut bufs.fields)?;
                update(b, &op.key, &bufs.fields, &mut bufs.intents).await
            } else if op.append {
                appended(op, &mut bufs.fields);
                update(b, &op.key, &bufs.fields, &mut bufs.intents).await
            } else {
                update(b, &op.key, &op.values, &mut bufs.intents).await
            }
        }
        OpKind::Delete => {
            let noted = bufs.intents.write(&op.key, Effect::Delete, &Fields::new());
            let done = b.delete(&op.key).await;
            bufs.intents.answered(noted, &done);
            done
        }
        // A statement replayed as its capture has it.
        OpKind::Statement if !op.text.is_empty() => {
            b.statement_text(&op.text, &op.values).await.map(|_| ())
        }
        OpKind::Statement => {
            let rows = b.statement(op.statement, &op.values).await?;
            judged_count(op, rows)
        }
        OpKind::BatchUpdate => {
            let mut first = None;
            for (key, values) in op.keys.iter().zip(&op.batch_values) {
                let noted = bufs.intents.write(key, Effect::Update, values);
                first = first.or(noted);
            }
            let done = b.update_batch(&op.keys, &op.batch_values).await;
            bufs.intents.answered_batch(first, &done);
            done
        }
        OpKind::Transaction => {
            let rows = b.transaction(op.statement, op.steps, &op.values).await?;
            judged_count(op, rows)
        }
        OpKind::MultiGet => {
            b.read_many(&op.keys, op.read_fields, &mut bufs.rows)
                .await?;
            judged_rows(op, &bufs.rows, verify)
        }
        OpKind::Increment => {
            let changes = op.modify.as_deref().unwrap_or_default();
            let done = b.increment(&op.key, changes).await;
            match &op.expect {
                Some(_) => expected_read(op, done).map(|_| ()),
                None => done,
            }
        }
        OpKind::BatchInsert => Err(OpError::new(
            FailureClass::Other,
            "batch insert is a load-phase operation",
        )),
        OpKind::Sequence => Err(OpError::new(
            FailureClass::Other,
            "a sequence is not a step of a sequence",
        )),
    }
}

/// An update of `key`'s `values`, noted before it is sent and answered when it returns.
async fn update<B: Binding>(
    b: &mut B,
    key: &str,
    values: &Fields,
    intents: &mut Intents,
) -> Result<(), OpError> {
    let noted = intents.write(key, Effect::Update, values);
    let done = b.update(key, values).await;
    intents.answered(noted, &done);
    done
}

/// The rows a statement or transaction returned or changed, judged by the operation's expectation.
fn judged_count(op: &Operation, rows: u64) -> Result<(), OpError> {
    match &op.expect {
        Some(e) => named::judge(e, None, Some(rows)),
        None => Ok(()),
    }
}

/// The records a scan or multi-get returned: their count judged by the operation's expectation,
/// each checked (`dataintegrity`).
fn judged_rows(
    op: &Operation,
    rows: &[(String, Fields)],
    verify: Option<&OperationGenerator>,
) -> Result<(), OpError> {
    if let Some(e) = &op.expect {
        named::judge(e, None, Some(rows.len() as u64))?;
    }
    for (key, fields) in rows {
        check(verify, key, fields)?;
    }
    Ok(())
}

/// A read's result judged by the operation's expectation (a workload file's `expect.found`):
/// `Ok(true)` when a record was read, `Ok(false)` when none was and none was expected.
fn expected_read(op: &Operation, read: Result<(), OpError>) -> Result<bool, OpError> {
    let Some(e) = &op.expect else {
        return read.map(|()| true);
    };
    let found = match read {
        Ok(()) => true,
        Err(err) if err.class == FailureClass::NotFound => false,
        Err(err) => return Err(err),
    };
    named::judge(e, Some(found), None)?;
    Ok(found)
}

/// Turns the fields just read into the fields to write back, each changed as the workload file
/// says (a number added, text appended): the value read is passed on to the write.
fn modified(changes: &[Modification], read: &mut Fields) -> Result<(), OpError> {
    let mut out: Fields = Vec::with_capacity(changes.len());
    for m in changes {
        let value = read
            .iter()
            .find(|(i, _)| *i == m.column)
            .map(|(_, v)| v.as_str());
        out.push((m.column, m.apply(value)?));
    }
    *read = out;
    Ok(())
}

/// Turns the fields just read into the fields to write back: each written field's new text appended
/// to what was read (a field that was not read is written with the new text alone).
fn appended(op: &Operation, read: &mut Fields) {
    let mut out: Fields = Vec::with_capacity(op.values.len());
    for (idx, extra) in &op.values {
        let mut value = read
            .iter_mut()
            .find(|(i, _)| i == idx)
            .map(|(_, v)| std::mem::take(v))
            .unwrap_or_default();
        value.push_str(extra);
        out.push((*idx, value));
    }
    *read = out;
}

fn check(verify: Option<&OperationGenerator>, key: &str, fields: &Fields) -> Result<(), OpError> {
    match verify {
        Some(g) => g.verify(key, fields),
        None => Ok(()),
    }
}

/// `fut`, dropped unanswered at `timeout` (then a timeout failure, and the binding must be told).
pub(crate) async fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, OpError>>,
) -> (Result<T, OpError>, Abandoned) {
    match timeout {
        None => (fut.await, Abandoned(false)),
        Some(d) => match tokio::time::timeout(d, fut).await {
            Ok(r) => (r, Abandoned(false)),
            Err(_) => (
                Err(OpError::new(
                    FailureClass::Timeout,
                    format!("no answer within the operation timeout of {d:?}"),
                )),
                Abandoned(true),
            ),
        },
    }
}

/// The operation's future was dropped unanswered: its binding is told ([`Binding::abandoned`]).
#[must_use]
pub(crate) struct Abandoned(bool);

impl Abandoned {
    pub(crate) fn tell<B: Binding>(self, binding: &mut B) {
        if self.0 {
            binding.abandoned();
        }
    }
}
