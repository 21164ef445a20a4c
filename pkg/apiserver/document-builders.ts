// The real discovery and OpenAPI builders, gathered behind the DocumentBuilders seam
// so the HTTP layer can be tested with small fakes.

import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  etagOf,
} from './discovery/discovery.js';
import type { DocumentBuilders } from './documents.js';
import { openAPIDocuments, openAPIV3Root } from './openapi/index.js';

export const defaultDocumentBuilders: DocumentBuilders = {
  apiVersions,
  apiGroupList,
  apiGroup,
  apiResourceList,
  aggregatedDiscovery,
  etagOf,
  openAPIDocuments,
  openAPIV3Root,
};
