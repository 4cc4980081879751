# helmstore: the two commands are `make quickstart` (or `go run ./examples/quickstart`)
# and `make test`. See README.md.

GO ?= go
# Benchmarks are also run once each in `make test`, so they never rot.
BENCH ?= .

.PHONY: test quickstart bench bench-smoke vet services

## quickstart: a Helm lifecycle on the embedded SQLite store, no server needed.
quickstart:
	$(GO) run ./examples/quickstart

## test: the whole suite. Tests find their services (PostgreSQL, MariaDB, Redis, a
## Cosmos DB server, etcd + a kube-apiserver built from source) or start them.
test: services vet
	$(GO) test -count=1 -timeout 80m ./...
	$(MAKE) bench-smoke

vet:
	$(GO) vet ./...

## services: installs the non-Go programs tests start (Debian packages), when missing.
services:
	@command -v etcd >/dev/null 2>&1 || { echo "installing etcd (Debian package etcd-server)"; \
		(apt-get install -y etcd-server >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y etcd-server >/dev/null)) ; }

## bench-smoke: every benchmark once, to prove they run.
bench-smoke:
	$(GO) test -count=1 -run '^$$' -bench '$(BENCH)' -benchtime 1x ./... >/dev/null

## bench: the benchmarks behind the README tables (our stores beside Helm's own drivers),
## six samples each for benchstat (go run golang.org/x/perf/cmd/benchstat@latest bench-*.txt).
bench:
	$(GO) test -count=6 -run '^$$' -bench '$(BENCH)' -benchtime 1s ./sql/ > bench-sql.txt; s=$$?; cat bench-sql.txt; exit $$s
	$(GO) test -count=6 -run '^$$' -bench '$(BENCH)' -benchtime 30x ./crsplit/ > bench-crsplit.txt; s=$$?; cat bench-crsplit.txt; exit $$s
