// An error sigs.k8s.io/yaml's YAMLToJSON returns, in its own words and unwrapped:
// goyaml.v2's (`yaml: invalid map key: ...`, `yaml: cannot decode !!str as a !!int`),
// convertToJSONableObject's (`unsupported map key of type: ...`) or json.Marshal's
// (`json: unsupported value: +Inf`). kube-apiserver words it per verb: create and update
// decode through the YAML serializer, whose error handlers/rest.go `transformDecodeError`
// wraps as `the object provided is unrecognized (must be of type K): <err> (<summary>)`;
// apply decodes with sigs.k8s.io/yaml's Unmarshal, which prefixes `error converting YAML
// to JSON: `, and handlers/patch.go then `error decoding YAML: `. The body decoder throws
// this; its caller words it (body.ts `decodeYAML`).

export class YAMLToJSONError extends Error {}
