// Built offline from Debian's packaged Go sources (see build.ts): every module is
// replaced by its copy under /usr/share/gocode/src, modern-go/concurrent by a
// shim that adds the go.mod Debian ships it without, and the modules only tests
// of the dependencies need by empty stubs. build.ts creates ./shims next to a
// copy of this file under .tmp/smd-oracle/.
module platform-apiserver/hack/smd-oracle

go 1.19

require (
	github.com/json-iterator/go v1.1.12
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd
	github.com/modern-go/reflect2 v1.0.2
	gopkg.in/yaml.v2 v2.4.0
	sigs.k8s.io/structured-merge-diff/v4 v4.1.2
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/google/gofuzz v1.0.0 // indirect
	github.com/stretchr/testify v1.3.0 // indirect
	gopkg.in/check.v1 v0.0.0-20161208181325-20d25e280405 // indirect
)

replace (
	github.com/davecgh/go-spew => ./shims/empty/go-spew
	github.com/google/gofuzz => ./shims/empty/gofuzz
	github.com/json-iterator/go => /usr/share/gocode/src/github.com/json-iterator/go
	github.com/modern-go/concurrent => ./shims/concurrent
	github.com/modern-go/reflect2 => /usr/share/gocode/src/github.com/modern-go/reflect2
	github.com/stretchr/testify => ./shims/empty/testify
	gopkg.in/check.v1 => ./shims/empty/check.v1
	gopkg.in/yaml.v2 => /usr/share/gocode/src/gopkg.in/yaml.v2
	sigs.k8s.io/structured-merge-diff/v4 => /usr/share/gocode/src/sigs.k8s.io/structured-merge-diff
)
