//! One record in a key-value store's transaction ([`crate::Transactions::OneRecord`]): read once
//! at the transaction's first step, changed in memory by its steps, and written once at the
//! commit by the binding, on the condition that the stored record is still the one read (Redis: a
//! script compares and writes; etcd: a transaction on the key's revision). A failed step, or a
//! rollback, writes nothing. A sequence works on one key, so one record is all a transaction
//! holds.

use scalebench_workload::{FailureClass, FieldSet, Fields, Modification, OpError};

/// A one-record transaction on a connection: none, begun (its record not read yet), or holding
/// its record (`T`: the snapshot and what the store needs to write it conditionally).
#[derive(Debug, Default)]
pub enum Held<T> {
    #[default]
    Idle,
    Begun,
    Holding(T),
}

impl<T> Held<T> {
    /// Begins or ends the transaction; at a commit, what it holds to write (`None`: it touched no
    /// record). A rollback, or a commit, leaves it idle.
    pub fn control(&mut self, control: crate::TransactionControl) -> Result<Option<T>, OpError> {
        use crate::TransactionControl as C;
        match (control, std::mem::take(self)) {
            (C::Begin, Held::Idle) => {
                *self = Held::Begun;
                Ok(None)
            }
            (C::Begin, _) => Err(OpError::new(
                FailureClass::Other,
                "a transaction began inside another",
            )),
            (C::Commit, Held::Holding(t)) => Ok(Some(t)),
            (_, _) => Ok(None),
        }
    }
}

/// The record of a transaction, by field index (`None`: a field the record lacks).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub key: String,
    /// The record as read (`None`: there was none).
    pub original: Option<Vec<Option<String>>>,
    /// As the steps left it (`None`: none, or deleted).
    pub current: Option<Vec<Option<String>>>,
}

impl Snapshot {
    pub fn new(key: &str, original: Option<Vec<Option<String>>>) -> Snapshot {
        Snapshot {
            key: key.to_string(),
            current: original.clone(),
            original,
        }
    }

    /// A step on another key than the transaction's first is a mistake of the caller's.
    pub fn check_key(&self, key: &str) -> Result<(), OpError> {
        if key == self.key {
            return Ok(());
        }
        Err(OpError::new(
            FailureClass::Other,
            format!("a transaction works on one record: {} then {key}", self.key),
        ))
    }

    fn not_found(&self) -> OpError {
        OpError::new(FailureClass::NotFound, format!("no record {}", self.key))
    }

    /// The fields asked for, as the record now is; none at all is `NotFound`, as a read is.
    pub fn read(&self, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        let record = self.current.as_ref().ok_or_else(|| self.not_found())?;
        for i in fields.indices(record.len()) {
            if let Some(v) = &record[i] {
                out.push((i, v.clone()));
            }
        }
        if out.is_empty() {
            return Err(self.not_found());
        }
        Ok(())
    }

    /// Writes `values` into the record; a missing record is created when the store's update
    /// creates one (`creates`), else `NotFound`.
    pub fn update(&mut self, values: &Fields, creates: bool, width: usize) -> Result<(), OpError> {
        if self.current.is_none() {
            if !creates {
                return Err(self.not_found());
            }
            self.current = Some(vec![None; width]);
        }
        let record = self.current.as_mut().expect("made above");
        for (f, v) in values {
            record[*f] = Some(v.clone());
        }
        Ok(())
    }

    /// Adds each change's amount to its column; a missing record is `NotFound`.
    pub fn increment(&mut self, changes: &[Modification]) -> Result<(), OpError> {
        let key = self.key.clone();
        let record = self
            .current
            .as_mut()
            .ok_or_else(|| OpError::new(FailureClass::NotFound, format!("no record {key}")))?;
        for m in changes {
            record[m.column] = Some(m.apply(record[m.column].as_deref())?);
        }
        Ok(())
    }

    /// Deletes the record; a missing one is `NotFound`.
    pub fn delete(&mut self) -> Result<(), OpError> {
        if self.current.take().is_none() {
            return Err(self.not_found());
        }
        Ok(())
    }

    /// Whether the steps changed the record (a transaction of reads writes nothing).
    pub fn changed(&self) -> bool {
        self.current != self.original
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_workload::Change;

    #[test]
    fn steps_change_the_record_in_memory_and_say_what_a_store_would() {
        let mut s = Snapshot::new("k", Some(vec![Some("1".into()), None]));
        let mut out = Fields::new();
        s.read(FieldSet::All, &mut out).unwrap();
        assert_eq!(out, [(0, "1".to_string())]);
        assert!(!s.changed());
        let add = Modification {
            column: 0,
            change: Change::AddInteger(2),
        };
        s.increment(&[add]).unwrap();
        s.update(&vec![(1, "x".into())], false, 2).unwrap();
        s.read(FieldSet::One(0), &mut out).unwrap();
        assert_eq!(out, [(0, "3".to_string())]);
        assert!(s.changed());
        s.delete().unwrap();
        assert_eq!(
            s.read(FieldSet::All, &mut out).unwrap_err().class,
            FailureClass::NotFound
        );
        assert_eq!(s.delete().unwrap_err().class, FailureClass::NotFound);
        // An update of a missing record: created where the store's update creates one.
        assert_eq!(
            s.update(&vec![(0, "a".into())], false, 2)
                .unwrap_err()
                .class,
            FailureClass::NotFound
        );
        s.update(&vec![(0, "a".into())], true, 2).unwrap();
        assert_eq!(s.current, Some(vec![Some("a".into()), None]));
        assert!(s.check_key("other").is_err());
    }
}
