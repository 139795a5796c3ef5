//! A step's estimates and judgement, each against a known truth: simulated latencies of a known
//! distribution (the interval covers the true percentile about 95% of the time), a simulated queue
//! below and above its capacity (the trend test tells them apart).

use rand::{rngs::SmallRng, Rng, SeedableRng};

use super::*;
use crate::saturate::tests::step;

/// `intervals` intervals of `per` operations each, latencies exponential of mean 1 ms (ns).
fn exponential_run(rng: &mut SmallRng, intervals: usize, per: usize) -> Vec<LatencyHistogram> {
    let exp = rand_distr::Exp::new(1.0).unwrap();
    (0..intervals)
        .map(|_| {
            let mut h = new_histogram();
            for _ in 0..per {
                let ms: f64 = rng.sample(exp);
                h.record((ms * 1e6) as u64 + 1).unwrap();
            }
            h
        })
        .collect()
}

fn whole(runs: &[Vec<LatencyHistogram>]) -> LatencyHistogram {
    let mut w = new_histogram();
    for h in runs.iter().flatten() {
        w.add(h).unwrap();
    }
    w
}

/// The share of `replications` simulated steps whose p99 interval holds the true p99 (Exp(1 ms):
/// -ln(0.01) ms), and the method used.
fn coverage(intervals: usize, per: usize, replications: u64) -> (f64, Option<IntervalMethod>) {
    let truth_us = -(0.01f64.ln()) * 1000.0;
    let mut covered = 0;
    let mut method = None;
    for seed in 0..replications {
        let mut rng = SmallRng::seed_from_u64(seed);
        let runs = vec![exponential_run(&mut rng, intervals, per)];
        let e = estimate(&whole(&runs), &runs, 0.99);
        method = e.method;
        if e.low_us.unwrap() <= truth_us && e.high_us.is_some_and(|h| truth_us <= h) {
            covered += 1;
        }
    }
    (covered as f64 / replications as f64, method)
}

#[test]
fn sectioning_covers_the_true_p99_about_95_percent_of_the_time() {
    // 20,000 operations: ten sections of 2,000 each.
    let (share, method) = coverage(50, 400, 150);
    assert_eq!(method, Some(IntervalMethod::Sectioning));
    assert!((0.88..=0.995).contains(&share), "coverage {share}");
}

#[test]
fn order_statistics_cover_it_when_sections_cannot_be_made() {
    // 2,000 operations make one section of 1,000 for a p99: too few, order statistics instead.
    let (share, method) = coverage(20, 100, 300);
    assert_eq!(method, Some(IntervalMethod::OrderStatistics));
    assert!((0.9..=1.0).contains(&share), "coverage {share}");
}

#[test]
fn sections_hold_ten_operations_above_the_percentile() {
    let mut rng = SmallRng::seed_from_u64(7);
    // 3,000 operations in 100 intervals of 30: sections of 34 intervals (1,020 operations), the
    // last 960 joining the second.
    let runs = vec![exponential_run(&mut rng, 100, 30)];
    let made = sections(&runs, 0.99);
    assert_eq!(
        made.iter().map(|s| s.len()).collect::<Vec<_>>(),
        [1020, 1980]
    );
    assert!(made.iter().all(|s| s.len() >= 1000));
    assert_eq!(made.iter().map(|s| s.len()).sum::<u64>(), 3000);
    // No p99.9 section: it would need 10,000 operations.
    assert!(sections(&runs, 0.999).is_empty());
    // A p99 of 300 operations has no upper bound; its step cannot pass on it.
    let few = vec![exponential_run(&mut rng, 3, 100)];
    let e = estimate(&whole(&few), &few, 0.99);
    assert_eq!(e.high_us, None);
    let objective = Objective {
        p99: Some(Duration::from_secs(1)),
        ..Default::default()
    };
    let mut s = step(100.0, 100.0, 1000.0);
    s.p99 = e;
    let (v, why) = judge(100.0, &s, 300, &objective);
    assert_eq!(v, StepVerdict::Unsure);
    assert!(why.contains("too few operations"), "{why}");
}

