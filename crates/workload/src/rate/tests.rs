use super::*;

/// Issue 63: a profile cut off by the window, or ending before it, is said so with the mean
/// the window offers (the docs' 90 s ramp from 100 to 1,000 under 15 s: 175 ops/s).
#[test]
fn a_profile_that_does_not_fit_its_window_says_so() {
    let ramp = RateProfile::parse("ramp:from=100,to=1000,over=90s").unwrap();
    let cut = ramp.fit(Duration::from_secs(15)).unwrap();
    assert!(
        cut.contains("lasts 90 s, longer than the 15 s window")
            && cut.contains("mean over the window 175.0 ops/s"),
        "{cut}"
    );
    let held = ramp.fit(Duration::from_secs(100)).unwrap();
    assert!(
        held.contains("holds its last rate (1000 ops/s) for the remaining 10.0 s"),
        "{held}"
    );
    assert_eq!(ramp.fit(Duration::from_secs(90)), None);
    let sine = RateProfile::parse("sine:mean=100,amplitude=50,period=10s").unwrap();
    assert_eq!(sine.fit(Duration::from_secs(15)), None);
    let constant = RateProfile::parse("constant:rate=10").unwrap();
    assert_eq!(constant.fit(Duration::from_secs(15)), None);
}

/// Issue 62, low 4: a profile's rates pass the rule `--target` passes, no other.
#[test]
fn a_profile_asks_only_rates_a_target_may_be() {
    for r in ["1e-300", "0.0005", "2e9"] {
        assert!(!keepable_rate(r.parse().unwrap()), "{r}");
        let e = RateProfile::parse(&format!("constant:rate={r}")).unwrap_err();
        assert!(e.contains("0.001 to 1e9"), "{r}: {e}");
        let e = RateProfile::parse(&format!("ramp:from=100,to={r},over=10s")).unwrap_err();
        assert!(e.contains("to = "), "{r}: {e}");
    }
    for r in ["0.001", "1e9"] {
        assert!(keepable_rate(r.parse().unwrap()), "{r}");
        RateProfile::parse(&format!("constant:rate={r}")).unwrap();
    }
    RateProfile::parse("ramp:from=100,to=0,over=10s").unwrap();
}

#[test]
fn a_profile_down_to_0_says_when_its_arrivals_end() {
    let end = |p: &str| RateProfile::parse(p).unwrap().arrivals_end();
    assert_eq!(end("ramp:from=100,to=0,over=10s"), Some(10.0));
    assert_eq!(
        end("staircase:start=300,step=-100,every=5s,steps=4"),
        Some(15.0)
    );
    assert_eq!(end("staircase:start=300,step=-100,every=5s,steps=3"), None);
    assert_eq!(end("sine:mean=10,amplitude=10,period=4s"), None);
    assert_eq!(end("constant:rate=5"), None);
    // Past its end the profile asks no arrival: the schedule's time_of agrees.
    let p = RateProfile::parse("ramp:from=100,to=0,over=10s").unwrap();
    assert_eq!(p.time_of(p.arrivals_by(10.0) + 1.0, 0.0), None);
}

fn all() -> Vec<RateProfile> {
    [
            "constant:rate=250",
            "ramp:from=100,to=1000,over=10s",
            "ramp:from=1000,to=0,over=4s",
            "staircase:start=100,step=200,every=2s,steps=4",
            "staircase:start=500,step=-100,every=1s,steps=5",
            "sine:mean=500,amplitude=500,period=3s",
            "sine:mean=400,amplitude=100,period=750ms",
            "staircase:start=250,step=100,every=2500ms,steps=4",
            "ramp:from=1,to=2,over=2m",
            // Sequences (issue 63): k6's ramp up, hold, ramp down; a zero stretch between two
            // rates; a staircase, a sine and a ramp that holds its end.
            "ramp:from=0,to=1000,over=3s; hold:rate=1000,for=6s; ramp:from=1000,to=0,over=3s",
            "ramp:from=100,to=0,over=2s; constant:rate=0,for=3s; constant:rate=50",
            "staircase:start=100,step=100,every=1s,steps=3; sine:mean=300,amplitude=100,period=2s,for=5s; ramp:from=200,to=50,over=2s",
        ]
        .iter()
        .map(|t| RateProfile::parse(t).unwrap())
        .collect()
}

