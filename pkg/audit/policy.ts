// The audit policy: reading an audit.k8s.io/v1 Policy file (upstream's
// pkg/audit/policy/reader.go), validating it with upstream's messages
// (pkg/apis/audit/validation/validation.go), and deciding a request's level and
// omitted stages (pkg/audit/policy/checker.go): the first rule that matches wins,
// no match means None, a rule's omitStages add to the policy's.

import { readFileSync } from 'node:fs';
import { parse as parseYAML } from 'yaml';

import {
  FieldPath,
  aggregateMessage,
  fieldErrorString,
  invalid,
  notSupported,
  required,
  type FieldError,
} from '../apis/meta/field-errors.js';
import { isDNS1123Subdomain } from '../apis/meta/validation.js';
import {
  AUDIT_API_VERSION,
  LEVELS,
  STAGES,
  type AuditAttributes,
  type GroupResources,
  type Level,
  type Policy,
  type PolicyRule,
  type Stage,
} from './types.js';

/** What the policy decides for one request. */
export interface RequestAuditConfig {
  readonly level: Level;
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean;
}

class PolicyDecodeError extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** json.Unmarshal's wording for a field of the wrong type. */
function wrongType(field: string, got: unknown, want: string): PolicyDecodeError {
  const kind = Array.isArray(got)
    ? 'array'
    : got === null
      ? 'null'
      : typeof got === 'object'
        ? 'object'
        : typeof got;
  return new PolicyDecodeError(
    `json: cannot unmarshal ${kind} into Go struct field ${field} of type ${want}`,
  );
}

function strings(obj: Record<string, unknown>, key: string, where: string): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))
    throw wrongType(`${where}.${key}`, v, '[]string');
  return v as string[];
}

function optionalBool(obj: Record<string, unknown>, key: string, where: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw wrongType(`${where}.${key}`, v, 'bool');
  return v;
}

function decodeGroupResources(v: unknown): GroupResources {
  if (!isRecord(v)) throw wrongType('PolicyRule.rules.resources', v, 'v1.GroupResources');
  const group = v['group'];
  if (group !== undefined && group !== null && typeof group !== 'string')
    throw wrongType('GroupResources.rules.resources.group', group, 'string');
  const resources = strings(v, 'resources', 'GroupResources.rules.resources');
  const resourceNames = strings(v, 'resourceNames', 'GroupResources.rules.resources');
  return {
    ...(typeof group === 'string' ? { group } : {}),
    ...(resources ? { resources } : {}),
    ...(resourceNames ? { resourceNames } : {}),
  };
}

function decodeRule(v: unknown): PolicyRule {
  if (!isRecord(v)) throw wrongType('Policy.rules', v, 'v1.PolicyRule');
  const where = 'PolicyRule.rules';
  const level = v['level'];
  if (level !== undefined && level !== null && typeof level !== 'string')
    throw wrongType(`${where}.level`, level, 'v1.Level');
  const resources = v['resources'];
  if (resources !== undefined && resources !== null && !Array.isArray(resources))
    throw wrongType(`${where}.resources`, resources, '[]v1.GroupResources');
  const omitManagedFields = optionalBool(v, 'omitManagedFields', where);
  const rule: PolicyRule = {
    level: (level ?? '') as Level,
    users: strings(v, 'users', where),
    userGroups: strings(v, 'userGroups', where),
    verbs: strings(v, 'verbs', where),
    resources: Array.isArray(resources) ? resources.map(decodeGroupResources) : undefined,
    namespaces: strings(v, 'namespaces', where),
    nonResourceURLs: strings(v, 'nonResourceURLs', where),
    omitStages: strings(v, 'omitStages', where) as Stage[] | undefined,
    ...(omitManagedFields === undefined ? {} : { omitManagedFields }),
  };
  return rule;
}

/** The document as a Policy, or a decoding error in upstream's words. */
function decodePolicy(text: string): Policy {
  let doc: unknown;
  try {
    doc = parseYAML(text, { version: '1.1' });
  } catch (err) {
    throw new PolicyDecodeError(err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err));
  }
  if (!isRecord(doc)) throw new PolicyDecodeError("Object 'Kind' is missing in the policy document");
  const apiVersion = doc['apiVersion'];
  const kind = doc['kind'];
  if (typeof kind !== 'string' || kind === '')
    throw new PolicyDecodeError("Object 'Kind' is missing in the policy document");
  if (apiVersion !== AUDIT_API_VERSION || kind !== 'Policy') {
    throw new PolicyDecodeError(
      `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(String(apiVersion ?? ''))} in scheme (only ${AUDIT_API_VERSION} Policy is read)`,
    );
  }
  const rules = doc['rules'];
  if (rules !== undefined && rules !== null && !Array.isArray(rules))
    throw wrongType('Policy.rules', rules, '[]v1.PolicyRule');
  const omitManagedFields = optionalBool(doc, 'omitManagedFields', 'Policy');
  return {
    rules: Array.isArray(rules) ? rules.map(decodeRule) : [],
    omitStages: strings(doc, 'omitStages', 'Policy') as Stage[] | undefined,
    ...(omitManagedFields === undefined ? {} : { omitManagedFields }),
  };
}

