//! How fast a capture is read: every operation of the capture at the path given (its format
//! recognised), counted, with the reading's CPU time; docs/benchmarks.md section 27 runs it
//! through bench/replay-read.sh.

use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read_rate CAPTURE");
        std::process::exit(2);
    };
    let began = Instant::now();
    let capture = match scalebench_replay::open(std::path::Path::new(&path), None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let format = capture.format.name();
    let (mut ops, mut bad) = (0u64, 0u64);
    for op in capture.operations {
        match op {
            Ok(_) => ops += 1,
            Err(_) => bad += 1,
        }
    }
    let s = began.elapsed().as_secs_f64();
    println!(
        "{format}: {ops} operations ({bad} unreadable) in {s:.3} s: {:.0} operations/s",
        ops as f64 / s
    );
}
