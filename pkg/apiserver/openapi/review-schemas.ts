// Schemas of the Kubernetes review kinds this server answers itself (pkg/server/
// self-reviews.ts): SelfSubjectAccessReview and SelfSubjectRulesReview of
// authorization.k8s.io/v1, SelfSubjectReview of authentication.k8s.io/v1. Model
// names, field names, types, required fields and list types are those of
// k8s.io/api 1.32 as kube-apiserver publishes them (api/openapi-spec), so `kubectl
// explain selfsubjectaccessreviews` walks the same tree here; the descriptions are
// this project's own words.

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import type { DocumentStyle } from './components.js';
import type { Ref } from './meta-schemas.js';
import { META_MODELS, type GroupVersionKind } from './model-names.js';

const AUTHZ = 'io.k8s.api.authorization.v1';
const AUTHN = 'io.k8s.api.authentication.v1';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** Model names of the review kinds and of the types they are made of. */
export const REVIEW_MODELS = {
  selfSubjectAccessReview: `${AUTHZ}.SelfSubjectAccessReview`,
  selfSubjectAccessReviewSpec: `${AUTHZ}.SelfSubjectAccessReviewSpec`,
  subjectAccessReviewStatus: `${AUTHZ}.SubjectAccessReviewStatus`,
  resourceAttributes: `${AUTHZ}.ResourceAttributes`,
  nonResourceAttributes: `${AUTHZ}.NonResourceAttributes`,
  fieldSelectorAttributes: `${AUTHZ}.FieldSelectorAttributes`,
  labelSelectorAttributes: `${AUTHZ}.LabelSelectorAttributes`,
  selfSubjectRulesReview: `${AUTHZ}.SelfSubjectRulesReview`,
  selfSubjectRulesReviewSpec: `${AUTHZ}.SelfSubjectRulesReviewSpec`,
  subjectRulesReviewStatus: `${AUTHZ}.SubjectRulesReviewStatus`,
  resourceRule: `${AUTHZ}.ResourceRule`,
  nonResourceRule: `${AUTHZ}.NonResourceRule`,
  fieldSelectorRequirement: `${META}.FieldSelectorRequirement`,
  labelSelectorRequirement: `${META}.LabelSelectorRequirement`,
  selfSubjectReview: `${AUTHN}.SelfSubjectReview`,
  selfSubjectReviewStatus: `${AUTHN}.SelfSubjectReviewStatus`,
  userInfo: `${AUTHN}.UserInfo`,
} as const;

const M = REVIEW_MODELS;

function str(description: string): JSONSchema {
  return { type: 'string', description };
}

/** A list of strings replaced as a whole (`+listType=atomic`); v3 gives items upstream's `default: ""`. */
function strings(description: string, style: DocumentStyle): JSONSchema {
  return {
    type: 'array',
    description,
    items: style === 'v3' ? { type: 'string', default: '' } : { type: 'string' },
    'x-kubernetes-list-type': 'atomic',
  };
}

function listOf(model: string, description: string, ref: Ref, style: DocumentStyle): JSONSchema {
  return {
    type: 'array',
    description,
    items: style === 'v3' ? { ...ref(model), default: {} } : ref(model),
    'x-kubernetes-list-type': 'atomic',
  };
}

/** A struct field: v3 carries upstream's `default: {}` for fields that are not pointers. */
function field(model: string, description: string, ref: Ref, style: DocumentStyle, valueField = true): JSONSchema {
  return style === 'v3' && valueField ? { ...ref(model), default: {}, description } : { ...ref(model), description };
}

function kindSchema(
  gvk: GroupVersionKind,
  description: string,
  properties: Record<string, JSONSchema>,
  required: readonly string[],
  ref: Ref,
  style: DocumentStyle,
): JSONSchema {
  const schema: JSONSchema = {
    type: 'object',
    description,
    properties: {
      apiVersion: str('Versioned schema of this representation of the object.'),
      kind: str('Kind of the object, in CamelCase.'),
      metadata: field(META_MODELS.objectMeta, 'Standard object metadata; a review has none of its own.', ref, style),
      ...properties,
    },
    'x-kubernetes-group-version-kind': [{ group: gvk.group, kind: gvk.kind, version: gvk.version }],
  };
  if (required.length > 0) schema['required'] = [...required];
  return schema;
}

