// Command helm-render renders a Helm chart the way `helm template` does, for machines
// where no Helm binary can be had. It uses the engine Helm itself uses: Go's
// text/template with the Sprig function library (Debian's packaged sources, built
// offline by hack/chart/render.ts), and reproduces the Helm behaviour the chart in
// charts/platform-apiserver relies on:
//
//   - values: values.yaml, then each --values file merged over it in order (maps merge,
//     anything else replaces, an explicit null deletes the default), numbers decoded as
//     float64 the way Helm's YAML-through-JSON decoding does;
//   - .Values, .Release (Name, Namespace, IsInstall, IsUpgrade, Revision, Service),
//     .Chart (Chart.yaml metadata), .Capabilities (KubeVersion, APIVersions.Has,
//     HelmVersion), .Template (Name, BasePath), .Files.Get (a file of the chart by its
//     path inside the chart, "" when there is none, as Helm's);
//   - functions: Sprig's text functions without env/expandenv, plus include, tpl,
//     required, toYaml, fromYaml, fromYamlArray, toJson, fromJson, fromJsonArray and
//     lookup (answers from a --lookup file of objects, else an empty map, as
//     `helm template` does);
//   - missingkey=zero with "<no value>" removed, partials (files starting with "_")
//     not rendered, NOTES.txt rendered but kept out of the manifests, templates parsed
//     deepest path last, documents split on "---" and sorted by Helm's install order
//     (stable within a kind), the chart's kubeVersion constraint checked.
//
// One visible difference: toYaml indents a list under its key (yaml.v3's style) where
// Helm's yaml.v2-style output does not; both are the same YAML.
//
// Not implemented (the chart does not use them): subcharts and dependencies, library
// charts, chart archives, .Files other than Get, --set flags, toToml/fromToml, strict mode, hook
// handling (hook documents are printed like any other), post-renderers, and
// values.schema.json validation (hack/chart/render.ts does that with ajv, on the
// coalesced values this command prints with --values-only).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	// Debian packages these modules' sources under /usr/share/gocode without the
	// /v3 directory, so they are imported by their GOPATH paths (GO111MODULE=off).
	"github.com/Masterminds/semver"
	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// ChartMetadata mirrors the fields of Helm's chart.Metadata that templates read as .Chart.
type ChartMetadata struct {
	Name         string            `yaml:"name" json:"name"`
	Home         string            `yaml:"home" json:"home,omitempty"`
	Sources      []string          `yaml:"sources" json:"sources,omitempty"`
	Version      string            `yaml:"version" json:"version"`
	Description  string            `yaml:"description" json:"description,omitempty"`
	Keywords     []string          `yaml:"keywords" json:"keywords,omitempty"`
	Maintainers  []Maintainer      `yaml:"maintainers" json:"maintainers,omitempty"`
	Icon         string            `yaml:"icon" json:"icon,omitempty"`
	APIVersion   string            `yaml:"apiVersion" json:"apiVersion"`
	Condition    string            `yaml:"condition" json:"condition,omitempty"`
	Tags         string            `yaml:"tags" json:"tags,omitempty"`
	AppVersion   string            `yaml:"appVersion" json:"appVersion,omitempty"`
	Deprecated   bool              `yaml:"deprecated" json:"deprecated,omitempty"`
	Annotations  map[string]string `yaml:"annotations" json:"annotations,omitempty"`
	KubeVersion  string            `yaml:"kubeVersion" json:"kubeVersion,omitempty"`
	Type         string            `yaml:"type" json:"type,omitempty"`
	Dependencies []interface{}     `yaml:"dependencies" json:"dependencies,omitempty"`
}

type Maintainer struct {
	Name  string `yaml:"name" json:"name"`
	Email string `yaml:"email" json:"email,omitempty"`
	URL   string `yaml:"url" json:"url,omitempty"`
}

type Release struct {
	Name      string
	Namespace string
	IsUpgrade bool
	IsInstall bool
	Revision  int
	Service   string
}

type KubeVersion struct {
	Version string
	Major   string
	Minor   string
}

func (k KubeVersion) String() string     { return k.Version }
func (k KubeVersion) GitVersion() string { return k.Version }

// chartFiles is .Files: Get reads a file of the chart (dashboards, rules kept as files
// beside the templates). Helm leaves templates/ out of .Files; so does this.
type chartFiles struct{ dir string }

