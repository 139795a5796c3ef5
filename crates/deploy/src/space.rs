//! Space on disk, counted as `du` does: allocated blocks, each hard-linked file once (Cassandra's
//! snapshots are hard links), symbolic links not followed below the top.

use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use scalebench_measure::NodeSpace;

/// Sorts a file (path relative to the measured directory) into a part: `data`, `index`, `log`, ...
/// by its name alone.
pub type Classifier = fn(&Path) -> &'static str;

/// Sorts a file into a part, knowing more than its name (which files hold the benchmark table).
pub type Classify<'a> = dyn Fn(&Path) -> &'static str + 'a;

/// Bytes under `dir` by part; `skip` names top-level entries not counted (the server's own log).
pub fn measure(node: &str, dir: &Path, classify: &Classify, skip: &[&str]) -> NodeSpace {
    let mut parts: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen = HashSet::new();
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    // The directory itself, as du counts it.
    if let Ok(m) = std::fs::symlink_metadata(&root) {
        *parts.entry("other".into()).or_insert(0) += m.blocks() * 512;
    }
    walk(&root, &root, classify, skip, &mut seen, &mut parts);
    parts.retain(|_, v| *v > 0);
    NodeSpace {
        node: node.to_string(),
        dir: dir.display().to_string(),
        bytes: parts.values().sum(),
        parts,
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    classify: &Classify,
    skip: &[&str],
    seen: &mut HashSet<(u64, u64)>,
    parts: &mut BTreeMap<String, u64>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let rel = path.strip_prefix(root).unwrap_or(&path);
        if dir == root && skip.iter().any(|s| rel == Path::new(s)) {
            continue;
        }
        // Files come and go while a server runs (compaction): a vanished entry counts nothing.
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if m.nlink() > 1 && !m.is_dir() && !seen.insert((m.dev(), m.ino())) {
            continue;
        }
        let part = if m.is_dir() { "other" } else { classify(rel) };
        *parts.entry(part.to_string()).or_insert(0) += m.blocks() * 512;
        if m.is_dir() {
            walk(root, &path, classify, skip, seen, parts);
        }
    }
}

/// Every file is data.
pub fn all_data(_: &Path) -> &'static str {
    "data"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_name(p: &Path) -> &'static str {
        if p.starts_with("wal") {
            "log"
        } else {
            "data"
        }
    }

    #[test]
    fn counts_like_du_with_parts_and_links_once() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("wal")).unwrap();
        std::fs::write(d.path().join("wal/0001"), vec![1u8; 100_000]).unwrap();
        std::fs::write(d.path().join("table"), vec![2u8; 50_000]).unwrap();
        std::fs::hard_link(d.path().join("table"), d.path().join("snapshot-of-table")).unwrap();
        std::fs::write(d.path().join("server.log"), vec![3u8; 70_000]).unwrap();
        let s = measure("n1", d.path(), &by_name, &["server.log"]);
        let blocks = |p: &str| std::fs::metadata(d.path().join(p)).unwrap().blocks() * 512;
        assert_eq!(s.parts["log"], blocks("wal/0001"));
        assert_eq!(s.parts["data"], blocks("table"));
        assert!(s.parts["log"] >= 100_000 && s.parts["data"] >= 50_000);
        assert_eq!(s.bytes, s.parts.values().sum::<u64>());
        let du = std::process::Command::new("du")
            .args(["-s", "-B1", "--exclude=server.log"])
            .arg(d.path())
            .output()
            .unwrap();
        let du: u64 = String::from_utf8_lossy(&du.stdout)
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(s.bytes, du);
    }
}
