//! Running the `scalebench` binary from tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

pub fn scalebench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
