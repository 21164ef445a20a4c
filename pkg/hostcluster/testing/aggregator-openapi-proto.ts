// TEST DOUBLE. The aggregator's own gnostic protobuf encoding of the merged OpenAPI v2
// document. The real kube-aggregator downloads each APIService's spec as JSON, merges
// them, and kube-openapi's handler turns the merged document into gnostic's
// openapi.v2.Document (ToProtoBinary) for clients that ask for protobuf; it never
// passes an aggregated server's protobuf through. So the double encodes too, and on
// its own: written from gnostic's OpenAPIv2.proto (google/gnostic-models, openapiv2)
// straight onto protobufjs's wire Writer, sharing neither schema text nor code with
// the server's encoder (pkg/apiserver/openapi/openapi-v2-proto.ts). A field number
// the server gets wrong then shows as kubectl reading different documents through
// the double and from the server.
//
// Proto3 leaves out default values (empty strings, false, 0), and so does this.

import protobuf from 'protobufjs';
import { stringify as toYAML } from 'yaml';

type Json = Record<string, unknown>;
type Writer = protobuf.Writer;

const LENGTH_DELIMITED = 2;
const VARINT = 0;
const FIXED64 = 1;

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function putString(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'string' && v !== '') w.uint32((field << 3) | LENGTH_DELIMITED).string(v);
}

function putStrings(w: Writer, field: number, v: unknown): void {
  if (Array.isArray(v))
    for (const s of v) if (typeof s === 'string') w.uint32((field << 3) | LENGTH_DELIMITED).string(s);
}

function putBool(w: Writer, field: number, v: unknown): void {
  if (v === true) w.uint32((field << 3) | VARINT).bool(true);
}

function putDouble(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'number' && v !== 0) w.uint32((field << 3) | FIXED64).double(v);
}

function putInt64(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'number' && Number.isInteger(v) && v !== 0) w.uint32((field << 3) | VARINT).int64(v);
}

/** An embedded message: always written when asked for, even empty (presence matters for oneofs). */
function putMessage(w: Writer, field: number, body: (w: Writer) => void): void {
  w.uint32((field << 3) | LENGTH_DELIMITED).fork();
  body(w);
  w.ldelim();
}

/** gnostic's Any: the value as YAML text (field 2). */
function putAny(w: Writer, field: number, value: unknown): void {
  if (value !== undefined) putMessage(w, field, (m) => putString(m, 2, toYAML(value)));
}

/** `x-` keys as repeated NamedAny {name = 1, value = 2}. */
function putVendorExtensions(w: Writer, field: number, json: Json): void {
  for (const [name, value] of Object.entries(json)) {
    if (!name.startsWith('x-')) continue;
    putMessage(w, field, (m) => {
      putString(m, 1, name);
      putAny(m, 2, value);
    });
  }
}

/** A JSON object of schemas as repeated NamedSchema {name = 1, value = 2} (Definitions, Properties). */
function putNamedSchemas(w: Writer, field: number, map: unknown): void {
  if (!isJson(map)) return;
  for (const [name, s] of Object.entries(map)) {
    putMessage(w, field, (m) => {
      putString(m, 1, name);
      putMessage(m, 2, (body) => writeSchema(body, s));
    });
  }
}

/** gnostic Schema. */
function writeSchema(w: Writer, s: unknown): void {
  if (!isJson(s)) return;
  putString(w, 1, s.$ref);
  putString(w, 2, s.format);
  putString(w, 3, s.title);
  putString(w, 4, s.description);
  putAny(w, 5, s.default);
  putDouble(w, 6, s.multipleOf);
  putDouble(w, 7, s.maximum);
  putBool(w, 8, s.exclusiveMaximum);
  putDouble(w, 9, s.minimum);
  putBool(w, 10, s.exclusiveMinimum);
  putInt64(w, 11, s.maxLength);
  putInt64(w, 12, s.minLength);
  putString(w, 13, s.pattern);
  putInt64(w, 14, s.maxItems);
  putInt64(w, 15, s.minItems);
  putBool(w, 16, s.uniqueItems);
  putInt64(w, 17, s.maxProperties);
  putInt64(w, 18, s.minProperties);
  putStrings(w, 19, s.required);
  if (Array.isArray(s.enum)) for (const e of s.enum) putAny(w, 20, e);
  // AdditionalPropertiesItem: schema = 1 | boolean = 2.
  const extra = s.additionalProperties;
  if (typeof extra === 'boolean') putMessage(w, 21, (m) => m.uint32((2 << 3) | VARINT).bool(extra));
  else if (isJson(extra)) putMessage(w, 21, (m) => putMessage(m, 1, (body) => writeSchema(body, extra)));
  // TypeItem {repeated string value = 1}.
  const types = typeof s.type === 'string' ? [s.type] : s.type;
  if (Array.isArray(types) && types.length > 0) putMessage(w, 22, (m) => putStrings(m, 1, types));
  // ItemsItem {repeated Schema schema = 1}.
  const items = isJson(s.items) ? [s.items] : s.items;
  if (Array.isArray(items))
    putMessage(w, 23, (m) => {
      for (const item of items) putMessage(m, 1, (body) => writeSchema(body, item));
    });
  if (Array.isArray(s.allOf))
    for (const part of s.allOf) putMessage(w, 24, (body) => writeSchema(body, part));
  if (isJson(s.properties)) putMessage(w, 25, (m) => putNamedSchemas(m, 1, s.properties));
  putString(w, 26, s.discriminator);
  putBool(w, 27, s.readOnly);
  putAny(w, 30, s.example);
  putVendorExtensions(w, 31, s);
}