#[test]
fn the_interval_is_centred_on_the_whole_steps_estimate() {
    // Sections whose own p99s average elsewhere than the whole's: the interval holds the whole's.
    let mut rng = SmallRng::seed_from_u64(3);
    let runs = vec![exponential_run(&mut rng, 60, 500)];
    let w = whole(&runs);
    let e = estimate(&w, &runs, 0.99);
    assert_eq!(e.us, quantile_us(&w, 0.99));
    assert!(e.low_us.unwrap() < e.us && e.us < e.high_us.unwrap());
    assert!(((e.us - e.low_us.unwrap()) - (e.high_us.unwrap() - e.us)).abs() < 1e-6);
}

/// A FIFO server of `capacity` ops/s offered `rate` ops/s (even or Poisson arrivals) for
/// `window_s`: each interval of `interval_s` holds the latencies (from the intended start) of the
/// operations completed in it.
fn queue(
    rate: f64,
    capacity: f64,
    poisson: bool,
    window_s: f64,
    interval_s: f64,
    seed: u64,
) -> Vec<IntervalSample> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let exp = rand_distr::Exp::new(rate).unwrap();
    let n = (window_s / interval_s).round() as usize;
    let mut samples: Vec<IntervalSample> = (0..n)
        .map(|index| IntervalSample {
            judged: new_histogram(),
            completions: 0,
            whole: true,
            index,
        })
        .collect();
    let (mut arrival, mut free) = (0.0f64, 0.0f64);
    loop {
        arrival += if poisson { rng.sample(exp) } else { 1.0 / rate };
        let done = arrival.max(free) + 1.0 / capacity;
        free = done;
        let i = (done / interval_s) as usize;
        if i >= n {
            break;
        }
        samples[i]
            .judged
            .record(((done - arrival) * 1e9) as u64 + 1)
            .unwrap();
        samples[i].completions += 1;
    }
    samples
}

#[test]
fn a_queue_above_its_capacity_trends_and_one_below_does_not() {
    // 2,000 ops/s of capacity; 2 s and 8 s windows in ten intervals; even and Poisson arrivals.
    for window in [2.0, 8.0] {
        let interval = window / 10.0;
        for seed in 0..10 {
            for poisson in [false, true] {
                let below = run_trend(
                    &queue(1900.0, 2000.0, poisson, window, interval, seed),
                    interval,
                    1900.0,
                )
                .unwrap();
                assert!(
                    !below.trending,
                    "95% of the capacity, {window} s, poisson {poisson}: {below:?}"
                );
            }
            // 2% above: the queue grows by 20 ms each second.
            let above = run_trend(
                &queue(2040.0, 2000.0, false, window, interval, seed),
                interval,
                2040.0,
            )
            .unwrap();
            assert!(above.trending, "2% above, {window} s: {above:?}");
            assert!(
                (above.latency_rise_ms_per_s - 20.0).abs() < 2.0,
                "{above:?}"
            );
        }
    }
    // 4.3% above with Poisson arrivals (the 2,086 ops/s on 2,000): caught too.
    for seed in 0..10 {
        let t = run_trend(&queue(2086.0, 2000.0, true, 3.0, 0.3, seed), 0.3, 2086.0).unwrap();
        assert!(t.trending, "{t:?}");
    }
}

#[test]
fn a_step_whose_run_trended_fails_and_says_why() {
    let objective = Objective {
        p99: Some(Duration::from_secs(1)),
        ..Default::default()
    };
    let interval = 0.3;
    let trend = run_trend(
        &queue(2086.0, 2000.0, false, 3.0, interval, 1),
        interval,
        2086.0,
    )
    .unwrap();
    let mut s = step(2086.0, 2000.0, 50_000.0);
    s.p99 = Estimate {
        us: 120_000.0,
        low_us: Some(110_000.0),
        high_us: Some(130_000.0),
        method: Some(IntervalMethod::Sectioning),
        sections: 10,
    };
    // Within the objective and 96% of the rate completed: it passed before the trend test.
    s.trends = vec![RunTrend {
        trending: false,
        ..trend
    }];
    assert_eq!(judge(2086.0, &s, 6000, &objective).0, StepVerdict::Pass);
    s.trends = vec![trend];
    let (v, why) = judge(2086.0, &s, 6000, &objective);
    assert_eq!(v, StepVerdict::Fail);
    assert!(why.starts_with("not stationary: latency rose"), "{why}");
}

