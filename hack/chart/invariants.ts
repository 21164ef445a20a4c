// The properties every rendering of the chart must have for the server to work as an
// aggregated API server on a host cluster, checked on the rendered objects. Each check
// names the broken property so a failing test says what an operator would hit.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { KubeObject } from './render.js';

export interface InvariantOptions {
  /** The release namespace. */
  namespace: string;
  /** The coalesced values the rendering was made from. */
  values: Record<string, unknown>;
  /**
   * The APIService may lack a caBundle because a documented step patches it in
   * (deploy/, whose manifests carry no certificate material). Never for the chart.
   */
  caBundlePatchedLater?: boolean;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at a dotted path, or undefined. */
export function at(v: unknown, path: string): unknown {
  let cur: unknown = v;
  for (const part of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function objs(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isObj) : [];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'APIService']);

function id(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? o.metadata.namespace + '/' : ''}${o.metadata.name}`;
}

function matches(selector: unknown, labels: unknown): boolean {
  if (!isObj(selector) || Object.keys(selector).length === 0 || !isObj(labels)) return false;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The flags of a container as a map (--name=value; a repeated flag keeps the last). */
export function flags(container: Obj): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of [
    ...(Array.isArray(container['command']) ? container['command'] : []),
    ...(Array.isArray(container['args']) ? container['args'] : []),
  ]) {
    if (typeof a !== 'string' || !a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq === -1) out.set(a.slice(2), 'true');
    else out.set(a.slice(2, eq), a.slice(eq + 1));
  }
  return out;
}

function decodePem(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** Problems with a workload's pod spec: the hardened security context and resources. */
function checkPodHardening(w: KubeObject, problems: string[]): void {
  const pod = at(w, 'spec.template.spec');
  if (!isObj(pod)) {
    problems.push(`${id(w)}: no pod template`);
    return;
  }
  const psc = isObj(pod['securityContext']) ? pod['securityContext'] : {};
  for (const hostField of ['hostNetwork', 'hostPID', 'hostIPC']) {
    if (pod[hostField] === true) problems.push(`${id(w)}: ${hostField} is on`);
  }
  if (psc['runAsUser'] === 0) problems.push(`${id(w)}: the pod runs as uid 0`);
  const containers = [...objs(pod['initContainers']), ...objs(pod['containers'])];
  if (containers.length === 0) problems.push(`${id(w)}: no containers`);
  for (const c of containers) {
    const name = `${id(w)} container ${String(c['name'])}`;
    const sc = isObj(c['securityContext']) ? c['securityContext'] : {};
    const effective = (k: string): unknown => (sc[k] !== undefined ? sc[k] : psc[k]);
    if (effective('runAsNonRoot') !== true) problems.push(`${name}: runAsNonRoot is not true`);
    if (effective('runAsUser') === 0) problems.push(`${name}: runs as uid 0`);
    if (sc['readOnlyRootFilesystem'] !== true) problems.push(`${name}: the root filesystem is not read-only`);
    if (sc['allowPrivilegeEscalation'] !== false)
      problems.push(`${name}: allowPrivilegeEscalation is not false`);
    if (sc['privileged'] === true) problems.push(`${name}: privileged`);
    const drop = at(sc, 'capabilities.drop');
    if (!Array.isArray(drop) || !drop.includes('ALL'))
      problems.push(`${name}: capabilities are not all dropped`);
    const add = at(sc, 'capabilities.add');
    if (Array.isArray(add) && add.length > 0) problems.push(`${name}: adds capabilities ${add.join(',')}`);
    if (at(effective('seccompProfile'), 'type') !== 'RuntimeDefault')
      problems.push(`${name}: seccomp profile is not RuntimeDefault`);
    if (!isObj(at(c, 'resources.requests')) || at(c, 'resources.limits.memory') === undefined) {
      problems.push(`${name}: no resource requests or memory limit`);
    }
    const volumes = new Set(objs(pod['volumes']).map((v) => v['name']));
    const claimTemplates = new Set(
      objs(at(w, 'spec.volumeClaimTemplates')).map((t) => at(t, 'metadata.name')),
    );
    for (const m of objs(c['volumeMounts'])) {
      if (!volumes.has(m['name']) && !claimTemplates.has(m['name']))
        problems.push(`${name}: mounts undefined volume ${String(m['name'])}`);
    }
  }
}

/** The certificate chain behind the APIService: the serving certificate's SAN and its CA. */
function checkServingCertificate(opts: {
  all: KubeObject[];
  tlsSecretName: string;
  caBundle: string | undefined;
  serviceDNS: string;
  apiService: KubeObject | undefined;
  namespace: string;
  /** The operator named an issuer of their own; otherwise the chart must render it. */
  issuerGiven: boolean;
  problems: string[];
}): void {
  const { all, tlsSecretName, caBundle, serviceDNS, apiService, namespace, problems } = opts;
  const secret = all.find((o) => o.kind === 'Secret' && o.metadata.name === tlsSecretName);
  const certificate = all.find((o) => o.kind === 'Certificate' && at(o, 'spec.secretName') === tlsSecretName);
  if (secret) {
    const data = at(secret, 'data');
    const crt = isObj(data) ? str(data['tls.crt']) : undefined;
    const key = isObj(data) ? str(data['tls.key']) : undefined;
    if (!crt || !key) {
      problems.push(`Secret ${tlsSecretName}: no tls.crt or tls.key`);
      return;
    }
    const cert = new X509Certificate(decodePem(crt));
    const sans = (cert.subjectAltName ?? '').split(', ');
    if (!sans.includes(`DNS:${serviceDNS}`))
      problems.push(`serving certificate: no SAN ${serviceDNS} (has ${cert.subjectAltName ?? 'none'})`);
    if (!cert.checkPrivateKey(createPrivateKey(decodePem(key))))
      problems.push('serving certificate: tls.key does not match tls.crt');
    if (new Date(cert.validTo).getTime() < Date.now()) problems.push('serving certificate: expired');
    if (caBundle) {
      const ca = new X509Certificate(decodePem(caBundle));
      if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
        problems.push('serving certificate: not signed by the APIService caBundle');
    }
  } else if (certificate) {
    const dnsNames = at(certificate, 'spec.dnsNames');
    if (!Array.isArray(dnsNames) || !dnsNames.includes(serviceDNS))
      problems.push(`${id(certificate)}: dnsNames lack ${serviceDNS}`);
    const inject = apiService?.metadata.annotations?.['cert-manager.io/inject-ca-from'];
    if (apiService && inject !== `${namespace}/${certificate.metadata.name}`) {
      problems.push(
        `APIService: cert-manager.io/inject-ca-from is ${String(inject)}, not ${namespace}/${certificate.metadata.name}`,
      );
    }
    const issuer = at(certificate, 'spec.issuerRef.name');
    if (!opts.issuerGiven && !all.some((o) => o.kind === 'Issuer' && o.metadata.name === issuer)) {
      problems.push(`${id(certificate)}: issuer ${String(issuer)} is not rendered`);
    }
  }
}

/** Every invariant, as a list of broken properties (empty when the rendering is sound). */
export function checkInvariants(all: readonly KubeObject[], opts: InvariantOptions): string[] {
  const problems: string[] = [];
  const { namespace, values } = opts;
  const group = str(values['apiGroup']) ?? '';
  const list = [...all];

  // Identity, scope and labels.
  const seen = new Set<string>();
  for (const o of list) {
    if (seen.has(id(o))) problems.push(`${id(o)}: rendered twice`);
    seen.add(id(o));
    if (CLUSTER_SCOPED.has(o.kind)) {
      if (o.metadata.namespace !== undefined) problems.push(`${id(o)}: cluster-scoped but has a namespace`);
    } else {
      const expected =
        o.kind === 'RoleBinding' && o.metadata.name.endsWith('-auth-reader') ? 'kube-system' : namespace;
      if (o.metadata.namespace !== expected)
        problems.push(
          `${o.kind} ${o.metadata.name}: namespace ${String(o.metadata.namespace)}, expected ${expected}`,
        );
    }
    for (const l of [
      'app.kubernetes.io/name',
      'app.kubernetes.io/instance',
      'app.kubernetes.io/managed-by',
    ]) {
      if (!o.metadata.labels?.[l]) problems.push(`${id(o)}: no ${l} label`);
    }
    if (JSON.stringify(o).includes('"insecureSkipTLSVerify":true'))
      problems.push(`${id(o)}: insecureSkipTLSVerify`);
  }

  // The server's Deployment.
  const deployments = list.filter((o) => o.kind === 'Deployment');
  const deployment = deployments[0];
  if (deployments.length !== 1 || !deployment) {
    problems.push(`expected one Deployment, found ${deployments.length}`);
    return problems;
  }
  const pod = at(deployment, 'spec.template.spec');
  const podLabels = at(deployment, 'spec.template.metadata.labels');
  const server = objs(at(pod, 'containers')).find((c) => c['name'] === 'apiserver');
  if (!server) {
    problems.push(`${id(deployment)}: no apiserver container`);
    return problems;
  }
  const f = flags(server);
  const replicas = at(deployment, 'spec.replicas');
  if (replicas !== values['replicaCount'])
    problems.push(
      `${id(deployment)}: replicas ${String(replicas)}, values say ${String(values['replicaCount'])}`,
    );
  if (!matches(at(deployment, 'spec.selector.matchLabels'), podLabels))
    problems.push(`${id(deployment)}: selector does not match its pod labels`);
  for (const w of list.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet'))
    checkPodHardening(w, problems);

  const ports = objs(server['ports']);
  const https = ports.find((p) => p['name'] === 'https');
  const securePort = Number(f.get('secure-port'));
  if (!https || https['containerPort'] !== securePort)
    problems.push(
      `${id(deployment)}: container port "https" is not --secure-port (${String(f.get('secure-port'))})`,
    );
  if (f.get('bind-address') !== '0.0.0.0')
    problems.push(
      `${id(deployment)}: --bind-address is ${String(f.get('bind-address'))}; in a pod it must be 0.0.0.0`,
    );
  if (f.get('api-group') !== group)
    problems.push(`${id(deployment)}: --api-group is ${String(f.get('api-group'))}, not ${group}`);
  for (const [probe, path] of [
    ['livenessProbe', '/livez'],
    ['readinessProbe', '/readyz'],
  ] as const) {
    const get = at(server[probe], 'httpGet');
    const port = at(get, 'port');
    const portOk = port === 'https' || port === securePort;
    if (at(get, 'path') !== path || at(get, 'scheme') !== 'HTTPS' || !portOk) {
      problems.push(`${id(deployment)}: ${probe} is not HTTPS GET ${path} on the secure port`);
    }
  }

  // Files named by flags are in mounted volumes of the right Secrets.
  const volumes = objs(at(pod, 'volumes'));
  const mounts = objs(server['volumeMounts']);
  const secretOf = (file: string | undefined): string | undefined => {
    if (!file) return undefined;
    const m = mounts.find(
      (mm) => typeof mm['mountPath'] === 'string' && file.startsWith(`${mm['mountPath']}/`),
    );
    const v = volumes.find((vv) => vv['name'] === m?.['name']);
    return str(at(v, 'secret.secretName'));
  };
  const tlsSecretName = secretOf(f.get('tls-cert-file'));
  if (!tlsSecretName || secretOf(f.get('tls-private-key-file')) !== tlsSecretName) {
    problems.push(
      `${id(deployment)}: --tls-cert-file and --tls-private-key-file are not in one mounted Secret`,
    );
  }

  // Identity on the host: RBAC for delegated authentication and authorization.
  const sa = str(at(pod, 'serviceAccountName'));
  const boundTo = (b: KubeObject): boolean =>
    objs(at(b, 'subjects')).some(
      (s) => s['kind'] === 'ServiceAccount' && s['name'] === sa && s['namespace'] === namespace,
    );
  if (!list.some((o) => o.kind === 'ServiceAccount' && o.metadata.name === sa))
    problems.push(`ServiceAccount ${String(sa)} is not rendered`);
  if (
    !list.some(
      (o) =>
        o.kind === 'ClusterRoleBinding' && at(o, 'roleRef.name') === 'system:auth-delegator' && boundTo(o),
    )
  ) {
    problems.push('no ClusterRoleBinding of system:auth-delegator to the server');
  }
  if (
    !list.some(
      (o) =>
        o.kind === 'RoleBinding' &&
        o.metadata.namespace === 'kube-system' &&
        at(o, 'roleRef.kind') === 'Role' &&
        at(o, 'roleRef.name') === 'extension-apiserver-authentication-reader' &&
        boundTo(o),
    )
  ) {
    problems.push('no RoleBinding in kube-system of extension-apiserver-authentication-reader to the server');
  }
  const signer = str(at(values, 'virtualClusters.csrSignerName'));
  const serverRoles = list.filter(
    (o) =>
      o.kind === 'ClusterRole' &&
      list.some(
        (b) => b.kind === 'ClusterRoleBinding' && at(b, 'roleRef.name') === o.metadata.name && boundTo(b),
      ),
  );
  const rules = serverRoles.flatMap((r) => objs(at(r, 'rules')));
  const allows = (apiGroup: string, resource: string, verb: string, name?: string): boolean =>
    rules.some((r) => {
      const has = (k: string, v: string): boolean =>
        Array.isArray(r[k]) && (r[k] as unknown[]).some((x) => x === v || x === '*');
      const names = r['resourceNames'];
      return (
        has('apiGroups', apiGroup) &&
        has('resources', resource) &&
        has('verbs', verb) &&
        (!Array.isArray(names) || (name !== undefined && names.includes(name)))
      );
    });
  if (!allows('certificates.k8s.io', 'certificatesigningrequests', 'create'))
    problems.push('the server may not create CertificateSigningRequests');
  if (!allows('certificates.k8s.io', 'certificatesigningrequests/approval', 'update'))
    problems.push('the server may not approve CertificateSigningRequests');
  if (!signer || !allows('certificates.k8s.io', 'signers', 'approve', signer))
    problems.push(`the server may not approve for signer ${String(signer)}`);
  const [bsNs, bsName] = (f.get('bootstrap-secret') ?? '').split('/');
  if (bsNs !== namespace || !bsName)
    problems.push(`${id(deployment)}: --bootstrap-secret is not <namespace>/<name> in ${namespace}`);
  const roleRules = list
    .filter((o) => o.kind === 'Role' && o.metadata.namespace === namespace)
    .filter((o) =>
      list.some((b) => b.kind === 'RoleBinding' && at(b, 'roleRef.name') === o.metadata.name && boundTo(b)),
    )
    .flatMap((r) => objs(at(r, 'rules')));
  const mayWriteBootstrap = ['create', 'get', 'update'].every((verb) =>
    roleRules.some(
      (r) =>
        Array.isArray(r['verbs']) &&
        (r['verbs'] as unknown[]).includes(verb) &&
        Array.isArray(r['resources']) &&
        (r['resources'] as unknown[]).includes('secrets') &&
        (!Array.isArray(r['resourceNames']) || (r['resourceNames'] as unknown[]).includes(bsName)),
    ),
  );
  if (!mayWriteBootstrap)
    problems.push(`the server may not create and update the bootstrap Secret ${String(bsName)}`);
  if (at(values, 'rbac.aggregatedRoles') === true) {
    for (const role of ['view', 'edit', 'admin']) {
      const label = `rbac.authorization.k8s.io/aggregate-to-${role}`;
      const r = list.find((o) => o.kind === 'ClusterRole' && o.metadata.labels?.[label] === 'true');
      if (
        !r ||
        !objs(at(r, 'rules')).some(
          (rule) => Array.isArray(rule['apiGroups']) && rule['apiGroups'].includes(group),
        )
      ) {
        problems.push(`no ClusterRole aggregated to ${role} for ${group}`);
      }
    }
  }

  // The Service in front of the pods, and the APIService in front of the Service.
  const apiServices = list.filter((o) => o.kind === 'APIService');
  const apiService = apiServices[0];
  const serviceName =
    str(at(apiService, 'spec.service.name')) ??
    list.find((o) => o.kind === 'Service' && matches(at(o, 'spec.selector'), podLabels))?.metadata.name;
  const service = list.find((o) => o.kind === 'Service' && o.metadata.name === serviceName);
  if (!service || !matches(at(service, 'spec.selector'), podLabels))
    problems.push(`Service ${String(serviceName)} does not select the server's pods`);
  // Tokens signed by one replica are verified by any: all must name one issuer, which a
  // pod's own address is not. Without a value the chart names the Service.
  const issuer = f.get('token-issuer');
  const wantIssuer =
    str(at(values, 'tokens.issuer')) || `https://${String(serviceName)}.${namespace}.svc/kubernetes/management`;
  if (issuer !== wantIssuer)
    problems.push(`${id(deployment)}: --token-issuer is ${String(issuer)}, not ${wantIssuer}`);
  if (at(values, 'apiService.create') === true) {
    if (apiServices.length !== 1 || !apiService) {
      problems.push(`expected one APIService, found ${apiServices.length}`);
    } else {
      if (apiService.metadata.name !== `v1.${group}`)
        problems.push(`APIService is named ${apiService.metadata.name}, not v1.${group}`);
      if (at(apiService, 'spec.group') !== group || at(apiService, 'spec.version') !== 'v1')
        problems.push('APIService: group/version do not match the server');
      const gpm = at(apiService, 'spec.groupPriorityMinimum');
      const vp = at(apiService, 'spec.versionPriority');
      if (typeof gpm !== 'number' || gpm < 1 || gpm > 20000)
        problems.push('APIService: groupPriorityMinimum must be positive and less than 20000');
      if (typeof vp !== 'number' || vp < 1 || vp > 1000)
        problems.push('APIService: versionPriority must be positive and less than 1000');
      if (at(apiService, 'spec.service.namespace') !== namespace)
        problems.push('APIService: service namespace is not the release namespace');
      const port = at(apiService, 'spec.service.port') ?? 443;
      const svcPort = objs(at(service, 'spec.ports')).find((p) => p['port'] === port);
      if (!svcPort) problems.push(`APIService: Service ${String(serviceName)} has no port ${String(port)}`);
      else if (svcPort['targetPort'] !== 'https' && svcPort['targetPort'] !== securePort)
        problems.push('APIService: the Service port does not lead to the secure port');
      const caBundle = str(at(apiService, 'spec.caBundle'));
      const injected = apiService.metadata.annotations?.['cert-manager.io/inject-ca-from'];
      if (!caBundle && !injected && !opts.caBundlePatchedLater)
        problems.push('APIService: no caBundle (and no cert-manager CA injection)');
      if (caBundle) {
        try {
          const ca = new X509Certificate(decodePem(caBundle));
          if (!ca.ca) problems.push('APIService: caBundle is not a CA certificate');
        } catch (e) {
          problems.push(
            `APIService: caBundle is not a PEM certificate (${e instanceof Error ? e.message : String(e)})`,
          );
        }
      }
      if (tlsSecretName && serviceName) {
        const issuerGiven =
          Object.keys((at(values, 'tls.certManager.issuerRef') as Obj | undefined) ?? {}).length > 0;
        checkServingCertificate({
          all: list,
          tlsSecretName,
          caBundle,
          serviceDNS: `${serviceName}.${namespace}.svc`,
          apiService,
          namespace,
          issuerGiven,
          problems,
        });
      }
    }
  }

