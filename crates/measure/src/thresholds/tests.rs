use std::time::Duration;

use scalebench_workload::{FailureClass, OpError, OpKind};

use super::*;
use crate::aggregate::PhaseMeta;
use crate::result::{DataSizes, EndedBy};
use crate::{Aggregator, Recorder};

const MS: u64 = 1_000_000;

/// A phase of known figures over 10 s: 1,000 READs of service times 1, 2, ..., 1,000 ms, of which
/// every 100th failed (10 failures); on an open loop each started `late_ms` after its intended
/// start; and 100 UPDATEs of 5 ms.
fn phase(open_loop: bool, late_ms: u64) -> PhaseResult {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut r = Recorder::new(0, 0, Duration::from_secs(1), open_loop, tx);
    let err = OpError::new(FailureClass::Timeout, "too slow");
    let mut ops: Vec<(OpKind, u64, u64, bool)> = (1..=1000u64)
        .map(|i| (OpKind::Read, i * 9 * MS, i * MS, i % 100 == 0))
        .chain((0..100u64).map(|i| (OpKind::Update, i * 90 * MS, 5 * MS, false)))
        .collect();
    ops.sort_by_key(|(_, start, took, _)| start + took);
    for (kind, start, took, fails) in ops {
        r.issue(kind);
        let intended = start.saturating_sub(late_ms * MS);
        let outcome = if fails { Err(&err) } else { Ok(()) };
        r.record(kind, intended, start, start + took, outcome);
    }
    r.finish();
    let mut agg = Aggregator::new(Duration::from_secs(1), open_loop, 1);
    rx.try_iter().for_each(|b| agg.add(b));
    agg.finish(PhaseMeta {
        phase: crate::Phase::Run,
        measurement_start_unix_ms: 1_700_000_000_000,
        duration: Duration::from_secs(10),
        ended_by: EndedBy::Duration,
        data: DataSizes::default(),
    })
    .unwrap()
    .0
}

fn verdict(text: &str, p: &PhaseResult) -> Verdict {
    let t: Threshold = text.parse().unwrap();
    judge(&[t], std::slice::from_ref(p)).remove(0)
}

#[test]
fn thresholds_are_read_as_written() {
    let t: Threshold = "read.p99 < 10ms".parse().unwrap();
    assert_eq!(t.operation.as_deref(), Some("READ"));
    assert_eq!(t.figure, Figure::Quantile(0.99));
    assert_eq!((t.comparison, t.bound), (Comparison::Below, 10_000.0));
    let t: Threshold = "p99.9<=2s".parse().unwrap();
    assert_eq!((t.operation, t.figure), (None, Figure::Quantile(0.999)));
    assert_eq!((t.comparison, t.bound), (Comparison::AtMost, 2e6));
    let t: Threshold = "Read-Modify-Write.max<500us".parse().unwrap();
    assert_eq!(t.operation.as_deref(), Some("READ-MODIFY-WRITE"));
    assert_eq!((t.figure, t.bound), (Figure::MaxLatency, 500.0));
    let t: Threshold = "throughput>=1000".parse().unwrap();
    assert_eq!(
        (t.figure, t.comparison),
        (Figure::Throughput, Comparison::AtLeast)
    );
    let t: Threshold = "errors<0.5%".parse().unwrap();
    assert_eq!((t.figure, t.bound), (Figure::ErrorPercent, 0.5));
    let t: Threshold = "update.errors < 3".parse().unwrap();
    assert_eq!((t.figure, t.bound), (Figure::Errors, 3.0));
    for (bad, names) in [
        ("p99 10ms", "no comparison"),
        ("reed.p99<10ms", "unknown operation 'reed'"),
        ("p100<10ms", "unknown figure 'p100'"),
        ("latency<10ms", "unknown figure 'latency'"),
        ("p99<ten", "'ten' is not a number"),
        ("p99<10%", "unit '%'"),
        ("throughput>10ms", "unit 'ms'"),
        ("errors<150%", "unit '%'"),
    ] {
        let e = bad.parse::<Threshold>().unwrap_err();
        assert!(e.contains(bad) && e.contains(names), "{bad}: {e}");
    }
}

