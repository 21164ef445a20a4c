// Options several commands share, defined once so their names and help read the
// same everywhere.

import { Option } from 'commander';
import type { Command } from 'commander';
import { OUTPUT_FORMATS } from './output.js';

/** `--access-key` and `--config`, on every command that talks to the platform. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .option('--access-key <key>', "use this access key instead of the stored login's, for this call only")
    .option('--config <path>', 'the login file (default: $PLATFORM_CONFIG or ~/.platform/config.json)');
}

/** `-o json|yaml`, on commands whose output is data. */
export function withOutputOption(cmd: Command): Command {
  return cmd.addOption(
    new Option('-o, --output <format>', 'print the result as data').choices(OUTPUT_FORMATS),
  );
}

/** `--kubeconfig` and `--context`: the host cluster, for the virtual cluster connection commands. */
export function withHostOptions(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kube config of the host cluster (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kube config context of the host cluster (default: its current context)');
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
