//! Facts about the tool and the host recorded with every result, and redaction of secrets.

use scalebench_binding::config::is_secret_key;
use scalebench_binding::DbUrl;
use scalebench_measure::result::{HostInfo, ToolInfo};

pub fn tool_info() -> ToolInfo {
    ToolInfo {
        name: "scalebench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("SCALEBENCH_GIT_COMMIT").into(),
    }
}

pub fn host_info() -> HostInfo {
    HostInfo {
        hostname: gethostname::gethostname().to_string_lossy().into_owned(),
        os: os_name(),
        arch: std::env::consts::ARCH.into(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes: memory_bytes().unwrap_or(0),
    }
}

fn os_name() -> String {
    std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string())
}

fn memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The command line with passwords in URLs and secret `-p` values replaced by `***`.
pub fn redacted_command(args: &[std::ffi::OsString]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let s = a.to_string_lossy();
        out.push(redact_arg(&s));
    }
    out
}

/// A JSON document (an experiment's spec) with passwords in URLs and values of secret keys replaced
/// by `***`, for storing.
pub fn redacted_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(redact_arg(s)),
        Value::Array(items) => Value::Array(items.iter().map(redacted_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) && !v.is_null() {
                        Value::String("***".into())
                    } else {
                        redacted_json(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn redact_arg(s: &str) -> String {
    if let Some(eq) = s.find('=') {
        let (k, v) = (&s[..eq], &s[eq + 1..]);
        let key = k.trim_start_matches('-').trim_start_matches('p');
        if is_secret_key(key) {
            return format!("{k}=***");
        }
        if v.contains("://") {
            return format!("{k}={}", redact_arg(v));
        }
    }
    if s.contains("://") {
        return match DbUrl::parse(s) {
            Ok(u) => u.redacted(),
            // A URL that does not parse may still hold `user:password@`.
            Err(_) => scalebench_binding::config::redact_unparsed(s),
        };
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_survive_redaction() {
        let args: Vec<std::ffi::OsString> = [
            "scalebench",
            "--db",
            "postgres://u:hunter2@127.0.0.1/db",
            "-p",
            "postgres.password=hunter2",
            "--db=mysql://root:hunter2@localhost/x",
            // URLs that do not parse still hide their user:password@.
            "postgres://u:hunter2@db:99999/ycsb",
            "postgres://u:hunter2@[::1/ycsb",
            "--db=postgres://u:hunter2@d b/ycsb",
        ]
        .iter()
        .map(Into::into)
        .collect();
        let joined = redacted_command(&args).join(" ");
        assert!(!joined.contains("hunter2"), "{joined}");
        assert!(joined.contains("postgres.password=***"), "{joined}");
    }
}
