// VirtualClusterInstance (namespaced, in a project's namespace `p-<project>`): a
// virtual cluster the platform knows of, with the upstream field names. This
// server does not deploy virtual clusters; it keeps what is needed to reach one:
// where it runs (clusterRef), who may use it (owner, access), and whether its
// ingress access point is on (spec.template.accessPoint.ingress), which the
// kubeconfig subresource builds its server address from. The server mirrors the
// template into status.virtualCluster, where clients read the resolved definition.

import type { ResourceInfo } from '../../meta/resource-info.js';
import {
  accessRulesSchema,
  conditionsSchema,
  kindSchema,
  ownerSchema,
  storedKindInfo,
  type AccessRule,
  type Condition,
  type TypedObject,
  type UserOrTeam,
} from './common.js';
import {
  atomicList,
  atomicObj,
  bool,
  obj,
  str,
  stringList,
  stringMap,
  type JSONSchema,
} from './schema-builders.js';

export interface VirtualClusterAccessPointIngress {
  enabled?: boolean;
  /** This server's addition: the ingress host, when not `<name>-<project>.<ingress suffix>`. */
  host?: string;
}

export interface VirtualClusterTemplateDefinition {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  helmRelease?: { chart?: { name?: string; repo?: string; version?: string }; values?: string };
  objects?: string;
  accessPoint?: { ingress?: VirtualClusterAccessPointIngress };
  forwardToken?: boolean;
}

export interface VirtualClusterClusterRef {
  cluster?: string;
  namespace?: string;
  virtualCluster?: string;
}

export interface InstanceAccessRule {
  users?: string[];
  teams?: string[];
  clusterRole?: string;
}

export interface VirtualClusterInstanceSpec {
  displayName?: string;
  description?: string;
  owner?: UserOrTeam;
  templateRef?: { name?: string; version?: string; syncOnce?: boolean };
  template?: VirtualClusterTemplateDefinition;
  clusterRef?: VirtualClusterClusterRef;
  parameters?: string;
  extraAccessRules?: InstanceAccessRule[];
  access?: AccessRule[];
  networkPeer?: boolean;
  external?: boolean;
  standalone?: boolean;
}

export interface VirtualClusterInstanceStatus {
  phase?: string;
  reason?: string;
  message?: string;
  serviceUID?: string;
  kubernetesVersion?: string;
  conditions?: Condition[];
  virtualCluster?: VirtualClusterTemplateDefinition;
}

export type VirtualClusterInstance = TypedObject<VirtualClusterInstanceSpec, VirtualClusterInstanceStatus>;

export function virtualClusterInstanceInfo(group: string): ResourceInfo {
  return storedKindInfo(group, {
    resource: 'virtualclusterinstances',
    singular: 'virtualclusterinstance',
    kind: 'VirtualClusterInstance',
    namespaced: true,
  });
}

export function virtualClusterTemplateDefinitionSchema(description: string): JSONSchema {
  return obj(description, {
    metadata: obj('Labels and annotations for the virtual cluster.', {
      labels: stringMap('Labels of the virtual cluster.'),
      annotations: stringMap('Annotations of the virtual cluster.'),
    }),
    helmRelease: obj('The Helm release that deploys the virtual cluster.', {
      chart: obj('The chart of the release.', {
        name: str('Name of the chart.'),
        repo: str('Repository of the chart.'),
        version: str('Version of the chart.'),
      }),
      values: str('Values of the release, as a YAML document.'),
    }),
    objects: str('Kubernetes objects, as a YAML document, to create in the virtual cluster.'),
    accessPoint: obj('How the virtual cluster is reached from outside the host cluster.', {
      ingress: obj('The ingress access point.', {
        enabled: bool(
          'Turns the ingress access point on. The kubeconfig subresource needs it to build the server address.',
        ),
        host: str(
          "Host name of the ingress. Empty: `<instance name>-<project>.<ingress suffix>`, with the server's --ingress-suffix.",
        ),
      }),
    }),
    forwardToken: bool('Forwards the original request token to the virtual cluster.'),
  });
}

export function virtualClusterInstanceSchema(): JSONSchema {
  return kindSchema(
    'VirtualClusterInstance is a virtual cluster in a project. Its kubeconfig subresource returns a kube config for it.',
    obj('Desired state of the virtual cluster instance.', {
      displayName: str('Name shown in the UI.'),
      description: str('Describes the virtual cluster instance.'),
      owner: ownerSchema(),
      // Atomic references: name and version (cluster, namespace and name) identify one thing together.
      templateRef: atomicObj('The virtual cluster template the instance was made from.', {
        name: str('Name of the template.'),
        version: str('Version of the template; empty means the latest.'),
        syncOnce: bool('Applies the template once instead of keeping the instance in sync with it.'),
      }),
      template: virtualClusterTemplateDefinitionSchema(
        'The definition of the virtual cluster, when no template is referenced.',
      ),
      clusterRef: atomicObj('Where the virtual cluster runs.', {
        cluster: str('Name of the connected cluster the virtual cluster runs in.'),
        namespace: str('Namespace of the host cluster the virtual cluster runs in.'),
        virtualCluster: str('Name of the virtual cluster in that namespace.'),
      }),
      parameters: str('Parameters for the template, as a YAML document.'),
      // Atomic, as access rules are (see accessRulesSchema): a rule is one grant without identity.
      extraAccessRules: atomicList(
        'More access rules for the virtual cluster itself, besides those of the template.',
        obj('Users and teams that get a cluster role in the virtual cluster.', {
          users: stringList('Names of the users the rule applies to.'),
          teams: stringList('Names of the teams the rule applies to.'),
          clusterRole: str('Name of the cluster role the users and teams get.'),
        }),
      ),
      access: accessRulesSchema('virtual cluster instance'),
      networkPeer: bool('Makes the virtual cluster a network peer of the platform.'),
      external: bool('The virtual cluster was created outside the platform and only connected to it.'),
      standalone: bool('The virtual cluster runs without a host cluster.'),
    }),
    obj(
      'Observed state of the virtual cluster instance. Written through the status subresource; writes to the main resource keep it as stored.',
      {
        phase: str('Phase of the instance, such as `Ready`.'),
        reason: str('Machine-readable reason for the phase, in CamelCase.'),
        message: str('Human-readable details about the phase.'),
        serviceUID: str('UID of the virtual cluster service on the host cluster.'),
        kubernetesVersion: str('Kubernetes version the virtual cluster runs.'),
        conditions: conditionsSchema('virtual cluster instance'),
        virtualCluster: virtualClusterTemplateDefinitionSchema(
          'The resolved definition of the virtual cluster; clients read accessPoint.ingress.enabled here.',
        ),
      },
    ),
  );
}
