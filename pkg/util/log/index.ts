export { LOG_LEVELS, isLogLevel, logs, silentLogger, type Logger, type LogLevel } from './logger.js';
export { JsonLogger, REDACTED_FIELDS, stdout, type LogDestination } from './json-logger.js';
export {
  LOG_THROTTLE_INTERVAL_MS,
  LOG_THROTTLE_MAX_SUBJECTS,
  LogThrottle,
  type LogAdmission,
  type LogThrottleOptions,
} from './throttle.js';
