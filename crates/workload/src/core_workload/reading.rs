//! The core workload's properties read and checked: the record's shape, the key ranges, the
//! operation mix, the keys and their choice, scan lengths.

//! YCSB's `CoreWorkload`: properties in, operations out.

use std::sync::Arc;

use crate::declared::*;
use crate::generator::{
    Exponential, Hotspot, ScrambledZipfian, Sequential, SkewedLatest, Uniform, WorkerRng, Zipfian,
};
use crate::keys::{InsertOrder, KeyBuilder};
use crate::named::NamedOperation;
use crate::operation::{FieldType, OpKind};
use crate::{Properties, WorkloadError};

/// Largest field value (and append) a workload may ask for: every operation materialises its values.
pub const MAX_FIELD_BYTES: u64 = 16 << 20;
/// Largest record (all fields): every operation materialises its values.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;
/// Largest record count: key numbers stay far from overflow in i64 arithmetic.
pub const MAX_RECORDS: u64 = 1 << 48;
#[derive(Debug, Clone)]
pub(super) enum FieldLength {
    Constant(usize),
    Uniform(Uniform),
    Zipfian(Zipfian),
    /// Heavy-tailed sizes (documents, articles), clamped to `[min, max]`.
    LogNormal {
        dist: rand_distr::LogNormal<f64>,
        min: usize,
        max: usize,
    },
}

impl FieldLength {
    pub(super) fn next(&mut self, rng: &mut WorkerRng) -> usize {
        match self {
            FieldLength::Constant(n) => *n,
            FieldLength::Uniform(u) => u.next(rng) as usize,
            FieldLength::Zipfian(z) => z.next(rng) as usize,
            FieldLength::LogNormal { dist, min, max } => {
                use rand_distr::Distribution;
                (dist.sample(rng).round() as usize).clamp(*min, *max)
            }
        }
    }
}

#[derive(Debug, Clone)]
pub(super) enum KeyChooser {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Sequential(Sequential),
    Exponential(Exponential),
}

#[derive(Debug, Clone)]
pub(super) enum ScanLength {
    Uniform(Uniform),
    Zipfian(Zipfian),
}

/// What the operation chooser picks: a kind (YCSB's mix) or a named operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Choice {
    Kind(OpKind),
    Named(usize),
}

/// The record: table, field names (or Lourenco's measurement record) and field lengths.
pub(super) struct RecordShape {
    pub(super) table: String,
    pub(super) names: Arc<[String]>,
    pub(super) measurement: bool,
    pub(super) record: Option<crate::columns::Record>,
    pub(super) length: FieldLength,
    /// `fieldlength`: the longest field.
    pub(super) max_length: u64,
}

