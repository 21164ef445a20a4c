/** The prefix the standalone API is served under besides the root. */
export const MANAGEMENT_PATH_PREFIX = '/kubernetes/management';
/** The one version of the management group. */
export const API_VERSION = 'v1';
