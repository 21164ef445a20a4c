// Validates rendered objects against the Kubernetes OpenAPI schemas, as the API
// server would on create:
// - types, required fields, enums and formats with the validators generated from the
//   OpenAPI documents by the kubernetes-models packages (Kubernetes and cert-manager);
// - unknown fields, which those validators let through but kubectl's strict field
//   validation rejects, with the field lists of @kubernetes/client-node's generated
//   models (Kubernetes kinds only: cert-manager has no such list here).

import * as k8s from '@kubernetes/client-node';
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import { Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Issuer';
import { APIService } from 'kubernetes-models/apiregistration.k8s.io/v1/APIService';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import type { KubeObject } from './render.js';

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: never) => Validatable;

interface KindInfo {
  model: ModelClass;
  /** The @kubernetes/client-node model that lists the kind's fields. */
  fields?: string;
}

/** Every kind the chart may render. A kind missing here fails validation. */
const KINDS: Record<string, KindInfo> = {
  'v1/Namespace': { model: Namespace, fields: 'V1Namespace' },
  'v1/ServiceAccount': { model: ServiceAccount, fields: 'V1ServiceAccount' },
  'v1/Secret': { model: Secret, fields: 'V1Secret' },
  'v1/ConfigMap': { model: ConfigMap, fields: 'V1ConfigMap' },
  'v1/Service': { model: Service, fields: 'V1Service' },
  'v1/PersistentVolumeClaim': { model: PersistentVolumeClaim, fields: 'V1PersistentVolumeClaim' },
  'apps/v1/Deployment': { model: Deployment, fields: 'V1Deployment' },
  'apps/v1/StatefulSet': { model: StatefulSet, fields: 'V1StatefulSet' },
  'policy/v1/PodDisruptionBudget': { model: PodDisruptionBudget, fields: 'V1PodDisruptionBudget' },
  'networking.k8s.io/v1/NetworkPolicy': { model: NetworkPolicy, fields: 'V1NetworkPolicy' },
  'rbac.authorization.k8s.io/v1/ClusterRole': { model: ClusterRole, fields: 'V1ClusterRole' },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': {
    model: ClusterRoleBinding,
    fields: 'V1ClusterRoleBinding',
  },
  'rbac.authorization.k8s.io/v1/Role': { model: Role, fields: 'V1Role' },
  'rbac.authorization.k8s.io/v1/RoleBinding': { model: RoleBinding, fields: 'V1RoleBinding' },
  'apiregistration.k8s.io/v1/APIService': { model: APIService, fields: 'V1APIService' },
  'cert-manager.io/v1/Issuer': { model: Issuer },
  'cert-manager.io/v1/Certificate': { model: Certificate },
};

interface AttributeType {
  baseName: string;
  type: string;
}
interface FieldListed {
  getAttributeTypeMap(): AttributeType[];
}

const clientModels = k8s as unknown as Record<string, unknown>;

function fieldList(type: string): AttributeType[] | undefined {
  const model = clientModels[type] as Partial<FieldListed> | undefined;
  return typeof model?.getAttributeTypeMap === 'function' ? model.getAttributeTypeMap() : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unknownFields(value: unknown, type: string, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array?.[1]) {
    const item = array[1];
    if (Array.isArray(value)) value.forEach((v, i) => unknownFields(v, item, `${path}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map?.[1]) {
    const item = map[1];
    if (isRecord(value))
      for (const [k, v] of Object.entries(value)) unknownFields(v, item, `${path}[${k}]`, out);
    return;
  }
  const fields = fieldList(type);
  // Scalars, IntOrString and free-form objects have no field list; wrong types are the schema validator's to report.
  if (!fields || !isRecord(value)) return;
  const byName = new Map(fields.map((f) => [f.baseName, f.type]));
  for (const [k, v] of Object.entries(value)) {
    const t = byName.get(k);
    const p = path === '' ? k : `${path}.${k}`;
    if (t === undefined) out.push(`unknown field "${p}"`);
    else unknownFields(v, t, p, out);
  }
}

/** The reasons the API server would reject the object; empty when it is valid. */
export function validateObject(obj: KubeObject): string[] {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const info = KINDS[key];
  const where = `${obj.kind} ${obj.metadata.namespace ? obj.metadata.namespace + '/' : ''}${obj.metadata.name}`;
  if (!info) return [`${where}: no schema known for ${key}`];
  const errors: string[] = [];
  try {
    new info.model(structuredClone(obj) as never).validate();
  } catch (e) {
    errors.push(`${where}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (info.fields) {
    const unknown: string[] = [];
    unknownFields(obj, info.fields, '', unknown);
    errors.push(...unknown.map((u) => `${where}: ${u}`));
  }
  return errors;
}