#[test]
fn a_step_passes_only_when_its_interval_is_within_the_objective() {
    let objective = Objective {
        p99: Some(Duration::from_millis(1)),
        ..Default::default()
    };
    let mut s = step(1000.0, 990.0, 100.0);
    s.p99 = Estimate {
        us: 800.0,
        low_us: Some(700.0),
        high_us: Some(900.0),
        method: Some(IntervalMethod::Sectioning),
        sections: 5,
    };
    assert_eq!(judge(1000.0, &s, 1000, &objective).0, StepVerdict::Pass);
    s.p99.high_us = Some(1100.0);
    assert_eq!(judge(1000.0, &s, 1000, &objective).0, StepVerdict::Unsure);
    s.p99 = Estimate {
        us: 1500.0,
        low_us: Some(1200.0),
        high_us: Some(1800.0),
        method: Some(IntervalMethod::Sectioning),
        sections: 5,
    };
    assert_eq!(judge(1000.0, &s, 1000, &objective).0, StepVerdict::Fail);
    // Behind its rate it fails, whatever its latency.
    let slow = step(1000.0, 900.0, 100.0);
    let (v, why) = judge(1000.0, &slow, 900, &Objective::default());
    assert_eq!(v, StepVerdict::Fail);
    assert!(why.contains("cannot keep up"), "{why}");
}

#[test]
fn wilson_interval_brackets_the_proportion() {
    let (lo, hi) = wilson(10, 1000);
    assert!(lo < 0.01 && 0.01 < hi && hi < 0.02, "{lo} {hi}");
    let (lo, hi) = wilson(0, 1000);
    assert!(lo < 1e-9, "{lo}");
    assert!(hi < 0.005, "{hi}");
}

#[test]
fn completions_that_fall_below_keeping_up_trend_and_a_small_sag_does_not() {
    // Flat latency (2 ms), ten 0.5 s intervals, completions sagging linearly by `fall` ops/s.
    let series = |fall: f64| -> Vec<IntervalSample> {
        (0..10)
            .map(|i| {
                let mut judged = new_histogram();
                judged.record_n(2_000_000, 100).unwrap();
                IntervalSample {
                    judged,
                    completions: ((2000.0 - fall * i as f64 / 9.0) * 0.5) as u64,
                    whole: true,
                    index: i,
                }
            })
            .collect()
    };
    let sagging = run_trend(&series(300.0), 0.5, 2000.0).unwrap();
    assert!(sagging.trending, "{sagging:?}");
    assert!(
        trend_words(&sagging).contains("completions fell"),
        "{sagging:?}"
    );
    // 2% down by the end: still within what keeps up.
    let small = run_trend(&series(40.0), 0.5, 2000.0).unwrap();
    assert!(!small.trending, "{small:?}");
    assert!(small.completions_fall_p < 0.05, "{small:?}");
}

/// A replay's capture whose traffic falls to half through the window, served as it came: its
/// completions keep pace with what was due in each interval, so no trend, where the same
/// completions against a constant rate would be a service falling behind. Completions that fall
/// below a flat capture's schedule still trend.
#[test]
fn a_replay_is_judged_against_its_captures_shape() {
    let flat_latency = || {
        let mut judged = new_histogram();
        judged.record_n(2_000_000, 100).unwrap();
        judged
    };
    let due: Vec<u64> = (0..10).map(|i| 1000 - 50 * i).collect();
    let served: Vec<IntervalSample> = due
        .iter()
        .enumerate()
        .map(|(index, &n)| IntervalSample {
            judged: flat_latency(),
            completions: n,
            whole: true,
            index,
        })
        .collect();
    let offered = due.iter().sum::<u64>() as f64 / 5.0;
    let shaped = run_trend_shaped(&served, 0.5, offered, &due).unwrap();
    assert!(!shaped.trending, "{shaped:?}");
    assert!(
        shaped.completions_change_pct_per_s.abs() < 1e-9,
        "{shaped:?}"
    );
    assert!(run_trend(&served, 0.5, offered).unwrap().trending);
    let flat = vec![1000u64; 10];
    let behind = run_trend_shaped(&served, 0.5, 2000.0, &flat).unwrap();
    assert!(behind.trending, "{behind:?}");
    assert!(
        trend_words(&behind).contains("completions fell"),
        "{behind:?}"
    );
}
