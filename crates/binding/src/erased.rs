//! A network binding reaches the executor with its type erased: its factory and connections behind
//! trait objects ([`ErasedFactory`], [`ErasedBinding`]), made here by one non-generic function per
//! binding ([`crate::bindings!`]).
//!
//! Why: a binding's operations are async fns, and the compiler generates their state machines (with
//! the driver code they inline) in every crate that polls them through generic code. The executor is
//! generic over the factory, so each crate that ran it (the library, every test binary) compiled
//! every driver's operations again, once per binding: the largest share of the build's critical path
//! (docs/benchmarks.md, "Build time"). Erased, they are compiled once, here, and the executor is
//! compiled for three factories (null, SQLite, erased) instead of nine. The cost is one allocation
//! and one indirect call per operation, far below a network round trip; the null and SQLite
//! bindings, which measure the tool itself and an in-process engine, keep their concrete types.

use std::future::Future;
use std::pin::Pin;

use scalebench_workload::{FieldSet, Fields, Modification, OpError, Operation};

use crate::info::BindingInfo;
use crate::{Binding, BindingError, BindingFactory, TransactionControl};

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// [`Binding`] as a trait object: each operation's future boxed.
trait ObjectBinding {
    fn read<'a>(
        &'a mut self,
        key: &'a str,
        fields: FieldSet,
        out: &'a mut Fields,
    ) -> Boxed<'a, Result<(), OpError>>;
    fn scan<'a>(
        &'a mut self,
        start_key: &'a str,
        count: usize,
        fields: FieldSet,
        out: &'a mut Vec<(String, Fields)>,
    ) -> Boxed<'a, Result<(), OpError>>;
    fn read_many<'a>(
        &'a mut self,
        keys: &'a [String],
        fields: FieldSet,
        out: &'a mut Vec<(String, Fields)>,
    ) -> Boxed<'a, Result<(), OpError>>;
    fn update_batch<'a>(
        &'a mut self,
        keys: &'a [String],
        values: &'a [Fields],
    ) -> Boxed<'a, Result<(), OpError>>;
    fn update<'a>(&'a mut self, key: &'a str, values: &'a Fields)
        -> Boxed<'a, Result<(), OpError>>;
    fn insert<'a>(&'a mut self, key: &'a str, values: &'a Fields)
        -> Boxed<'a, Result<(), OpError>>;
    fn insert_batch<'a>(&'a mut self, records: &'a [Operation]) -> Boxed<'a, Result<(), OpError>>;
    fn delete<'a>(&'a mut self, key: &'a str) -> Boxed<'a, Result<(), OpError>>;
    fn statement<'a>(
        &'a mut self,
        statement: usize,
        params: &'a Fields,
    ) -> Boxed<'a, Result<u64, OpError>>;
    fn statement_text<'a>(
        &'a mut self,
        text: &'a str,
        params: &'a Fields,
    ) -> Boxed<'a, Result<u64, OpError>>;
    fn increment<'a>(
        &'a mut self,
        key: &'a str,
        changes: &'a [Modification],
    ) -> Boxed<'a, Result<(), OpError>>;
    fn transaction<'a>(
        &'a mut self,
        first: usize,
        steps: usize,
        params: &'a Fields,
    ) -> Boxed<'a, Result<u64, OpError>>;
    fn transaction_control(
        &mut self,
        control: TransactionControl,
    ) -> Boxed<'_, Result<(), OpError>>;
    fn cleanup(&mut self) -> Boxed<'_, Result<(), BindingError>>;
    fn abandoned(&mut self);
}

impl<B: Binding> ObjectBinding for B {
    fn read<'a>(
        &'a mut self,
        key: &'a str,
        fields: FieldSet,
        out: &'a mut Fields,
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::read(self, key, fields, out))
    }
    fn scan<'a>(
        &'a mut self,
        start_key: &'a str,
        count: usize,
        fields: FieldSet,
        out: &'a mut Vec<(String, Fields)>,
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::scan(self, start_key, count, fields, out))
    }
    fn update<'a>(
        &'a mut self,
        key: &'a str,
        values: &'a Fields,
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::update(self, key, values))
    }
    fn insert<'a>(
        &'a mut self,
        key: &'a str,
        values: &'a Fields,
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::insert(self, key, values))
    }
    fn insert_batch<'a>(&'a mut self, records: &'a [Operation]) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::insert_batch(self, records))
    }
    fn delete<'a>(&'a mut self, key: &'a str) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::delete(self, key))
    }
    fn read_many<'a>(
        &'a mut self,
        keys: &'a [String],
        fields: FieldSet,
        out: &'a mut Vec<(String, Fields)>,
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::read_many(self, keys, fields, out))
    }
    fn update_batch<'a>(
        &'a mut self,
        keys: &'a [String],
        values: &'a [Fields],
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::update_batch(self, keys, values))
    }
    fn statement<'a>(
        &'a mut self,
        statement: usize,
        params: &'a Fields,
    ) -> Boxed<'a, Result<u64, OpError>> {
        Box::pin(Binding::statement(self, statement, params))
    }
    fn statement_text<'a>(
        &'a mut self,
        text: &'a str,
        params: &'a Fields,
    ) -> Boxed<'a, Result<u64, OpError>> {
        Box::pin(Binding::statement_text(self, text, params))
    }
    fn increment<'a>(
        &'a mut self,
        key: &'a str,
        changes: &'a [Modification],
    ) -> Boxed<'a, Result<(), OpError>> {
        Box::pin(Binding::increment(self, key, changes))
    }
    fn transaction<'a>(
        &'a mut self,
        first: usize,
        steps: usize,
        params: &'a Fields,
    ) -> Boxed<'a, Result<u64, OpError>> {
        Box::pin(Binding::transaction(self, first, steps, params))
    }
    fn transaction_control(
        &mut self,
        control: TransactionControl,
    ) -> Boxed<'_, Result<(), OpError>> {
        Box::pin(Binding::transaction_control(self, control))
    }
    fn cleanup(&mut self) -> Boxed<'_, Result<(), BindingError>> {
        Box::pin(Binding::cleanup(self))
    }
    fn abandoned(&mut self) {
        Binding::abandoned(self)
    }
}

