//! Precise waits for open-loop schedules, shared by all slots of a worker thread.
//!
//! tokio's timer has millisecond resolution; waiting to the microsecond needs more. If every slot
//! spun on its own, a thread with hundreds of slots would spend itself spinning and start operations
//! late (which the intended-start latency would then blame on the database). Here slots register their
//! deadlines and one driver per thread sleeps on a Linux timerfd (nanosecond resolution, its
//! readiness polled by the runtime's reactor, the thread's timer slack set to 1 ns) until shortly
//! before the earliest deadline, spins only the last stretch, and wakes each slot when its time has
//! come. The stretch spun is the typical wake-up lateness measured on this thread (the median of
//! the last 64 naps' overshoot, at least 15 us): a wake-up later than that costs the operation its
//! lateness, which the intended-start latency shows. Every microsecond spun is client CPU taken from
//! the servers of a local cluster, and a nap costs a wake-up (15 to 25 us of CPU on this virtual
//! machine, docs/benchmarks.md section 23), so the stretch is the median, not a high percentile
//! (issue 65, item 1): before, 1.25 x the 75th percentile covered a whole 100 us gap at 10,000
//! operations per second, and the pacer never slept.

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
    /// A deadline earlier than the driver's nap's end was registered: the nap ends now.
    registered: Cell<bool>,
    /// When the driver's nap ends, ns (0: it is not napping). A slot registering a later deadline
    /// leaves it asleep: the driver finds the deadline when it wakes, with no timer set again.
    nap_until: Cell<u64>,
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

/// The spun stretch before a deadline: at least this (about the CPU a wake-up itself costs) ...
const MIN_SLACK_NS: u64 = 15_000;
/// ... at most this (a machine so loaded that naps wake this late spins the rest), ...
const MAX_SLACK_NS: u64 = 2_000_000;
/// ... starting here until naps have been measured: a typical wake-up on a virtual machine, below
/// a 10,000-per-second gap (a start above the gap would never nap, and so never learn).
const START_SLACK_NS: u64 = 30_000;

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
            nap_until: Cell::new(0),
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
                    self.nap(wake, now).await;
                    let late = self.clock.now_ns().saturating_sub(wake);
                    if !self.registered.get() {
                        self.learn_slack(late);
                    }
                }
                None => self.nap(now + 50_000_000, now).await,
            }
        }
    }

    /// The spun stretch covers the typical wake-up (the median lateness of recent ones): a virtual
    /// machine wakes a timer some tens of microseconds late as a rule and up to a millisecond now
    /// and then, and spinning for the worse ones would cost more CPU than the wake-ups themselves.
    /// A start delayed by a late wake-up is recorded as such (the schedule's lateness, the
    /// intended-start latency).
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
        let median = sorted[sorted.len() / 2];
        self.slack_ns.set(median.clamp(MIN_SLACK_NS, MAX_SLACK_NS));
    }

    /// Sleeps from `now` until `until` (ns), or until a slot registers an earlier deadline.
    async fn nap(&self, until: u64, now: u64) {
        let d = Duration::from_nanos(until - now);
        let sleep: Pin<Box<dyn Future<Output = ()> + '_>> = match &self.timer {
            Some(t) => Box::pin(t.sleep(d)),
            None => Box::pin(tokio::time::sleep(d)),
        };
        let mut sleep = sleep;
        self.registered.set(false);
        self.nap_until.set(until);
        std::future::poll_fn(|cx| {
            // Slots and the driver may share one task, so a wake does not say who was meant: look.
            if self.registered.get() {
                return Poll::Ready(());
            }
            *self.driver.borrow_mut() = Some(cx.waker().clone());
            sleep.as_mut().poll(cx)
        })
        .await;
        self.nap_until.set(0);
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
        // The driver, napping until after this deadline's spun stretch began, must wake to nap
        // again for less (a slot may register a deadline a whole stretch before another one's).
        if t_ns.saturating_sub(self.slack_ns.get()) < self.nap_until.get() {
            self.registered.set(true);
            if let Some(d) = self.driver.borrow_mut().take() {
                d.wake();
            }
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

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::time::Instant;

    use super::Pacer;
    use crate::clock::Clock;
    use crate::StopSignal;

    /// A runtime as a worker thread runs its slots and their pacer on.
    fn worker_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Slots register deadlines in any order while the driver naps toward another: every wait
    /// ends at its deadline or after it, and none is lost.
    #[test]
    fn every_deadline_is_kept_whatever_order_slots_register_in() {
        let rt = worker_runtime();
        // The pacer's timer registers with the runtime's reactor.
        let _in_runtime = rt.enter();
        let clock = Clock::anchored(Instant::now());
        let pacer = Pacer::new(&clock);
        let stop = StopSignal::new();
        let finished = Cell::new(false);
        let woken = RefCell::new(Vec::new());
        let ms = 1_000_000;
        // Registered in this order: a far deadline first (the driver naps toward it), then an
        // earlier one, then one between them, then a later one.
        let deadlines = [400 * ms, 10 * ms, 200 * ms, 600 * ms];
        rt.block_on(async {
            let slots = async {
                let waits = deadlines.iter().enumerate().map(|(i, &t)| {
                    let (pacer, clock, woken) = (&pacer, &clock, &woken);
                    async move {
                        // Each registers a little after the one before, the driver napping meanwhile.
                        tokio::time::sleep(std::time::Duration::from_millis(i as u64)).await;
                        let kept = pacer.until(t).await;
                        woken.borrow_mut().push((t, clock.now_ns(), kept));
                    }
                });
                futures::future::join_all(waits).await;
                finished.set(true);
            };
            let bounded = tokio::time::timeout(std::time::Duration::from_secs(10), async {
                tokio::join!(slots, pacer.drive(&stop, &finished))
            });
            bounded.await.expect("every wait ends");
        });
        let woken = woken.into_inner();
        assert_eq!(woken.len(), deadlines.len());
        for (t, at, kept) in &woken {
            assert!(*kept && at >= t, "deadline {t} ns woken at {at} ns");
        }
    }

    /// A napping driver is woken by a deadline whose spun stretch begins before its nap ends, and
    /// left asleep by a later one (no timer set again for it: one wake-up per operation, not two).
    #[test]
    fn only_an_earlier_deadline_cuts_the_drivers_nap() {
        let rt = worker_runtime();
        let _in_runtime = rt.enter();
        let clock = Clock::anchored(Instant::now());
        let pacer = Pacer::new(&clock);
        let waker = futures::task::noop_waker();
        let (slack, nap_end) = (15_000, 1_000_000_000);
        pacer.slack_ns.set(slack);
        pacer.nap_until.set(nap_end);
        pacer.register(nap_end + slack, &waker);
        assert!(!pacer.registered.get(), "a later deadline woke the driver");
        pacer.register(nap_end + slack - 1, &waker);
        assert!(
            pacer.registered.get(),
            "a deadline within the nap left it asleep"
        );
        // Not napping (spinning or waking slots): it finds every deadline on its next look.
        pacer.registered.set(false);
        pacer.nap_until.set(0);
        pacer.register(1, &waker);
        assert!(!pacer.registered.get());
        assert_eq!(pacer.deadlines.borrow().len(), 3);
    }
}