/// The arrivals expected by t are the integral of the rate: checked by summing small steps.
#[test]
fn arrivals_by_is_the_integral_of_the_rate() {
    for p in all() {
        let dt = 1e-4;
        let mut sum = 0.0;
        for i in 0..200_000 {
            let t = i as f64 * dt;
            sum += p.rate_at(t + dt / 2.0) * dt;
            if i % 10_000 == 9_999 {
                let expected = p.arrivals_by(t + dt);
                assert!(
                    (sum - expected).abs() <= 1e-3 * expected.max(1.0) + 1.0,
                    "{p}: at {:.1} s {sum} summed, {expected} by the formula",
                    t + dt
                );
            }
        }
    }
}

#[test]
fn time_of_inverts_arrivals_by() {
    for p in all() {
        let mut from = 0.0;
        for k in 1..2000 {
            let u = k as f64 * 3.7;
            match p.time_of(u, from) {
                Some(t) => {
                    assert!(t >= from, "{p}: {u} at {t}, before {from}");
                    let back = p.arrivals_by(t);
                    assert!((back - u).abs() < 1e-6 * u, "{p}: {u} -> {t} -> {back}");
                    from = t;
                }
                None => {
                    // Only a profile that ends at 0 ops/s runs out of arrivals.
                    assert_eq!(p.rate_at(1e9), 0.0, "{p}: {u} never due");
                    assert!(u >= p.arrivals_by(1e6) - 1e-6, "{p}: {u}");
                    break;
                }
            }
        }
    }
}

#[test]
fn the_text_form_reads_back() {
    for p in all() {
        assert_eq!(RateProfile::parse(&p.to_string()).unwrap(), p, "{p}");
    }
    let half = RateProfile::parse("ramp:from=100,to=1000,over=10s")
        .unwrap()
        .scaled(0.5);
    assert_eq!(half.rate_at(0.0), 50.0);
    assert_eq!(half.rate_at(20.0), 500.0);
}

#[test]
fn bad_profiles_name_what_is_wrong() {
    for (text, says) in [
        ("wave:mean=1", "'wave': expected constant, hold, ramp"),
        ("ramp:from=100,to=1000", "ramp needs over="),
        ("ramp:from=100,to=1000,over=10s,by=2", "ramp has no 'by'"),
        ("ramp:from=100,from=200,to=1,over=1s", "'from' given twice"),
        ("ramp:from=-5,to=1000,over=10s", "from = -5"),
        ("constant:rate=0", "asks 0 ops/s throughout"),
        ("hold:rate=10", "hold needs for="),
        ("sine:mean=10,amplitude=1,period=1s,for=0s", "for = 0"),
        (
            "ramp:from=0,to=10,over=1s; constant:rate=5; ramp:from=5,to=0,over=1s",
            "segment 2 of 3 ('constant:rate=5') lasts to the end of the window: give it for=D",
        ),
        (
            "ramp:from=0,to=10,over=1s; wave:x=1",
            "segment 2 of 2 ('wave:x=1'): 'wave': expected",
        ),
        (
            "ramp:from=0,to=10,over=1s;; hold:rate=10,for=1s",
            "segment 2 of 3 is empty",
        ),
        (
            "hold:rate=10,for=1s; ramp:from=10,to=-1,over=1s",
            "segment 2 of 2 ('ramp:from=10,to=-1,over=1s'): to = -1",
        ),
        ("ramp:from=10,to=1000,over=0s", "over = 0"),
        (
            "ramp:from=ten,to=1000,over=1s",
            "from=ten: expected a number",
        ),
        (
            "ramp:from=NaN,to=1000,over=1s",
            "from=NaN: expected a number",
        ),
        (
            "ramp:from=10,to=1000,over=soon",
            "over=soon: expected a duration",
        ),
        ("sine:mean=100,amplitude=200,period=1s", "would go negative"),
        ("sine:mean=100,amplitude=-2,period=1s", "amplitude = -2"),
        (
            "staircase:start=100,step=-50,every=1s,steps=4",
            "goes negative",
        ),
        ("staircase:start=100,step=5,every=1s,steps=0", "steps = 0"),
        ("staircase:start=100,step=5,every=1s,steps=2.5", "steps=2.5"),
        ("constant:rate=2e9", "rate = 2000000000"),
        ("constant", "constant needs rate="),
        ("ramp:from", "'from': expected NAME=VALUE"),
    ] {
        let e = RateProfile::parse(text).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
        assert!(!e.contains('\n'), "{text}: one line: {e}");
    }
}

