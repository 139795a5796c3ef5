//! The workload model: YCSB CoreWorkload-compatible properties, generators, keys and values.
//!
//! Everything here is pure and deterministic: properties go in, a stream of operations comes out.
//! No I/O (except reading property files) and no clocks; execution owns time.

pub mod alternative;
pub mod builtin;
pub mod canonical;
mod choice_schema;
pub mod columns;
pub mod core_workload;
pub mod decimal;
pub mod declared;
pub mod definition;
pub mod dictionary;
pub mod digest;
pub mod duration;
pub mod error;
pub mod file;
pub mod generator;
pub mod index;
pub mod keys;
pub mod measurement;
pub mod named;
pub mod names;
pub mod operation;
pub mod operation_decl;
pub mod properties;
pub mod rate;
pub mod statement;
pub mod toml_error;
pub mod values;

pub use core_workload::{CoreWorkload, LoadKeys, OperationGenerator};
pub use error::WorkloadError;
pub use operation::{
    Change, ElementType, Expectation, FailureClass, FieldSet, FieldType, Fields, Measured,
    MeasuredNames, Modification, OpError, OpKind, Operation, MAX_NAMED_OPERATIONS,
};
pub use properties::{Assignment, Properties};