function selectorRequirement(what: string, style: DocumentStyle): JSONSchema {
  return {
    type: 'object',
    description: `One requirement of a ${what} selector: a key, an operator, and the values it applies to.`,
    required: ['key', 'operator'],
    properties: {
      key: str(`The ${what} key the requirement applies to.`),
      operator: str('How the key relates to the values: `In`, `NotIn`, `Exists` or `DoesNotExist`.'),
      values: strings('The values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.', style),
    },
  };
}

function authorizationSchemas(ref: Ref, style: DocumentStyle): Record<string, JSONSchema> {
  const gv = { group: 'authorization.k8s.io', version: 'v1' };
  return {
    [M.selfSubjectAccessReview]: kindSchema(
      { ...gv, kind: 'SelfSubjectAccessReview' },
      'Asks whether the caller may perform an action (`kubectl auth can-i`). The answer comes from the authorizers that decide the caller\'s real requests; nothing is stored.',
      {
        spec: field(M.selfSubjectAccessReviewSpec, 'The action asked about.', ref, style),
        status: field(M.subjectAccessReviewStatus, 'The answer, filled in by the server.', ref, style),
      },
      ['spec'],
      ref,
      style,
    ),
    [M.selfSubjectAccessReviewSpec]: {
      type: 'object',
      description: 'The action asked about: exactly one of resourceAttributes and nonResourceAttributes.',
      properties: {
        nonResourceAttributes: field(
          M.nonResourceAttributes,
          'An action on a path outside the API, such as /healthz.',
          ref,
          style,
          false,
        ),
        resourceAttributes: field(M.resourceAttributes, 'An action on a resource of the API.', ref, style, false),
      },
    },
    [M.resourceAttributes]: {
      type: 'object',
      description: 'An action on a resource, as an authorizer sees a resource request.',
      properties: {
        fieldSelector: field(
          M.fieldSelectorAttributes,
          'The field selector of a list or watch asked about. This server\'s authorizers do not narrow their decision by it.',
          ref,
          style,
          false,
        ),
        group: str('API group of the resource; "*" means every group.'),
        labelSelector: field(
          M.labelSelectorAttributes,
          'The label selector of a list or watch asked about. This server\'s authorizers do not narrow their decision by it.',
          ref,
          style,
          false,
        ),
        name: str('Name of the object; empty means every object.'),
        namespace: str(
          'Namespace of the action; empty means every namespace (and is what a cluster-scoped resource has).',
        ),
        resource: str('The resource, plural and lower case; "*" means every resource.'),
        subresource: str('The subresource; empty means none.'),
        verb: str('The API verb: get, list, watch, create, update, patch, delete, deletecollection; "*" means every verb.'),
        version: str('API version of the resource; "*" means every version.'),
      },
    },
    [M.fieldSelectorAttributes]: {
      type: 'object',
      description: 'A field selector, as a raw string or as parsed requirements (not both).',
      properties: {
        rawSelector: str('The selector as a list request carries it in `fieldSelector`.'),
        requirements: listOf(M.fieldSelectorRequirement, 'The selector as requirements, all of which must hold.', ref, style),
      },
    },
    [M.labelSelectorAttributes]: {
      type: 'object',
      description: 'A label selector, as a raw string or as parsed requirements (not both).',
      properties: {
        rawSelector: str('The selector as a list request carries it in `labelSelector`.'),
        requirements: listOf(M.labelSelectorRequirement, 'The selector as requirements, all of which must hold.', ref, style),
      },
    },
    [M.nonResourceAttributes]: {
      type: 'object',
      description: 'An action on a path outside the API, as an authorizer sees a non-resource request.',
      properties: {
        path: str('The URL path, such as /healthz or /metrics.'),
        verb: str('The HTTP method in lower case, such as get.'),
      },
    },
    [M.subjectAccessReviewStatus]: {
      type: 'object',
      description: 'Whether the action is allowed.',
      required: ['allowed'],
      properties: {
        allowed: { type: 'boolean', description: 'True when the action is allowed.' },
        denied: {
          type: 'boolean',
          description:
            'True when an authorizer refused the action outright; false with allowed false means no authorizer allowed it.',
        },
        evaluationError: str('Why the decision could not be evaluated in full, when it could not.'),
        reason: str('Why the action is allowed or refused, when an authorizer says.'),
      },
    },
    [M.selfSubjectRulesReview]: kindSchema(
      { ...gv, kind: 'SelfSubjectRulesReview' },
      'Lists what the caller may do in a namespace (`kubectl auth can-i --list`). For showing people their access, not for deciding: the list may be incomplete. Nothing is stored.',
      {
        spec: field(M.selfSubjectRulesReviewSpec, 'The namespace asked about.', ref, style),
        status: field(M.subjectRulesReviewStatus, 'The rules, filled in by the server.', ref, style),
      },
      ['spec'],
      ref,
      style,
    ),
    [M.selfSubjectRulesReviewSpec]: {
      type: 'object',
      description: 'What the rules review asks about.',
      properties: { namespace: str('The namespace to list the rules for.') },
    },
    [M.subjectRulesReviewStatus]: {
      type: 'object',
      description: 'What the caller may do: rules on resources and on paths outside the API.',
      required: ['resourceRules', 'nonResourceRules', 'incomplete'],
      properties: {
        evaluationError: str('Why the list could not be made in full, when it could not.'),
        incomplete: {
          type: 'boolean',
          description: 'True when the list may leave out some of what the caller may do.',
        },
        nonResourceRules: listOf(M.nonResourceRule, 'What the caller may do on paths outside the API.', ref, style),
        resourceRules: listOf(M.resourceRule, 'What the caller may do on resources.', ref, style),
      },
    },
    [M.resourceRule]: {
      type: 'object',
      description: 'Verbs allowed on resources. The order of rules means nothing, and they may repeat.',
      required: ['verbs'],
      properties: {
        apiGroups: strings('API groups of the resources; "*" means every group.', style),
        resourceNames: strings('Names of the objects the rule is limited to; empty means every object.', style),
        resources: strings('The resources; "*" means every resource, "*/sub" the subresource sub of every resource.', style),
        verbs: strings('The verbs allowed; "*" means every verb.', style),
      },
    },
    [M.nonResourceRule]: {
      type: 'object',
      description: 'Verbs allowed on paths outside the API.',
      required: ['verbs'],
      properties: {
        nonResourceURLs: strings('The paths; a trailing "*" matches every path under it, "*" alone every path.', style),
        verbs: strings('The HTTP methods allowed, in lower case; "*" means every method.', style),
      },
    },
    [M.fieldSelectorRequirement]: selectorRequirement('field', style),
    [M.labelSelectorRequirement]: selectorRequirement('label', style),
  };
}