function validateOmitStages(stages: readonly string[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (stages ?? []).forEach((stage, i) => {
    if (!(STAGES as readonly string[]).includes(stage))
      errs.push(invalid(path.index(i), stage, `allowed stages are ${STAGES.join(',')}`));
  });
  return errs;
}

function validateRule(rule: PolicyRule, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if ((rule.level as string) === '') errs.push(required(path.child('level')));
  else if (!(LEVELS as readonly string[]).includes(rule.level))
    errs.push(notSupported(path.child('level'), rule.level, LEVELS));
  (rule.nonResourceURLs ?? []).forEach((url, i) => {
    if (url === '*') return;
    const at = path.child('nonResourceURLs').index(i);
    if (!url.startsWith('/'))
      errs.push(invalid(at, url, "non-resource URL rules must begin with a '/' character"));
    if (url !== '' && url.slice(0, -1).includes('*'))
      errs.push(invalid(at, url, "non-resource URL wildcards '*' must be the final character of the rule"));
  });
  for (const gr of rule.resources ?? []) {
    if (gr.group) {
      const msgs = isDNS1123Subdomain(gr.group);
      if (msgs.length > 0) errs.push(invalid(path.child('resources', 'group'), gr.group, msgs.join(',')));
    }
    if ((gr.resourceNames?.length ?? 0) > 0 && (gr.resources?.length ?? 0) === 0)
      errs.push(
        invalid(
          path.child('resources', 'resourceNames'),
          gr.resourceNames,
          'using resourceNames requires at least one resource',
        ),
      );
  }
  errs.push(...validateOmitStages(rule.omitStages, path.child('omitStages')));
  if (
    (rule.nonResourceURLs?.length ?? 0) > 0 &&
    ((rule.resources?.length ?? 0) > 0 || (rule.namespaces?.length ?? 0) > 0)
  )
    errs.push(
      invalid(
        path.child('nonResourceURLs'),
        rule.nonResourceURLs,
        'rules cannot apply to both regular resources and non-resource URLs',
      ),
    );
  return errs;
}

/** ValidatePolicy: every problem, as field errors. */
export function validatePolicy(policy: Policy): FieldError[] {
  const errs = validateOmitStages(policy.omitStages, FieldPath.root('omitStages'));
  policy.rules.forEach((rule, i) => errs.push(...validateRule(rule, FieldPath.root('rules').index(i))));
  return errs;
}

/** LoadPolicyFromBytes: decoded and valid, or an Error with upstream's message. */
export function loadPolicy(text: string): Policy {
  let policy: Policy;
  try {
    policy = decodePolicy(text);
  } catch (err) {
    if (err instanceof PolicyDecodeError) throw new Error(`failed decoding: ${err.message}`);
    throw err;
  }
  const errs = validatePolicy(policy);
  if (errs.length > 0) throw new Error(aggregateMessage(errs.map(fieldErrorString)));
  if (policy.rules.length === 0) throw new Error('loaded illegal policy with 0 rules');
  return policy;
}

/** LoadPolicyFromFile, with the option's prefix: the message --audit-policy-file reports. */
export function loadPolicyFile(path: string): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${reason}`);
  }
  try {
    return loadPolicy(text);
  } catch (err) {
    throw new Error(`loading audit policy file: ${(err as Error).message}: from file ${path}`);
  }
}

/** pathMatches: `*`, the exact path, or a prefix ending in `*`. */
function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function ruleMatchesResource(rule: PolicyRule, attrs: AuditAttributes): boolean {
  if (!attrs.isResourceRequest) return false;
  if ((rule.namespaces?.length ?? 0) > 0 && !rule.namespaces?.includes(attrs.namespace)) return false;
  if (!rule.resources || rule.resources.length === 0) return true;
  const { resource, subresource, name } = attrs;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const gr of rule.resources) {
    if ((gr.group ?? '') !== attrs.apiGroup) continue;
    if (!gr.resources || gr.resources.length === 0) return true;
    if (gr.resourceNames && gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (subresource && res.startsWith('*/') && subresource === res.slice(2)) return true;
      if (res.endsWith('/*') && resource === res.slice(0, -2)) return true;
    }
  }
  return false;
}

function ruleMatches(rule: PolicyRule, attrs: AuditAttributes): boolean {
  const user = attrs.user;
  if ((rule.users?.length ?? 0) > 0 && (!user || !rule.users?.includes(user.name))) return false;
  if ((rule.userGroups?.length ?? 0) > 0) {
    if (!user || !user.groups.some((g) => rule.userGroups?.includes(g))) return false;
  }
  if ((rule.verbs?.length ?? 0) > 0 && !rule.verbs?.includes(attrs.verb)) return false;
  if ((rule.namespaces?.length ?? 0) > 0 || (rule.resources?.length ?? 0) > 0)
    return ruleMatchesResource(rule, attrs);
  if ((rule.nonResourceURLs?.length ?? 0) > 0) {
    return (
      !attrs.isResourceRequest && (rule.nonResourceURLs ?? []).some((spec) => pathMatches(attrs.path, spec))
    );
  }
  return true;
}

function union(...lists: (readonly Stage[] | undefined)[]): Stage[] {
  return [...new Set(lists.flatMap((l) => l ?? []))];
}

/** The policy checker (and upstream's evaluator: the rule's omitManagedFields overrides the policy's). */
export class PolicyChecker {
  private readonly rules: readonly { rule: PolicyRule; config: RequestAuditConfig }[];
  private readonly fallback: RequestAuditConfig;

  constructor(policy: Policy) {
    this.rules = policy.rules.map((rule) => ({
      rule,
      config: {
        level: rule.level,
        omitStages: union(policy.omitStages, rule.omitStages),
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields ?? false,
      },
    }));
    this.fallback = {
      level: 'None',
      omitStages: union(policy.omitStages),
      omitManagedFields: policy.omitManagedFields ?? false,
    };
  }

  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    for (const { rule, config } of this.rules) if (ruleMatches(rule, attrs)) return config;
    return this.fallback;
  }
}
