#!/usr/bin/env bash
# Installs what the tests need and a fresh machine may lack: etcd (a real etcd
# server for the storage suite and the etcd e2e run), etcdctl (the encryption e2e
# reads what etcd holds past the server), kubectl (the e2e client), Go with
# structured-merge-diff's sources (hack/smd-oracle, the reference implementation
# the server-side apply engine is compared with), and Debian's Python client (the
# server-side apply e2e runs it with /usr/bin/python3), and Debian's chromium (the
# console's browser tests drive it with playwright-core; no browser is downloaded).
# Idempotent: does nothing when all are present.
#
# On Debian/Ubuntu they come from the distribution: etcd-server and etcd-client
# (etcd 3.4), kubernetes-client (kubectl 1.20 on Debian 12), golang-go (Go 1.19) and
# golang-k8s-sigs-structured-merge-diff-dev (smd 4.1.2, its sources and their
# dependencies under /usr/share/gocode/src, so the oracle builds offline). The e2e
# suite accepts that old kubectl as well as a current one. Elsewhere, install them
# yourself.
#
# ENSURE_TEST_DEPS_DRY_RUN=1 only shows what apt would install (apt-get --dry-run).
set -euo pipefail

need=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
command -v go >/dev/null 2>&1 || need+=(golang-go)
[ -d /usr/share/gocode/src/sigs.k8s.io/structured-merge-diff ] || need+=(golang-k8s-sigs-structured-merge-diff-dev)
[ -d /usr/lib/python3/dist-packages/kubernetes ] || need+=(python3-kubernetes)
[ -x /usr/bin/chromium ] || need+=(chromium)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-deps: missing ${need[*]} and no apt-get here; install etcd and kubectl, then run again" >&2
  exit 1
fi

if [ -n "${ENSURE_TEST_DEPS_DRY_RUN:-}" ]; then
  echo "ensure-test-deps: would install ${need[*]}" >&2
  apt-get install --dry-run --no-install-recommends "${need[@]}"
  exit 0
fi

echo "ensure-test-deps: installing ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Other scripts may run apt at the same time: the lock timeout queues this one
# behind them instead of failing.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >/dev/null

# Debian's etcd-server package may start a system etcd on the default ports. The
# tests start their own on free loopback ports, so stop only that service (never
# other etcd processes: someone else's tests may be running theirs).
if [[ " ${need[*]} " == *" etcd-server "* ]]; then
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now etcd >/dev/null 2>&1 || true
  elif command -v service >/dev/null 2>&1; then
    $SUDO service etcd stop >/dev/null 2>&1 || true
  fi
fi

if ! [ -x /usr/bin/chromium ]; then
  echo "ensure-test-deps: chromium is still missing after the install" >&2
  exit 1
fi
for tool in etcd etcdctl kubectl go; do
  if ! command -v "$tool" >/dev/null 2>&1 && ! [ -x "/usr/bin/$tool" ]; then
    echo "ensure-test-deps: $tool is still missing after the install" >&2
    exit 1
  fi
done
if ! [ -d /usr/share/gocode/src/sigs.k8s.io/structured-merge-diff ]; then
  echo "ensure-test-deps: structured-merge-diff's sources are still missing after the install" >&2
  exit 1
fi