/// Each figure lands on the phase's known truth, and the verdict turns where the truth is.
#[test]
fn each_figure_is_judged_against_the_known_truth() {
    let closed = phase(false, 0);
    // 990 successful READs of 1..=1000 ms but every 100th: the 981st, their p99, is 990 ms
    // (HdrHistogram's 3 significant digits: within 0.1%), their max 999 ms.
    let v = verdict("read.p99<995ms", &closed);
    let measured = v.measured.unwrap();
    assert!((measured - 990_000.0).abs() <= 990.0, "{v:?}");
    assert!(v.met, "{v:?}");
    assert!(!verdict("read.p99<985ms", &closed).met);
    assert!(verdict("read.max<=1s", &closed).met);
    assert!(!verdict("read.max<990ms", &closed).met);
    // UPDATEs all took 5 ms.
    let v = verdict("update.p50<=5.01ms", &closed);
    assert!(
        v.met && (v.measured.unwrap() - 5000.0).abs() <= 5.0,
        "{v:?}"
    );
    // Every operation merged by histogram: 1,090 successes, of which 100 of 5 ms: the 545th is
    // the READs' 445th, 449 ms.
    let all = verdict("p50<1s", &closed).measured.unwrap();
    assert!((all - 449_000.0).abs() <= 449.0, "p50 of all: {all}");
    // Throughput: 1,090 successful operations in 10 s.
    let v = verdict("throughput>=109", &closed);
    assert!(v.met && (v.measured.unwrap() - 109.0).abs() < 1e-9, "{v:?}");
    assert!(!verdict("throughput>109", &closed).met);
    assert_eq!(verdict("read.throughput>=99", &closed).measured, Some(99.0));
    // Errors: 10 of 1,100 completed (0.909%); 10 of READs' 1,000 (1%).
    assert_eq!(verdict("errors<11", &closed).measured, Some(10.0));
    assert!(verdict("errors<1%", &closed).met);
    assert!(!verdict("read.errors<1%", &closed).met);
    assert!(verdict("read.errors<=1%", &closed).met);
    assert!(!verdict("update.errors>0", &closed).met);
}

/// On an open loop the latency judged is the one from the intended start (coordinated omission
/// corrected), not the service time.
#[test]
fn an_open_loop_is_judged_on_its_corrected_latency() {
    let late = phase(true, 500);
    let v = verdict("read.p99<1.2s", &late);
    assert!(!v.met, "{v:?}");
    assert!(
        (v.measured.unwrap() - 1_490_000.0).abs() <= 1_490.0,
        "{v:?}"
    );
    assert!(verdict("read.p99<1.5s", &late).met);
    assert!(verdict("read.p99<995ms", &phase(true, 0)).met);
}

/// A figure the phase did not measure breaks its threshold, and says why.
#[test]
fn a_figure_not_measured_breaks_its_threshold() {
    let closed = phase(false, 0);
    let v = verdict("scan.p99<1s", &closed);
    assert!(!v.met && v.measured.is_none(), "{v:?}");
    assert!(
        v.line().contains("no SCAN operation in the run phase"),
        "{}",
        v.line()
    );
    let report = crate::thresholds::report(
        &["p99<2s".parse().unwrap(), "scan.p99<1s".parse().unwrap()],
        None,
        std::slice::from_ref(&closed),
    );
    let broken: Vec<&str> = report.broken().map(|v| v.threshold.as_str()).collect();
    assert_eq!(broken, ["scan.p99<1s"]);
    assert!(report.verdicts[0]
        .line()
        .starts_with("met: p99<2s (run: measured 9"));
}
