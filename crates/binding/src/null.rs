//! `null://`: a binding that does no I/O and succeeds at once. It measures the tool's own cost.

use scalebench_workload::{FieldSet, Fields, OpError, Operation};

use crate::registry::BindingInfo;
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "null",
    schemes: &["null"],
    summary: "does nothing and succeeds at once; measures scalebench's own overhead",
    url_example: "null://",
    options: &[],
};

pub struct NullFactory;

impl NullFactory {
    pub fn open(_config: &BindingConfig) -> Result<Self, BindingError> {
        Ok(NullFactory)
    }
}

impl BindingFactory for NullFactory {
    type Binding = NullBinding;

    async fn connect(&self, _worker: usize) -> Result<NullBinding, BindingError> {
        Ok(NullBinding)
    }

    fn stores_data(&self) -> bool {
        false
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

pub struct NullBinding;

impl Binding for NullBinding {
    async fn read(
        &mut self,
        _key: &str,
        _fields: FieldSet,
        _out: &mut Fields,
    ) -> Result<(), OpError> {
        Ok(())
    }

    async fn scan(
        &mut self,
        _: &str,
        _: usize,
        _: FieldSet,
        _: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        Ok(())
    }

    async fn update(&mut self, _key: &str, _values: &Fields) -> Result<(), OpError> {
        Ok(())
    }

    async fn insert(&mut self, _key: &str, _values: &Fields) -> Result<(), OpError> {
        Ok(())
    }

    async fn insert_batch(&mut self, _records: &[Operation]) -> Result<(), OpError> {
        Ok(())
    }

    async fn delete(&mut self, _key: &str) -> Result<(), OpError> {
        Ok(())
    }
}
