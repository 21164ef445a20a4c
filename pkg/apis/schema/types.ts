// The contract of a compiled kind schema. pkg/apis/management/v1 writes each kind's
// schema once (JSON Schema in the OpenAPI v3 structural-schema subset, with
// descriptions); ./compile.ts turns it into this, and the generic Store, the
// OpenAPI documents and `kubectl explain` all read that one schema.

import type { FieldError } from '../meta/field-errors.js';

export interface CompiledSchema {
  /** Type, format, enum, pattern and required checks; paths are field paths (`spec.ttl`). Metadata is the Store's business and not checked here. */
  validate(obj: unknown): FieldError[];
  /** Fields the schema does not know, as field paths (`spec.colour`, `spec.access[0].foo`), in document order. */
  unknownFields(obj: unknown): string[];
  /** Removes the fields unknownFields reports, in place. */
  prune(obj: unknown): void;
}
