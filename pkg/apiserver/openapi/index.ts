// OpenAPI documents of the group version (pure builders; the HTTP layer serves them).
export { openAPIDocuments, type OpenAPIDocuments } from './group-version.js';
export { openAPIV2 } from './v2.js';
export { openAPIV3GroupVersion, openAPIV3Root, specHash, type OpenAPIV3Root } from './v3.js';
export { PATCH_CONTENT_TYPES } from './routes.js';
export { modelName } from './model-names.js';