// Get returns the file's content, or "" when the chart has no such file, as Helm's does.
func (f chartFiles) Get(name string) string {
	clean := path.Clean("/" + name)[1:]
	if clean == "" || strings.HasPrefix(clean, "templates/") {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(clean)))
	if err != nil {
		return ""
	}
	return string(b)
}

// VersionSet answers .Capabilities.APIVersions.Has for "group/version" and
// "group/version/Kind" (the latter is true when its group/version is served).
type VersionSet []string

func (v VersionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	parts := strings.Split(apiVersion, "/")
	if len(parts) >= 2 {
		last := parts[len(parts)-1]
		if last != "" && last[0] >= 'A' && last[0] <= 'Z' {
			return v.Has(strings.Join(parts[:len(parts)-1], "/"))
		}
	}
	return false
}

type HelmVersion struct {
	Version string
}

type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
	HelmVersion HelmVersion
}

// builtinAPIVersions are the group/versions a recent Kubernetes serves; Helm's own
// default set comes from client-go's scheme and is a superset of these.
var builtinAPIVersions = []string{
	"v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1",
	"apiregistration.k8s.io/v1", "apps/v1", "authentication.k8s.io/v1",
	"authorization.k8s.io/v1", "autoscaling/v1", "autoscaling/v2", "batch/v1",
	"certificates.k8s.io/v1", "coordination.k8s.io/v1", "discovery.k8s.io/v1",
	"events.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "networking.k8s.io/v1",
	"node.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1",
	"scheduling.k8s.io/v1", "storage.k8s.io/v1",
}

// installOrder is Helm's releaseutil.InstallOrder.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange",
	"PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList",
	"ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
	"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
}

type manifest struct {
	Source  string `json:"source"`
	Content string `json:"content"`
	kind    string
}

type output struct {
	Manifests []manifest             `json:"manifests"`
	Notes     string                 `json:"notes"`
	Values    map[string]interface{} `json:"values"`
	Chart     ChartMetadata          `json:"chart"`
	Release   map[string]interface{} `json:"release"`
}

func main() {
	var (
		chartDir    = flag.String("chart", "", "chart directory")
		valueFiles  stringList
		apiVersions stringList
		name        = flag.String("name", "release-name", "release name")
		namespace   = flag.String("namespace", "default", "release namespace")
		kubeVersion = flag.String("kube-version", "v1.32.0", "Kubernetes version for .Capabilities")
		lookupFile  = flag.String("lookup", "", "YAML stream of objects that lookup answers from")
		isUpgrade   = flag.Bool("is-upgrade", false, "render as an upgrade (.Release.IsUpgrade)")
		valuesOnly  = flag.Bool("values-only", false, "print the coalesced values as JSON and stop")
		format      = flag.String("output", "yaml", "yaml (like helm template) or json")
	)
	flag.Var(&valueFiles, "values", "values file merged over values.yaml (repeatable)")
	flag.Var(&apiVersions, "api-versions", "extra group/version for .Capabilities.APIVersions (repeatable)")
	flag.Parse()
	if *chartDir == "" {
		fatal(errors.New("--chart is required"))
	}

	meta, err := loadChartMetadata(*chartDir)
	if err != nil {
		fatal(err)
	}
	values, err := loadValues(*chartDir, valueFiles)
	if err != nil {
		fatal(err)
	}
	if *valuesOnly {
		writeJSON(values)
		return
	}
	caps, err := capabilities(*kubeVersion, apiVersions)
	if err != nil {
		fatal(err)
	}
	if err := checkKubeVersion(meta, caps); err != nil {
		fatal(err)
	}
	var lookups []map[string]interface{}
	if *lookupFile != "" {
		if lookups, err = loadObjects(*lookupFile); err != nil {
			fatal(err)
		}
	}
	revision := 1
	if *isUpgrade {
		revision = 2
	}
	release := Release{Name: *name, Namespace: *namespace, IsInstall: !*isUpgrade,
		IsUpgrade: *isUpgrade, Revision: revision, Service: "Helm"}

	templates, err := loadTemplates(*chartDir, meta.Name)
	if err != nil {
		fatal(err)
	}
	top := map[string]interface{}{
		"Values":       values,
		"Release":      release,
		"Chart":        meta,
		"Capabilities": caps,
		"Files":        chartFiles{dir: *chartDir},
	}
	e := &engine{templates: templates, lookups: lookups}
	rendered, err := e.render(top)
	if err != nil {
		fatal(err)
	}

	notesName := path.Join(meta.Name, "templates", "NOTES.txt")
	out := output{Notes: rendered[notesName], Values: values, Chart: meta,
		Release: map[string]interface{}{"name": release.Name, "namespace": release.Namespace}}
	delete(rendered, notesName)
	out.Manifests, err = sortManifests(rendered)
	if err != nil {
		fatal(err)
	}
	if out.Manifests == nil {
		out.Manifests = []manifest{}
	}
	if *format == "json" {
		writeJSON(out)
		return
	}
	var b strings.Builder
	for _, m := range out.Manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Source, m.Content)
	}
	os.Stdout.WriteString(b.String())
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "Error: %s\n", err)
	os.Exit(1)
}

