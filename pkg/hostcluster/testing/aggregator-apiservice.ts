// The aggregator double's stand-in for the apiregistration.k8s.io/v1 APIService
// resource as kube-aggregator serves it: the object (spec and the Available
// condition), the list, and the Table kubectl asks for (its printer columns: Name,
// Service, Available as "True" or "<status> (<reason>)", Age).

import { humanAge } from './aggregator-wire.js';

export const APIREGISTRATION = 'apiregistration.k8s.io';

export interface APIServiceSpec {
  readonly group: string;
  readonly version: string;
  readonly service: { readonly namespace: string; readonly name: string; readonly port?: number };
  /** PEM of the CA that signed the aggregated server's serving certificate. */
  readonly caBundle?: string;
  readonly insecureSkipTLSVerify?: boolean;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
}

export interface APIServiceCondition {
  readonly type: 'Available';
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
}

/** What the double knows of its one APIService. */
export interface APIServiceState {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: number;
  readonly created: Date;
  readonly spec: APIServiceSpec;
  readonly condition: APIServiceCondition | undefined;
  /** `<namespace>/<name>` of the service, the table's Service column. */
  readonly serviceKey: string;
}

export function apiServiceObject(state: APIServiceState): Record<string, unknown> {
  const spec = state.spec;
  return {
    kind: 'APIService',
    apiVersion: `${APIREGISTRATION}/v1`,
    metadata: {
      name: state.name,
      uid: state.uid,
      resourceVersion: String(state.resourceVersion),
      creationTimestamp: state.created.toISOString().replace('.000Z', 'Z'),
    },
    spec: {
      service: {
        namespace: spec.service.namespace,
        name: spec.service.name,
        port: spec.service.port ?? 443,
      },
      group: spec.group,
      version: spec.version,
      ...(spec.caBundle ? { caBundle: Buffer.from(spec.caBundle).toString('base64') } : {}),
      ...(spec.insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
      groupPriorityMinimum: spec.groupPriorityMinimum,
      versionPriority: spec.versionPriority,
    },
    status: state.condition ? { conditions: [state.condition] } : {},
  };
}

/** The response to a get (`single`) or list of APIServices, as a Table when `accept` asks for one. */
export function apiServiceResponse(state: APIServiceState, accept: string, single: boolean): unknown {
  const obj = apiServiceObject(state);
  if (/(^|[;,\s])as=Table(\s*[;,]|$)/.test(accept)) {
    const c = state.condition;
    const available = !c
      ? 'Unknown'
      : c.status === 'True' || !c.reason
        ? c.status
        : `${c.status} (${c.reason})`;
    const column = (n: string, format = ''): Record<string, unknown> => ({
      name: n,
      type: 'string',
      format,
      description: '',
      priority: 0,
    });
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: String(state.resourceVersion) },
      columnDefinitions: [column('Name', 'name'), column('Service'), column('Available'), column('Age')],
      rows: [
        {
          cells: [state.name, state.serviceKey, available, humanAge(Date.now() - state.created.getTime())],
          object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj['metadata'] },
        },
      ],
    };
  }
  if (single) return obj;
  return {
    kind: 'APIServiceList',
    apiVersion: `${APIREGISTRATION}/v1`,
    metadata: { resourceVersion: String(state.resourceVersion) },
    items: [obj],
  };
}
