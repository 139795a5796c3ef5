//! The classes of keys read back, from the writes an operation notes to the verdict.

use super::*;
use scalebench_workload::{FailureClass, OpError};

fn log() -> WriteLog {
    WriteLog::new(&scalebench_workload::builtin::builtin_with("a", &[]).unwrap())
}

/// An operation's writes noted and sent, not yet recorded.
struct Pending(Intents);

/// Begins an operation writing `values` to `key` as `effect` (one write).
fn begin(log: &WriteLog, key: &str, effect: Effect, values: &[(usize, &str)]) -> Pending {
    let mut n = log.intents();
    n.begin(log.begin());
    let values: Fields = values.iter().map(|(f, v)| (*f, v.to_string())).collect();
    n.write(key, effect, &values);
    Pending(n)
}

impl Pending {
    /// Over with `outcome` (`None`: never answered, as at the hard stop), and recorded.
    fn end(mut self, log: &WriteLog, outcome: Option<Result<(), OpError>>) {
        if let Some(result) = outcome {
            self.0.answered(Some(0), &result);
        }
        log.record(&mut self.0);
    }
}

fn ok() -> Option<Result<(), OpError>> {
    Some(Ok(()))
}

fn failed(class: FailureClass) -> Option<Result<(), OpError>> {
    Some(Err(OpError::new(class, "scripted")))
}

/// One operation, over before the next begins.
fn write(
    log: &WriteLog,
    key: &str,
    effect: Effect,
    values: &[(usize, &str)],
    how: Option<Result<(), OpError>>,
) {
    begin(log, key, effect, values).end(log, how);
}

/// The class of `key` read back as `read` (`None`: not found), with dataintegrity's check when
/// `integrity`.
fn class_with(
    log: &WriteLog,
    key: &str,
    read: Option<&[(usize, &str)]>,
    integrity: Option<classes::Kept<'_>>,
) -> (Class, String) {
    let fields: Option<Fields> = read.map(|r| r.iter().map(|(f, v)| (*f, v.to_string())).collect());
    let judge = classes::Judge {
        types: &log.types,
        names: &log.names,
        integrity,
    };
    let (class, why) = log
        .judge_key(&judge, key, fields.as_ref())
        .expect("a recorded key");
    (class, why.unwrap_or_default())
}

fn class(log: &WriteLog, key: &str, read: Option<&[(usize, &str)]>) -> (Class, String) {
    class_with(log, key, read, None)
}

#[test]
fn the_last_acknowledged_write_must_be_there() {
    let log = log();
    for v in ["a", "b", "c"] {
        write(&log, "k", Effect::Update, &[(0, v)], ok());
    }
    // "a" and "b" were acknowledged before "c" began: only "c" may be there.
    assert_eq!(class(&log, "k", Some(&[(0, "c")])).0, Class::Ok);
    let (older, why) = class(&log, "k", Some(&[(0, "b")]));
    assert_eq!(older, Class::Lost);
    assert_eq!(why, "field field0 holds an older write");
    // A loaded key: a value the run never wrote may be the load's (its updates lost).
    let (other, why) = class(&log, "k", Some(&[(0, "zzz")]));
    assert_eq!(other, Class::Lost);
    assert_eq!(
        why,
        "field field0 holds a value the run never wrote (the load's, or never written)"
    );
    // Its other fields, never written by the run, are not judged.
    assert_eq!(class(&log, "k", Some(&[(0, "c"), (1, "any")])).0, Class::Ok);
    assert_eq!(class(&log, "k", None), (Class::Lost, "missing".into()));
}

#[test]
fn overlapping_writes_stay_possible_and_refused_ones_changed_nothing() {
    let log = log();
    // a and b in flight together: whichever the database applied last may be there.
    let a = begin(&log, "k", Effect::Update, &[(0, "a")]);
    let b = begin(&log, "k", Effect::Update, &[(0, "b")]);
    a.end(&log, ok());
    b.end(&log, ok());
    assert_eq!(class(&log, "k", Some(&[(0, "a")])).0, Class::Ok);
    assert_eq!(class(&log, "k", Some(&[(0, "b")])).0, Class::Ok);
    // A write the database refused changed nothing: its value is not one the key may hold.
    write(
        &log,
        "k",
        Effect::Update,
        &[(0, "d")],
        failed(FailureClass::Conflict),
    );
    assert_eq!(class(&log, "k", Some(&[(0, "d")])).0, Class::Lost);
}

