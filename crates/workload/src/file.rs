//! Workload files (`*.toml`, docs/workload-files.md): a record (YCSB's text fields or typed
//! columns with their generators), the load and the run (operation mix, key choice, length and a
//! rate profile), declared in one file that every command takes as its workload.
//!
//! A file becomes properties: YCSB's where YCSB has one (so a file and a property file of the same
//! workload run the same operations), ours for the rest (`columns`, `rateprofile`). Everything
//! downstream (experiments, distributed clients, the run's definition clients compare, results)
//! handles properties already; the file is checked field by field first, each error one line
//! naming the file, the line and the field.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::columns::{Column, Record};
use crate::declared;
use crate::dictionary::FileAccess;
use crate::error::WorkloadError;
use crate::properties::read_small_file;
use crate::rate::RateProfileDecl;
use crate::Properties;

/// A workload file is small: never read more (a device, a huge file given by mistake).
pub const MAX_WORKLOAD_FILE_BYTES: u64 = 4 << 20;

/// A workload file, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    /// What the workload is, for people (printed by `workload check`).
    #[serde(default)]
    pub description: Option<String>,
    pub record: RecordSection,
    #[serde(default)]
    pub load: LoadSection,
    pub run: RunSection,
    /// Any other property, YCSB's or ours (`scalebench properties`), as a property file sets it.
    #[serde(default)]
    pub properties: BTreeMap<String, PropertyValue>,
}

/// A property's value in `[properties]`: TOML's text, number or boolean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum PropertyValue {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl PropertyValue {
    fn text(&self) -> String {
        match self {
            PropertyValue::Bool(b) => b.to_string(),
            PropertyValue::Integer(i) => i.to_string(),
            PropertyValue::Float(f) => f.to_string(),
            PropertyValue::Text(t) => t.clone(),
        }
    }
}

/// `[record]`: the table, its key and its columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordSection {
    /// The table (collection, key prefix): `table`.
    #[serde(default)]
    pub table: Option<String>,
    /// Records the load writes and the run chooses among: `recordcount`.
    pub records: u64,
    #[serde(default)]
    pub key: KeySection,
    /// YCSB's text fields (`fieldcount`, `fieldlength`, ...); or `column` instead.
    #[serde(default)]
    pub fields: Option<FieldsSection>,
    /// Typed columns, each with its generator (`columns`).
    #[serde(default)]
    pub column: Vec<Column>,
    /// Secondary indexes, created with the table where the binding has them (`indexes`).
    #[serde(default)]
    pub index: Vec<crate::index::IndexDecl>,
    /// The record's values are a function of this seed and the key number: `valueseed`.
    #[serde(default)]
    pub value_seed: Option<u64>,
    /// `measurement`: Lourenco's record (`recordtype=measurement`).
    #[serde(default)]
    pub builtin: Option<BuiltinRecord>,
}

/// A record defined in code, named in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuiltinRecord {
    /// Lourenco et al.'s electrical measurement (9 typed fields, 126 bytes).
    Measurement,
}

/// `[record.key]`: how key numbers become keys.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeySection {
    /// `keyprefix` (YCSB's `user`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// `insertorder`: hashed, ordered or uuid.
    #[serde(default)]
    #[schemars(schema_with = "crate::choice_schema::insert_order")]
    pub order: Option<String>,
    /// `zeropadding`.
    #[serde(default)]
    pub zero_padding: Option<u64>,
    /// The key's column in SQL and CQL tables (`keycolumn`; default `YCSB_KEY`, `y_id`).
    #[serde(default)]
    pub column: Option<String>,
}

/// `[record.fields]`: YCSB's text fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldsSection {
    /// `fieldcount`.
    pub count: u64,
    /// `fieldlength`: every field's length, the longest with a distribution.
    pub length: u64,
    /// `fieldnameprefix`.
    #[serde(default)]
    pub prefix: Option<String>,
    /// `fieldlengthdistribution`: constant, uniform, zipfian or lognormal.
    #[serde(default)]
    #[schemars(schema_with = "crate::choice_schema::length_distribution")]
    pub length_distribution: Option<String>,
    /// `minfieldlength`.
    #[serde(default)]
    pub min_length: Option<u64>,
}