/** The sub-schema of a non-body parameter; `type` sits at 6 for query and formData, 5 otherwise. */
function writeNonBody(w: Writer, p: Json, long: boolean): void {
  putBool(w, 1, p.required);
  putString(w, 2, p.in);
  putString(w, 3, p.description);
  putString(w, 4, p.name);
  const shift = long ? 1 : 0;
  if (long) putBool(w, 5, p.allowEmptyValue);
  putString(w, 5 + shift, p.type);
  putString(w, 6 + shift, p.format);
  putBool(w, 19 + shift, p.uniqueItems);
  putVendorExtensions(w, 22 + shift, p);
}

/** ParametersItem: parameter = 1 (Parameter: body = 1 | non-body = 2) or json_reference = 2. */
function writeParametersItem(w: Writer, p: unknown): void {
  if (!isJson(p)) return;
  if (typeof p.$ref === 'string') {
    putMessage(w, 2, (m) => putString(m, 1, p.$ref));
    return;
  }
  putMessage(w, 1, (parameter) => {
    if (p.in === 'body') {
      putMessage(parameter, 1, (m) => {
        putString(m, 1, p.description);
        putString(m, 2, p.name);
        putString(m, 3, p.in);
        putBool(m, 4, p.required);
        if (p.schema !== undefined) putMessage(m, 5, (body) => writeSchema(body, p.schema));
        putVendorExtensions(m, 6, p);
      });
      return;
    }
    // NonBodyParameter: header = 1, formData = 2, query = 3, path = 4.
    const which = { header: 1, formData: 2, query: 3, path: 4 }[String(p.in)] ?? 3;
    putMessage(parameter, 2, (m) =>
      putMessage(m, which, (sub) => writeNonBody(sub, p, which === 2 || which === 3)),
    );
  });
}

function writeOperation(w: Writer, op: Json): void {
  putStrings(w, 1, op.tags);
  putString(w, 2, op.summary);
  putString(w, 3, op.description);
  putString(w, 5, op.operationId);
  putStrings(w, 6, op.produces);
  putStrings(w, 7, op.consumes);
  if (Array.isArray(op.parameters))
    for (const p of op.parameters) putMessage(w, 8, (m) => writeParametersItem(m, p));
  // Responses {repeated NamedResponseValue response_code = 1}; ResponseValue {response = 1}.
  const responses = op.responses;
  if (isJson(responses))
    putMessage(w, 9, (m) => {
      for (const [code, r] of Object.entries(responses)) {
        putMessage(m, 1, (named) => {
          putString(named, 1, code);
          putMessage(named, 2, (value) =>
            putMessage(value, 1, (response) => {
              if (!isJson(r)) return;
              putString(response, 1, r.description);
              if (r.schema !== undefined)
                putMessage(response, 2, (item) => putMessage(item, 1, (body) => writeSchema(body, r.schema)));
              putVendorExtensions(response, 5, r);
            }),
          );
        });
      }
    });
  putStrings(w, 10, op.schemes);
  putBool(w, 11, op.deprecated);
  putVendorExtensions(w, 13, op);
}

const PATH_ITEM_METHODS: readonly (readonly [string, number])[] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

/** The Swagger 2.0 JSON document as gnostic's openapi.v2.Document bytes. */
export function encodeGnosticDocument(doc: Json): Buffer {
  const w = protobuf.Writer.create();
  putString(w, 1, doc.swagger);
  const info = doc.info;
  if (isJson(info))
    putMessage(w, 2, (m) => {
      putString(m, 1, info.title);
      putString(m, 2, info.version);
      putString(m, 3, info.description);
      putVendorExtensions(m, 7, info);
    });
  putString(w, 3, doc.host);
  putString(w, 4, doc.basePath);
  putStrings(w, 5, doc.schemes);
  putStrings(w, 6, doc.consumes);
  putStrings(w, 7, doc.produces);
  const paths = doc.paths;
  if (isJson(paths))
    putMessage(w, 8, (m) => {
      putVendorExtensions(m, 1, paths);
      for (const [name, item] of Object.entries(paths)) {
        if (name.startsWith('x-') || !isJson(item)) continue;
        putMessage(m, 2, (named) => {
          putString(named, 1, name);
          putMessage(named, 2, (pathItem) => {
            putString(pathItem, 1, item.$ref);
            for (const [method, field] of PATH_ITEM_METHODS) {
              const op = item[method];
              if (isJson(op)) putMessage(pathItem, field, (o) => writeOperation(o, op));
            }
            if (Array.isArray(item.parameters))
              for (const p of item.parameters) putMessage(pathItem, 9, (pi) => writeParametersItem(pi, p));
            putVendorExtensions(pathItem, 10, item);
          });
        });
      }
    });
  if (isJson(doc.definitions)) putMessage(w, 9, (m) => putNamedSchemas(m, 1, doc.definitions));
  putVendorExtensions(w, 16, doc);
  return Buffer.from(w.finish());
}