#[test]
fn an_acknowledged_delete_leaves_the_key_absent() {
    let log = log();
    write(&log, "loaded", Effect::Update, &[(3, "u")], ok());
    write(&log, "loaded", Effect::Delete, &[], ok());
    assert_eq!(class(&log, "loaded", None).0, Class::Ok);
    let (back, why) = class(&log, "loaded", Some(&[(3, "u")]));
    assert_eq!(back, Class::Lost);
    assert_eq!(why, "present after its acknowledged delete");
    // A delete the database found nothing to delete for changed nothing.
    write(
        &log,
        "loaded",
        Effect::Delete,
        &[],
        failed(FailureClass::NotFound),
    );
    assert_eq!(class(&log, "loaded", None).0, Class::Ok);
    // Created again by an update (Redis, Cassandra, HBase create a missing record): the fields
    // the delete took stay absent.
    write(&log, "loaded", Effect::Update, &[(5, "w")], ok());
    assert_eq!(class(&log, "loaded", Some(&[(5, "w")])).0, Class::Ok);
    assert_eq!(
        class(&log, "loaded", Some(&[(5, "w"), (3, "u")])).1,
        "field field3 holds an older write"
    );
    assert_eq!(class(&log, "loaded", None), (Class::Lost, "missing".into()));
}

/// An update that overlapped a delete and ended after it, on a field the key's record did not
/// have yet: the delete took that field too (found in CI on SQLite: "field field2 missing").
#[test]
fn a_delete_recorded_before_an_overlapping_update_takes_its_new_field_too() {
    let log = log();
    let update = begin(&log, "k", Effect::Update, &[(2, "v")]);
    write(&log, "k", Effect::Delete, &[], ok());
    update.end(&log, ok());
    // The update was applied first, then the delete: gone, as it may be.
    assert_eq!(class(&log, "k", None).0, Class::Ok);
    // Or the delete first and the update created the record again (Redis, Cassandra, HBase).
    assert_eq!(class(&log, "k", Some(&[(2, "v")])).0, Class::Ok);
    // A later acknowledged update of the field that began after the delete ended must be there.
    write(&log, "k", Effect::Update, &[(2, "w")], ok());
    assert_eq!(class(&log, "k", None), (Class::Lost, "missing".into()));
}

#[test]
fn a_delete_of_unknown_outcome_leaves_both_possible() {
    let log = log();
    write(&log, "k", Effect::Update, &[(0, "v")], ok());
    write(
        &log,
        "k",
        Effect::Delete,
        &[],
        failed(FailureClass::Timeout),
    );
    assert_eq!(class(&log, "k", Some(&[(0, "v")])).0, Class::Ok);
    assert_eq!(
        class(&log, "k", None).0,
        Class::Recovered,
        "the delete was applied"
    );
}

#[test]
fn a_value_never_written_is_unexpected() {
    let log = log();
    // A key the run inserted held nothing before: every value it held is known.
    let all: Vec<(usize, &str)> = (0..10).map(|f| (f, "i")).collect();
    write(&log, "fresh", Effect::Insert, &all, ok());
    write(&log, "fresh", Effect::Update, &[(2, "u")], ok());
    let mut read = all.clone();
    read[2] = (2, "never");
    let (c, why) = class(&log, "fresh", Some(&read));
    assert_eq!(c, Class::Unexpected);
    assert_eq!(why, "field field2 holds a value never written");
    read[2] = (2, "i");
    assert_eq!(
        class(&log, "fresh", Some(&read)).1,
        "field field2 holds an older write"
    );
    // With dataintegrity, a value is checked against the one every write stores.
    write(&log, "loaded", Effect::Update, &[(1, "x")], ok());
    let kept = |_: &str, _: usize, v: &str| v == "x";
    let (c, why) = class_with(&log, "loaded", Some(&[(1, "y")]), Some(&kept));
    assert_eq!(c, Class::Unexpected);
    assert!(why.contains("dataintegrity"), "{why}");
}

