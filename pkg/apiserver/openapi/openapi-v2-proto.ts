// The OpenAPI v2 document encoded as gnostic's `openapi.v2.Document` protobuf
// message. kubectl up to 1.2x asks `/openapi/v2` for this encoding only (and falls
// back to `/swagger-2.0.0.pb-v1`, never to JSON); without it `explain` and the
// client-side validation of `create`/`apply` fail. Only the part of gnostic's
// schema that kubectl's proto models read is declared below, with gnostic's own
// field numbers (openapiv2/OpenAPIv2.proto in google/gnostic-models); fields we
// never set are simply absent, which protobuf readers accept.

import protobuf from 'protobufjs';
import { stringify as toYAML } from 'yaml';
import { parseAccept } from '../negotiation.js';

/**
 * The media type the protobuf document is served as. Clients up to 1.2x ask for the
 * older `...spec.v2@v1.0+protobuf`, but `@` is not a token character, so Go's
 * mime.ParseMediaType in client-go rejects it in a Content-Type; kube-openapi
 * answers with this dotted form, which client-go parses and accepts.
 */
export const OPENAPI_V2_PROTOBUF_MEDIA_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** Accept subtypes (of `application/`) that ask for the protobuf document. */
export const OPENAPI_V2_PROTOBUF_SUBTYPES: ReadonlySet<string> = new Set([
  'com.github.proto-openapi.spec.v2@v1.0+protobuf',
  'com.github.proto-openapi.spec.v2.v1.0+protobuf',
]);

/**
 * Whether an Accept header asks for the protobuf document ahead of (or instead of)
 * JSON, as kube-openapi's handler negotiates it (kubectl up to 1.2x does).
 */
export function prefersOpenAPIV2Protobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const c of parseAccept(accept)) {
    if (c.q <= 0) continue;
    if (c.type === 'application' && OPENAPI_V2_PROTOBUF_SUBTYPES.has(c.subtype)) return true;
    if (c.type === '*' || (c.type === 'application' && (c.subtype === 'json' || c.subtype === '*'))) {
      return false;
    }
  }
  return false;
}

