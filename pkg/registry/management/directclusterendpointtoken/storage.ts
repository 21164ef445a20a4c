// POST directclusterendpointtokens: decode and validate the request, make sure the
// token cannot do more than its caller, and sign it. Nothing is stored and a dry
// run signs nothing.
//
// "No more than the caller" is checked two ways:
// - the caller's own credential scope (a scoped access key, or a scoped token)
//   must cover the requested scope; a request without a scope inherits the
//   caller's, so a scoped key never mints an unscoped token;
// - scope rules that name resources of this API group are put to the authorizer
//   as the caller: a token may not be scoped to verbs the caller lacks here.
//   Rules about connected clusters' own resources cannot be judged here; a scope
//   only narrows, so they give the token nothing its owner does not have.

import { newForbidden, newInvalid, type GroupResource } from '../../../apis/meta/errors.js';
import { FieldPath, invalid, required, type FieldError } from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import type { AccessKeyScope, AccessKeyScopeRule } from '../../../apis/management/v1/common.js';
import {
  directClusterEndpointTokenInfo,
  directClusterEndpointTokenSchema,
} from '../../../apis/management/v1/direct-cluster-endpoint-token.js';
import type { CompiledSchema } from '../../../apis/schema/types.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import type { Attributes, Authorizer } from '../../../authorization/interfaces.js';
import { isUnlimitedScope, scopeExcess } from '../../../tokens/scope.js';
import type { TokenIssuer } from '../../../tokens/token-issuer.js';
import { issueCallerToken } from './caller-token.js';
import { decodeObject } from '../../generic/decode.js';
import { nowTimestamp } from '../../generic/object.js';
import type { CreateOptions, RequestContext, ResourceInfo, RESTStorage } from '../../rest/interfaces.js';

export interface DirectClusterEndpointTokenOptions {
  readonly group: string;
  readonly issuer: Pick<TokenIssuer, 'issue'>;
  /** The longest lifetime a token may ask for, in seconds (--max-token-ttl). */
  readonly maxTtlSeconds: number;
  /** Judges scope rules about this API group as the caller. */
  readonly authorizer: Authorizer;
  /** The caller's User, for the tokenGeneration claim; undefined when the caller is not a User. */
  readonly users: { user(name: string): KubeObject | undefined | Promise<KubeObject | undefined> };
  readonly compileSchema: (schema: Record<string, unknown>) => CompiledSchema;
  readonly now?: () => Date;
}

/** How many (verb, resource, namespace, name) checks one scope may need before it is refused as too wide to judge. */
export const MAX_SCOPE_CHECKS = 256;

export class DirectClusterEndpointTokenStorage implements RESTStorage {
  readonly info: ResourceInfo;
  readonly schema: Record<string, unknown>;
  private readonly compiled: CompiledSchema;
  private readonly gr: GroupResource;
  private readonly now: () => Date;

  constructor(private readonly options: DirectClusterEndpointTokenOptions) {
    this.info = directClusterEndpointTokenInfo(options.group);
    this.schema = directClusterEndpointTokenSchema();
    this.compiled = options.compileSchema(this.schema);
    this.gr = { group: this.info.group, resource: this.info.resource };
    this.now = options.now ?? (() => new Date());
  }

  async create(ctx: RequestContext, body: unknown, options: CreateOptions): Promise<KubeObject> {
    const obj = decodeObject(body, {
      info: this.info,
      schema: this.compiled,
      fieldValidation: options.fieldValidation,
      warnings: ctx.warnings,
      mode: 'body',
    });
    const name = obj.metadata.name ?? '';
    const schemaErrors = this.compiled.validate(obj);
    const errs = schemaErrors.length > 0 ? schemaErrors : this.validate(obj);
    if (errs.length > 0) throw newInvalid({ group: this.info.group, kind: this.info.kind }, name, errs);

    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    const ttl = spec['ttl'] as number;
    const requested = spec['scope'] as AccessKeyScope | undefined;
    const caller = ctx.user;
    const scope = await this.effectiveScope(caller, requested, name);

    const metadata = { ...(name ? { name } : {}), creationTimestamp: nowTimestamp(this.now()) };
    const outSpec = { ttl, ...(scope ? { scope } : {}) };
    const response: KubeObject = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata,
      spec: outSpec,
      status: {},
    };
    if (options.dryRun) return response;

