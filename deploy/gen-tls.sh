#!/usr/bin/env bash
# Creates the serving certificate for the plain manifests in this directory, which
# carry no key material: a private CA and a certificate for
# <service>.<namespace>.svc (the name the aggregator verifies), stored in the Secret
# the Deployment mounts, and the CA patched into the APIService's caBundle.
#
#   kubectl apply -f deploy/ && deploy/gen-tls.sh
#
# Run again, it keeps the existing certificate and only re-patches the caBundle (so a
# later `kubectl apply -f deploy/` is harmless). --rotate makes a new CA and
# certificate and restarts the server. The CA's private key is never stored.
# Needs openssl and kubectl. The defaults match deploy/; override with NAMESPACE,
# SERVICE, SECRET, APISERVICE, DEPLOYMENT, DAYS, KUBECTL.
set -euo pipefail

NAMESPACE=${NAMESPACE:-platform-system}
SERVICE=${SERVICE:-platform-apiserver}
SECRET=${SECRET:-platform-apiserver-tls}
APISERVICE=${APISERVICE:-v1.management.platform.dev}
DEPLOYMENT=${DEPLOYMENT:-platform-apiserver}
DAYS=${DAYS:-3650}
KUBECTL=${KUBECTL:-kubectl}

rotate=0
case "${1:-}" in
  --rotate) rotate=1 ;;
  "") ;;
  *) echo "usage: $0 [--rotate]" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ca_b64=""
if [ "$rotate" = 0 ]; then
  ca_b64=$($KUBECTL -n "$NAMESPACE" get secret "$SECRET" -o 'jsonpath={.data.ca\.crt}' 2>/dev/null || true)
fi

if [ -n "$ca_b64" ]; then
  echo "Secret $NAMESPACE/$SECRET exists: keeping its certificate (--rotate makes a new one)." >&2
else
  dns="$SERVICE.$NAMESPACE.svc"
  openssl req -x509 -newkey rsa:2048 -nodes -days "$DAYS" -subj "/CN=$SERVICE-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$work/ca.key" -out "$work/ca.crt" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  openssl req -new -newkey rsa:2048 -nodes -subj "/CN=$dns" \
    -keyout "$work/tls.key" -out "$work/tls.csr" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  cat >"$work/ext" <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:$SERVICE,DNS:$SERVICE.$NAMESPACE,DNS:$dns,DNS:$dns.cluster.local
EXT
  openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
    -days "$DAYS" -extfile "$work/ext" -out "$work/tls.crt" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  $KUBECTL -n "$NAMESPACE" create secret generic "$SECRET" --type=kubernetes.io/tls \
    --from-file=ca.crt="$work/ca.crt" --from-file=tls.crt="$work/tls.crt" --from-file=tls.key="$work/tls.key" \
    --dry-run=client -o yaml | $KUBECTL apply -f -
  ca_b64=$(base64 -w0 <"$work/ca.crt")
  echo "Created Secret $NAMESPACE/$SECRET for $dns." >&2
  if [ "$rotate" = 1 ]; then
    # The server reads its certificate at start.
    $KUBECTL -n "$NAMESPACE" rollout restart "deployment/$DEPLOYMENT"
  fi
fi

$KUBECTL patch apiservice "$APISERVICE" --type=merge -p "{\"spec\":{\"caBundle\":\"$ca_b64\"}}"
echo "Patched the caBundle of APIService $APISERVICE." >&2