pub(super) fn record_shape(p: &Properties) -> Result<RecordShape, WorkloadError> {
    let table = p.text(&TABLE).to_string();
    if let Some(fault) = crate::names::table_name_fault(&table) {
        return Err(WorkloadError::invalid("table", &table, fault));
    }
    let field_count = p.integer(&FIELDCOUNT)?;
    if field_count == 0 || field_count > 1000 {
        return Err(WorkloadError::invalid(
            "fieldcount",
            p.text(&FIELDCOUNT),
            "expected 1 to 1000",
        ));
    }
    let prefix = p.text(&FIELDNAMEPREFIX);
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(WorkloadError::invalid(
            "fieldnameprefix",
            prefix,
            "expected letters, digits and '_'",
        ));
    }
    let measurement = p.choice(&RECORDTYPE)? == "measurement";
    let record = match p.given(&COLUMNS) {
        Some(json) if measurement => {
            return Err(WorkloadError::invalid(
                "columns",
                &json.chars().take(40).collect::<String>(),
                "recordtype=measurement has its own fields: give one of them",
            ))
        }
        Some(json) => Some(crate::columns::Record::from_json(
            json,
            p.integer(&VALUESEED)?,
        )?),
        None if measurement => Some(
            crate::columns::Record::new(crate::measurement::columns(), p.integer(&VALUESEED)?)
                .map_err(|e| WorkloadError::Inconsistent(e.to_string()))?,
        ),
        None => None,
    };
    if let Some(r) = record
        .as_ref()
        .filter(|r| r.text_bytes() > MAX_RECORD_BYTES)
    {
        return Err(WorkloadError::invalid(
            "columns",
            &format!("{} columns", r.columns.len()),
            format!(
                "text columns of {} characters in all exceed {MAX_RECORD_BYTES} bytes (64 MiB) per record",
                r.text_bytes()
            ),
        ));
    }
    let field_names: Arc<[String]> = if let Some(r) = &record {
        r.names()
    } else {
        (0..field_count).map(|i| format!("{prefix}{i}")).collect()
    };

    let field_len = p.integer(&FIELDLENGTH)?;
    let min_field_len = p.integer(&MINFIELDLENGTH)?;
    if field_len == 0 || field_len > MAX_FIELD_BYTES {
        return Err(WorkloadError::invalid(
            "fieldlength",
            &field_len.to_string(),
            format!("expected 1 to {MAX_FIELD_BYTES} (16 MiB)"),
        ));
    }
    if field_len.saturating_mul(field_count) > MAX_RECORD_BYTES {
        return Err(WorkloadError::invalid(
            "fieldlength",
            &field_len.to_string(),
            format!("{field_count} fields of {field_len} bytes exceed {MAX_RECORD_BYTES} bytes (64 MiB) per record"),
        ));
    }
    if min_field_len > field_len {
        return Err(WorkloadError::invalid(
            "minfieldlength",
            &min_field_len.to_string(),
            format!("must not exceed fieldlength ({field_len})"),
        ));
    }
    let field_length = match p.choice(&FIELDLENGTHDISTRIBUTION)? {
        "constant" => FieldLength::Constant(field_len as usize),
        "uniform" => FieldLength::Uniform(Uniform::new(min_field_len, field_len)),
        "zipfian" => FieldLength::Zipfian(Zipfian::new(min_field_len, field_len)),
        _ => {
            let median = p
                .number_given(&FIELDLENGTHMEDIAN)?
                .unwrap_or((field_len as f64 / 10.0).max(1.0));
            if !(median >= 1.0 && median <= field_len as f64) {
                return Err(WorkloadError::invalid(
                    "fieldlengthmedian",
                    &median.to_string(),
                    format!("expected 1 to fieldlength ({field_len})"),
                ));
            }
            let sigma = p.number(&FIELDLENGTHSIGMA)?;
            let dist = rand_distr::LogNormal::new(median.ln(), sigma).map_err(|_| {
                WorkloadError::invalid(
                    "fieldlengthsigma",
                    &sigma.to_string(),
                    "expected a non-negative number",
                )
            })?;
            FieldLength::LogNormal {
                dist,
                min: min_field_len as usize,
                max: field_len as usize,
            }
        }
    };

    Ok(RecordShape {
        table,
        names: field_names,
        measurement,
        record,
        length: field_length,
        max_length: field_len,
    })
}

/// The records loaded (`recordcount`, `insertstart`, `insertcount`), the run's length and where its
/// inserts start.
pub(super) struct KeyRange {
    pub(super) record_count: u64,
    pub(super) insert_start: u64,
    pub(super) insert_count: u64,
    pub(super) operation_count: u64,
    pub(super) transaction_insert_start: u64,
    pub(super) write_partition: (u64, u64),
}

