#!/usr/bin/env bash
# Open-loop accuracy: the null binding at 1,000,000 ops/s; corrected (intended-start) p99 should stay under
# 1 ms. Compare YCSB 0.17.0: -target 1000000 -p measurement.interval=intended (see docs/benchmarks.md).
# Usage: bench/open-loop.sh [THREADS] [DURATION]   (defaults: 2, 30s)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
target/release/scalebench run a --db null:// --target 1000000 --threads "${1:-2}" --duration "${2:-30s}" -q
