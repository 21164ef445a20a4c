// OpenAPI documents of the group version (pure builders; the HTTP layer serves them).
export {
  openAPIDocuments,
  openAPIV2,
  openAPIV3GroupVersion,
  type OpenAPIDocuments,
} from './group-version.js';
export { openAPIV3Root, specHash, type OpenAPIV3Entry, type OpenAPIV3Root } from './v3.js';
export { PATCH_CONTENT_TYPES } from './routes.js';
export { modelName } from './model-names.js';