pub(super) fn key_range(p: &Properties) -> Result<KeyRange, WorkloadError> {
    // YCSB: recordcount 0 (its default) means Integer.MAX_VALUE.
    let mut record_count = p.integer(&RECORDCOUNT)?;
    if record_count == 0 {
        record_count = i32::MAX as u64;
    }
    // Keys are numbered in i64 as YCSB's, and the generators add to the count.
    if record_count > MAX_RECORDS {
        return Err(WorkloadError::invalid(
            "recordcount",
            &record_count.to_string(),
            format!("expected at most {MAX_RECORDS} (2^48)"),
        ));
    }
    let insert_start = p.integer(&INSERTSTART)?;
    if insert_start >= record_count {
        return Err(WorkloadError::invalid(
            "insertstart",
            &insert_start.to_string(),
            format!("must be below recordcount ({record_count})"),
        ));
    }
    let insert_count = p
        .integer_given(&INSERTCOUNT)?
        .unwrap_or(record_count - insert_start);
    // insert_start < record_count: the subtraction cannot wrap where an addition could.
    if insert_count == 0 || insert_count > record_count - insert_start {
        return Err(WorkloadError::invalid(
            "insertcount",
            &insert_count.to_string(),
            format!("insertstart + insertcount must be between 1 and recordcount ({record_count})"),
        ));
    }
    let operation_count = p.integer(&OPERATIONCOUNT)?;
    // YCSB always inserts from recordcount in the run phase, so a second run of the same data
    // inserts keys the first one wrote; this moves the run's inserts past them.
    let transaction_insert_start = p
        .integer_given(&TRANSACTIONINSERTSTART)?
        .unwrap_or(record_count);
    if transaction_insert_start < record_count || transaction_insert_start > i64::MAX as u64 {
        return Err(WorkloadError::invalid(
            "transactioninsertstart",
            &transaction_insert_start.to_string(),
            format!(
                "must be at least recordcount ({record_count}): lower keys are the loaded records"
            ),
        ));
    }

    let partitions = p.integer(&WRITEKEYPARTITIONS)?;
    if partitions == 0 || partitions > record_count {
        return Err(WorkloadError::invalid(
            "writekeypartitions",
            &partitions.to_string(),
            format!(
                "expected 1 to recordcount ({record_count}): each partition needs a loaded key"
            ),
        ));
    }
    let partition = p.integer(&WRITEKEYPARTITION)?;
    if partition >= partitions {
        return Err(WorkloadError::invalid(
            "writekeypartition",
            &partition.to_string(),
            format!("expected 0 to writekeypartitions - 1 ({})", partitions - 1),
        ));
    }

    Ok(KeyRange {
        record_count,
        insert_start,
        insert_count,
        operation_count,
        transaction_insert_start,
        write_partition: (partition, partitions),
    })
}

/// `operations`: a workload file's named operations, checked against the record's fields;
/// refused beside a proportion, which they replace.
pub(super) fn named_operations(
    p: &Properties,
    fields: &[String],
    types: &[FieldType],
    generated: bool,
) -> Result<Vec<(NamedOperation, f64)>, WorkloadError> {
    let Some(json) = p.given(&OPERATIONS) else {
        return Ok(Vec::new());
    };
    for info in [
        &READPROPORTION,
        &UPDATEPROPORTION,
        &INSERTPROPORTION,
        &SCANPROPORTION,
        &READMODIFYWRITEPROPORTION,
        &DELETEPROPORTION,
    ] {
        if let Some(v) = p.given(info) {
            return Err(WorkloadError::invalid(
                info.name,
                v,
                "the workload's named operations (operations) set the mix: give one of them",
            ));
        }
    }
    crate::named::from_json(json, fields, types, generated)
}

/// The kinds named operations are of, with their summed weights, in YCSB's order.
pub(super) fn kinds_of(named: &[(NamedOperation, f64)]) -> Vec<(OpKind, f64)> {
    OpKind::ALL
        .iter()
        .filter_map(|&k| {
            let w: f64 = named
                .iter()
                .filter(|(o, _)| o.kind == k)
                .map(|(_, w)| w)
                .sum();
            (w > 0.0).then_some((k, w))
        })
        .collect()
}

/// Operation kinds with a positive proportion, in YCSB's order.
pub(super) fn operation_mix(p: &Properties) -> Result<Vec<(OpKind, f64)>, WorkloadError> {
    let mut mix = Vec::new();
    for (property, kind) in [
        (&READPROPORTION, OpKind::Read),
        (&UPDATEPROPORTION, OpKind::Update),
        (&INSERTPROPORTION, OpKind::Insert),
        (&SCANPROPORTION, OpKind::Scan),
        (&READMODIFYWRITEPROPORTION, OpKind::ReadModifyWrite),
        (&DELETEPROPORTION, OpKind::Delete),
    ] {
        let share = p.proportion(property)?;
        if share > 0.0 {
            mix.push((kind, share));
        }
    }
    if mix.is_empty() {
        return Err(WorkloadError::invalid(
            "readproportion",
            p.text(&READPROPORTION),
            "all operation proportions are zero (read, update, insert, scan, readmodifywrite, delete)",
        ));
    }
    Ok(mix)
}

/// What a read-modify-write in `readmodifywritemode=append` appends to each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Append {
    /// `appendlength` random characters.
    Random(usize),
    /// `appendtext`, as it is (Dory appended the string "1" to an article: studies.md, section 5).
    Text(Arc<str>),
}

