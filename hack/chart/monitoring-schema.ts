// Schemas of the Prometheus Operator kinds the chart may render (ServiceMonitor and
// PrometheusRule, monitoring.coreos.com/v1), for kube-schema.ts: no kubernetes-models
// package for them is installed, so these are written from the operator's CRDs
// (pkg/apis/monitoring/v1 types: Endpoint, SafeTLSConfig, SafeAuthorization,
// RuleGroup, Rule) for the fields the chart uses and their siblings. Unknown fields
// are errors, as kubectl's strict field validation makes them against the CRDs'
// structural schemas; durations use the CRDs' Duration pattern.

import { Ajv } from 'ajv';

const DURATION = {
  type: 'string',
  pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$',
};
const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } };
const SECRET_KEY_SELECTOR = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: { name: { type: 'string' }, key: { type: 'string' }, optional: { type: 'boolean' } },
};
const SECRET_OR_CONFIGMAP = {
  type: 'object',
  additionalProperties: false,
  properties: { secret: SECRET_KEY_SELECTOR, configMap: SECRET_KEY_SELECTOR },
};
const METADATA = {
  type: 'object',
  required: ['name', 'namespace'],
  properties: {
    name: { type: 'string', minLength: 1 },
    namespace: { type: 'string', minLength: 1 },
    labels: STRING_MAP,
    annotations: STRING_MAP,
  },
};
const LABEL_SELECTOR = {
  type: 'object',
  additionalProperties: false,
  properties: {
    matchLabels: STRING_MAP,
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'operator'],
        properties: {
          key: { type: 'string' },
          operator: { type: 'string' },
          values: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
};

/** A monitoring.coreos.com/v1 object of `kind` with this spec. */
function kindSchema(kind: string, spec: object): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      apiVersion: { const: 'monitoring.coreos.com/v1' },
      kind: { const: kind },
      metadata: METADATA,
      spec,
    },
  };
}

const SERVICE_MONITOR = kindSchema('ServiceMonitor', {
  type: 'object',
  additionalProperties: false,
  required: ['selector', 'endpoints'],
  properties: {
    jobLabel: { type: 'string' },
    targetLabels: { type: 'array', items: { type: 'string' } },
    podTargetLabels: { type: 'array', items: { type: 'string' } },
    selector: LABEL_SELECTOR,
    namespaceSelector: {
      type: 'object',
      additionalProperties: false,
      properties: { any: { type: 'boolean' }, matchNames: { type: 'array', items: { type: 'string' } } },
    },
    endpoints: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          port: { type: 'string' },
          targetPort: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          path: { type: 'string' },
          scheme: { enum: ['http', 'https'] },
          interval: DURATION,
          scrapeTimeout: DURATION,
          honorLabels: { type: 'boolean' },
          bearerTokenFile: { type: 'string' },
          authorization: {
            type: 'object',
            additionalProperties: false,
            properties: { type: { type: 'string' }, credentials: SECRET_KEY_SELECTOR },
          },
          tlsConfig: {
            type: 'object',
            additionalProperties: false,
            properties: {
              ca: SECRET_OR_CONFIGMAP,
              cert: SECRET_OR_CONFIGMAP,
              keySecret: SECRET_KEY_SELECTOR,
              caFile: { type: 'string' },
              certFile: { type: 'string' },
              keyFile: { type: 'string' },
              serverName: { type: 'string' },
              insecureSkipVerify: { type: 'boolean' },
            },
          },
        },
      },
    },
  },
});

const PROMETHEUS_RULE = kindSchema('PrometheusRule', {
  type: 'object',
  additionalProperties: false,
  properties: {
    groups: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          interval: DURATION,
          rules: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['expr'],
              // A rule is an alert or a recording rule, not both.
              oneOf: [{ required: ['alert'] }, { required: ['record'] }],
              properties: {
                alert: { type: 'string', minLength: 1 },
                record: { type: 'string', minLength: 1 },
                expr: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer' }] },
                for: DURATION,
                keep_firing_for: DURATION,
                labels: STRING_MAP,
                annotations: STRING_MAP,
              },
            },
          },
        },
      },
    },
  },
});

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = {
  ServiceMonitor: ajv.compile(SERVICE_MONITOR),
  PrometheusRule: ajv.compile(PROMETHEUS_RULE),
};

/** A model class in the shape kube-schema.ts expects of kubernetes-models: validate() throws. */
function modelFor(kind: keyof typeof validators): new (data: never) => { validate(): void } {
  return class {
    constructor(private readonly data: unknown) {}
    validate(): void {
      const check = validators[kind];
      if (!check(this.data)) throw new Error(ajv.errorsText(check.errors, { dataVar: kind }));
    }
  };
}

export const ServiceMonitor = modelFor('ServiceMonitor');
export const PrometheusRule = modelFor('PrometheusRule');