func writeJSON(v interface{}) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fatal(err)
	}
}

func loadChartMetadata(dir string) (ChartMetadata, error) {
	var meta ChartMetadata
	data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return meta, err
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return meta, fmt.Errorf("Chart.yaml: %w", err)
	}
	if meta.APIVersion != "v2" {
		return meta, fmt.Errorf("Chart.yaml: apiVersion must be v2, got %q", meta.APIVersion)
	}
	if meta.Name == "" || meta.Version == "" {
		return meta, errors.New("Chart.yaml: name and version are required")
	}
	if _, err := semver.StrictNewVersion(meta.Version); err != nil {
		return meta, fmt.Errorf("Chart.yaml: version %q is not a SemVer 2 version", meta.Version)
	}
	return meta, nil
}

// toJSONShape turns decoded YAML into what Helm sees after its YAML-to-JSON decoding:
// string-keyed maps, and every number a float64.
func toJSONShape(v interface{}) (interface{}, error) {
	b, err := json.Marshal(stringKeys(v))
	if err != nil {
		return nil, err
	}
	var out interface{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func stringKeys(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, x := range t {
			m[k] = stringKeys(x)
		}
		return m
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = stringKeys(x)
		}
		return m
	case []interface{}:
		l := make([]interface{}, len(t))
		for i, x := range t {
			l[i] = stringKeys(x)
		}
		return l
	default:
		return v
	}
}

func readYAMLMap(file string) (map[string]interface{}, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var raw interface{}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if raw == nil {
		return map[string]interface{}{}, nil
	}
	shaped, err := toJSONShape(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m, ok := shaped.(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("%s: values must be a map", file)
	}
	return m, nil
}

func loadValues(dir string, files []string) (map[string]interface{}, error) {
	defaults, err := readYAMLMap(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	user := map[string]interface{}{}
	for _, f := range files {
		m, err := readYAMLMap(f)
		if err != nil {
			return nil, err
		}
		user = mergeMaps(user, m)
	}
	return coalesce(user, defaults), nil
}

// mergeMaps is how Helm combines several -f files: later files win, maps merge.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]interface{}); ok {
			if am, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeMaps(am, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// coalesce lays user values over the chart's defaults: a user null removes the
// default, maps merge key by key, anything else replaces.
func coalesce(user, defaults map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(user))
	for k, v := range user {
		out[k] = v
	}
	for k, dv := range defaults {
		uv, present := out[k]
		if !present {
			out[k] = dv
			continue
		}
		if uv == nil {
			delete(out, k)
			continue
		}
		um, uok := uv.(map[string]interface{})
		dm, dok := dv.(map[string]interface{})
		if uok && dok {
			out[k] = coalesce(um, dm)
		}
	}
	return out
}

func capabilities(kubeVersion string, extra []string) (Capabilities, error) {
	v, err := semver.NewVersion(kubeVersion)
	if err != nil {
		return Capabilities{}, fmt.Errorf("--kube-version %q: %w", kubeVersion, err)
	}
	versions := append(VersionSet{}, builtinAPIVersions...)
	versions = append(versions, extra...)
	return Capabilities{
		KubeVersion: KubeVersion{Version: "v" + v.String(), Major: fmt.Sprint(v.Major()), Minor: fmt.Sprint(v.Minor())},
		APIVersions: versions,
		HelmVersion: HelmVersion{Version: "v3.17.0"},
	}, nil
}

func checkKubeVersion(meta ChartMetadata, caps Capabilities) error {
	if meta.KubeVersion == "" {
		return nil
	}
	c, err := semver.NewConstraint(meta.KubeVersion)
	if err != nil {
		return fmt.Errorf("Chart.yaml: kubeVersion %q: %w", meta.KubeVersion, err)
	}
	v, err := semver.NewVersion(caps.KubeVersion.Version)
	if err != nil {
		return err
	}
	if !c.Check(v) {
		return fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", meta.KubeVersion, caps.KubeVersion.Version)
	}
	return nil
}

func loadObjects(file string) ([]map[string]interface{}, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var objs []map[string]interface{}
	for {
		var raw interface{}
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if raw == nil {
			continue
		}
		shaped, err := toJSONShape(raw)
		if err != nil {
			return nil, err
		}
		if m, ok := shaped.(map[string]interface{}); ok {
			objs = append(objs, m)
		}
	}
	return objs, nil
}

func loadTemplates(dir, chartName string) (map[string]string, error) {
	root := filepath.Join(dir, "templates")
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[path.Join(chartName, filepath.ToSlash(rel))] = string(data)
		return nil
	})
	return out, err
}

