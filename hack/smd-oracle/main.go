// Command smd-oracle runs the reference structured-merge-diff (sigs.k8s.io/
// structured-merge-diff/v4, as Debian packages it) on a sequence of writes, so
// that the TypeScript engine in pkg/registry/fieldmanager can be compared with it.
//
// Input (JSON on stdin):
//
//	{"schema": {"types": [...]},      smd's schema form (schema.Schema's YAML tags)
//	 "rootType": "root",              the named type of the objects
//	 "apiVersion": "v1",              the version every write is made at
//	 "cases": [{"live": {...},        the object before the first write (optional)
//	            "ops": [{"op": "apply"|"update", "manager": "a", "force": false,
//	                     "object": {...}}]}]}
//
// Output (JSON on stdout): per case, per operation, the object after it, each
// manager's field set as FieldsV1 (the bytes smd writes), and the conflicts of
// an apply that was refused (the object and managers then stay as they were).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v4/merge"
	"sigs.k8s.io/structured-merge-diff/v4/typed"
)

type operation struct {
	Op      string          `json:"op"`
	Manager string          `json:"manager"`
	Force   bool            `json:"force"`
	Object  json.RawMessage `json:"object"`
}

type testCase struct {
	Live json.RawMessage `json:"live"`
	Ops  []operation     `json:"ops"`
}

type input struct {
	Schema     json.RawMessage `json:"schema"`
	RootType   string          `json:"rootType"`
	APIVersion string          `json:"apiVersion"`
	Cases      []testCase      `json:"cases"`
}

type managerOut struct {
	Applied    bool            `json:"applied"`
	APIVersion string          `json:"apiVersion"`
	FieldsV1   json.RawMessage `json:"fieldsV1"`
}

type conflictOut struct {
	Manager string `json:"manager"`
	Path    string `json:"path"`
}

type stepOut struct {
	Object    interface{}           `json:"object"`
	Managers  map[string]managerOut `json:"managers"`
	Conflicts []conflictOut         `json:"conflicts,omitempty"`
	Error     string                `json:"error,omitempty"`
}

// oneVersion is the converter of a single-version world: every object is already
// at the only version, and any other version is "missing", as for smd's callers.
type oneVersion struct{ version fieldpath.APIVersion }

type missingVersion struct{ v fieldpath.APIVersion }

func (m missingVersion) Error() string { return fmt.Sprintf("missing version %v", m.v) }

func (c oneVersion) Convert(v *typed.TypedValue, version fieldpath.APIVersion) (*typed.TypedValue, error) {
	if version != c.version {
		return nil, missingVersion{version}
	}
	return v, nil
}

func (c oneVersion) IsMissingVersionError(err error) bool {
	_, ok := err.(missingVersion)
	return ok
}

// decode reads JSON keeping integers as int64, as an API server's decoder does.
func decode(raw json.RawMessage) (interface{}, error) {
	if len(raw) == 0 {
		return map[string]interface{}{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v interface{}
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

func normalize(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case []interface{}:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	default:
		return v
	}
}

func managersOut(m fieldpath.ManagedFields) (map[string]managerOut, error) {
	out := map[string]managerOut{}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vs := m[name]
		b, err := vs.Set().ToJSON()
		if err != nil {
			return nil, err
		}
		out[name] = managerOut{Applied: vs.Applied(), APIVersion: string(vs.APIVersion()), FieldsV1: b}
	}
	return out, nil
}

// conflictsOf lists the conflicts of a refused apply. smd 4.1.2 builds its
// Conflicts with Set.Iterate, whose callback paths share one backing array, so
// the paths it reports can be overwritten by later ones (later smd versions copy
// them). The same conflicts are recomputed here from smd's own parts: what the
// forced apply changes or adds, intersected with each other manager's set, each
// path copied as soon as it is produced.
func conflictsOf(updater merge.Updater, live, obj *typed.TypedValue, version fieldpath.APIVersion, managers fieldpath.ManagedFields, manager string) ([]conflictOut, error) {
	forced, _, err := updater.Apply(live, obj, version, managers.Copy(), manager, true)
	if err != nil {
		return nil, fmt.Errorf("forced apply: %v", err)
	}
	if forced == nil {
		forced = live
	}
	cmp, err := live.Compare(forced)
	if err != nil {
		return nil, err
	}
	changed := cmp.Modified.Union(cmp.Added)
	out := []conflictOut{}
	for name, vs := range managers {
		if name == manager {
			continue
		}
		vs.Set().Intersection(changed).Iterate(func(p fieldpath.Path) {
			out = append(out, conflictOut{Manager: name, Path: p.Copy().String()})
		})
	}
	return out, nil
}

func run(in input) ([][]stepOut, error) {
	parser, err := typed.NewParser(typed.YAMLObject(in.Schema))
	if err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	pt := parser.Type(in.RootType)
	version := fieldpath.APIVersion(in.APIVersion)
	updater := merge.Updater{Converter: oneVersion{version}}
	results := make([][]stepOut, 0, len(in.Cases))
	for ci, c := range in.Cases {
		liveU, err := decode(c.Live)
		if err != nil {
			return nil, fmt.Errorf("case %d live: %v", ci, err)
		}
		live, err := pt.FromUnstructured(liveU)
		if err != nil {
			return nil, fmt.Errorf("case %d live: %v", ci, err)
		}
		managers := fieldpath.ManagedFields{}
		steps := []stepOut{}
		for oi, op := range c.Ops {
			objU, err := decode(op.Object)
			if err != nil {
				return nil, fmt.Errorf("case %d op %d: %v", ci, oi, err)
			}
			obj, err := pt.FromUnstructured(objU)
			step := stepOut{}
			if err != nil {
				step.Error = err.Error()
			} else if op.Op == "update" {
				_, next, uerr := updater.Update(live, obj, version, managers.Copy(), op.Manager)
				if uerr != nil {
					step.Error = uerr.Error()
				} else {
					live, managers = obj, next
				}
			} else {
				merged, next, aerr := updater.Apply(live, obj, version, managers.Copy(), op.Manager, op.Force)
				if _, ok := aerr.(merge.Conflicts); ok {
					if step.Conflicts, err = conflictsOf(updater, live, obj, version, managers, op.Manager); err != nil {
						return nil, err
					}
				} else if aerr != nil {
					step.Error = aerr.Error()
				} else {
					if merged != nil {
						live = merged
					}
					managers = next
				}
			}
			step.Object = live.AsValue().Unstructured()
			if step.Managers, err = managersOut(managers); err != nil {
				return nil, err
			}
			steps = append(steps, step)
		}
		results = append(results, steps)
	}
	return results, nil
}

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		fmt.Fprintln(os.Stderr, "input:", err)
		os.Exit(1)
	}
	out, err := run(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
