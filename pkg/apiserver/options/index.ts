// The server's options: one group per concern (see server-run-options.ts for how to
// add a flag or a group), the flags parsed from them, and their validation. Building
// and running a server from them is pkg/server's.
export { ServerOptions, DEFAULT_OPTIONS, OPTION_GROUPS } from './server-run-options.js';
export type { ServerOptionValues } from './server-run-options.js';
export type { FlagSpec, FlagKind, OptionGroup } from './option-group.js';
export { parseFlags, usage } from './flags.js';
export type { ParsedFlags } from './flags.js';