/// `[load]`: the load phase.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Records per insert call where the binding batches: `batchsize`.
    #[serde(default)]
    pub batch_size: Option<u64>,
    /// The first record this load writes: `insertstart` (a section of the records).
    #[serde(default)]
    pub start: Option<u64>,
    /// Records this load writes (from `start`; default all of them): `insertcount`.
    #[serde(default)]
    pub records: Option<u64>,
    /// Open loop at a constant rate in records per second (`loadtarget`); or `rate_profile`.
    #[serde(default)]
    pub target: Option<f64>,
    /// Open loop at a rate that changes, in records per second (`loadrateprofile`): the load
    /// follows it until its records are in. Text as `--rate-profile`, or an array of stages.
    #[serde(default)]
    pub rate_profile: Option<RateProfileDecl>,
}

/// `[run]`: the run phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Weights of YCSB's operations, summing to 1: read, update, insert, scan,
    /// read_modify_write, delete. Or `[[run.operation]]`.
    #[serde(default)]
    pub mix: BTreeMap<String, f64>,
    /// Named operations, each measured under its own name (instead of `mix`).
    #[serde(default)]
    pub operation: Vec<crate::named::OperationDecl>,
    /// Operations of the run (`operationcount`); the run ends at whichever of this and the
    /// duration comes first.
    #[serde(default)]
    pub operations: Option<u64>,
    /// How long the run lasts (`maxexecutiontime`, whole seconds): 30s, 5m.
    #[serde(default)]
    pub duration: Option<crate::duration::DurationText>,
    /// Open loop at a constant rate in operations per second (`target`); or `rate_profile`.
    #[serde(default)]
    pub target: Option<f64>,
    /// Open loop at a rate that changes over the run (`rateprofile`): text as `--rate-profile`
    /// (segments separated by `;`), or an array of stages, each a segment's text or k6's
    /// `{ duration, target }`.
    #[serde(default)]
    pub rate_profile: Option<RateProfileDecl>,
    /// Which keys operations choose (`requestdistribution`).
    #[serde(default)]
    #[schemars(schema_with = "crate::choice_schema::key_distribution")]
    pub key_distribution: Option<String>,
    /// Reads fetch every field (`all`) or one (`one`): `readallfields`.
    #[serde(default)]
    pub read_fields: Option<FieldChoice>,
    /// Updates write every field or one: `writeallfields`.
    #[serde(default)]
    pub write_fields: Option<FieldChoice>,
    /// Records a scan returns: `minscanlength`, `maxscanlength`, `scanlengthdistribution`.
    #[serde(default)]
    pub scan_length: Option<ScanLength>,
}

/// Every field or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldChoice {
    All,
    One,
}

/// `scan_length = { min, max, distribution }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanLength {
    #[serde(default)]
    pub min: Option<u64>,
    pub max: u64,
    #[serde(default)]
    pub distribution: Option<String>,
}

/// The mix's operation names and the proportion property each sets.
pub const MIX_OPERATIONS: [(&str, &crate::declared::PropertyInfo); 6] = [
    ("read", &declared::READPROPORTION),
    ("update", &declared::UPDATEPROPORTION),
    ("insert", &declared::INSERTPROPORTION),
    ("scan", &declared::SCANPROPORTION),
    ("read_modify_write", &declared::READMODIFYWRITEPROPORTION),
    ("delete", &declared::DELETEPROPORTION),
];

/// The JSON Schema of a workload file, for editors (`scalebench workload schema`,
/// docs/workload-file.schema.json): made from the types the file is read into, so it cannot
/// disagree with the parser on a field's name or type (ranges and what goes together are the
/// checker's: `scalebench workload check`).
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(WorkloadFile);
    schema.insert(
        "title".into(),
        serde_json::Value::String("scalebench workload file".into()),
    );
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

/// Whether `workload` names a workload file (rather than a built-in or a property file).
pub fn is_workload_file(workload: &str) -> bool {
    workload.ends_with(".toml")
}

/// A bad file: where and why, one line.
fn bad(path: &str, line: Option<usize>, field: &str, reason: impl Into<String>) -> WorkloadError {
    WorkloadError::BadWorkloadFile {
        path: path.to_string(),
        line: line.map_or_else(String::new, |l| format!(", line {l}")),
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// The line of `text` holding `key` as a key (`key =` or `[...key]`), for an error's place.
fn line_of(text: &str, key: &str) -> Option<usize> {
    let last = key.rsplit(['.', ']', '[']).find(|s| !s.is_empty())?;
    let sets_it = |l: &str| {
        l.match_indices(last).any(|(i, _)| {
            let before = l[..i].chars().next_back();
            before.is_none_or(|c| c == ' ' || c == '{' || c == ',')
                && l[i + last.len()..].trim_start().starts_with('=')
        })
    };
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            sets_it(l) || (l.starts_with('[') && l.contains(last))
        })
        .map(|i| i + 1)
}

