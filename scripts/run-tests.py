#!/usr/bin/env python3
"""Runs the workspace's test binaries in two lanes at once, each binary as `cargo test` runs it.

`cargo test` runs its test binaries one after the other, and the suite's binaries spend much of
their time waiting for servers to start, join and settle: on 2 cores the machine was idle 43% of
a whole run (vmstat, 2026-12-02). Here two binaries run at once, each with two test
threads as before: one lane runs the two longest (`HEAVY`: the examples' miniatures and the cluster
operations, both mostly Cassandra rings) one after the other, the other lane every other binary
and the doc tests, and whichever lane is free takes the next of those; the few that need the
machine to themselves (`ALONE`) run after both lanes. Every test binary cargo builds is run
exactly once: the list comes from cargo itself (`cargo test --no-run --message-format=json`), so a
new test file needs no line here.

Why not cargo-nextest, the well-kept runner that schedules across binaries: it runs every test in
a process of its own, and the binaries here share their servers between their tests (a Cassandra
ring, an HBase, a Slurm cluster started once per binary); each would start once per test.

Each binary's output is printed whole when it ends, under cargo's own `Running ...` header, so
that the log reads (and `scripts/test.sh` sums it) as cargo's. Exit code: 0 when every binary
passed, 101 (cargo's) when one failed, after all of them ran (cargo's --no-fail-fast).
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

# The lane of their own, in this order: the two longest binaries (about 430 s each on 2 cores),
# which together take about as long as all the others.
HEAVY = ["examples", "cluster_operations"]
# Binaries run after both lanes, with the machine to themselves: the saturation search's test
# asserts that a client alone on its core is named as the bound ("cpu of client"); beside the
# other lane the host's CPU is busy and the verdict is rightly "host cpu". The monitor's tests
# (a few seconds each) assert that a process spinning on a core is seen using most of one.
ALONE = ["saturate", "remote_monitor", "burner"]
TEST_THREADS = "2"


def test_binaries(cargo_args):
    """(name, header, executable, package dir) of every test binary, in cargo's order."""
    built = subprocess.run(
        ["cargo", "test", *cargo_args, "--no-run", "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE,
        text=True,
    )
    if built.returncode != 0:
        sys.exit(built.returncode)  # cargo said why on stderr
    out = built.stdout
    binaries = []
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg["profile"]["test"]:
            continue  # the scalebench binary itself, built for the tests that run it
        target = msg["target"]
        package_dir = os.path.dirname(msg["manifest_path"])
        source = os.path.relpath(target["src_path"], package_dir)
        kind = source if "test" in target["kind"] else "unittests " + source
        executable = os.path.relpath(msg["executable"])
        header = f"     Running {kind} ({executable})"
        binaries.append((target["name"], header, msg["executable"], package_dir))
    return binaries


print_lock = threading.Lock()
failed = []
children = set()


def say(text):
    with print_lock:
        sys.stdout.write(text)
        sys.stdout.flush()


def run_one(name, header, command, cwd, env):
    say(f"{time.strftime('%H:%M:%S')} started {name}\n")
    started = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    children.add(proc)
    output = proc.stdout.read().decode("utf-8", "replace")
    code = proc.wait()
    children.discard(proc)
    if code != 0:
        failed.append(name)
    took = time.monotonic() - started
    status = "ok" if code == 0 else f"FAILED (exit code {code})"
    say(f"{header}\n{output}{time.strftime('%H:%M:%S')} {name}: {status} in {took:.0f} s\n")


def run_lane(own, shared):
    """Runs the lane's own binaries, then takes from those both lanes share until none is left."""
    for item in own:
        run_one(*item)
    while True:
        with print_lock:
            if not shared:
                return
            item = shared.pop(0)
        run_one(*item)


def main():
    cargo_args = sys.argv[1:]
    binaries = test_binaries(cargo_args)
    names = [b[0] for b in binaries]
    missing = [h for h in HEAVY + ALONE if h not in names]
    if missing:
        sys.exit(f"run-tests: no test binary named {', '.join(missing)} ({__file__})")

    def item(binary):
        name, header, executable, package_dir = binary
        env = dict(os.environ, CARGO_MANIFEST_DIR=package_dir)
        return (name, header, [executable, "--test-threads", TEST_THREADS], package_dir, env)

    heavy = [item(b) for h in HEAVY for b in binaries if b[0] == h]
    alone = [item(b) for b in binaries if b[0] in ALONE]
    rest = [item(b) for b in binaries if b[0] not in HEAVY + ALONE]
    doc = ["cargo", "test", *cargo_args, "--doc", "--", "--test-threads", TEST_THREADS]
    rest.append(("doc-tests", "", doc, os.getcwd(), dict(os.environ)))

    lanes = [threading.Thread(target=run_lane, args=(own, rest)) for own in (heavy, [])]
    for lane in lanes:
        lane.start()
    try:
        for lane in lanes:
            lane.join()
        run_lane(alone, [])
    except KeyboardInterrupt:
        for proc in list(children):
            proc.send_signal(signal.SIGINT)
        sys.exit(130)
    if failed:
        say(f"\nrun-tests: {len(failed)} test binaries failed: {', '.join(failed)}\n")
        sys.exit(101)


if __name__ == "__main__":
    main()
