#!/usr/bin/env bash
# Makes eBPF work on these machines (idempotent; root): bcc, kernel headers where bcc
# looks for them, tracefs. See ../shared/FACTS.md section 5.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "setup-ebpf: needs root" >&2; exit 1; }
need=()
[ -f /usr/lib/python3/dist-packages/bcc/__init__.py ] || need+=(python3-bpfcc)
command -v funclatency-bpfcc >/dev/null 2>&1 || need+=(bpfcc-tools)
command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || need+=(bpftool)
ls -d /usr/src/linux-headers-*-amd64 >/dev/null 2>&1 || need+=(linux-headers-amd64)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi
release=$(uname -r)
modules=/lib/modules/$release
if [ ! -e "$modules/build" ]; then
    headers=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)
    common=${headers%-amd64}-common
    mkdir -p "$modules"
    ln -sfn "$headers" "$modules/build"
    [ -e "$modules/source" ] || ln -sfn "$common" "$modules/source"
fi
if [ ! -e /sys/kernel/tracing/uprobe_events ]; then
    mount -t tracefs nodev /sys/kernel/tracing
fi
echo "setup-ebpf: ok (bcc, headers at $modules/build, tracefs)"