    const token = await issueCallerToken(this.options, caller, ttl, scope, ctx.deadline);
    return { ...response, status: { token } };
  }

  private validate(obj: KubeObject): FieldError[] {
    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    const path = FieldPath.root('spec').child('ttl');
    const ttl = spec['ttl'];
    const max = this.options.maxTtlSeconds;
    if (ttl === undefined || ttl === null) {
      return [required(path, `the lifetime of the token in seconds, at most ${max}`)];
    }
    if (typeof ttl === 'number' && (ttl < 1 || ttl > max)) {
      return [invalid(path, ttl, `must be between 1 and ${max}, inclusive`)];
    }
    return [];
  }

  /** The scope the token gets, or a 403 when the request asks for more than the caller has. */
  private async effectiveScope(
    caller: AuthenticatedUser,
    requested: AccessKeyScope | undefined,
    name: string,
  ): Promise<AccessKeyScope | undefined> {
    const own = isUnlimitedScope(caller.scope) ? undefined : caller.scope;
    if (isUnlimitedScope(requested)) return own;
    const excess = scopeExcess(requested, own);
    if (excess.length > 0) {
      throw newForbidden(
        this.gr,
        name,
        `User ${JSON.stringify(caller.name)} cannot issue a token with a scope wider than the scope of their own credential: ${excess.join(', ')} not covered`,
      );
    }
    await this.checkRulesAgainstRights(caller, requested?.rules ?? [], name);
    return requested;
  }

  private async checkRulesAgainstRights(
    caller: AuthenticatedUser,
    rules: readonly AccessKeyScopeRule[],
    name: string,
  ): Promise<void> {
    const checks = rules.flatMap((rule) => this.attributesOf(caller, rule));
    if (checks.length > MAX_SCOPE_CHECKS) {
      throw newForbidden(
        this.gr,
        name,
        `the scope's rules about API group ${JSON.stringify(this.info.group)} name too many combinations to check (${checks.length}, at most ${MAX_SCOPE_CHECKS}); use fewer, wider entries`,
      );
    }
    for (const attrs of checks) {
      const result = await this.options.authorizer.authorize(attrs);
      if (result.decision !== 'allow') {
        throw newForbidden(
          this.gr,
          name,
          `the scope is wider than the caller's own rights: ${describeAttributes(attrs)}`,
        );
      }
    }
  }

  /** One authorization question per verb, resource, namespace and name a rule grants in this group. */
  private attributesOf(caller: AuthenticatedUser, rule: AccessKeyScopeRule): Attributes[] {
    const ours = (rule.resources ?? []).filter((r) => (r.group ?? '') === this.info.group);
    const verbs = nonEmpty(rule.verbs, '*');
    const namespaces = nonEmpty(rule.namespaces, '');
    const out: Attributes[] = [];
    for (const group of ours) {
      for (const pattern of nonEmpty(group.resources, '*')) {
        const slash = pattern.indexOf('/');
        const resource = slash < 0 ? pattern : pattern.slice(0, slash);
        const subresource = slash < 0 ? '' : pattern.slice(slash + 1);
        for (const verb of verbs) {
          for (const namespace of namespaces) {
            for (const objectName of nonEmpty(group.resourceNames, '')) {
              out.push({
                user: caller,
                verb,
                isResourceRequest: true,
                path: '',
                apiGroup: this.info.group,
                apiVersion: this.info.version,
                resource,
                subresource,
                namespace,
                name: objectName,
              });
              if (out.length > MAX_SCOPE_CHECKS) return out;
            }
          }
        }
      }
    }
    return out;
  }
}

function nonEmpty(list: readonly string[] | undefined, all: string): readonly string[] {
  return list && list.length > 0 ? list : [all];
}

/** Kubernetes' forbidden wording for the question that was refused. */
function describeAttributes(attrs: Attributes): string {
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const named = attrs.name ? ` ${JSON.stringify(attrs.name)}` : '';
  const where = attrs.namespace
    ? `in the namespace ${JSON.stringify(attrs.namespace)}`
    : 'at the cluster scope';
  return `User ${JSON.stringify(attrs.user.name)} cannot ${attrs.verb} resource ${JSON.stringify(resource)}${named} in API group ${JSON.stringify(attrs.apiGroup)} ${where}`;
}