/// `readmodifywritemode=append`: `appendlength` random characters when it is given, else `appendtext`
/// when that is, else 100 random characters.
pub(super) fn append_of(
    p: &Properties,
    data_integrity: bool,
) -> Result<Option<Append>, WorkloadError> {
    if p.choice(&READMODIFYWRITEMODE)? == "replace" {
        return Ok(None);
    }
    if data_integrity {
        return Err(WorkloadError::invalid(
            "readmodifywritemode",
            "append",
            "dataintegrity=true needs values that are a function of key and field",
        ));
    }
    // `appendlength` given says the size; else the text given (Dory's "1"), else 100 characters.
    if let Some(text) = p
        .given(&APPENDTEXT)
        .filter(|_| p.given(&APPENDLENGTH).is_none())
    {
        if text.is_empty() || text.len() as u64 > MAX_FIELD_BYTES {
            return Err(WorkloadError::invalid(
                "appendtext",
                text,
                format!("expected 1 to {MAX_FIELD_BYTES} bytes of text"),
            ));
        }
        return Ok(Some(Append::Text(text.into())));
    }
    let n = p.integer(&APPENDLENGTH)?;
    if n == 0 || n > MAX_FIELD_BYTES {
        return Err(WorkloadError::invalid(
            "appendlength",
            &n.to_string(),
            format!("expected 1 to {MAX_FIELD_BYTES} (16 MiB)"),
        ));
    }
    Ok(Some(Append::Random(n as usize)))
}

/// Key names: YCSB's `user` + number, hashed or ordered, zero-padded (UUIDs for measurements).
pub(super) fn key_builder(p: &Properties, measurement: bool) -> Result<KeyBuilder, WorkloadError> {
    let zero_padding = p.integer(&ZEROPADDING)?;
    if zero_padding > 64 {
        return Err(WorkloadError::invalid(
            "zeropadding",
            &zero_padding.to_string(),
            "expected at most 64",
        ));
    }
    let order = match p.choice(&INSERTORDER)? {
        "hashed" => InsertOrder::Hashed,
        "uuid" => InsertOrder::Uuid,
        _ => InsertOrder::Ordered,
    };
    let prefix = p.text(&KEYPREFIX);
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(WorkloadError::invalid(
            "keyprefix",
            prefix,
            "expected letters, digits and '_'",
        ));
    }
    Ok(KeyBuilder {
        order: if measurement {
            InsertOrder::Uuid
        } else {
            order
        },
        zero_padding: zero_padding as usize,
        prefix: prefix.to_string(),
    })
}

/// Which key an operation reads or updates (`requestdistribution` and its parameters).
pub(super) fn key_chooser(p: &Properties, range: &KeyRange) -> Result<KeyChooser, WorkloadError> {
    let (insert_start, insert_count) = (range.insert_start, range.insert_count);
    let (operation_count, record_count) = (range.operation_count, range.record_count);
    let insert_proportion = p.proportion(&INSERTPROPORTION)?;
    let first = insert_start;
    let last = insert_start + insert_count - 1;
    Ok(match p.choice(&REQUESTDISTRIBUTION)? {
        "uniform" => KeyChooser::Uniform(Uniform::new(first, last)),
        "zipfian" => {
            // YCSB leaves room for keys inserted during the run: twice the expected inserts.
            let expected_new_keys = (operation_count as f64 * insert_proportion * 2.0) as u64;
            KeyChooser::Zipfian(ScrambledZipfian::new(
                first,
                first + insert_count + expected_new_keys,
            ))
        }
        "latest" => KeyChooser::Latest(SkewedLatest::new(record_count.saturating_sub(1))),
        "hotspot" => {
            let data = p.proportion(&HOTSPOTDATAFRACTION)?;
            let opn = p.proportion(&HOTSPOTOPNFRACTION)?;
            KeyChooser::Hotspot(Hotspot::new(first, last, data, opn))
        }
        "sequential" => KeyChooser::Sequential(Sequential::new(first, last)),
        _ => {
            let percentile = p.number(&EXPONENTIAL_PERCENTILE)?;
            if !(percentile > 0.0 && percentile < 100.0) {
                return Err(WorkloadError::invalid(
                    "exponential.percentile",
                    &percentile.to_string(),
                    "expected a number between 0 and 100 (exclusive)",
                ));
            }
            let frac = p.number(&EXPONENTIAL_FRAC)?;
            if frac <= 0.0 {
                return Err(WorkloadError::invalid(
                    "exponential.frac",
                    &frac.to_string(),
                    "expected a positive number",
                ));
            }
            KeyChooser::Exponential(Exponential::new(percentile, record_count as f64 * frac))
        }
    })
}