  // High availability.
  if (typeof replicas === 'number' && replicas > 1) {
    if (
      !list.some(
        (o) => o.kind === 'PodDisruptionBudget' && matches(at(o, 'spec.selector.matchLabels'), podLabels),
      ) &&
      at(values, 'podDisruptionBudget.enabled') === true
    ) {
      problems.push('several replicas but no PodDisruptionBudget for them');
    }
    if (
      !isObj(at(pod, 'affinity.podAntiAffinity')) &&
      Object.keys((at(values, 'affinity') as Obj | undefined) ?? {}).length === 0
    ) {
      problems.push('several replicas but no pod anti-affinity');
    }
  }

  // Storage.
  const backend = f.get('storage-backend');
  if (backend !== at(values, 'storage.backend'))
    problems.push(
      `--storage-backend is ${String(backend)}, values say ${String(at(values, 'storage.backend'))}`,
    );
  if (backend === 'sqlite') {
    if (replicas !== 1) problems.push(`sqlite with ${String(replicas)} replicas`);
    if (at(deployment, 'spec.strategy.type') !== 'Recreate')
      problems.push('sqlite: the Deployment strategy must be Recreate (one pod owns the file)');
    const dataDir = f.get('data-dir');
    const mount = mounts.find((m) => m['mountPath'] === dataDir);
    const claim = str(
      at(
        volumes.find((v) => v['name'] === mount?.['name']),
        'persistentVolumeClaim.claimName',
      ),
    );
    if (!claim) problems.push('sqlite: --data-dir is not on a PersistentVolumeClaim');
    else if (
      !list.some((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === claim) &&
      !at(values, 'storage.sqlite.persistence.existingClaim')
    ) {
      problems.push(`sqlite: claim ${claim} is not rendered`);
    }
    if (f.has('etcd-servers')) problems.push('sqlite: --etcd-servers is set');
  } else if (backend === 'etcd3') {
    const servers = (f.get('etcd-servers') ?? '').split(',').filter(Boolean);
    if (servers.length === 0) problems.push('etcd3: no --etcd-servers');
    if (at(values, 'storage.etcd.mode') === 'bundled') {
      const sts = list.find((o) => o.kind === 'StatefulSet');
      const members = at(sts, 'spec.replicas');
      const headless = list.find(
        (o) =>
          o.kind === 'Service' &&
          at(o, 'spec.clusterIP') === 'None' &&
          o.metadata.name === at(sts, 'spec.serviceName'),
      );
      if (!sts || typeof members !== 'number') problems.push('bundled etcd: no StatefulSet');
      else {
        if (members % 2 !== 1) problems.push(`bundled etcd: ${members} members (must be odd)`);
        if (at(sts, 'spec.podManagementPolicy') !== 'Parallel')
          problems.push('bundled etcd: members must start in parallel to form a quorum');
        if (objs(at(sts, 'spec.volumeClaimTemplates')).length === 0)
          problems.push('bundled etcd: no persistent volumes');
        if (!headless || at(headless, 'spec.publishNotReadyAddresses') !== true)
          problems.push('bundled etcd: no headless Service publishing not-ready members');
        const expected = Array.from(
          { length: members },
          (_, i) =>
            `http://${sts.metadata.name}-${i}.${String(at(sts, 'spec.serviceName'))}.${namespace}.svc:2379`,
        );
        if (servers.join(',') !== expected.join(','))
          problems.push(
            `bundled etcd: --etcd-servers ${servers.join(',')} is not every member (${expected.join(',')})`,
          );
        const etcd = objs(at(sts, 'spec.template.spec.containers'))[0];
        const initial = (etcd ? flags(etcd).get('initial-cluster') : undefined)?.split(',') ?? [];
        if (initial.length !== members)
          problems.push(`bundled etcd: --initial-cluster lists ${initial.length} of ${members} members`);
        if (!matches(at(sts, 'spec.selector.matchLabels'), at(sts, 'spec.template.metadata.labels')))
          problems.push('bundled etcd: selector does not match its pods');
        if (
          matches(at(sts, 'spec.selector.matchLabels'), podLabels) ||
          matches(at(service, 'spec.selector'), at(sts, 'spec.template.metadata.labels'))
        ) {
          problems.push('bundled etcd and server pods share selector labels');
        }
      }
    } else {
      const configured = at(values, 'storage.etcd.external.servers');
      if (!Array.isArray(configured) || servers.join(',') !== configured.join(','))
        problems.push('external etcd: --etcd-servers differs from the values');
      const clientSecret = str(at(values, 'storage.etcd.external.clientSecretName'));
      if (clientSecret) {
        for (const flag of ['etcd-cafile', 'etcd-certfile', 'etcd-keyfile']) {
          if (secretOf(f.get(flag)) !== clientSecret)
            problems.push(`external etcd: --${flag} is not in the mounted Secret ${clientSecret}`);
        }
      }
    }
  }
  return problems;
}
