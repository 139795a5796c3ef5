# Shared by the benchmark scripts: start one server with the `serve` example and stop it on exit.
# start_server KIND  -> sets URL and PID (the server's process, for pinning)
start_server() {
  local dir
  dir=$(mktemp -d)
  mkfifo "$dir/stdin"
  target/release/examples/serve "$1" <"$dir/stdin" >"$dir/out" 2>&1 &
  exec 4>"$dir/stdin"          # serve runs until this closes
  trap 'exec 4>&-; wait' EXIT
  for _ in $(seq 600); do [ -s "$dir/out" ] && break; sleep 0.5; done
  read -r URL PID <"$dir/out"
}

# sb_json SCALEBENCH_ARGS...: runs scalebench (the array `sb`) with JSON output; prints the phase's
# rate (records/s of a load, else ops/s), failures, p99 per operation, warnings and the client's CPU.
sb_json() {
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

# ycsb_client CLASSDIR DB PHASE(-load|-t) ARGS...: YCSB 0.17.0's client (classpath in CLASSDIR/cp.txt,
# the database class compiled into CLASSDIR) on core 1, with the client's CPU; prints the overall
# throughput, per-operation counts and p99, failures.
ycsb_client() {
  local dir=$1 db=$2 phase=$3; shift 3
  /usr/bin/time -f "client cpu %U user %S sys" taskset -c 1 java -Xmx1g -cp "$dir:$(cat "$dir/cp.txt")" site.ycsb.Client "$phase" \
    -db "$db" -p workload=site.ycsb.workloads.CoreWorkload "$@" 2>&1 \
    | grep -E "\[OVERALL\], Throughput|\[(READ|UPDATE|INSERT)\], (Operations|99thPercentileLatency)|FAILED|client cpu"
}
