//! Precise waits for open-loop schedules, shared by all slots of a worker thread.
//!
//! tokio's timer has millisecond resolution; waiting to the microsecond needs more. If every slot
//! spun on its own, a thread with hundreds of slots would spend itself spinning and start operations
//! late (which the intended-start latency would then blame on the database). Here slots register their
//! deadlines and one driver per thread sleeps on a Linux timerfd (nanosecond resolution, its
//! readiness polled by the runtime's reactor, the thread's timer slack set to 1 ns) until shortly
//! before the earliest deadline, spins only the last stretch, and wakes each slot when its time has
//! come. The stretch spun is the wake-up lateness measured on this thread (the 75th percentile of
//! the last 64 naps' overshoot, plus a quarter): tens of microseconds on an idle machine; a wake-up
//! later than that costs the operation its lateness, which the intended-start latency shows. A pacer at 1,000
//! operations per second costs a few percent of a core, not the core it spun before, which a local
//! cluster's servers need.

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
    /// The precise timer the driver naps on (None where the system has no timerfd: tokio's timer).
    timer: Option<PreciseTimer>,
    /// How long before a deadline the driver wakes and starts to spin, ns: the measured wake-up
    /// lateness of this thread's naps, with a margin.
    slack_ns: Cell<u64>,
    /// The lateness of the last naps' wake-ups (a ring), ns, and how many were recorded.
    lateness: RefCell<[u64; LATENESS_KEPT]>,
    naps: Cell<u64>,
}

/// Wake-ups whose lateness sets the slack: the last 64.
const LATENESS_KEPT: usize = 64;

/// The spun stretch before a deadline: at least this (the cost of a wake-up itself) ...
const MIN_SLACK_NS: u64 = 15_000;
/// ... at most this (a machine so loaded that naps wake this late spins the rest), ...
const MAX_SLACK_NS: u64 = 2_000_000;
/// ... starting here until naps have been measured.
const START_SLACK_NS: u64 = 100_000;

/// A one-shot timer of nanosecond resolution: Linux's timerfd, whose readiness the runtime's reactor
/// polls like a socket's.
struct PreciseTimer {
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl PreciseTimer {
    fn new() -> Option<PreciseTimer> {
        use std::os::fd::FromRawFd;
        // SAFETY: timerfd_create returns a new descriptor this process owns, or -1.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a valid descriptor owned by nobody else.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        // Wake-ups of this (worker) thread's timers as precise as the hardware allows: the default
        // slack of 50 us would be spun away as lateness.
        // SAFETY: prctl on the calling thread with integer arguments.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
        }
        // SAFETY: the AsyncFd owns the descriptor (an OwnedFd) for as long as it lives.
        unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        }
        .ok()
        .map(|fd| PreciseTimer { fd })
    }

    /// Resolves after `d` (at the earliest).
    async fn sleep(&self, d: Duration) {
        use std::os::fd::AsRawFd;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                // A zero value would disarm the timer.
                tv_nsec: d.subsec_nanos().max(1) as libc::c_long,
            },
        };
        // SAFETY: timerfd_settime on our descriptor with a valid itimerspec.
        if unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) }
            != 0
        {
            tokio::time::sleep(d).await;
            return;
        }
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                tokio::time::sleep(d).await;
                return;
            };
            let mut expirations = [0u8; 8];
            // SAFETY: read(2) of 8 bytes into a buffer of 8 bytes.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    expirations.len(),
                )
            };
            if n == 8 {
                return;
            }
            ready.clear_ready();
        }
    }
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
            timer: PreciseTimer::new(),
            slack_ns: Cell::new(START_SLACK_NS),
            lateness: RefCell::new([0; LATENESS_KEPT]),
            naps: Cell::new(0),
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
            let slack = self.slack_ns.get();
            match earliest {
                Some(t) if t <= now => self.wake_due(now),
                // The last stretch: spin (letting the thread's other tasks run between looks).
                Some(t) if t - now <= slack => tokio::task::yield_now().await,
                // Nap until the stretch begins, but no longer than until a new registration could
                // need us (slots register then wake the driver); learn how late naps wake.
                Some(t) => {
                    let wake = (t - slack).min(now + 50_000_000);
                    self.nap(Duration::from_nanos(wake - now)).await;
                    let late = self.clock.now_ns().saturating_sub(wake);
                    if !self.registered.get() {
                        self.learn_slack(late);
                    }
                }
                None => self.nap(Duration::from_millis(50)).await,
            }
        }
    }

    /// The spun stretch covers most recent wake-ups (their 75th percentile of lateness, plus a
    /// quarter): a virtual machine wakes a timer some tens of microseconds late as a rule and up to a
    /// millisecond now and then, and spinning for the rare worst case would cost a core. A start
    /// delayed by a late wake-up is recorded as such (the schedule's lateness, the intended-start
    /// latency).
    fn learn_slack(&self, late_ns: u64) {
        let n = self.naps.get();
        self.naps.set(n + 1);
        let mut kept = self.lateness.borrow_mut();
        kept[n as usize % LATENESS_KEPT] = late_ns;
        if !(n + 1).is_multiple_of(16) {
            return;
        }
        let mut sorted: Vec<u64> = kept[..((n + 1) as usize).min(LATENESS_KEPT)].to_vec();
        sorted.sort_unstable();
        let p75 = sorted[sorted.len() * 3 / 4];
        self.slack_ns
            .set((p75 + p75 / 4).clamp(MIN_SLACK_NS, MAX_SLACK_NS));
    }

    async fn nap(&self, d: Duration) {
        let sleep: Pin<Box<dyn Future<Output = ()> + '_>> = match &self.timer {
            Some(t) => Box::pin(t.sleep(d)),
            None => Box::pin(tokio::time::sleep(d)),
        };
        let mut sleep = sleep;
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
