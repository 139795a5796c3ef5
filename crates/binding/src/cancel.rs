//! A stop requested while a binding sets up (connects, prepares its schema): a server that accepts
//! and never answers would otherwise hold a Ctrl-C for the whole connect timeout.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::BindingError;

/// Shared by whoever may stop the run (the executor's stop signal sets it) and the binding's setup.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Resolves once cancelled (checked every 10 ms: setup is no hot path).
    pub async fn cancelled(&self) {
        while !self.is_cancelled() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// `work`, unless cancelled first: then [`BindingError::Interrupted`] and `work` is dropped
    /// (its connection closed).
    pub async fn unless_cancelled<T>(
        &self,
        work: impl Future<Output = Result<T, BindingError>>,
    ) -> Result<T, BindingError> {
        if self.is_cancelled() {
            return Err(BindingError::Interrupted);
        }
        tokio::select! {
            r = work => r,
            () = self.cancelled() => Err(BindingError::Interrupted),
        }
    }
}