impl WorkloadFile {
    /// Reads and checks the file at `path`; the files it names must lie in its directory.
    pub fn read(path: &Path) -> Result<WorkloadFile, WorkloadError> {
        Self::read_with(path, &FileAccess::default())
    }

    /// Reads and checks the file at `path`; the files it names must lie in its directory or one
    /// that `access` allows.
    pub fn read_with(path: &Path, access: &FileAccess) -> Result<WorkloadFile, WorkloadError> {
        let text = read_small_file(path, MAX_WORKLOAD_FILE_BYTES, "a workload file").map_err(
            |reason| WorkloadError::UnreadableFile {
                path: path.to_path_buf(),
                reason,
            },
        )?;
        Self::parse_in(
            &text,
            &path.display().to_string(),
            path.parent().unwrap_or(Path::new(".")),
            access,
        )
    }

    /// Parses and checks a file's text; `origin` names it in errors, dictionaries are read
    /// relative to the current directory.
    pub fn parse(text: &str, origin: &str) -> Result<WorkloadFile, WorkloadError> {
        Self::parse_in(text, origin, Path::new("."), &FileAccess::default())
    }

    /// Parses and checks a file's text; its dictionaries are read relative to `base`, from it or
    /// a directory `access` allows.
    fn parse_in(
        text: &str,
        origin: &str,
        base: &Path,
        access: &FileAccess,
    ) -> Result<WorkloadFile, WorkloadError> {
        let mut file: WorkloadFile = toml::from_str(text).map_err(|e| {
            // The line and the key on it, never a line of a file that is not TOML (issue 62).
            let e = crate::toml_error::TomlError::of(text, &e);
            bad(origin, e.line, e.key.as_deref().unwrap_or("text"), e.why)
        })?;
        file.read_dictionaries(text, origin, base, access)?;
        file.check(text, origin)?;
        Ok(file)
    }

    /// Each `words` generator's dictionary file read into its words (crate::dictionary: from the
    /// workload file's directory or one `access` allows, regular, at most 4 MiB), its digest kept
    /// for results.
    fn read_dictionaries(
        &mut self,
        text: &str,
        origin: &str,
        base: &Path,
        access: &FileAccess,
    ) -> Result<(), WorkloadError> {
        for (i, c) in self.record.column.iter_mut().enumerate() {
            let crate::columns::Generator::Text(crate::columns::TextGenerator::Words {
                words,
                file,
                digest,
                ..
            }) = &mut c.generator
            else {
                continue;
            };
            let Some(name) = file.clone() else { continue };
            let field = format!("record.column[{i}] ('{}').generator.words.file", c.name);
            let fail = |reason: String| {
                bad(
                    origin,
                    line_of_column(text, &format!("column[{i}]")),
                    &field,
                    reason,
                )
            };
            if !words.is_empty() {
                return Err(fail("give words or a file, not both".into()));
            }
            if digest.is_some() {
                return Err(fail("a dictionary's digest is scalebench's to set".into()));
            }
            let read = crate::dictionary::read(&name, base, access).map_err(fail)?;
            if read.words.is_empty() {
                return Err(fail(format!("'{name}' holds no word")));
            }
            *words = read.words;
            *digest = Some(read.digest);
        }
        Ok(())
    }

