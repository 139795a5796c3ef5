//! A series of runs at one rendezvous, in a build without the etcd client (`--features embedded`):
//! no [`RendezvousUrl`] parses there, and each entry refuses with
//! [`crate::rendezvous_url::NEEDS_ETCD`].

use std::time::Duration;

use scalebench_session::error::SessionError;

pub use crate::order::Order;
use crate::rendezvous_url::{RendezvousUrl, NEEDS_ETCD};

/// Cannot exist without the etcd client: [`lead`] refuses.
pub struct Leadership(std::convert::Infallible);

fn refused<T>() -> Result<T, SessionError> {
    Err(SessionError::Usage(NEEDS_ETCD.into()))
}

pub fn lead(_url: &RendezvousUrl) -> Result<Leadership, SessionError> {
    refused()
}

pub fn publish(_url: &RendezvousUrl, _k: u32, _order: &Order) -> Result<(), SessionError> {
    refused()
}

pub fn await_order(_url: &RendezvousUrl, _k: u32, _wait: Duration) -> Result<Order, SessionError> {
    refused()
}

/// No leader can be gone where none can lead.
pub fn leader_gone(_url: &RendezvousUrl) -> bool {
    false
}