// Snake-case names with keepCase, so objects built below match the proto text.
// Oneof names are ours (they never reach the wire); field numbers are gnostic's.
const PROTO = `
syntax = "proto3";
package openapi.v2;

message Document {
  string swagger = 1;
  Info info = 2;
  repeated string schemes = 5;
  repeated string consumes = 6;
  repeated string produces = 7;
  Paths paths = 8;
  Definitions definitions = 9;
  repeated NamedAny vendor_extension = 16;
}
message Info {
  string title = 1;
  string version = 2;
  string description = 3;
  repeated NamedAny vendor_extension = 7;
}
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message AdditionalPropertiesItem {
  oneof kind { Schema schema = 1; bool boolean = 2; }
}
message Schema {
  string _ref = 1;
  string format = 2;
  string title = 3;
  string description = 4;
  Any default = 5;
  double multiple_of = 6;
  double maximum = 7;
  bool exclusive_maximum = 8;
  double minimum = 9;
  bool exclusive_minimum = 10;
  int64 max_length = 11;
  int64 min_length = 12;
  string pattern = 13;
  int64 max_items = 14;
  int64 min_items = 15;
  bool unique_items = 16;
  int64 max_properties = 17;
  int64 min_properties = 18;
  repeated string required = 19;
  repeated Any enum = 20;
  AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22;
  ItemsItem items = 23;
  repeated Schema all_of = 24;
  Properties properties = 25;
  string discriminator = 26;
  bool read_only = 27;
  Any example = 30;
  repeated NamedAny vendor_extension = 31;
}

message Paths {
  repeated NamedAny vendor_extension = 1;
  repeated NamedPathItem path = 2;
}
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  Operation get = 2;
  Operation put = 3;
  Operation post = 4;
  Operation delete = 5;
  Operation patch = 8;
  repeated ParametersItem parameters = 9;
}
message Operation {
  repeated string tags = 1;
  string summary = 2;
  string description = 3;
  string operation_id = 5;
  repeated string produces = 6;
  repeated string consumes = 7;
  repeated ParametersItem parameters = 8;
  Responses responses = 9;
  repeated string schemes = 10;
  repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof kind { Parameter parameter = 1; } }
message Parameter {
  oneof kind { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; }
}
message BodyParameter {
  string description = 1;
  string name = 2;
  string in = 3;
  bool required = 4;
  Schema schema = 5;
}
message NonBodyParameter {
  oneof kind {
    QueryParameterSubSchema query_parameter_sub_schema = 3;
    PathParameterSubSchema path_parameter_sub_schema = 4;
  }
}
message QueryParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 6;
  bool unique_items = 20;
}
message PathParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 5;
  bool unique_items = 19;
}
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof kind { Response response = 1; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof kind { Schema schema = 1; } }
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
const DocumentType = root.lookupType('openapi.v2.Document');

type JSONObject = Record<string, unknown>;
type Message = Record<string, unknown>;

function isObject(v: unknown): v is JSONObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** gnostic carries arbitrary values (defaults, enums, x- extensions) as YAML text. */
function any(value: unknown): Message {
  return { yaml: toYAML(value) };
}

function vendorExtensions(json: JSONObject): Message[] {
  return Object.entries(json)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, value]) => ({ name, value: any(value) }));
}

function namedSchemas(map: unknown): Message[] {
  if (!isObject(map)) return [];
  return Object.entries(map).map(([name, s]) => ({ name, value: schema(s) }));
}

// JSON Schema keywords that map one to one onto a scalar Schema field.
const SCALARS: readonly (readonly [string, string])[] = [
  ['format', 'format'],
  ['title', 'title'],
  ['description', 'description'],
  ['multipleOf', 'multiple_of'],
  ['maximum', 'maximum'],
  ['exclusiveMaximum', 'exclusive_maximum'],
  ['minimum', 'minimum'],
  ['exclusiveMinimum', 'exclusive_minimum'],
  ['maxLength', 'max_length'],
  ['minLength', 'min_length'],
  ['pattern', 'pattern'],
  ['maxItems', 'max_items'],
  ['minItems', 'min_items'],
  ['uniqueItems', 'unique_items'],
  ['maxProperties', 'max_properties'],
  ['minProperties', 'min_properties'],
  ['discriminator', 'discriminator'],
  ['readOnly', 'read_only'],
];

/** One JSON schema as a gnostic Schema message (nested schemas recursively). */
export function schema(s: unknown): Message {
  if (!isObject(s)) return {};
  const out: Message = {};
  const ref = str(s.$ref);
  if (ref !== undefined) out._ref = ref;
  for (const [from, to] of SCALARS) {
    const v = s[from];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[to] = v;
  }
  if (s.default !== undefined) out.default = any(s.default);
  if (s.example !== undefined) out.example = any(s.example);
  if (Array.isArray(s.required)) out.required = s.required.filter((r) => typeof r === 'string');
  if (Array.isArray(s.enum)) out.enum = s.enum.map(any);
  if (typeof s.additionalProperties === 'boolean') {
    out.additional_properties = { boolean: s.additionalProperties };
  } else if (isObject(s.additionalProperties)) {
    out.additional_properties = { schema: schema(s.additionalProperties) };
  }
  if (typeof s.type === 'string') out.type = { value: [s.type] };
  else if (Array.isArray(s.type)) out.type = { value: s.type.filter((t) => typeof t === 'string') };
  if (Array.isArray(s.items)) out.items = { schema: s.items.map(schema) };
  else if (isObject(s.items)) out.items = { schema: [schema(s.items)] };
  if (Array.isArray(s.allOf)) out.all_of = s.allOf.map(schema);
  if (isObject(s.properties)) out.properties = { additional_properties: namedSchemas(s.properties) };
  const ext = vendorExtensions(s);
  if (ext.length > 0) out.vendor_extension = ext;
  return out;
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

function parameter(p: unknown): Message {
  if (!isObject(p)) return {};
  if (p.in === 'body') {
    return {
      parameter: {
        body_parameter: {
          description: str(p.description),
          name: str(p.name),
          in: 'body',
          required: p.required === true,
          schema: schema(p.schema),
        },
      },
    };
  }
  const sub = {
    required: p.required === true,
    in: str(p.in),
    description: str(p.description),
    name: str(p.name),
    type: str(p.type),
    unique_items: p.uniqueItems === true,
  };
  // Header and form parameters do not occur in our document.
  const key = p.in === 'path' ? 'path_parameter_sub_schema' : 'query_parameter_sub_schema';
  return { parameter: { non_body_parameter: { [key]: sub } } };
}

function operation(op: unknown): Message | undefined {
  if (!isObject(op)) return undefined;
  const responses = isObject(op.responses)
    ? Object.entries(op.responses).map(([code, r]) => {
        const response: Message = isObject(r) ? { description: str(r.description) } : {};
        if (isObject(r) && r.schema !== undefined) response.schema = { schema: schema(r.schema) };
        return { name: code, value: { response } };
      })
    : [];
  return {
    tags: strings(op.tags),
    summary: str(op.summary),
    description: str(op.description),
    operation_id: str(op.operationId),
    produces: strings(op.produces),
    consumes: strings(op.consumes),
    parameters: Array.isArray(op.parameters) ? op.parameters.map(parameter) : [],
    responses: { response_code: responses },
    schemes: strings(op.schemes),
    vendor_extension: vendorExtensions(op),
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function paths(json: unknown): Message {
  if (!isObject(json)) return {};
  return {
    path: Object.entries(json).map(([name, item]) => {
      const value: Message = {};
      if (isObject(item)) {
        for (const m of METHODS) {
          const op = operation(item[m]);
          if (op) value[m] = op;
        }
        if (Array.isArray(item.parameters)) value.parameters = item.parameters.map(parameter);
      }
      return { name, value };
    }),
  };
}

/** The Swagger 2.0 document (as `openAPIV2` builds it) encoded as gnostic protobuf. */
export function encodeOpenAPIV2Proto(doc: unknown): Buffer {
  const d = isObject(doc) ? doc : {};
  const info = isObject(d.info) ? d.info : {};
  const message = DocumentType.fromObject({
    swagger: str(d.swagger),
    info: { title: str(info.title), version: str(info.version), description: str(info.description) },
    schemes: strings(d.schemes),
    consumes: strings(d.consumes),
    produces: strings(d.produces),
    paths: paths(d.paths),
    definitions: { additional_properties: namedSchemas(d.definitions) },
    vendor_extension: vendorExtensions(d),
  });
  return Buffer.from(DocumentType.encode(message).finish());
}

/** Decodes bytes made by `encodeOpenAPIV2Proto` into a plain object (for tests and debugging). */
export function decodeOpenAPIV2Proto(bytes: Uint8Array): Message {
  return DocumentType.toObject(DocumentType.decode(bytes), { defaults: false, arrays: true }) as Message;
}
