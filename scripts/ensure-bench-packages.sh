#!/usr/bin/env bash
# The gateway benchmark drives wrk against nginx and Portico: install both (Debian packages)
# when missing and running as root; otherwise say what to install. Never needed by the tests.
set -euo pipefail
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
if ((${#missing[@]} == 0)); then
    exit 0
fi
if ((EUID != 0)); then
    echo "ensure-bench-packages: missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}" >&2
    exit 0  # bench_gateway.py then reports itself skipped
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
apt-get update -qq >"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
# nginx-light's postinst may try to start a service on :80; the binary is all we need
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >>"$log" 2>&1 || echo "ensure-bench-packages: apt-get reported an error; checking binaries" >&2
command -v wrk >/dev/null && command -v nginx >/dev/null || { tail -n 20 "$log" >&2; exit 1; }
echo "ensure-bench-packages: installed ${missing[*]}"
