//! What `scalebench workload check` prints of a checked workload file: its table, columns or
//! fields, operations and the properties it sets.

use std::path::Path;

use crate::printable;
use crate::workload_check::CheckedWorkload;

impl CheckedWorkload {
    /// The lines `workload check` prints: "FILE: ok" and what the file declares.
    pub fn summary(&self, file: &Path) -> String {
        let checked = self;
        let w = &checked.workload;
        let mut out = format!("{}: ok", file.display());
        if let Some(b) = checked.binding {
            out.push_str(&format!(" (checked for binding {b}; nothing connected)"));
        }
        out.push('\n');
        if let Some(d) = &checked.file.description {
            out.push_str(&format!("  {}\n", printable(d)));
        }
        out.push_str(&format!(
            "  table {}, {} records, keys like {}\n",
            w.table,
            w.record_count,
            w.keys.key(w.insert_start)
        ));
        match &w.record {
            Some(r) => {
                for c in r.columns.iter() {
                    out.push_str(&format!(
                        "  column {} {}: {}\n",
                        c.name,
                        c.type_text(),
                        c.generator.name()
                    ));
                }
            }
            None => out.push_str(&format!(
                "  {} text fields: {}\n",
                w.field_names.len(),
                w.field_names.join(", ")
            )),
        }
        if w.named.is_empty() {
            let mix: Vec<String> = w
                .mix
                .iter()
                .map(|(k, p)| format!("{} {:.1}%", k.name(), p * 100.0))
                .collect();
            out.push_str(&format!("  mix: {}\n", mix.join(", ")));
        }
        for (op, weight) in w.named.iter() {
            let steps: Vec<&str> = op
                .sequence
                .iter()
                .map(|&j| w.named[j].0.name.as_str())
                .collect();
            out.push_str(&format!(
                "  operation {}: {} {:.1}%{}{}{}\n",
                op.name,
                op.kind.name().to_lowercase(),
                weight * 100.0,
                match (steps.is_empty(), op.transaction) {
                    (true, _) => String::new(),
                    (false, false) => format!(" of {}", steps.join(", ")),
                    (false, true) => format!(" of {}, in one transaction", steps.join(", ")),
                },
                match &op.expect {
                    Some(e) => format!(", expects {}", e.describe()),
                    None => String::new(),
                },
                alternative_of(&checked.file, &op.name)
            ));
        }
        out.push_str("  properties set:\n");
        for (k, v) in &checked.properties {
            let shown: String = v.chars().take(57).collect();
            let v = if shown.len() < v.len() {
                format!("{shown}... ({} characters)", v.chars().count())
            } else {
                v.clone()
            };
            out.push_str(&format!("    {}={}\n", printable(k), printable(&v)));
        }
        out
    }
}

/// `, key_value alternative scan` for an operation of `file` that has one.
fn alternative_of(file: &scalebench_workload::file::WorkloadFile, name: &str) -> String {
    let decl = file.run.operation.iter().find(|d| d.name == name);
    match decl.and_then(|d| d.key_value.as_ref()) {
        Some(kv) => format!(", key_value alternative {}", kv.kind.word()),
        None => String::new(),
    }
}
