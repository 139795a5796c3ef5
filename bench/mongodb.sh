#!/usr/bin/env bash
# scalebench's mongodb binding against YCSB 0.17.0's core with the MongoDB Java sync driver 5.2
# (tools/ycsb-mongodb: YCSB's own mongodb-binding is not on Maven Central), both against one
# mongo-java-server 1.46.0 (H2 backend). Server pinned to core 0, client to core 1. Prints throughput
# and the client's CPU per operation (user + system time of the client process / operations).
# Usage: bench/mongodb.sh [CONNECTIONS] [SECONDS]   (default 16, 20)
set -euo pipefail
cd "$(dirname "$0")/.."
conns=${1:-16}
secs=${2:-20}
cargo build --release -q
cargo build --release -q -p scalebench-server-tests --example serve
ycsb=$(mktemp -d)
mvn -q -B -f tools/ycsb-mongodb/pom.xml dependency:build-classpath -Dmdep.outputFile="$ycsb/cp.txt" -Dmdep.includeScope=runtime
javac -d "$ycsb" -cp "$(cat "$ycsb/cp.txt")" tools/ycsb-mongodb/YcsbMongoDb.java
. bench/lib.sh
start_server mongo-java-server
url=$URL pid=$PID
taskset -a -p -c 0 "$pid" >/dev/null
records=100000
sb=(taskset -c 1 target/release/scalebench)
ycsb_run() {   # ycsb_run PHASE(-load|-t) EXTRA_PROPS...
  local phase=$1; shift
  /usr/bin/time -f "client cpu %U user %S sys" taskset -c 1 java -Xmx1g -cp "$ycsb:$(cat "$ycsb/cp.txt")" site.ycsb.Client "$phase" \
    -db YcsbMongoDb -p mongodb.url="$url" -p workload=site.ycsb.workloads.CoreWorkload -p recordcount=$records \
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
  echo "== round $round: YCSB load, $records records, insertOne, $conns threads"
  # Empties the collection (the one record it loads lies past YCSB's keys).
  "${sb[@]}" load --db "$url" -p recordcount=$((records + 1)) -p insertstart=$records -p insertcount=1 --drop-schema -q >/dev/null
  ycsb_run -load
  echo "== round $round: scalebench load, $records records, unbatched, 1 thread x $conns"
  sb_json load --db "$url" -p recordcount=$records --drop-schema --batch-size 1 --threads 1 --concurrency "$conns"
  echo "== round $round: scalebench load, $records records, insertMany of 100, 1 thread x $conns"
  sb_json load --db "$url" -p recordcount=$records --drop-schema --batch-size 100 --threads 1 --concurrency "$conns"
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