    /// Every check a value's type does not make: ranges, names, what goes together.
    fn check(&self, text: &str, origin: &str) -> Result<(), WorkloadError> {
        let err = |field: &str, reason: String| bad(origin, line_of(text, field), field, reason);
        let r = &self.record;
        let kinds = [
            !r.column.is_empty(),
            r.fields.is_some(),
            r.builtin.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() > 1 {
            return Err(err(
                "record",
                "a record has one of [[record.column]], [record.fields] and builtin".into(),
            ));
        }
        // YCSB reads recordcount=0 (its default) as 2,147,483,647 records, and a property file
        // still does; a file's `records = 0` is a slip, not a wish for two billion.
        if r.records == 0 {
            return Err(err(
                "record.records",
                "0 records: give at least 1 (YCSB's recordcount=0 means 2147483647: write that \
                 number if you mean it)"
                    .into(),
            ));
        }
        if r.value_seed.is_some() && r.column.is_empty() {
            return Err(err(
                "record.value_seed",
                "only a record of [[record.column]] has a value seed".into(),
            ));
        }
        if !r.column.is_empty() {
            Record::new(r.column.clone(), r.value_seed.unwrap_or(0)).map_err(|e| {
                bad(
                    origin,
                    line_of_column(text, &e.field),
                    &format!("record.{}", e.field),
                    e.reason,
                )
            })?;
        }
        if self.run.mix.is_empty() == self.run.operation.is_empty() {
            return Err(err(
                "run.mix",
                "give the operations as run.mix or as [[run.operation]], one of them".into(),
            ));
        }
        self.check_mix().map_err(|(f, r)| err(&f, r))?;
        self.check_pace().map_err(|(f, r)| err(&f, r))?;
        for key in self.properties.keys() {
            if declared::find(key).is_none() && !key.contains('.') {
                return Err(err(
                    &format!("properties.{key}"),
                    format!("no property '{key}' (see `scalebench properties`)"),
                ));
            }
            if let Some(field) = self.sets_itself(key) {
                return Err(err(
                    &format!("properties.{key}"),
                    format!("set it as {field} in the file"),
                ));
            }
        }
        // Every property value through its declaration: ranges and words, one place; the named
        // operations then against the record's fields, so their errors name their own field.
        let mut props = self.properties_of(origin);
        props.remove("operations");
        props.remove("indexes");
        let w = crate::CoreWorkload::from_properties(&props).map_err(|e| {
            let key = match &e {
                WorkloadError::InvalidProperty { key, .. } => self.field_of(key),
                _ => "record".to_string(),
            };
            err(&key, e.to_string())
        })?;
        crate::index::resolve(&r.index, &w.field_names, &w.field_types).map_err(
            |(field, reason)| {
                bad(
                    origin,
                    line_of_table(text, &field, "index", "[[record.index]]"),
                    &format!("record.{field}"),
                    reason,
                )
            },
        )?;
        if !self.run.operation.is_empty() {
            crate::named::resolve(
                &self.run.operation,
                &w.field_names,
                &w.field_types,
                w.record.is_some(),
            )
            .map_err(|e| {
                bad(
                    origin,
                    line_of_table(text, &e.field, "operation", "[[run.operation]]"),
                    &format!("run.{}", e.field),
                    e.reason,
                )
            })?;
            self.keys_within_records(text, origin)?;
        }
        Ok(())
    }

    /// `run.mix`: known operations, weights from 0 to 1 summing to 1; the error is (field, why).
    fn check_mix(&self) -> Result<(), (String, String)> {
        let mut sum = 0.0;
        for (name, weight) in &self.run.mix {
            if !MIX_OPERATIONS.iter().any(|(n, _)| n == name) {
                let names: Vec<&str> = MIX_OPERATIONS.iter().map(|(n, _)| *n).collect();
                return Err((
                    format!("run.mix.{name}"),
                    format!("no operation '{name}': expected {}", names.join(", ")),
                ));
            }
            if !(weight.is_finite() && (0.0..=1.0).contains(weight)) {
                return Err((
                    format!("run.mix.{name}"),
                    format!("weight {weight} is out of range: 0 to 1"),
                ));
            }
            sum += weight;
        }
        if !self.run.mix.is_empty() && (sum - 1.0).abs() > 1e-9 {
            return Err(("run.mix".into(), format!("the weights sum to {sum}, not 1")));
        }
        Ok(())
    }

    /// Each phase's target or rate profile (not both) and the run's duration; the error is
    /// (field, why).
    fn check_pace(&self) -> Result<(), (String, String)> {
        for (phase, target, profile) in [
            ("run", self.run.target, &self.run.rate_profile),
            ("load", self.load.target, &self.load.rate_profile),
        ] {
            if let Some(p) = profile {
                let field = format!("{phase}.rate_profile");
                if target.is_some() {
                    return Err((
                        field,
                        "a rate profile replaces target: give one of them".into(),
                    ));
                }
                p.text().map_err(|e| (field, e))?;
            }
            if let Some(t) = target {
                crate::rate::Rate::new(t).map_err(|bounds| {
                    (format!("{phase}.target"), format!("{t} must be {bounds}"))
                })?;
            }
        }
        if let Some(d) = &self.run.duration {
            let parsed = d.value();
            if parsed.as_secs() == 0 || parsed.subsec_nanos() != 0 {
                return Err((
                    "run.duration".into(),
                    format!("'{d}' must be whole seconds, at least 1s"),
                ));
            }
        }
        Ok(())
    }

    /// Each operation's (and key-value alternative's) `keys` are distinct keys of the records.
    fn keys_within_records(&self, text: &str, origin: &str) -> Result<(), WorkloadError> {
        let records = self.record.records;
        for (i, d) in self.run.operation.iter().enumerate() {
            let alternative = d.key_value.as_ref().and_then(|kv| kv.keys);
            let keys = [(".keys", d.keys), (".key_value.keys", alternative)];
            for (at, n) in keys.into_iter().filter_map(|(at, n)| Some((at, n?))) {
                if u64::from(n) <= records {
                    continue;
                }
                let field = format!("operation[{i}] ('{}'){at}", d.name);
                return Err(bad(
                    origin,
                    line_of_table(text, &field, "operation", "[[run.operation]]"),
                    &format!("run.{field}"),
                    format!("{n} distinct keys of {records} records"),
                ));
            }
        }
        Ok(())
    }

    /// The file's field that sets property `key` (for errors in terms of the file).
    fn field_of(&self, key: &str) -> String {
        PROPERTY_FIELDS
            .iter()
            .find(|(p, _)| *p == key)
            .map(|(_, f)| f.to_string())
            .unwrap_or_else(|| format!("properties.{key}"))
    }

    /// The field of the file that sets `key` itself, when `[properties]` must not.
    fn sets_itself(&self, key: &str) -> Option<&'static str> {
        PROPERTY_FIELDS
            .iter()
            .find(|(p, _)| *p == key)
            .map(|(_, f)| *f)
    }

