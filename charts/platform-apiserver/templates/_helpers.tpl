{{/*
Names, labels and the checks every template relies on.
*/}}

{{/* The chart name, as used in the app.kubernetes.io/name label. */}}
{{- define "platform-apiserver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every resource name: the release name when it already contains the
chart name, else <release>-<chart>. Truncated to 63 characters, the DNS label limit.
*/}}
{{- define "platform-apiserver.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* name-version, as used in the helm.sh/chart label. */}}
{{- define "platform-apiserver.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "platform-apiserver.labels" -}}
helm.sh/chart: {{ include "platform-apiserver.chart" . }}
{{ include "platform-apiserver.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: platform-apiserver
{{- end }}

{{/* Labels that select the server's pods; never change them (selectors are immutable). */}}
{{- define "platform-apiserver.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform-apiserver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: apiserver
{{- end }}

{{/* Labels that select the bundled etcd's pods. */}}
{{- define "platform-apiserver.etcdSelectorLabels" -}}
app.kubernetes.io/name: {{ include "platform-apiserver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: etcd
{{- end }}

{{/* Labels of the bundled etcd's objects. */}}
{{- define "platform-apiserver.etcdLabels" -}}
helm.sh/chart: {{ include "platform-apiserver.chart" . }}
{{ include "platform-apiserver.etcdSelectorLabels" . }}
app.kubernetes.io/version: {{ .Values.storage.etcd.bundled.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: platform-apiserver
{{- end }}

{{- define "platform-apiserver.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "platform-apiserver.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Service the APIService points at; its DNS name is the certificate's SAN. */}}
{{- define "platform-apiserver.serviceName" -}}
{{- include "platform-apiserver.fullname" . }}
{{- end }}

{{/* <service>.<namespace>.svc: the name the aggregator verifies the certificate against. */}}
{{- define "platform-apiserver.serviceDNSNames" -}}
{{- $svc := include "platform-apiserver.serviceName" . -}}
{{- list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) | toJson }}
{{- end }}

{{/* The Secret holding the serving certificate. */}}
{{- define "platform-apiserver.tlsSecretName" -}}
{{- if eq .Values.tls.mode "existingSecret" }}
{{- required "tls.existingSecret.name is required when tls.mode is existingSecret" .Values.tls.existingSecret.name }}
{{- else }}
{{- printf "%s-tls" (include "platform-apiserver.fullname" .) }}
{{- end }}
{{- end }}

{{- define "platform-apiserver.bootstrapSecretName" -}}
{{- default (printf "%s-bootstrap" (include "platform-apiserver.fullname" .)) .Values.bootstrap.secretName }}
{{- end }}

{{- define "platform-apiserver.signingKeySecretName" -}}
{{- default (printf "%s-signing-key" (include "platform-apiserver.fullname" .)) .Values.tokens.signingKeySecret }}
{{- end }}

{{/*
The issuer of direct cluster endpoint tokens. Every replica must name the same one (a
token signed by one replica is verified against any), so the default is the Service's
name rather than each pod's address.
*/}}
{{- define "platform-apiserver.tokenIssuer" -}}
{{- if .Values.tokens.issuer -}}
{{- .Values.tokens.issuer -}}
{{- else -}}
{{- printf "https://%s.%s.svc/kubernetes/management" (include "platform-apiserver.serviceName" .) .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{- define "platform-apiserver.adminRoleName" -}}
{{- default (printf "%s-platform-admin" (include "platform-apiserver.fullname" .)) .Values.adminRole.name }}
{{- end }}

{{- define "platform-apiserver.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "platform-apiserver.etcdName" -}}
{{- printf "%s-etcd" (include "platform-apiserver.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "platform-apiserver.etcdHeadlessName" -}}
{{- printf "%s-etcd-peers" (include "platform-apiserver.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* True (non-empty) when the chart runs its own etcd. */}}
{{- define "platform-apiserver.bundledEtcd" -}}
{{- if and (eq .Values.storage.backend "etcd3") (eq .Values.storage.etcd.mode "bundled") }}true{{ end }}
{{- end }}

{{/* The URL of one bundled etcd member; call with (list $ <index> <port> ). */}}
{{- define "platform-apiserver.etcdMemberURL" -}}
{{- $ := index . 0 -}}
{{- printf "http://%s-%d.%s.%s.svc:%d" (include "platform-apiserver.etcdName" $) (index . 1) (include "platform-apiserver.etcdHeadlessName" $) $.Release.Namespace (index . 2) }}
{{- end }}

{{/* --etcd-servers: every bundled member, or the external endpoints. */}}
{{- define "platform-apiserver.etcdServers" -}}
{{- if include "platform-apiserver.bundledEtcd" . }}
{{- $urls := list }}
{{- range $i := until (int .Values.storage.etcd.bundled.replicas) }}
{{- $urls = append $urls (include "platform-apiserver.etcdMemberURL" (list $ $i 2379)) }}
{{- end }}
{{- join "," $urls }}
{{- else }}
{{- if not .Values.storage.etcd.external.servers }}
{{- fail "storage.etcd.external.servers must list the etcd client URLs when storage.etcd.mode is external" }}
{{- end }}
{{- join "," .Values.storage.etcd.external.servers }}
{{- end }}
{{- end }}

{{/*
Combinations of values the schema cannot express. deployment.yaml includes this; a
failure there fails the whole rendering with one clear message.
*/}}
{{- define "platform-apiserver.validate" -}}
{{- if and (eq .Values.storage.backend "sqlite") (gt (int .Values.replicaCount) 1) }}
{{- fail (printf "storage.backend sqlite keeps the data in one pod's file and cannot be shared: replicaCount must be 1 (got %d). Use storage.backend etcd3 for more than one replica." (int .Values.replicaCount)) }}
{{- end }}
{{- if and (include "platform-apiserver.bundledEtcd" .) (eq (mod (int .Values.storage.etcd.bundled.replicas) 2) 0) }}
{{- fail (printf "storage.etcd.bundled.replicas must be odd (got %d): an even number of members tolerates no more failures than one less." (int .Values.storage.etcd.bundled.replicas)) }}
{{- end }}
{{- if and (eq .Values.tls.mode "certManager") (not (.Capabilities.APIVersions.Has "cert-manager.io/v1")) }}
{{- fail "tls.mode certManager needs cert-manager (API cert-manager.io/v1), which this cluster does not serve. Install cert-manager first, or choose tls.mode generate or existingSecret. (With helm template, pass --api-versions cert-manager.io/v1.)" }}
{{- end }}
{{- if and .Values.apiService.insecureSkipTLSVerify (eq .Values.tls.mode "existingSecret") .Values.tls.existingSecret.caBundle }}
{{- fail "apiService.insecureSkipTLSVerify cannot be combined with a caBundle (tls.existingSecret.caBundle): the APIService would be rejected." }}
{{- end }}
{{- end }}

{{/*
The generated CA and serving certificate as JSON {caCert, cert, key} (PEM). An
existing Secret from an earlier install is reused, so upgrades keep the certificate
and the APIService's caBundle stays valid; a new pair is made only on first install
(or after the Secret is deleted).
*/}}
{{- define "platform-apiserver.generatedTLS" -}}
{{- $name := include "platform-apiserver.tlsSecretName" . }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $name }}
{{- $data := dig "data" (dict) $existing }}
{{- if and (index $data "ca.crt") (index $data "tls.crt") (index $data "tls.key") }}
{{- dict "caCert" (index $data "ca.crt" | b64dec) "cert" (index $data "tls.crt" | b64dec) "key" (index $data "tls.key" | b64dec) | toJson }}
{{- else }}
{{- $days := int .Values.tls.generate.validityDays }}
{{- $ca := genCA (printf "%s-ca" (include "platform-apiserver.fullname" .)) $days }}
{{- $dns := include "platform-apiserver.serviceDNSNames" . | fromJsonArray }}
{{- $cert := genSignedCert (index $dns 2) nil $dns $days $ca }}
{{- dict "caCert" $ca.Cert "cert" $cert.Cert "key" $cert.Key | toJson }}
{{- end }}
{{- end }}

{{- define "platform-apiserver.encryptionSecretName" -}}
{{- default (printf "%s-encryption" (include "platform-apiserver.fullname" .)) .Values.encryption.existingSecret }}
{{- end }}

{{/*
The generated EncryptionConfiguration: the one an earlier install made when it exists
(an upgrade must never replace the key: every stored Global Secret needs it), else a
new one with a random 32-byte secretbox key, as the server makes on its own.
*/}}
{{- define "platform-apiserver.generatedEncryptionConfig" -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "platform-apiserver.encryptionSecretName" .) }}
{{- $current := dig "data" "encryption-config.yaml" "" $existing }}
{{- if $current }}
{{- $current | b64dec }}
{{- else -}}
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources:
      - sharedsecrets.{{ .Values.apiGroup }}
    providers:
      - secretbox:
          keys:
            - name: key1
              secret: {{ randBytes 32 }}
      - identity: {}
{{- end }}
{{- end }}