/// Issue 63: a k6-like profile of three segments (up from 0 to 1,000 over 30 s, 1,000 for 60 s,
/// down to 0 over 30 s) asks the analytic integral at its boundaries and inside each segment, and
/// the inverse gives back the times.
#[test]
fn a_sequence_asks_the_integral_of_its_segments() {
    let p = RateProfile::parse(
        "ramp:from=0,to=1000,over=30s; hold:rate=1000,for=60s; ramp:from=1000,to=0,over=30s",
    )
    .unwrap();
    // t, rate, arrivals due: 1000 t^2 / 60 up to 30 s; 15,000 + 1000 (t - 30) up to 90 s;
    // 75,000 + 1000 s - 1000 s^2 / 60 (s = t - 90) up to 120 s; 90,000 after.
    let ramp_down = |s: f64| 75_000.0 + 1000.0 * s - 1000.0 * s * s / 60.0;
    for (t, rate, due) in [
        (0.0, 0.0, 0.0),
        (10.0, 1000.0 / 3.0, 1000.0 * 100.0 / 60.0),
        (30.0, 1000.0, 15_000.0),
        (60.0, 1000.0, 45_000.0),
        (90.0, 1000.0, 75_000.0),
        (100.0, 1000.0 * 2.0 / 3.0, ramp_down(10.0)),
        (120.0, 0.0, 90_000.0),
        (500.0, 0.0, 90_000.0),
    ] {
        assert!(
            (p.rate_at(t) - rate).abs() < 1e-9,
            "rate at {t}: {}",
            p.rate_at(t)
        );
        assert!(
            (p.arrivals_by(t) - due).abs() < 1e-6,
            "due by {t}: {}, {due} by the integral",
            p.arrivals_by(t)
        );
        if t > 0.0 && t <= 120.0 {
            let back = p.time_of(due, 0.0).unwrap();
            assert!((back - t).abs() < 1e-6, "{due} due at {back}, not {t}");
        }
    }
    assert_eq!(p.time_of(90_000.5, 100.0), None, "none due after the last");
    assert_eq!(p.length_s(), 120.0);
    assert_eq!(p.arrivals_end(), Some(120.0));
    assert_eq!(p.mean_over(Duration::from_secs(120)), 750.0);
    assert_eq!(p.fit(Duration::from_secs(120)), None);
    let cut = p.fit(Duration::from_secs(60)).unwrap();
    assert!(
        cut.contains("lasts 120 s, longer than the 60 s window"),
        "{cut}"
    );
    // `hold` is `constant` with `for`; the text form separates segments by "; ".
    assert_eq!(
        p.to_string(),
        "ramp:from=0,to=1000,over=30s; constant:rate=1000,for=1m; ramp:from=1000,to=0,over=30s"
    );
    assert_eq!(p.segments().count(), 3);
    // Half the rate: half the arrivals, at the same times.
    let half = p.scaled(0.5);
    assert_eq!(half.arrivals_by(100.0), p.arrivals_by(100.0) / 2.0);
}

/// A single segment written as before issue 63 reads and prints as before; a last segment
/// without a length lasts to the end of the window (no length to take a run's duration from).
#[test]
fn one_segment_is_the_profile_it_was() {
    for text in [
        "constant:rate=250",
        "ramp:from=100,to=1000,over=10s",
        "staircase:start=100,step=200,every=2s,steps=4",
        "sine:mean=500,amplitude=500,period=3s",
    ] {
        assert_eq!(RateProfile::parse(text).unwrap().to_string(), text);
    }
    let len = |t: &str| RateProfile::parse(t).unwrap().length_s();
    assert_eq!(len("constant:rate=250"), f64::INFINITY);
    assert_eq!(len("constant:rate=250,for=1m"), 60.0);
    assert_eq!(len("sine:mean=5,amplitude=1,period=1s"), f64::INFINITY);
    assert_eq!(len("sine:mean=5,amplitude=1,period=1s,for=3s"), 3.0);
    assert_eq!(len("staircase:start=1,step=1,every=2s,steps=3"), 6.0);
    assert_eq!(
        len("hold:rate=1,for=2s; sine:mean=5,amplitude=1,period=1s"),
        f64::INFINITY
    );
    // A sine with a length holds its rate at its end after it.
    let p = RateProfile::parse("sine:mean=100,amplitude=50,period=4s,for=1s").unwrap();
    assert_eq!(p.rate_at(7.0), 150.0);
}

