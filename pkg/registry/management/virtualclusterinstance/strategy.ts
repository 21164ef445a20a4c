// VirtualClusterInstance: lives in a project namespace; owner and access rules as
// on every kind that has them; the ingress host, when named, must be a DNS name.
// Status is the server's: on every write it mirrors spec.template into
// status.virtualCluster (this server resolves no templates, so the instance's own
// definition is the resolved one) and keeps the rest of the stored status.

import { invalid, required, type FieldError } from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import { isDNS1123Subdomain } from '../../../apis/meta/validation.js';
import {
  virtualClusterInstanceInfo,
  virtualClusterInstanceSchema,
} from '../../../apis/management/v1/virtual-cluster-instance.js';
import type { RequestContext, Strategy, TableColumn } from '../../rest/interfaces.js';
import {
  DISPLAY_NAME_COLUMN,
  specOf,
  specPath,
  validateAccessRules,
  validateNonEmptyEntries,
  validateOwner,
} from '../common.js';
import { DEFAULT_PROJECT_NAMESPACE_PREFIX, ingressEnabled, projectOfNamespace } from './access-point.js';

export interface VirtualClusterInstanceOptions {
  /** Namespaces of projects are `<prefix><project>` (--project-namespace-prefix). */
  readonly projectNamespacePrefix?: string;
}

/** status.virtualCluster follows spec.template; the rest of the status is kept as stored. */
function mirrorTemplate(obj: KubeObject, storedStatus: unknown): void {
  const status: Record<string, unknown> = isObject(storedStatus) ? structuredClone(storedStatus) : {};
  const template = specOf(obj)['template'];
  if (isObject(template)) status['virtualCluster'] = structuredClone(template);
  else delete status['virtualCluster'];
  if (Object.keys(status).length === 0) delete obj['status'];
  else obj['status'] = status;
}

function validate(obj: KubeObject, prefix: string): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = obj.metadata.namespace ?? '';
  if (projectOfNamespace(namespace, prefix) === undefined) {
    errs.push(
      invalid('metadata.namespace', namespace, `must be the namespace of a project: ${prefix}<project name>`),
    );
  }
  const spec = specOf(obj);
  const path = specPath();
  errs.push(...validateOwner(spec['owner'], path.child('owner')));
  errs.push(...validateAccessRules(spec['access'], path.child('access')));
  const extra = spec['extraAccessRules'];
  if (Array.isArray(extra)) {
    extra.forEach((rule, i) => {
      if (!isObject(rule)) return;
      const rulePath = path.child('extraAccessRules').index(i);
      if (rule['clusterRole'] === undefined || rule['clusterRole'] === '') {
        errs.push(required(rulePath.child('clusterRole')));
      }
      errs.push(...validateNonEmptyEntries(rule['users'], rulePath.child('users')));
      errs.push(...validateNonEmptyEntries(rule['teams'], rulePath.child('teams')));
    });
  }
  const template = spec['template'];
  const ingress =
    isObject(template) && isObject(template['accessPoint']) ? template['accessPoint']['ingress'] : undefined;
  const host = isObject(ingress) ? ingress['host'] : undefined;
  if (typeof host === 'string' && host !== '') {
    const hostPath = path.child('template', 'accessPoint', 'ingress', 'host');
    for (const msg of isDNS1123Subdomain(host)) errs.push(invalid(hostPath, host, msg));
  }
  return errs;
}

function column(
  name: string,
  description: string,
  cell: (obj: KubeObject) => unknown,
  type = 'string',
  priority = 0,
): TableColumn {
  return { definition: { name, type, format: '', description, priority }, cell };
}

function clusterRefField(obj: KubeObject, field: string): string {
  const ref = specOf(obj)['clusterRef'];
  const value = isObject(ref) ? ref[field] : undefined;
  return typeof value === 'string' ? value : '';
}

export function virtualClusterInstanceStrategy(
  group: string,
  options: VirtualClusterInstanceOptions = {},
): Strategy {
  const prefix = options.projectNamespacePrefix ?? DEFAULT_PROJECT_NAMESPACE_PREFIX;
  return {
    info: virtualClusterInstanceInfo(group),
    schema: virtualClusterInstanceSchema(),
    prepareForCreate(_ctx: RequestContext, obj: KubeObject): void {
      mirrorTemplate(obj, undefined);
    },
    prepareForUpdate(_ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
      mirrorTemplate(obj, old['status']);
    },
    // Through the status subresource the rest of status is the writer's, the mirror still the server's.
    status: {
      prepareForUpdate(_ctx: RequestContext, obj: KubeObject): void {
        mirrorTemplate(obj, obj['status']);
      },
    },
    validate: (_ctx, obj) => validate(obj, prefix),
    validateUpdate: (_ctx, obj) => validate(obj, prefix),
    tableColumns: [
      DISPLAY_NAME_COLUMN,
      column(
        'Project',
        'Project the instance belongs to.',
        (obj) => projectOfNamespace(obj.metadata.namespace ?? '', prefix) ?? '',
      ),
      column('Cluster', 'Connected cluster the virtual cluster runs in.', (obj) =>
        clusterRefField(obj, 'cluster'),
      ),
      column(
        'Namespace',
        'Host namespace of the virtual cluster.',
        (obj) => clusterRefField(obj, 'namespace'),
        'string',
        1,
      ),
      column('Ingress', 'Whether the ingress access point is on.', (obj) => ingressEnabled(obj), 'boolean'),
      column('Phase', 'Phase of the instance.', (obj) => {
        const status = obj['status'];
        return isObject(status) && typeof status['phase'] === 'string' ? status['phase'] : '';
      }),
    ],
  };
}
