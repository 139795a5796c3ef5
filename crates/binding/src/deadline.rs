//! How long one call of a synchronous binding may block its worker thread.
//!
//! Async bindings are bounded by the runtime: the executor drops a future at the operation timeout
//! or at the end of the grace period. A synchronous binding (SQLite runs in-process on the worker
//! thread) cannot be dropped mid-call, so the executor publishes the instant the call must end by,
//! and the binding makes its engine give up then (lock waits and long statements alike).
//! Thread-local because a synchronous call never yields: while it runs, the deadline set just before
//! it is the one that applies.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static CALL_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Sets the instant the next operation on this thread must be over by (`None`: unbounded).
pub fn set_call_deadline(deadline: Option<Instant>) {
    CALL_DEADLINE.with(|d| d.set(deadline));
}

/// The instant the current operation on this thread must be over by, if any.
pub fn call_deadline() -> Option<Instant> {
    CALL_DEADLINE.with(Cell::get)
}

/// True once the current operation's deadline has passed.
pub fn call_deadline_passed() -> bool {
    call_deadline().is_some_and(|d| Instant::now() >= d)
}