/// After a stretch at 0 ops/s inside the profile, arrivals resume where the next rate starts; a
/// profile whose last rate is 0 ends its arrivals where its rate last fell to 0.
#[test]
fn arrivals_skip_a_stretch_at_zero_and_end_where_the_rate_does() {
    let p =
        RateProfile::parse("ramp:from=100,to=0,over=2s; constant:rate=0,for=3s; constant:rate=50")
            .unwrap();
    assert_eq!(p.time_of(100.0, 0.0), Some(2.0));
    let after = p.time_of(100.5, 2.0).unwrap();
    assert!((after - 5.01).abs() < 1e-9, "{after}");
    assert_eq!(p.arrivals_end(), None);
    let end = |t: &str| RateProfile::parse(t).unwrap().arrivals_end();
    assert_eq!(end("constant:rate=100,for=2s; constant:rate=0"), Some(2.0));
    assert_eq!(end("hold:rate=100,for=2s; hold:rate=0,for=3s"), Some(2.0));
    assert_eq!(
        end("ramp:from=0,to=10,over=1s; ramp:from=10,to=0,over=4s"),
        Some(5.0)
    );
    assert_eq!(
        end("hold:rate=5,for=1s; staircase:start=300,step=-100,every=5s,steps=4"),
        Some(16.0)
    );
}

#[derive(Debug, serde::Deserialize)]
struct Profile {
    rate_profile: RateProfileDecl,
}

/// A workload file's stages: segments' text, or k6's `{ duration, target }` ramping from the rate
/// reached before (0 at first); an error names the stage.
#[test]
fn stages_read_as_k6_reads_them() {
    let k6 = |stages: Vec<StageDecl>| RateProfileDecl::Stages(stages).text();
    let target = |d: &str, t: f64| StageDecl::Target {
        duration: crate::duration::DurationText::parse(d).unwrap(),
        target: t,
    };
    assert_eq!(
        k6(vec![
            target("30s", 1000.0),
            target("1m", 1000.0),
            target("30s", 0.0)
        ])
        .unwrap(),
        "ramp:from=0,to=1000,over=30s; constant:rate=1000,for=1m; ramp:from=1000,to=0,over=30s"
    );
    assert_eq!(
        k6(vec![
            StageDecl::Segment("staircase:start=100,step=100,every=1s,steps=3".into()),
            target("1m30s", 0.0),
        ])
        .unwrap(),
        "staircase:start=100,step=100,every=1s,steps=3; ramp:from=300,to=0,over=90s"
    );
    // A duration that is not one is refused as the file is read, the stage named.
    let read = |text: &str| toml::from_str::<Profile>(text).map(|p| p.rate_profile);
    for (text, says) in [
        (
            "[{ duration = \"soon\", target = 5 }]",
            "stage 1: duration = \"soon\": expected a duration",
        ),
        (
            "[{ duration = \"1s\", target = 1 }, { duration = \"soon\", target = 5 }]",
            "stage 2: duration = \"soon\": expected a duration",
        ),
    ] {
        let e = read(&format!("rate_profile = {text}")).unwrap_err();
        assert!(e.message().contains(says), "{e}");
    }
    assert_eq!(
        read("rate_profile = [{ duration = \"1m30s\", target = 5 }]").unwrap(),
        RateProfileDecl::Stages(vec![target("1m30s", 5.0)])
    );
    for (stages, says) in [
        (
            vec![target("1s", 5.0), target("1s", -5.0)],
            "stage 2: { duration = \"1s\", target = -5 }",
        ),
        (
            vec![StageDecl::Segment("hold:rate=5".into())],
            "stage 1: 'hold:rate=5': hold needs for=",
        ),
        (
            vec![
                StageDecl::Segment("constant:rate=5".into()),
                target("1s", 5.0),
            ],
            "segment 1 of 2 ('constant:rate=5') lasts to the end",
        ),
        (vec![target("1s", 0.0)], "asks 0 ops/s throughout"),
        (vec![], "at least one segment"),
    ] {
        let e = k6(stages).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}
