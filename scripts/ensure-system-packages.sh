#!/usr/bin/env bash
# Make sure the system binaries the test suite needs are present:
#   * PostgreSQL server binaries (initdb, pg_ctl, postgres, psql) under /usr/lib/postgresql/*/bin
#   * redis-server on PATH
#   * slapd and slapadd (package slapd) and the ldap-utils clients, for ldap-auth's tests
#   * libmodsecurity3 and modsecurity-crs (the WAF engine: ModSecurity v3 through ctypes, with
#     the OWASP Core Rule Set; no compiler or -dev package needed)
#   * chromium (Debian's browser; the console's browser tests drive it with Playwright)
#   * dnsmasq (package dnsmasq-base: the binary without the system service), the DNS server
#     the upstream discovery tests start on a high port (tests/support/dnsserver.py)
#   * xmlsec1 (XML signatures: SAML sign-in checks assertions with it, through pysaml2; the
#     management service needs it at run time too)
#   * libxml2-dev (libxml2's headers and xml2-config/pkg-config file: `make native` compiles
#     xml-to-json's C converter against the system's libxml2; the gateway then loads libxml2.so.2)
#   * g++ (the C++ compiler: xml-to-json's fast path compiles the vendored pugixml with it)
#   * nodejs and npm, only where the machine has none (the console is built with Vite)
#   * a "postgres" system user (tests run initdb/pg_ctl through it when they run as root,
#     because PostgreSQL refuses to run as root)
# The tests start their own throwaway servers on loopback; nothing here configures or uses the
# distribution's default cluster/service.
#
# Fast no-op (no apt call) when everything is already there. Installs only what is missing, and
# only when running as root (CI); otherwise prints what to install and exits 1.
set -euo pipefail

me="ensure-system-packages"

pg_bindir() {
    # Newest installed major version wins, same rule as tests/support/pgcluster.py.
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
    [[ -n "$found" ]] && dirname "$found"
}

have_slapd() {
    # slapd and slapadd live in /usr/sbin, which a non-root PATH may lack
    [[ -x /usr/sbin/slapd && -x /usr/sbin/slapadd ]] || command -v slapd >/dev/null 2>&1
}
has_modsecurity() { ldconfig -p 2>/dev/null | grep -q 'libmodsecurity\.so\.3 '; }
has_crs() { ls /usr/share/modsecurity-crs/rules/*.conf >/dev/null 2>&1; }
have_dnsmasq() { [[ -x /usr/sbin/dnsmasq ]] || command -v dnsmasq >/dev/null 2>&1; }
have_libxml2_dev() { [[ -f /usr/include/libxml2/libxml/parser.h ]]; }

missing=()
pg_bindir >/dev/null || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
have_slapd || missing+=(slapd)
command -v ldapwhoami >/dev/null 2>&1 || missing+=(ldap-utils)
has_modsecurity || missing+=(libmodsecurity3)
has_crs || missing+=(modsecurity-crs)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
have_dnsmasq || missing+=(dnsmasq-base)
command -v xmlsec1 >/dev/null 2>&1 || [[ -x /usr/bin/xmlsec1 ]] || missing+=(xmlsec1)
have_libxml2_dev || missing+=(libxml2-dev)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

actions=()

if ((${#missing[@]} > 0)); then
    if ((EUID != 0)); then
        echo "$me: missing system packages: ${missing[*]}." >&2
        echo "$me: install them with: sudo apt-get install -y ${missing[*]}" >&2
        echo "$me: (or re-run this script as root)" >&2
        exit 1
    fi
    apt_log=$(mktemp)
    trap 'rm -f "$apt_log"' EXIT
    # Keep apt/dpkg chatter out of the way; it is shown only if something actually goes wrong.
    if ! apt-get update -qq >"$apt_log" 2>&1; then
        tail -n 30 "$apt_log" >&2
        echo "$me: apt-get update failed" >&2
        exit 1
    fi
    # The postgresql postinst may try to start the distribution cluster on 5432 (and redis on
    # 6379). We never use those; if starting them fails (no init system in a container), apt
    # reports an error although the binaries are unpacked. So judge success by the binaries.
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >>"$apt_log" 2>&1; then
        echo "$me: warning: apt-get install reported an error (often just a failed service" \
            "start); checking binaries" >&2
    fi
    still_missing=()
    pg_bindir >/dev/null || still_missing+=(postgresql)
    command -v redis-server >/dev/null 2>&1 || still_missing+=(redis-server)
    have_slapd || still_missing+=(slapd)
    command -v ldapwhoami >/dev/null 2>&1 || still_missing+=(ldap-utils)
    has_modsecurity || still_missing+=(libmodsecurity3)
    has_crs || still_missing+=(modsecurity-crs)
    command -v chromium >/dev/null 2>&1 || still_missing+=(chromium)
    have_dnsmasq || still_missing+=(dnsmasq-base)
    have_libxml2_dev || still_missing+=(libxml2-dev)
    command -v g++ >/dev/null 2>&1 || still_missing+=(g++)
    command -v npm >/dev/null 2>&1 || still_missing+=(nodejs npm)
    if ((${#still_missing[@]} > 0)); then
        tail -n 30 "$apt_log" >&2
        echo "$me: still missing after apt-get install: ${still_missing[*]}" >&2
        exit 1
    fi
    actions+=("installed ${missing[*]}")
fi

# The Debian package creates this user; it can be absent if the binaries came another way.
# Only root-run tests need it, so a non-root run without it is fine.
if ! getent passwd postgres >/dev/null; then
    if ((EUID == 0)); then
        useradd --system --home /var/lib/postgresql --shell /bin/bash postgres
        actions+=("created system user postgres")
    else
        actions+=("no postgres user (only needed when tests run as root)")
    fi
fi

summary="PostgreSQL bin $(pg_bindir), redis-server $(command -v redis-server)"
if ((${#actions[@]} > 0)); then
    echo "$me: $(printf '%s; ' "${actions[@]}")$summary"
else
    echo "$me: all present, nothing to do ($summary)"
fi
