#!/usr/bin/env bash
# docs/benchmarks.md section 15: Wegert's healthy consistency pairs (ALL/ONE against ONE/ONE) on the
# 3-node Cassandra ring, his four workloads: examples/wegert-configurations.toml cut to those two
# cells (no pause), in miniature, repeated; prints each workload's throughput ratio and their median.
# Usage: bench/wegert-healthy-pairs.sh [REPEATS]   (release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/target/release/scalebench
REPEATS=${1:-3}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$PWD/examples/wegert-configurations.toml" "$DIR/pairs.toml" <<'PY'
import re, sys, os
src, dst = sys.argv[1], sys.argv[2]
text = open(src).read()
# Blocks start at a table header; the preamble keeps the file's own keys.
parts = re.split(r'(?m)^(?=\[)', text)
keep = {'database': {'cassandra-3'}, 'configuration': {'one-one', 'all-one'}}
out = []
for p in parts:
    header = re.match(r'\[\[?([a-z_.]+)\]\]?', p)
    name = re.search(r'(?m)^name\s*=\s*"([^"]+)"', p)
    if header is None:
        p = re.sub(r'(?m)^name\s*=\s*"[^"]+"', 'name = "wegert-healthy-pairs"', p, count=1)
    elif header.group(1) == 'fault':
        continue
    elif header.group(1) in keep and (name is None or name.group(1) not in keep[header.group(1)]):
        continue
    p = re.sub(r'deployment\s*=\s*"\.\./', 'deployment = "' + os.path.dirname(os.path.dirname(src)) + '/', p)
    out.append(p)
open(dst, 'w').write(''.join(out))
PY
for i in $(seq 1 "$REPEATS"); do
  "$B" experiment "$DIR/pairs.toml" --miniature --results "$DIR/r$i.db" --clusters-dir "$DIR/clusters" >/dev/null
  python3 - "$DIR/r$i.db" <<'PY'
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rate = {}
for cell, result in db.execute("SELECT cell, result FROM runs WHERE status = 'ok'"):
    r = json.loads(result)
    config, workload = cell.split('/')[1], cell.split('/')[2]
    rate[(config, workload)] = r['phases'][-1]['totals']['throughput_ops_s']
ratios = {w: rate[('all-one', w)] / max(rate[('one-one', w)], 1.0) for w in 'RUIM'}
print(' '.join(f'{w} {x:.2f}' for w, x in ratios.items()), f'median {statistics.median(ratios.values()):.2f}')
PY
done
