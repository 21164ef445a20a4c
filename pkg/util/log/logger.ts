// The one logging interface every module takes. It sits at the bottom of the house
// (pkg/util) so that any layer can log without importing the layer that builds the
// concrete logger (the server assembly); which implementation writes the lines is
// the process's choice (json-logger.ts in the server, fakes in tests).

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * Structured logging: a message and facts as fields. Callers never pass a secret
 * (access key, token, private key) as a field; the JSON logger also redacts the
 * field names that would carry one, as a second line of defence.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line (a component's name, say). */
  child(fields: Record<string, unknown>): Logger;
  /**
   * Whether a line at `level` would be written, for a caller whose fields cost
   * something to gather (the request log). A logger without it writes every level.
   */
  enabled?(level: LogLevel): boolean;
}

/** Whether `logger` writes lines at `level` (every level, unless it says otherwise). */
export function logs(logger: Logger, level: LogLevel): boolean {
  return logger.enabled?.(level) ?? true;
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
  enabled: () => false,
};
