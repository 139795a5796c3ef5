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
  ycsb_client "$ycsb" YcsbHbase "$phase" -p hbase.zookeeper.port="$zk" -p recordcount=$records -p fieldcount=10 -p fieldlength=100 -threads "$conns" "$@"
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
