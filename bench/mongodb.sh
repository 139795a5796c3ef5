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
  ycsb_client "$ycsb" YcsbMongoDb "$phase" -p mongodb.url="$url" -p recordcount=$records -p fieldcount=10 -p fieldlength=100 -threads "$conns" "$@"
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
