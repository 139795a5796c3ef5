#!/usr/bin/env bash
# scalebench's hbase binding (through the Thrift2 gateway) against YCSB 0.17.0's core with HBase
# 2.6.1's Java client (tools/ycsb-hbase: YCSB's own hbase bindings are not on Maven Central; the
# Java client talks to the region server directly, scalebench through the gateway: one hop more),
# both against one standalone HBase 2.6.1. HBase and its gateway pinned to core 0, the client to
# core 1. Prints throughput and the client's CPU per operation.
# Usage: bench/hbase.sh [CONNECTIONS] [SECONDS]   (default 16, 20)
set -euo pipefail
cd "$(dirname "$0")/.."
conns=${1:-16}
secs=${2:-20}
cargo build --release -q
cargo build --release -q -p scalebench-server-tests --example serve
ycsb=$(mktemp -d)
mvn -q -B -f tools/ycsb-hbase/pom.xml dependency:build-classpath -Dmdep.outputFile="$ycsb/cp.txt" -Dmdep.includeScope=runtime
javac -d "$ycsb" -cp "$(cat "$ycsb/cp.txt")" tools/ycsb-hbase/YcsbHbase.java
. bench/lib.sh
start_server hbase
url=$URL pid=$PID
port=${url##*:}
site=target/tmp/serve/hbase-$port/conf/hbase-site.xml
zk=$(sed -n 's|.*hbase.zookeeper.property.clientPort</name><value>\([0-9]*\)<.*|\1|p' "$site")
gateway=$(pgrep -f "thrift2.ThriftServer -p $port")
taskset -a -p -c 0 "$pid" >/dev/null
taskset -a -p -c 0 "$gateway" >/dev/null
records=100000
sb=(taskset -c 1 target/release/scalebench)
ycsb_run() {   # ycsb_run PHASE(-load|-t) EXTRA_PROPS...
  local phase=$1; shift
  /usr/bin/time -f "client cpu %U user %S sys" taskset -c 1 java -Xmx1g -cp "$ycsb:$(cat "$ycsb/cp.txt")" site.ycsb.Client "$phase" \
    -db YcsbHbase -p hbase.zookeeper.port="$zk" -p workload=site.ycsb.workloads.CoreWorkload -p recordcount=$records \
    -p fieldcount=10 -p fieldlength=100 -threads "$conns" "$@" 2>&1 \
    | grep -E "\[OVERALL\], Throughput|\[(READ|UPDATE|INSERT)\], (Operations|99thPercentileLatency)|FAILED|client cpu"
}
sb_json() {   # prints throughput, failures and the client's CPU
  /usr/bin/time -f "client cpu %U user %S sys" "${sb[@]}" "$@" -q --format json 2>&1 \
    | python3 -c '
import json, sys
t = sys.stdin.read()
start = t.find("{\n")
end = t.rindex("}") + 1
j = json.loads(t[start:end])
p = j["phases"][-1]
tot = p["totals"]
rate = tot["records"] / p["duration_s"] if tot.get("records") else tot["throughput_ops_s"]
lat = {k: v["latency"]["p99_us"] for k, v in p["operations"].items() if v.get("latency")}
print("%.0f %s/s, %d ok, errors %d, p99 %s" % (rate, "records" if tot.get("records") else "ops", tot["ok"], tot["failed"], lat))
print((t[:start] + t[end:]).strip())'
}
for round in 1 2; do
  echo "== round $round: YCSB load, $records records, one Put each, $conns threads"
  # A fresh table (its one record lies past YCSB's keys).
  "${sb[@]}" load --db "$url" -p recordcount=$((records + 1)) -p insertstart=$records -p insertcount=1 --create-schema --drop-schema -q >/dev/null
  ycsb_run -load
  echo "== round $round: scalebench load, $records records, unbatched, 1 thread x $conns"
  sb_json load --db "$url" -p recordcount=$records --create-schema --drop-schema --batch-size 1 --threads 1 --concurrency "$conns"
  echo "== round $round: scalebench load, $records records, putMultiple of 100, 1 thread x $conns"
  sb_json load --db "$url" -p recordcount=$records --create-schema --drop-schema --batch-size 100 --threads 1 --concurrency "$conns"
  echo "== round $round: YCSB workload A (zipfian), ${secs} s, $conns threads"
  ycsb_run -t -p readproportion=0.5 -p updateproportion=0.5 -p requestdistribution=zipfian -p operationcount=100000000 -p maxexecutiontime="$secs"
  echo "== round $round: scalebench workload A, ${secs} s, 1 thread x $conns"
  sb_json run a --db "$url" -p recordcount=$records --threads 1 --concurrency "$conns" --duration "${secs}s"
  echo "== round $round: YCSB workload C (reads), ${secs} s"
  ycsb_run -t -p readproportion=1 -p updateproportion=0 -p requestdistribution=zipfian -p operationcount=100000000 -p maxexecutiontime="$secs"
  echo "== round $round: scalebench workload C, ${secs} s"
  sb_json run c --db "$url" -p recordcount=$records --threads 1 --concurrency "$conns" --duration "${secs}s"
done
rm -rf "$ycsb"
