module github.com/dryfire-dev/dryfire

go 1.26.8

// npm's install folders inside the tree (e2e/*, examples/*, sdk/js) may hold
// .go files of their packages: not ours to build or vet.
ignore node_modules

require (
	github.com/elastic/go-seccomp-bpf v1.6.0
	github.com/google/go-cmp v0.7.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	go.yaml.in/yaml/v4 v4.0.0
	golang.org/x/net v0.50.0
	golang.org/x/term v0.48.0
)

require github.com/coder/websocket v1.8.15

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.50.0
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.42.0
)
