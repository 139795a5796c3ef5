// Records the git commit the binary was built from, for the result files.
use std::process::Command;

fn main() {
    // A build without the repository (a container image's build context) is told its commit.
    println!("cargo:rerun-if-env-changed=SCALEBENCH_GIT_COMMIT");
    if let Some(given) = std::env::var("SCALEBENCH_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
    {
        println!("cargo:rustc-env=SCALEBENCH_GIT_COMMIT={given}");
        return;
    }
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    let suffix = if dirty && commit != "unknown" {
        "-dirty"
    } else {
        ""
    };
    println!("cargo:rustc-env=SCALEBENCH_GIT_COMMIT={commit}{suffix}");
    // Relative to this crate: the workspace's .git.
    for f in ["../../.git/HEAD", "../../.git/index"] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
}
