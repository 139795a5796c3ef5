//! Precise waits for open-loop schedules, shared by all slots of a worker thread.
//!
//! tokio's timer has millisecond resolution; waiting to the microsecond needs spinning. If every slot
//! spun on its own, a thread with hundreds of slots would spend itself spinning and start operations
//! late (which the intended-start latency would then blame on the database). Here slots register their
//! deadlines and one driver per thread sleeps coarsely, spins for the last stretch, and wakes each slot
//! when its time has come.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::clock::Clock;
use crate::StopSignal;

pub(crate) struct Pacer<'a> {
    clock: &'a Clock,
    deadlines: RefCell<BinaryHeap<Reverse<(u64, u64)>>>,
    wakers: RefCell<HashMap<u64, Waker>>,
    next_id: Cell<u64>,
    /// Set by the driver when a stop was requested: every wait ends.
    released: Cell<bool>,
    driver: RefCell<Option<Waker>>,
    /// A deadline was registered since the driver began its nap: it may be earlier than the nap's end.
    registered: Cell<bool>,
}

impl<'a> Pacer<'a> {
    pub(crate) fn new(clock: &'a Clock) -> Self {
        Pacer {
            clock,
            deadlines: RefCell::new(BinaryHeap::new()),
            wakers: RefCell::new(HashMap::new()),
            next_id: Cell::new(0),
            released: Cell::new(false),
            driver: RefCell::new(None),
            registered: Cell::new(false),
        }
    }

    /// Resolves at `t_ns` (true), or early when a stop is requested (false).
    pub(crate) fn until(&self, t_ns: u64) -> Wait<'_, 'a> {
        Wait {
            pacer: self,
            t_ns,
            id: None,
        }
    }

    /// Runs until `finished` holds: wakes slots whose deadline has passed.
    pub(crate) async fn drive(&self, stop: &StopSignal, finished: &Cell<bool>) {
        while !finished.get() {
            if stop.is_requested() && !self.released.get() {
                self.released.set(true);
                for (_, w) in self.wakers.borrow_mut().drain() {
                    w.wake();
                }
                self.deadlines.borrow_mut().clear();
            }
            let earliest = self.deadlines.borrow().peek().map(|Reverse((t, _))| *t);
            let now = self.clock.now_ns();
            match earliest {
                Some(t) if t <= now => self.wake_due(now),
                Some(t) if t - now <= 2_000_000 => tokio::task::yield_now().await,
                // Far away or nothing registered: nap, but no longer than until a new registration
                // could need us (slots register then wake the driver).
                Some(t) => {
                    self.nap(Duration::from_nanos((t - now - 1_000_000).min(50_000_000)))
                        .await
                }
                None => self.nap(Duration::from_millis(50)).await,
            }
        }
    }

    async fn nap(&self, d: Duration) {
        let sleep = tokio::time::sleep(d);
        tokio::pin!(sleep);
        self.registered.set(false);
        std::future::poll_fn(|cx| {
            // Slots and the driver may share one task, so a wake does not say who was meant: look.
            if self.registered.get() {
                return Poll::Ready(());
            }
            *self.driver.borrow_mut() = Some(cx.waker().clone());
            sleep.as_mut().poll(cx)
        })
        .await;
        *self.driver.borrow_mut() = None;
    }

    fn wake_due(&self, now: u64) {
        let mut deadlines = self.deadlines.borrow_mut();
        let mut wakers = self.wakers.borrow_mut();
        while let Some(Reverse((t, id))) = deadlines.peek().copied() {
            if t > now {
                break;
            }
            deadlines.pop();
            if let Some(w) = wakers.remove(&id) {
                w.wake();
            }
        }
    }

    fn register(&self, t_ns: u64, waker: &Waker) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.deadlines.borrow_mut().push(Reverse((t_ns, id)));
        self.wakers.borrow_mut().insert(id, waker.clone());
        self.registered.set(true);
        if let Some(d) = self.driver.borrow_mut().take() {
            d.wake();
        }
        id
    }
}

pub(crate) struct Wait<'p, 'a> {
    pacer: &'p Pacer<'a>,
    t_ns: u64,
    id: Option<u64>,
}

impl Future for Wait<'_, '_> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let pacer = self.pacer;
        if pacer.released.get() {
            return Poll::Ready(false);
        }
        if pacer.clock.now_ns() >= self.t_ns {
            if let Some(id) = self.id.take() {
                pacer.wakers.borrow_mut().remove(&id);
            }
            return Poll::Ready(true);
        }
        match self.id {
            Some(id) => {
                pacer.wakers.borrow_mut().insert(id, cx.waker().clone());
            }
            None => {
                let t = self.t_ns;
                self.id = Some(pacer.register(t, cx.waker()));
            }
        }
        Poll::Pending
    }
}

impl Drop for Wait<'_, '_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.pacer.wakers.borrow_mut().remove(&id);
        }
    }
}
