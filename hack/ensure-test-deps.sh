#!/usr/bin/env bash
# Installs what the tests need and a fresh machine may lack: etcd (a real etcd
# server for the storage suite and the etcd e2e run) and kubectl (the e2e client).
# Idempotent: does nothing when both are present.
set -euo pipefail

need=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || need+=(etcd-server)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

echo "ensure-test-deps: installing ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's etcd-server package starts a system etcd on the default ports; the tests
# start their own on free loopback ports, so the system one is stopped when possible.
if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl disable --now etcd >/dev/null 2>&1 || true; fi
pkill -x etcd >/dev/null 2>&1 || true
