#!/usr/bin/env bash
# Installs what the chart renderer (hack/helm-render) is built from: the Go
# toolchain and Debian's packaged sources of Sprig and yaml.v3. Debian ships those
# sources under /usr/share/gocode, so the renderer builds offline, without the Go
# module proxy. Idempotent: does nothing when everything is present.
set -euo pipefail

GOCODE=/usr/share/gocode/src
missing() {
  need=()
  command -v go >/dev/null 2>&1 || need+=(golang-go)
  [ -d "$GOCODE/github.com/Masterminds/sprig" ] || need+=(golang-github-masterminds-sprig-dev)
  [ -d "$GOCODE/gopkg.in/yaml.v3" ] || need+=(golang-gopkg-yaml.v3-dev)
}

missing
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
# Test files run in parallel and may all get here on a fresh machine: one installs,
# the others wait and then find nothing missing.
exec 9>"${TMPDIR:-/tmp}/platform-apiserver-ensure-go.lock"
flock 9
missing
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

echo "ensure-go: installing ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Other scripts may run apt at the same time; apt's own lock makes a second caller
# fail rather than wait, so the lock timeout lets it queue instead.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >/dev/null

command -v go >/dev/null 2>&1 || { echo "ensure-go: go is still missing after install" >&2; exit 1; }
for d in github.com/Masterminds/sprig gopkg.in/yaml.v3; do
  [ -d "$GOCODE/$d" ] || { echo "ensure-go: $GOCODE/$d is still missing after install" >&2; exit 1; }
done
