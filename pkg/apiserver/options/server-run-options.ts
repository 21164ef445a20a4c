// The server's options, as kube-apiserver's ServerRunOptions: the option groups
// together. Flags fill a ServerOptions (flags.ts); complete() normalises; validate()
// reports every group's problems at once. Building the server from them is
// pkg/server's work (buildServerConfig, run), which this package never imports.
//
// Adding a flag: put one object literal in the `flags` of the group of its concern
// (name, field, kind, usage, default), add its field to that group's values
// interface, and check it in the group's validate(); run
// `npm run build && node dist/hack/flags-table.js` to update the README's table.
// Adding a group: a new `<concern>-options.ts` exporting its values interface and
// its group (`{ ... } satisfies OptionGroup<Values>`, see option-group.ts), then one
// part() entry in OPTION_GROUPS and one term in ServerOptionValues below; part()
// fails the build when a value has no flag. See docs/design.md, "Options and the
// server's assembly".

import { authenticationOptions, type AuthenticationOptionValues } from './authentication-options.js';
import { auditOptions, type AuditOptionValues } from './audit-options.js';
import { authorizationOptions, type AuthorizationOptionValues } from './authorization-options.js';
import { encryptionOptions, type EncryptionOptionValues } from './encryption-options.js';
import { etcdOptions, type EtcdOptionValues } from './etcd-options.js';
import { featureOptions, type FeatureOptionValues } from './feature-options.js';
import { genericOptions, type GenericOptionValues } from './generic-options.js';
import { hostOptions, type HostOptionValues } from './host-options.js';
import { loggingOptions, type LoggingOptionValues } from './logging-options.js';
import type { FlagSpec, OptionGroup } from './option-group.js';
import { servingOptions, type ServingOptionValues } from './serving-options.js';
import { tokenOptions, type TokenOptionValues } from './token-options.js';

/** Every option value of the server: each group's, in one flat record (flag name = field name). */
export type ServerOptionValues = ServingOptionValues &
  GenericOptionValues &
  EtcdOptionValues &
  AuthenticationOptionValues &
  AuthorizationOptionValues &
  EncryptionOptionValues &
  TokenOptionValues &
  HostOptionValues &
  FeatureOptionValues &
  AuditOptionValues &
  LoggingOptionValues;

/** The fields of V that no flag of G fills. */
type Unflagged<V, G extends { readonly flags: readonly { readonly field: string }[] }> = Exclude<
  keyof V & string,
  G['flags'][number]['field']
>;

/**
 * A group as one of the server's. The rest parameter makes it a compile error when
 * a value of the group has no flag (every default comes from a flag) or when the
 * group's values are not a slice of ServerOptionValues; given both, the cast is
 * sound (TypeScript's variance check of OptionGroup cannot see it by itself).
 */
function part<V, G extends OptionGroup<V>>(
  group: G & OptionGroup<V>,
  ..._checks: ServerOptionValues extends V
    ? [Unflagged<V, G>] extends [never]
      ? []
      : [missingFlagFor: Unflagged<V, G>]
    : [notPartOfServerOptionValues: never]
): OptionGroup<ServerOptionValues> {
  return group as unknown as OptionGroup<ServerOptionValues>;
}

/** The groups, in the order --help, the README and validate() list them. */
export const OPTION_GROUPS: readonly OptionGroup<ServerOptionValues>[] = [
  part(servingOptions),
  part(genericOptions),
  part(etcdOptions),
  part(authenticationOptions),
  part(authorizationOptions),
  part(encryptionOptions),
  part(tokenOptions),
  part(hostOptions),
  part(featureOptions),
  part(auditOptions),
  part(loggingOptions),
];

/** Every flag of the server, group by group. */
export const FLAGS: readonly FlagSpec<ServerOptionValues>[] = OPTION_GROUPS.flatMap((g) => g.flags);

/** Each value as its flag's default; lists are fresh copies the caller may change. */
function defaultValues(): ServerOptionValues {
  const values: Record<string, unknown> = {};
  for (const f of FLAGS)
    values[f.field] = Array.isArray(f.default) ? [...(f.default as unknown[])] : f.default;
  // Complete: part() checks that every field of every group is a flag's.
  return values as unknown as ServerOptionValues;
}

export const DEFAULT_OPTIONS: Readonly<ServerOptionValues> = Object.freeze(defaultValues());

export class ServerOptions {
  values: ServerOptionValues;
  private completed = false;

  constructor(
    given: Partial<ServerOptionValues> = {},
    /** Problems found while parsing flags, reported by validate() with the rest. */
    private readonly parseProblems: readonly string[] = [],
  ) {
    this.values = { ...defaultValues(), ...given };
  }

  /** Fills what is left unset and normalises; idempotent. */
  complete(): this {
    if (this.completed) return this;
    for (const group of OPTION_GROUPS) group.complete(this.values);
    this.completed = true;
    return this;
  }

  /** Every problem with the values; empty when they are usable. */
  validate(): string[] {
    this.complete();
    return [...this.parseProblems, ...OPTION_GROUPS.flatMap((g) => g.validate(this.values))];
  }
}
