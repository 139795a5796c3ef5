//! One operation: the binding calls it takes, and data-integrity checks of what came back.

use scalebench_binding::Binding;
use scalebench_workload::{FailureClass, Fields, OpError, OpKind, Operation, OperationGenerator};

/// Reusable buffers for what reads and scans return.
#[derive(Default)]
pub(crate) struct Buffers {
    fields: Fields,
    rows: Vec<(String, Fields)>,
}

/// The values operation `op` wrote, once [`perform`] returned: an appending read-modify-write
/// wrote what it read with its text appended, every other write its own values.
pub(crate) fn written<'a>(op: &'a Operation, bufs: &'a Buffers) -> &'a Fields {
    if op.kind == OpKind::ReadModifyWrite && op.append {
        &bufs.fields
    } else {
        &op.values
    }
}

pub(crate) async fn perform<B: Binding>(
    b: &mut B,
    op: &Operation,
    bufs: &mut Buffers,
    verify: Option<&OperationGenerator>,
) -> Result<(), OpError> {
    match op.kind {
        OpKind::Read => {
            b.read(&op.key, op.read_fields, &mut bufs.fields).await?;
            check(verify, &op.key, &bufs.fields)
        }
        OpKind::Update => b.update(&op.key, &op.values).await,
        OpKind::Insert => b.insert(&op.key, &op.values).await,
        OpKind::Scan => {
            b.scan(&op.key, op.scan_count, op.read_fields, &mut bufs.rows)
                .await?;
            for (key, fields) in &bufs.rows {
                check(verify, key, fields)?;
            }
            Ok(())
        }
        OpKind::ReadModifyWrite => {
            b.read(&op.key, op.read_fields, &mut bufs.fields).await?;
            check(verify, &op.key, &bufs.fields)?;
            if op.append {
                appended(op, &mut bufs.fields);
                b.update(&op.key, &bufs.fields).await
            } else {
                b.update(&op.key, &op.values).await
            }
        }
        OpKind::Delete => b.delete(&op.key).await,
        OpKind::BatchInsert => Err(OpError::new(
            FailureClass::Other,
            "batch insert is a load-phase operation",
        )),
    }
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
