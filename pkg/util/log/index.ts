export { LOG_LEVELS, isLogLevel, silentLogger, type Logger, type LogLevel } from './logger.js';
export { JsonLogger, REDACTED_FIELDS, stdout, type LogDestination } from './json-logger.js';
