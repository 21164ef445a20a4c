// One group of options per concern, as kube-apiserver keeps them
// (k8s.io/apiserver/pkg/server/options: SecureServingOptions, EtcdOptions, ...):
// each group owns its values, its flags (one definition each: name, type, usage,
// default) and the checks of its values. The server's options (server-run-options.ts)
// are the groups together; the parser, --help, the defaults and the README's flag
// table are all read from the groups' flag definitions.

/** How a flag's text becomes a value. */
export type FlagKind = 'string' | 'port' | 'list' | 'duration' | 'bool' | 'int';

/**
 * One flag: a plain object literal, self-contained, so that moving a flag to another
 * group is cut and paste. `default` is type-checked against the field it fills.
 */
export type FlagSpec<V> = {
  [F in keyof V & string]: {
    /** The name after `--`, as kube-apiserver names the same setting when it has one. */
    readonly name: string;
    readonly field: F;
    readonly kind: FlagKind;
    /** One or more sentences for --help and the README. */
    readonly usage: string;
    /** The value when the flag is not given. */
    readonly default: V[F];
    /** How --help and the README show the default, where the value alone would mislead (an empty list that means a header name). */
    readonly defaultText?: string;
  };
}[keyof V & string];

export interface OptionGroup<V> {
  /** The heading of the group's flags in --help, as kube-apiserver's named flag sets ("Etcd flags"). */
  readonly title: string;
  readonly flags: readonly FlagSpec<V>[];
  /** Normalises given values in place (trims, lower-cases, resolves paths); idempotent. */
  complete(values: V): void;
  /** Every problem with the group's values, as `--flag: what is wrong` (never throws). */
  validate(values: Readonly<V>): string[];
}