    /// The properties this file sets, in the order a property file would set them.
    pub fn properties(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut set = |k: &str, v: String| out.push((k.to_string(), v));
        let r = &self.record;
        if let Some(t) = &r.table {
            set("table", t.clone());
        }
        set("recordcount", r.records.to_string());
        if let Some(p) = &r.key.prefix {
            set("keyprefix", p.clone());
        }
        if let Some(o) = &r.key.order {
            set("insertorder", o.clone());
        }
        if let Some(z) = r.key.zero_padding {
            set("zeropadding", z.to_string());
        }
        if let Some(c) = &r.key.column {
            set("keycolumn", c.clone());
        }
        if let Some(f) = &r.fields {
            set("fieldcount", f.count.to_string());
            set("fieldlength", f.length.to_string());
            if let Some(p) = &f.prefix {
                set("fieldnameprefix", p.clone());
            }
            if let Some(d) = &f.length_distribution {
                set("fieldlengthdistribution", d.clone());
            }
            if let Some(m) = f.min_length {
                set("minfieldlength", m.to_string());
            }
        }
        if !r.column.is_empty() {
            set("columns", Record::to_json(&r.column));
            set("valueseed", r.value_seed.unwrap_or(0).to_string());
        }
        if !r.index.is_empty() {
            set("indexes", crate::index::to_json(&r.index));
        }
        if r.builtin == Some(BuiltinRecord::Measurement) {
            set("recordtype", "measurement".into());
        }
        let load = &self.load;
        if let Some(b) = load.batch_size {
            set("batchsize", b.to_string());
        }
        if let Some(n) = load.start {
            set("insertstart", n.to_string());
        }
        if let Some(n) = load.records {
            set("insertcount", n.to_string());
        }
        if let Some(t) = load.target {
            set("loadtarget", t.to_string());
        }
        if let Some(p) = &load.rate_profile {
            // Checked before: a profile in error is not set.
            if let Ok(text) = p.text() {
                set("loadrateprofile", text);
            }
        }
        let run = &self.run;
        if run.operation.is_empty() {
            for (name, info) in MIX_OPERATIONS {
                set(
                    info.name,
                    run.mix.get(name).copied().unwrap_or(0.0).to_string(),
                );
            }
        } else {
            set("operations", crate::named::to_json(&run.operation));
        }
        if let Some(n) = run.operations {
            set("operationcount", n.to_string());
        }
        if let Some(d) = &run.duration {
            let secs = d.value().as_secs();
            set("maxexecutiontime", secs.to_string());
        }
        if let Some(t) = run.target {
            set("target", t.to_string());
        }
        if let Some(p) = &run.rate_profile {
            // Checked before: a profile in error is not set.
            if let Ok(text) = p.text() {
                set("rateprofile", text);
            }
        }
        if let Some(d) = &run.key_distribution {
            set("requestdistribution", d.clone());
        }
        if let Some(c) = run.read_fields {
            set("readallfields", (c == FieldChoice::All).to_string());
        }
        if let Some(c) = run.write_fields {
            set("writeallfields", (c == FieldChoice::All).to_string());
        }
        if let Some(s) = &run.scan_length {
            if let Some(m) = s.min {
                set("minscanlength", m.to_string());
            }
            set("maxscanlength", s.max.to_string());
            if let Some(d) = &s.distribution {
                set("scanlengthdistribution", d.clone());
            }
        }
        for (k, v) in &self.properties {
            set(k, v.text());
        }
        out
    }