// sortTemplates orders names as Helm parses them: fewer path segments last, so
// a top-level chart's definitions win over nested ones; ties in reverse lexical order.
func sortTemplates(names []string) []string {
	sort.Slice(names, func(i, j int) bool {
		ci, cj := strings.Count(names[i], "/"), strings.Count(names[j], "/")
		if ci == cj {
			return names[i] > names[j]
		}
		return ci > cj
	})
	return names
}

type engine struct {
	templates map[string]string
	lookups   []map[string]interface{}
}

const recursionMax = 1000

// newTemplateSet parses every chart template (and the extra ones given, which
// replace same-named templates) into one set whose functions close over it.
func (e *engine) newTemplateSet(extra map[string]string) (*template.Template, error) {
	t := template.New("gotpl").Option("missingkey=zero")
	included := map[string]int{}
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["fromYamlArray"] = fromYAMLArray
	funcs["toJson"] = toJSON
	funcs["fromJson"] = fromJSON
	funcs["fromJsonArray"] = fromJSONArray
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if included[name] > recursionMax {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		included[name]++
		defer func() { included[name]-- }()
		var buf strings.Builder
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, vals interface{}) (string, error) {
		return e.tpl(text, vals)
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return v, errors.New(requiredStart + msg + requiredEnd)
		}
		if s, ok := v.(string); ok && s == "" {
			return v, errors.New(requiredStart + msg + requiredEnd)
		}
		return v, nil
	}
	funcs["fail"] = func(msg string) (string, error) {
		return "", errors.New(requiredStart + msg + requiredEnd)
	}
	funcs["lookup"] = e.lookup
	t.Funcs(funcs)

	all := map[string]string{}
	for k, v := range e.templates {
		all[k] = v
	}
	for k, v := range extra {
		all[k] = v
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	for _, name := range sortTemplates(names) {
		if _, err := t.New(name).Parse(all[name]); err != nil {
			return nil, fmt.Errorf("parse error in %s: %w", name, err)
		}
	}
	return t, nil
}

// The messages of `required` and `fail` are wrapped so that the error can be shown the
// way Helm shows it: "execution error at (<template>:<line>:<col>): <message>".
const requiredStart, requiredEnd = "HELM_ERR_START", "HELM_ERR_END"

var requiredRe = regexp.MustCompile(`(?s)` + requiredStart + `(.*?)` + requiredEnd)

func cleanExecError(err error) error {
	var ee template.ExecError
	if !errors.As(err, &ee) {
		return err
	}
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return err
	}
	if m := requiredRe.FindStringSubmatch(err.Error()); len(m) == 2 {
		return fmt.Errorf("execution error at (%s): %s", tokens[1], m[1])
	}
	return err
}