/// Scan lengths (`minscanlength`..`maxscanlength`, uniform or zipfian).
pub(super) fn scan_length(p: &Properties) -> Result<ScanLength, WorkloadError> {
    let min_scan = p.integer(&MINSCANLENGTH)?;
    let max_scan = p.integer(&MAXSCANLENGTH)?;
    if min_scan == 0 || min_scan > max_scan {
        return Err(WorkloadError::invalid(
            "minscanlength",
            &min_scan.to_string(),
            format!("expected 1 to maxscanlength ({max_scan})"),
        ));
    }
    Ok(match p.choice(&SCANLENGTHDISTRIBUTION)? {
        "uniform" => ScanLength::Uniform(Uniform::new(min_scan, max_scan)),
        _ => ScanLength::Zipfian(Zipfian::new(min_scan, max_scan)),
    })
}

/// A named operation's keys and a sequence column's values fit the `record_count` records.
pub(super) fn records_fit(
    named: &[(NamedOperation, f64)],
    record: Option<&crate::columns::Record>,
    record_count: u64,
) -> Result<(), WorkloadError> {
    if let Some((o, _)) = named.iter().find(|(o, _)| o.keys as u64 > record_count) {
        return Err(WorkloadError::invalid(
            OPERATIONS.name,
            &o.name,
            format!(
                "operation '{}' takes {} distinct keys of {} records",
                o.name, o.keys, record_count
            ),
        ));
    }
    // A sequence's values over the loaded keys fit its column (they were held at the type's
    // bound, silently; issue 62, low 2).
    if let Some(record) = record {
        for c in record.columns.iter() {
            c.sequence_in_range(record_count).map_err(|e| {
                WorkloadError::invalid(
                    COLUMNS.name,
                    &c.name,
                    format!("column '{}': {e} with {} records", c.name, record_count),
                )
            })?;
        }
    }
    Ok(())
}

/// The type each binding with a typed schema gives each field: a declared record's columns (one
/// a read-modify-write appends to: text without a limit), else YCSB's text fields (of at most
/// `fieldlength` characters, none when a read-modify-write appends).
pub(super) fn field_types(
    fields: &RecordShape,
    declared_types: &[FieldType],
    named: &[(NamedOperation, f64)],
    appends: bool,
) -> Arc<[FieldType]> {
    if fields.record.is_some() {
        // A column a read-modify-write appends to grows: no length limit.
        let appended = |c: usize| {
            named.iter().any(|(o, _)| {
                o.modify.iter().flat_map(|m| m.iter()).any(|m| {
                    m.column == c && matches!(m.change, crate::operation::Change::Append(_))
                })
            })
        };
        declared_types
            .iter()
            .enumerate()
            .map(|(c, t)| {
                if appended(c) {
                    FieldType::Text { max_len: None }
                } else {
                    *t
                }
            })
            .collect()
    } else {
        let max_len = (!appends).then_some(fields.max_length as usize);
        fields
            .names
            .iter()
            .map(|_| FieldType::Text { max_len })
            .collect()
    }
}

/// `keycolumn`: the key's column in SQL and CQL tables, a name no field of `names` has.
pub(super) fn key_column(
    p: &Properties,
    names: &[String],
) -> Result<Option<String>, WorkloadError> {
    Ok(match p.given(&KEYCOLUMN) {
        None => None,
        Some(k) if !crate::columns::valid_name(k) => {
            return Err(WorkloadError::invalid(
                KEYCOLUMN.name,
                k,
                "expected a letter, then letters, digits and '_' (at most 64)",
            ))
        }
        Some(k) if names.iter().any(|f| f.eq_ignore_ascii_case(k)) => {
            return Err(WorkloadError::invalid(
                KEYCOLUMN.name,
                k,
                "a column of the record has this name",
            ))
        }
        Some(k) => Some(k.to_string()),
    })
}
