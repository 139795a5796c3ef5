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
