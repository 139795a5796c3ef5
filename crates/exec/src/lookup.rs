//! One-off checks through a binding before a phase starts.

use std::time::Duration;

use scalebench_binding::{Binding, BindingFactory};
use scalebench_workload::{FailureClass, FieldSet};

/// Whether `key` exists in the database: `Some(true)` when a read finds it, `Some(false)` when the
/// database says it is not there, `None` when the question could not be answered (no table yet,
/// connection refused, no answer within `timeout`).
pub fn key_exists<F: BindingFactory>(factory: &F, key: &str, timeout: Duration) -> Option<bool> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, async {
            let mut binding = factory.connect(0).await.ok()?;
            let mut fields = Vec::new();
            let found = match binding.read(key, FieldSet::All, &mut fields).await {
                Ok(()) => Some(true),
                Err(e) if e.class == FailureClass::NotFound => Some(false),
                Err(_) => None,
            };
            let _ = binding.cleanup().await;
            found
        })
        .await
        .ok()
        .flatten()
    })
}
