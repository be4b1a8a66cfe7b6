#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the demo need.
# Idempotent: packages already present are skipped, so a second run costs seconds.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake pkg-config clang libclang-rt-14-dev
  # libraries (design.md, "Decisions")
  libssl-dev libjansson-dev libyaml-dev libmnl-dev libnftnl-dev
  libnetfilter-queue-dev libnetfilter-conntrack-dev libldns-dev libmicrohttpd-dev
  libsqlite3-dev libzstd-dev libcmocka-dev libidn2-dev libnghttp2-dev libmaxminddb-dev
  # kernel tools and lab peers used by the integration tests and the demo
  nftables iproute2 conntrack procps psmisc util-linux coreutils jq socat
  dnsmasq-base bind9-dnsutils
  # investigation tests: syslog receiver for the sinks, sqlite3 to compare indexes
  rsyslog sqlite3 zstd libcurl4-openssl-dev
  # gateway tests: TLS/HTTP peer, clients, certificates, raw packets
  nginx-light curl openssl python3
  # policy tests: resolver, DoT client, GeoIP test database writer
  unbound knot-dnsutils libmaxmind-db-writer-perl
  # gateway bench
  iperf3 dnsperf
  # syslog over TLS (RFC 5425)
  rsyslog-gnutls gnutls-bin
  # package tests: real installers against local indexes
  python3-pip python3-venv python3-wheel python3-setuptools dpkg-dev fakeroot
  # audit bench peers (bench/audit/compare.sh starts and stops auditd itself)
  auditd forkstat bc
  # detection tests: real kernel-module and tracing tools for the built-in rules;
  # busybox-static for its crontab applet (Debian's crontab comes with the cron daemon;
  # Debian's plain busybox has no crontab)
  kmod strace gzip wget busybox-static
  # runtimes test: a real OCI runtime (runc: crun refuses this hybrid cgroup host) runs a
  # busybox-static container as a session
  runc
  # event schema test: validates journal lines against docs/schema/ (draft 2020-12)
  python3-jsonschema
  # operators (issue 18): promtool checks /metrics; the Debian package is built with
  # debhelper and checked with lintian
  prometheus debhelper lintian
)

# npm: Debian's package, unless a Node.js that bundles its own npm is installed already
# (NodeSource's nodejs conflicts with Debian's npm).
command -v npm >/dev/null || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#PACKAGES[@]} packages present"
fi

# auditd's package starts the service. Installed by this run (a bench peer only:
# bench/audit/compare.sh runs its own instance and removes its rule), it is stopped and
# disabled again; an auditd the host had before is left alone.
if [[ " ${missing[*]:-} " == *" auditd "* ]] && command -v systemctl >/dev/null; then
  systemctl disable --now auditd >/dev/null 2>&1 || true
fi

# prometheus is here for promtool only (t_daemon_health checks /metrics with it); the
# server its package starts is stopped and disabled again when this run installed it.
if [[ " ${missing[*]:-} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