function authenticationSchemas(ref: Ref, style: DocumentStyle): Record<string, JSONSchema> {
  return {
    [M.selfSubjectReview]: kindSchema(
      { group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview' },
      'Asks who the caller is, as the server authenticated the request (`kubectl auth whoami`). Nothing is stored.',
      { status: field(M.selfSubjectReviewStatus, 'The caller\'s identity, filled in by the server.', ref, style) },
      [],
      ref,
      style,
    ),
    [M.selfSubjectReviewStatus]: {
      type: 'object',
      description: 'The identity the server found for the request.',
      properties: { userInfo: field(M.userInfo, 'The authenticated user.', ref, style) },
    },
    [M.userInfo]: {
      type: 'object',
      description: 'An authenticated user: name, UID, groups and any extra attributes.',
      properties: {
        extra: {
          type: 'object',
          description: 'Further attributes the authenticator supplied, such as the scopes of a credential.',
          additionalProperties: {
            type: 'array',
            items: style === 'v3' ? { type: 'string', default: '' } : { type: 'string' },
          },
        },
        groups: strings('The groups the user is in.', style),
        uid: str('A unique identifier of the user, stable across name changes.'),
        username: str('The name of the user.'),
      },
    },
  };
}

/**
 * The schemas of one built-in group version this server answers, keyed by model
 * name (the meta/v1 selector requirements included), or none for another group version.
 */
export function reviewSchemas(
  group: string,
  version: string,
  ref: Ref,
  style: DocumentStyle,
): Record<string, JSONSchema> {
  if (version !== 'v1') return {};
  if (group === 'authorization.k8s.io') return authorizationSchemas(ref, style);
  if (group === 'authentication.k8s.io') return authenticationSchemas(ref, style);
  return {};
}