#[test]
fn a_write_of_unknown_outcome_found_is_recovered_and_one_not_found_is_in_doubt() {
    let log = log();
    write(
        &log,
        "k",
        Effect::Update,
        &[(0, "t")],
        failed(FailureClass::Timeout),
    );
    assert_eq!(class(&log, "k", Some(&[(0, "t")])).0, Class::Recovered);
    // Not there: the field holds what it held before, which only the load knew.
    assert_eq!(class(&log, "k", Some(&[(0, "loaded")])).0, Class::InDoubt);
    // Later acknowledged writes do not overwrite it for sure: it may be applied after them.
    write(&log, "k", Effect::Update, &[(0, "a")], ok());
    assert_eq!(class(&log, "k", Some(&[(0, "t")])).0, Class::Recovered);
    assert_eq!(class(&log, "k", Some(&[(0, "a")])).0, Class::Ok);
    assert_eq!(class(&log, "k", Some(&[(0, "loaded")])).0, Class::Lost);
    // An insert of unknown outcome of a key nobody wrote before: absent is what it held.
    let all: Vec<(usize, &str)> = (0..10).map(|f| (f, "i")).collect();
    write(
        &log,
        "fresh",
        Effect::Insert,
        &all,
        failed(FailureClass::Unavailable),
    );
    assert_eq!(class(&log, "fresh", None).0, Class::Ok);
    assert_eq!(class(&log, "fresh", Some(&all)).0, Class::Recovered);
    // With dataintegrity an update stores what the load stored: its value found shows nothing.
    write(
        &log,
        "same",
        Effect::Update,
        &[(1, "x")],
        failed(FailureClass::Timeout),
    );
    let kept = |_: &str, _: usize, v: &str| v == "x";
    let judged = class_with(&log, "same", Some(&[(1, "x")]), Some(&kept));
    assert_eq!(judged.0, Class::InDoubt);
}

#[test]
fn a_write_in_flight_at_the_hard_stop_is_of_unknown_outcome() {
    let log = log();
    write(&log, "k", Effect::Update, &[(0, "a")], ok());
    // Sent, never answered: the slot's notes are recorded when the hard stop drops it.
    begin(&log, "k", Effect::Update, &[(0, "b")]).end(&log, None);
    assert_eq!(
        class(&log, "k", Some(&[(0, "b")])).0,
        Class::Recovered,
        "applied"
    );
    assert_eq!(
        class(&log, "k", Some(&[(0, "a")])).0,
        Class::Ok,
        "not applied"
    );
    let all: Vec<(usize, &str)> = (0..10).map(|f| (f, "i")).collect();
    begin(&log, "new", Effect::Insert, &all).end(&log, None);
    assert_eq!(
        class(&log, "new", None).0,
        Class::Ok,
        "an insert not applied"
    );
}

#[test]
fn an_acknowledged_insert_must_exist_whole() {
    let log = log();
    let all: Vec<(usize, &str)> = (0..10).map(|f| (f, "v")).collect();
    write(&log, "k", Effect::Insert, &all, ok());
    assert_eq!(class(&log, "k", Some(&all)).0, Class::Ok);
    assert_eq!(class(&log, "k", None), (Class::Lost, "missing".into()));
    assert_eq!(
        class(&log, "k", Some(&all[1..])),
        (Class::Lost, "field field0 missing".into())
    );
    // A field read back empty is absent (Cassandra reads a null column as empty text).
    let mut empty = all.clone();
    empty[4] = (4, "");
    assert_eq!(class(&log, "k", Some(&empty)).1, "field field4 missing");
    assert!(log
        .judge_key(
            &classes::Judge {
                types: &log.types,
                names: &log.names,
                integrity: None
            },
            "never written",
            None
        )
        .is_none());
}

#[test]
fn a_key_whose_record_dropped_a_possible_write_is_in_doubt() {
    let log = log();
    write(&log, "k", Effect::Update, &[(0, "a")], ok());
    for i in 0..8 {
        let v = format!("t{i}");
        write(
            &log,
            "k",
            Effect::Update,
            &[(0, &v)],
            failed(FailureClass::Timeout),
        );
    }
    // Of the eight in doubt, the oldest were dropped: a value that is none of those kept may
    // be one of them.
    assert_eq!(class(&log, "k", Some(&[(0, "t0")])).0, Class::InDoubt);
    assert_eq!(class(&log, "k", Some(&[(0, "t7")])).0, Class::Recovered);
}