    fn properties_of(&self, origin: &str) -> Properties {
        let mut props = Properties::new();
        for (k, v) in self.properties() {
            props.set(&k, &v, origin);
        }
        props
    }

    /// Sets this file's properties into `props` (a later layer, `-P` or `-p`, still wins).
    pub fn apply(&self, props: &mut Properties, origin: &str) {
        for (k, v) in self.properties() {
            props.set(&k, &v, origin);
        }
    }
}

/// The line of a column's field: the `n`th `[[record.column]]` table's.
fn line_of_column(text: &str, field: &str) -> Option<usize> {
    line_of_table(text, field, "column", "[[record.column]]")
}

/// The line of the `n`th table `header` that `field` (`name[n]...`) is in.
fn line_of_table(text: &str, field: &str, name: &str, header: &str) -> Option<usize> {
    let n: usize = field
        .strip_prefix(name)?
        .strip_prefix('[')?
        .split(']')
        .next()?
        .parse()
        .ok()?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with(header))
        .nth(n)
        .map(|(i, _)| i + 1)
        .or_else(|| line_of(text, name))
}

/// The properties a file sets in fields of its own, and those fields.
const PROPERTY_FIELDS: &[(&str, &str)] = &[
    ("table", "record.table"),
    ("recordcount", "record.records"),
    ("keyprefix", "record.key.prefix"),
    ("insertorder", "record.key.order"),
    ("zeropadding", "record.key.zero_padding"),
    ("keycolumn", "record.key.column"),
    ("fieldcount", "record.fields.count"),
    ("fieldlength", "record.fields.length"),
    ("fieldnameprefix", "record.fields.prefix"),
    (
        "fieldlengthdistribution",
        "record.fields.length_distribution",
    ),
    ("minfieldlength", "record.fields.min_length"),
    ("columns", "record.column"),
    ("valueseed", "record.value_seed"),
    ("indexes", "record.index"),
    ("recordtype", "record.builtin"),
    ("batchsize", "load.batch_size"),
    ("insertstart", "load.start"),
    ("insertcount", "load.records"),
    ("loadtarget", "load.target"),
    ("loadrateprofile", "load.rate_profile"),
    ("readproportion", "run.mix.read"),
    ("updateproportion", "run.mix.update"),
    ("insertproportion", "run.mix.insert"),
    ("scanproportion", "run.mix.scan"),
    ("readmodifywriteproportion", "run.mix.read_modify_write"),
    ("deleteproportion", "run.mix.delete"),
    ("operations", "run.operation"),
    ("operationcount", "run.operations"),
    ("maxexecutiontime", "run.duration"),
    ("target", "run.target"),
    ("rateprofile", "run.rate_profile"),
    ("requestdistribution", "run.key_distribution"),
    ("readallfields", "run.read_fields"),
    ("writeallfields", "run.write_fields"),
    ("minscanlength", "run.scan_length.min"),
    ("maxscanlength", "run.scan_length.max"),
    ("scanlengthdistribution", "run.scan_length.distribution"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreWorkload, Operation};

    fn shipped(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/workloads")
            .join(name)
    }

    /// `n` load operations (from key 0) and `n` run operations of a workload with seed 7.
    fn operations(props: &Properties, n: u64) -> Vec<Operation> {
        let w = CoreWorkload::from_properties(props).unwrap();
        let mut g = w.generator(7);
        let mut out = Vec::new();
        for k in 0..n {
            let mut op = Operation::default();
            g.load_operation(k, &mut op);
            out.push(op);
        }
        for _ in 0..n {
            let mut op = Operation::default();
            g.next_operation(&mut op);
            if op.kind == crate::OpKind::Insert {
                g.acknowledge_insert(op.keynum);
            }
            out.push(op);
        }
        out
    }

    /// Issue 43: YCSB's workloads A-F and Lourenco's record shipped as files make the same keys,
    /// values and operations as the built-in workloads for the same seed (and the built-ins' keys
    /// are YCSB 0.17.0's, byte for byte: keys.rs).
    #[test]
    fn the_shipped_files_are_the_built_in_workloads() {
        let pairs = [
            ("workloada.toml", "a"),
            ("workloadb.toml", "b"),
            ("workloadc.toml", "c"),
            ("workloadd.toml", "d"),
            ("workloade.toml", "e"),
            ("workloadf.toml", "f"),
            ("timeseries.toml", "timeseries"),
        ];
        for (file, builtin) in pairs {
            let mut from_file = Properties::new();
            WorkloadFile::read(&shipped(file))
                .unwrap()
                .apply(&mut from_file, file);
            let mut built_in = Properties::new();
            built_in
                .load_str(
                    &crate::builtin::builtin_workload(builtin).unwrap().1,
                    "built-in",
                )
                .unwrap();
            let (a, b) = (operations(&from_file, 3000), operations(&built_in, 3000));
            assert_eq!(a.len(), b.len());
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(
                    x, y,
                    "{file}: operation {i} differs from the built-in {builtin}'s"
                );
            }
            let kinds: std::collections::BTreeSet<_> = a.iter().map(|o| o.kind).collect();
            assert!(
                kinds.len() >= 2 || builtin == "c" || builtin == "timeseries",
                "{file}: {kinds:?}"
            );
        }
    }

    /// A declared record's insert values depend on the seed and key number alone: any worker, in
    /// any order, writes the same record.
    #[test]
    fn a_declared_records_values_are_a_function_of_seed_and_key() {
        let file = WorkloadFile::read(&shipped("session-store.toml")).unwrap();
        let mut props = Properties::new();
        file.apply(&mut props, "session-store.toml");
        let w = CoreWorkload::from_properties(&props).unwrap();
        let (mut g1, mut g2) = (w.generator(1), w.generator(99));
        let (mut a, mut b) = (Operation::default(), Operation::default());
        for k in [5u64, 17, 5, 4000] {
            g1.load_operation(k, &mut a);
            g2.load_operation(k, &mut b);
            assert_eq!(a.values, b.values, "key {k}");
            assert_eq!(a.values.len(), 12);
        }
        // Another seed, other data.
        props.set("valueseed", "43", "test");
        let other = CoreWorkload::from_properties(&props).unwrap();
        let mut c = Operation::default();
        other.generator(1).load_operation(4000, &mut c);
        assert_ne!(c.values, b.values);
        // The derived column is made of its record's columns and key.
        let value = |name: &str| {
            let i = w.field_names.iter().position(|n| n == name).unwrap();
            b.values
                .iter()
                .find(|(idx, _)| *idx == i)
                .unwrap()
                .1
                .clone()
        };
        assert_eq!(
            value("cache_key"),
            format!("u{}:{}:{}", value("user"), value("locale"), b.key)
        );
    }

    #[test]
    fn the_docs_hold_the_json_schema() {
        let docs = include_str!("../../../docs/workload-file.schema.json");
        assert!(
            docs == json_schema(),
            "docs/workload-file.schema.json differs from the file's types: replace it with the \
             output of `scalebench workload schema`"
        );
    }

    /// The example docs/workload-files.md walks through is a valid file.
    #[test]
    fn the_docs_example_is_valid() {
        let docs = include_str!("../../../docs/workload-files.md");
        let example = docs
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap();
        let file = WorkloadFile::parse(example, "docs/workload-files.md").unwrap();
        assert_eq!(file.record.column.len(), 5);
    }

    /// Issue 62, low 1: `records = 0` (YCSB's 2,147,483,647 records) is refused, naming the
    /// field and its line.
    #[test]
    fn zero_records_are_refused() {
        let text = "[record]\nrecords = 0\n[run]\nmix = { read = 1.0 }\n";
        let e = WorkloadFile::parse(text, "z.toml").unwrap_err().to_string();
        assert!(
            e.contains("line 2: record.records: 0 records") && e.contains("2147483647"),
            "{e}"
        );
    }

    #[test]
    fn every_shipped_file_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workloads");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                WorkloadFile::read(&path).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 8, "{n} files");
    }
}