func (e *engine) render(top map[string]interface{}) (map[string]string, error) {
	t, err := e.newTemplateSet(nil)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(e.templates))
	for k := range e.templates {
		names = append(names, k)
	}
	out := map[string]string{}
	for _, name := range sortTemplates(names) {
		if strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		vals := copyTop(top, name)
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, vals); err != nil {
			return nil, cleanExecError(err)
		}
		out[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

func copyTop(top map[string]interface{}, name string) map[string]interface{} {
	vals := make(map[string]interface{}, len(top)+1)
	for k, v := range top {
		vals[k] = v
	}
	base := path.Join(strings.SplitN(name, "/", 2)[0], "templates")
	vals["Template"] = map[string]interface{}{"Name": name, "BasePath": base}
	return vals
}

func (e *engine) tpl(text string, vals interface{}) (string, error) {
	top, ok := vals.(map[string]interface{})
	if !ok {
		return "", errors.New("tpl: the second argument must be the top-level context ($)")
	}
	tmpl, _ := top["Template"].(map[string]interface{})
	name, _ := tmpl["Name"].(string)
	if name == "" {
		return "", errors.New("tpl: cannot find .Template.Name in the context")
	}
	t, err := e.newTemplateSet(map[string]string{name: text})
	if err != nil {
		return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
	}
	var buf strings.Builder
	if err := t.ExecuteTemplate(&buf, name, vals); err != nil {
		return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
	}
	return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
}

func (e *engine) lookup(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
	var items []interface{}
	for _, o := range e.lookups {
		meta, _ := o["metadata"].(map[string]interface{})
		ns, _ := meta["namespace"].(string)
		n, _ := meta["name"].(string)
		if o["apiVersion"] != apiVersion || o["kind"] != kind || (namespace != "" && ns != namespace) {
			continue
		}
		if name == "" {
			items = append(items, o)
		} else if n == name {
			return o, nil
		}
	}
	if name == "" && len(items) > 0 {
		return map[string]interface{}{"apiVersion": apiVersion, "kind": kind + "List", "items": items}, nil
	}
	return map[string]interface{}{}, nil
}

// toYAML is Helm's toYaml: the value as it would be after a JSON round trip
// (keys sorted, integers kept as integers), without the trailing newline.
func toYAML(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x interface{}
	if err := dec.Decode(&x); err != nil {
		return ""
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(numbers(x)); err != nil {
		return ""
	}
	_ = enc.Close()
	return strings.TrimSuffix(buf.String(), "\n")
}

func numbers(v interface{}) interface{} {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]interface{}:
		for k, x := range t {
			t[k] = numbers(x)
		}
		return t
	case []interface{}:
		for i, x := range t {
			t[i] = numbers(x)
		}
		return t
	default:
		return v
	}
}

func fromYAML(s string) map[string]interface{} {
	m := map[string]interface{}{}
	var raw interface{}
	if err := yaml.Unmarshal([]byte(s), &raw); err != nil {
		m["Error"] = err.Error()
		return m
	}
	shaped, err := toJSONShape(raw)
	if err != nil {
		m["Error"] = err.Error()
		return m
	}
	if sm, ok := shaped.(map[string]interface{}); ok {
		return sm
	}
	return m
}

func fromYAMLArray(s string) []interface{} {
	var raw interface{}
	if err := yaml.Unmarshal([]byte(s), &raw); err != nil {
		return []interface{}{err.Error()}
	}
	shaped, err := toJSONShape(raw)
	if err != nil {
		return []interface{}{err.Error()}
	}
	if l, ok := shaped.([]interface{}); ok {
		return l
	}
	return []interface{}{}
}

func toJSON(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func fromJSON(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(s string) []interface{} {
	var l []interface{}
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return []interface{}{err.Error()}
	}
	return l
}

var separator = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

// sortManifests splits rendered files into documents and orders them as Helm
// installs them: files by path, documents in file order, then a stable sort by kind.
func sortManifests(files map[string]string) ([]manifest, error) {
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []manifest
	for _, name := range names {
		content := files[name]
		if strings.HasPrefix(path.Base(name), "_") || strings.TrimSpace(content) == "" {
			continue
		}
		for _, doc := range separator.Split(content, -1) {
			doc = strings.TrimSpace(doc)
			if doc == "" {
				continue
			}
			var head struct {
				Kind string `yaml:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				return nil, fmt.Errorf("YAML parse error on %s: %w", name, err)
			}
			out = append(out, manifest{Source: name, Content: doc, kind: head.Kind})
		}
	}
	rank := map[string]int{}
	for i, k := range installOrder {
		rank[k] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, aok := rank[out[i].kind]
		b, bok := rank[out[j].kind]
		switch {
		case !aok && !bok:
			return out[i].kind < out[j].kind
		case !aok:
			return false
		case !bok:
			return true
		}
		return a < b
	})
	return out, nil
}
