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
# Two kubectls: hack/test.mjs runs the e2e suite with the kubectl on PATH, then the
# kubectl-centric files once more with Debian's kubectl 1.20 when PATH has another
# version (e.g. 1.32 from Google's `kubectl` package). Debian's `kubernetes-client`
# cannot be installed beside that one (both own /usr/bin/kubectl), so its package is
# downloaded (apt-get download) and unpacked (dpkg-deb -x) into the git-ignored
# .cache/kubectl-debian; its kubectl is a static binary and needs nothing else.
# When PATH has no kubectl at all, kubernetes-client is installed as the only one.
# The last lines say which kubectl versions the run will use.
#
# ENSURE_TEST_DEPS_DRY_RUN=1 only shows what apt would install (apt-get --dry-run)
# and which package it would download.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# hack/test.mjs reads the same path.
DEBIAN_KUBECTL_DIR="$ROOT/.cache/kubectl-debian"
DEBIAN_KUBECTL="$DEBIAN_KUBECTL_DIR/usr/bin/kubectl"

# The gitVersion kubectl reports for itself (v1.32.4, v1.20.2), or nothing.
kubectl_version() {
  { "$1" version --client -o json 2>/dev/null || true; } | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p'
}

# Whether the kubectl on PATH is the one Debian's kubernetes-client installed.
path_kubectl_is_debians() {
  local path
  path="$(readlink -f "$(command -v kubectl)")"
  command -v dpkg-query >/dev/null 2>&1 && dpkg-query -S "$path" 2>/dev/null | grep -q '^kubernetes-client:'
}

# Prints the kubectl the e2e suite runs with first (hack/test.mjs: $KUBECTL, else
# PATH's), and Debian's 1.20 when the second pass will run with it.
print_kubectls() {
  local first="${KUBECTL:-$(command -v kubectl || true)}"
  local first_version="" second_version=""
  [ -n "$first" ] && first_version="$(kubectl_version "$first")"
  [ -x "$DEBIAN_KUBECTL" ] && second_version="$(kubectl_version "$DEBIAN_KUBECTL")"
  echo "ensure-test-deps: e2e runs with kubectl ${first_version:-(none)} (${first:-not found})" >&2
  if [ -n "$second_version" ] && [ "$second_version" != "$first_version" ]; then
    echo "ensure-test-deps: then its kubectl-centric files with Debian's kubectl $second_version ($DEBIAN_KUBECTL)" >&2
  fi
}

need=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
download_debian_kubectl=""
if ! command -v kubectl >/dev/null 2>&1; then
  need+=(kubernetes-client)
elif ! path_kubectl_is_debians && ! [ -x "$DEBIAN_KUBECTL" ]; then
  download_debian_kubectl=1
fi
command -v go >/dev/null 2>&1 || need+=(golang-go)
[ -d /usr/share/gocode/src/sigs.k8s.io/structured-merge-diff ] || need+=(golang-k8s-sigs-structured-merge-diff-dev)
[ -d /usr/lib/python3/dist-packages/kubernetes ] || need+=(python3-kubernetes)
[ -x /usr/bin/chromium ] || need+=(chromium)

if [ ${#need[@]} -eq 0 ] && [ -z "$download_debian_kubectl" ]; then
  print_kubectls
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  if [ ${#need[@]} -eq 0 ]; then
    # Only the second kubectl is missing: the run goes on with the one on PATH.
    echo "ensure-test-deps: no apt-get here to fetch Debian's kubectl 1.20; the e2e suite runs with one kubectl" >&2
    print_kubectls
    exit 0
  fi
  echo "ensure-test-deps: missing ${need[*]} and no apt-get here; install etcd and kubectl, then run again" >&2
  exit 1
fi

if [ -n "${ENSURE_TEST_DEPS_DRY_RUN:-}" ]; then
  if [ ${#need[@]} -gt 0 ]; then
    echo "ensure-test-deps: would install ${need[*]}" >&2
    apt-get install --dry-run --no-install-recommends "${need[@]}"
  fi
  if [ -n "$download_debian_kubectl" ]; then
    echo "ensure-test-deps: would download kubernetes-client and unpack it into $DEBIAN_KUBECTL_DIR" >&2
    apt-get download --print-uris kubernetes-client
  fi
  exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Other scripts may run apt at the same time: the lock timeout queues this one
# behind them instead of failing.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
if [ ${#need[@]} -gt 0 ]; then
  echo "ensure-test-deps: installing ${need[*]}" >&2
  $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ -n "$download_debian_kubectl" ]; then
  echo "ensure-test-deps: downloading kubernetes-client into $DEBIAN_KUBECTL_DIR" >&2
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  # apt-get download writes into the current directory as the _apt user when run as
  # root; without this it warns that the download is unsandboxed.
  if [ "$(id -u)" = "0" ] && id _apt >/dev/null 2>&1; then chown _apt "$download"; fi
  (cd "$download" && apt-get download -qq kubernetes-client)
  # Unpacked beside, then moved in place: an interrupted run leaves no half-written
  # kubectl that the next run would take as present.
  rm -rf "$DEBIAN_KUBECTL_DIR.partial"
  mkdir -p "$DEBIAN_KUBECTL_DIR.partial"
  dpkg-deb -x "$download"/kubernetes-client_*.deb "$DEBIAN_KUBECTL_DIR.partial"
  rm -rf "$DEBIAN_KUBECTL_DIR"
  mv "$DEBIAN_KUBECTL_DIR.partial" "$DEBIAN_KUBECTL_DIR"
  if [ -z "$(kubectl_version "$DEBIAN_KUBECTL")" ]; then
    echo "ensure-test-deps: the kubectl unpacked into $DEBIAN_KUBECTL_DIR does not run" >&2
    exit 1
  fi
fi

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
print_kubectls