/// A connection of an erased binding.
pub struct ErasedBinding(Box<dyn ObjectBinding>);

impl Binding for ErasedBinding {
    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        self.0.read(key, fields, out).await
    }
    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.0.scan(start_key, count, fields, out).await
    }
    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.0.update(key, values).await
    }
    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.0.insert(key, values).await
    }
    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        self.0.insert_batch(records).await
    }
    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        self.0.delete(key).await
    }
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.0.read_many(keys, fields, out).await
    }
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        self.0.update_batch(keys, values).await
    }
    async fn statement(&mut self, statement: usize, params: &Fields) -> Result<u64, OpError> {
        self.0.statement(statement, params).await
    }
    async fn statement_text(&mut self, text: &str, params: &Fields) -> Result<u64, OpError> {
        self.0.statement_text(text, params).await
    }
    async fn increment(&mut self, key: &str, changes: &[Modification]) -> Result<(), OpError> {
        self.0.increment(key, changes).await
    }
    async fn transaction(
        &mut self,
        first: usize,
        steps: usize,
        params: &Fields,
    ) -> Result<u64, OpError> {
        self.0.transaction(first, steps, params).await
    }
    async fn transaction_control(&mut self, control: TransactionControl) -> Result<(), OpError> {
        self.0.transaction_control(control).await
    }
    async fn cleanup(&mut self) -> Result<(), BindingError> {
        self.0.cleanup().await
    }
    fn abandoned(&mut self) {
        self.0.abandoned()
    }
}

/// [`BindingFactory`] as a trait object.
trait ObjectFactory: Send + Sync {
    fn connect(&self, worker: usize) -> Boxed<'_, Result<ErasedBinding, BindingError>>;
    fn connect_to_verify(&self, worker: usize) -> Boxed<'_, Result<ErasedBinding, BindingError>>;
    fn info(&self) -> BindingInfo;
    fn batches_inserts(&self) -> bool;
    fn blocks_its_thread(&self) -> bool;
}

impl<F: BindingFactory> ObjectFactory for F
where
    F::Binding: 'static,
{
    fn connect(&self, worker: usize) -> Boxed<'_, Result<ErasedBinding, BindingError>> {
        Box::pin(async move {
            let binding = BindingFactory::connect(self, worker).await?;
            Ok(ErasedBinding(Box::new(binding)))
        })
    }
    fn connect_to_verify(&self, worker: usize) -> Boxed<'_, Result<ErasedBinding, BindingError>> {
        Box::pin(async move {
            let binding = BindingFactory::connect_to_verify(self, worker).await?;
            Ok(ErasedBinding(Box::new(binding)))
        })
    }
    fn info(&self) -> BindingInfo {
        BindingFactory::info(self)
    }
    fn batches_inserts(&self) -> bool {
        BindingFactory::batches_inserts(self)
    }
    fn blocks_its_thread(&self) -> bool {
        BindingFactory::blocks_its_thread(self)
    }
}

/// The factory of an erased binding.
pub struct ErasedFactory(Box<dyn ObjectFactory>);

impl ErasedFactory {
    /// Called only from the non-generic functions [`crate::bindings!`] makes per binding, so that
    /// the binding's code is compiled in this crate (unused in a build of null and SQLite alone).
    #[cfg_attr(not(feature = "all-bindings"), allow(dead_code))]
    pub(crate) fn new<F: BindingFactory>(factory: F) -> Self
    where
        F::Binding: 'static,
    {
        ErasedFactory(Box::new(factory))
    }
}

impl BindingFactory for ErasedFactory {
    type Binding = ErasedBinding;

    fn info(&self) -> BindingInfo {
        self.0.info()
    }
    async fn connect(&self, worker: usize) -> Result<ErasedBinding, BindingError> {
        self.0.connect(worker).await
    }
    async fn connect_to_verify(&self, worker: usize) -> Result<ErasedBinding, BindingError> {
        self.0.connect_to_verify(worker).await
    }
    fn batches_inserts(&self) -> bool {
        self.0.batches_inserts()
    }
    fn blocks_its_thread(&self) -> bool {
        self.0.blocks_its_thread()
    }
}
