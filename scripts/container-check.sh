#!/usr/bin/env bash
# Builds the image from Containerfile with podman and runs it: `run --db null:// --duration 2s`
# must write a result. Works offline: the two base images the Containerfile names are made here
# from Debian's packages (debootstrap) and, for the build stage, this machine's Rust toolchain and
# crate cache, then imported under those names. Takes about a quarter of an hour on 2 cores (a
# link-time-optimised build), so it is not part of scripts/test.sh: docs/container.md records its
# last run. Needs root (or rootless podman), podman, buildah, debootstrap and, where crun cannot
# run containers (a hybrid cgroup hierarchy, as here), runc.
# Usage: scripts/container-check.sh [IMAGE]      (default scalebench:check)
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:-scalebench:check}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=${TMPDIR:-/tmp}/scalebench-container
mkdir -p "$work"
log() { printf '\n== %s\n' "$*"; }

for tool in podman debootstrap; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing (apt-get install podman buildah debootstrap runc)" >&2; exit 1; }
done

runtime=docker.io/library/debian:bookworm-slim
if ! podman image exists "$runtime"; then
  log "runtime base: a minimal bookworm made by debootstrap, imported as $runtime"
  rm -rf "$work/runtime"
  debootstrap --variant=minbase bookworm "$work/runtime" "$mirror" >/dev/null
  tar -C "$work/runtime" -c . | podman import - "$runtime"
fi

builder=docker.io/library/rust:1-slim-bookworm
if ! podman image exists "$builder"; then
  log "build base: bookworm with gcc, this machine's Rust toolchain and crate cache (cargo offline), imported as $builder"
  rm -rf "$work/builder"
  debootstrap --variant=minbase --include=gcc,libc6-dev,ca-certificates bookworm "$work/builder" "$mirror" >/dev/null
  toolchain=$(rustup show home)/toolchains/$(rustup show active-toolchain | cut -d' ' -f1)
  mkdir -p "$work/builder/usr/local/rust" "$work/builder/usr/local/cargo"
  cp -a "$toolchain/." "$work/builder/usr/local/rust/"
  cp -a "${CARGO_HOME:-$HOME/.cargo}/registry" "$work/builder/usr/local/cargo/"
  printf '[net]\noffline = true\n' >"$work/builder/usr/local/cargo/config.toml"
  tar -C "$work/builder" -c . | podman import \
    --change 'ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV CARGO_HOME=/usr/local/cargo' - "$builder"
fi

# This machine's limits (docs/container.md): crun refuses its hybrid cgroup hierarchy, so RUN
# steps use chroot isolation and containers run with runc; and a container may not raise its
# limits above the caller's hard limits, so they are given as they are.
log "podman build -t $image -f Containerfile ."
podman build --pull=never --isolation chroot -t "$image" -f Containerfile \
  --build-arg REVISION="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
  --build-arg SOURCE="$(git remote get-url origin 2>/dev/null | sed 's#//[^/@]*@#//#' || true)" .

log "podman run $image run --db null:// --duration 2s"
out=$(mktemp -d)
chmod 0777 "$out"    # the image's user (uid 10001) writes the result there
run_opts=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
! command -v runc >/dev/null || run_opts+=(--runtime runc)
podman run "${run_opts[@]}" --rm --network=none -v "$out:/out" "$image" run --db null:// --duration 2s -o /out/r.json
python3 - "$out/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
run = r["phases"][-1]
assert run["totals"]["ok"] > 0 and run["totals"]["failed"] == 0, run["totals"]
print(f"result: {run['totals']['ok']} operations ok in {run['duration_s']:.3f} s, tool {r['tool']['version']} ({r['tool']['git_commit']})")
PY
podman image inspect "$image" --format '{{.Config.User}} {{index .Config.Labels "org.opencontainers.image.title"}} {{.Size}} bytes'
rm -rf "$out"
