#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine: installs what the tests need, starts it,
# runs every test, stops what it started. Called by .ci/run; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

# The time breakdown printed at the end (also when a step fails): each step, then each test binary.
step_name=
step_start=$SECONDS
step_times=()
step() {
  [ -z "$step_name" ] || step_times+=("$(printf '%6d s  %s' $((SECONDS - step_start)) "$step_name")")
  step_name=$1
  step_start=$SECONDS
  [ -z "$1" ] || log "$1"
}
test_log=
print_breakdown() {
  step ""
  printf '\n== time breakdown (%d s in all)\n' "$SECONDS"
  printf '%s\n' "${step_times[@]}"
  if [ -n "$test_log" ] && [ -f "$test_log" ]; then
    echo "   test binaries (their own run time; compiling them is the step before):"
    # `Running tests/x.rs (target/...)` then that binary's `test result: ... finished in 1.23s`.
    awk '/^ *Running /{name=$NF; gsub(/^\(.*\/|-[0-9a-f]+\)$/, "", name); name=name " (" $2 ")"}
         /^ *Doc-tests /{name="doc-tests of " $2}
         /^test result:/{t=$NF; sub(/s$/, "", t); printf "%8.1f s  %s\n", t, name}' "$test_log" |
      sort -rn
  fi
}

if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found: install the stable Rust toolchain with rustup (https://rustup.rs)" >&2
  exit 1
fi

step "toolchain"
cargo --version
rustc --version

# System packages the build and the tests need: a C compiler (bundled SQLite) and the database servers
# the binding tests start on loopback ports (each test binary starts its own, from a temporary data
# directory under target/, and they die with it).
need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "$1" ]; }
have cc || need+=(build-essential)
have pkg-config || need+=(pkg-config)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql postgresql-contrib)
have bucardo || need+=(bucardo)                # PostgreSQL multi-master (Dijkshoorn's Bucardo rows)
# Bucardo's control database runs PL/PerlU, packaged per PostgreSQL version (named once lists are fresh).
ls /usr/lib/postgresql/*/lib/plperl.so >/dev/null 2>&1 || need+=(plperl)
have redis-server || need+=(redis-server)
have redis-cli || need+=(redis-tools)
have mariadbd || have /usr/sbin/mariadbd || need+=(mariadb-server)
have etcd || need+=(etcd-server)
have etcdctl || need+=(etcd-client)            # etcd clusters: member add/remove, status, compaction
have patroni || need+=(patroni)                # PostgreSQL failover (postgres-patroni deployments)
[ -e /usr/lib/galera/libgalera_smm.so ] || need+=(galera-4)   # MariaDB Galera clusters
have mariabackup || need+=(mariadb-backup)     # Galera state transfer (SST)
have socat || need+=(socat)                    # ... streams it
have java || need+=(openjdk-17-jre-headless)   # Cassandra 5.0 runs from its jar
have javac || need+=(openjdk-17-jdk-headless)  # mongo-java-server's main class runs from source
have mvn || need+=(maven)                      # resolves Cassandra, HBase, mongo-java-server from Maven Central
have chromium || need+=(chromium)              # the HTML reports are opened in headless Chromium
have promtool || need+=(prometheus)            # promtool lints the live metrics endpoint's exposition
have srun || need+=(slurm-wlm)                 # distributed runs launched by srun (a one-node Slurm)
have munged || need+=(munge)                   # ... which authenticates with munge
have /usr/sbin/sshd || need+=(openssh-server)  # distributed runs launched over ssh (an sshd on 127.0.0.1)
have go || need+=(golang-go)                   # tools/history-check (Porcupine) checks probe histories
have python3 || need+=(python3)                # scripts/check-imports.py: no import circle
python3 -c 'import jsonschema' 2>/dev/null || need+=(python3-jsonschema)  # validates workload files against their JSON Schema
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  pg_version=$(apt-cache depends postgresql | sed -n 's/.*Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -1)
  need=("${need[@]/#plperl/postgresql-plperl-$pg_version}")
  # Debian's postinst scripts try to start the services (sshd on every interface, slurmd, ...):
  # the tests start their own on loopback, so policy-rc.d keeps the packaged ones down meanwhile.
  policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee $policy >/dev/null && $SUDO chmod +x $policy
  fi
  installed=0
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" || installed=$?
  [ -z "$policy" ] || $SUDO rm -f "$policy"
  [ "$installed" = 0 ] || exit "$installed"
fi
# Test servers keep their files in directories of their own under the temp dir, linked from the test
# directories (see scalebench_deploy::account); servers a test binary keeps for its whole life never
# remove theirs. They go with their links: before the tests (a run that was killed) and after them.
remove_test_servers() {
  for d in target/tmp/test-servers target/tmp/cli-clusters; do
    [ -d "$d" ] || continue
    find "$d" -type l | while read -r link; do
      t=$(readlink "$link")
      case "$t" in "${TMPDIR:-/tmp}"/scalebench-*) rm -rf -- "$t" ;; esac
    done
  done
  rm -rf target/tmp/test-servers target/tmp/cli-clusters
}
remove_test_servers
trap 'remove_test_servers; print_breakdown' EXIT

step "fetching Apache Cassandra 5.0 from Maven Central into ~/.m2 (scalebench resolves its classpath from there)"
mvn -q -B -f deployments/cassandra/pom.xml dependency:resolve >/dev/null
step "fetching Apache HBase 2.6.1 (server, ZooKeeper, Thrift gateway) from Maven Central"
mvn -q -B -f deployments/hbase/pom.xml dependency:resolve >/dev/null
step "fetching HdrHistogram 2.1.12 (its HistogramLogProcessor reads scalebench's HDR logs in the tests)"
mvn -q -B dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:2.1.12 >/dev/null
step "fetching mongo-java-server 1.46.0 (a MongoDB wire-protocol server for the mongodb binding's tests)"
mvn -q -B -f deployments/mongodb/pom.xml dependency:resolve >/dev/null

step "fetching Porcupine (Go module proxy) and testing tools/history-check, the checker of probe histories"
(cd tools/history-check && go mod download && go vet ./... && go test ./...)

step "no import circle between crates or between the modules of a crate (issue 40)"
python3 scripts/check-imports.py

step "sizes: no source file over 1,000 lines, no function over 150, the binary crate under 2,000 lines (issue 64)"
python3 scripts/check-sizes.py

step "build the workspace and its tests without a protobuf compiler (a newcomer's machine has none: issue 16, point 1)"
# PROTOC pointing nowhere fails any build script that runs protoc. One build of the tests, which
# holds the libraries and the binary too: a `cargo build` first compiled 27 crates twice (the
# tests' dev-dependencies unify other features of shared crates, simd-adler32's for png).
export PROTOC=/nonexistent/protoc
cargo test --workspace --locked --no-run -j 2

step "README command 1's build (the embedded default alone) compiles"
# The tests above build every binding; this build leaves the network bindings out (47 s). What a
# lean build says of a binding it leaves out is tested in the full build (binding's registry.rs):
# running the registry's tests in a build of SQLite alone cost 69 s more.
cargo check -p scalebench --no-default-features --features embedded --locked -j 2

step "run the tests"
# One test binary at a time, two test threads each: the machine has two cores, and two binaries
# at once overloaded the servers the tests measure (docs/benchmarks.md section 20).
test_log=target/test-run.log
cargo test --workspace --locked --no-fail-fast -j 2 -- --test-threads 2 2>&1 | tee "$test_log"
