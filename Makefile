# helmstore: the two commands are `make quickstart` (or `go run ./examples/quickstart`)
# and `make test`. See README.md.
#
# Environment `make test` reads (see CONTRIBUTING.md "Running the tests"):
#   HELMSTORE_REQUIRE_SERVICES=1  a service that is missing fails the run instead of
#                                 skipping tests (set by .ci/run)
#   HELMSTORE_ETCD                path of an etcd binary; default: etcd v3.6.16, built from
#                                 tools/etcd into ${XDG_CACHE_HOME:-~/.cache}/helmstore/
#   HELMSTORE_KUBE_BIN_DIR        prebuilt kube-apiserver and kube-controller-manager; default:
#                                 built from tools/kube into ${XDG_CACHE_HOME:-~/.cache}/helmstore/
#   HELMSTORE_REDIS_SERVER        path of a redis-server (7+) binary; default: redis-server on
#                                 PATH, else /usr/bin/redis-server, else Debian's redis-server is
#                                 installed (as root); redis-cli must be on PATH too

GO ?= go
# Benchmarks are also run once each in `make test`, so they never rot.
BENCH ?= .
# staticcheck's default checks, pinned (2026.2.2; supports Go 1.26).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: check test quickstart bench bench-smoke vet staticcheck services kube fuzz helm-suites

## quickstart: a Helm lifecycle on the embedded SQLite store, no server needed.
quickstart:
	@echo "quickstart: the first run downloads and compiles Helm, the Kubernetes client libraries and SQLite (a few minutes); later runs start in seconds"
	$(GO) run ./examples/quickstart

## check: the inner loop, within 3 minutes once built: vet, staticcheck, and the tests
## of the packages that need no service (the contract, codec, engine, encryption, the
## faces, memstore with the conformance suite, cas's protocol), with -short: the
## conformance suite's differential test runs 300 operations instead of 3000, its
## large release is 4 MiB instead of 32, cas's crash points are fewer.
CHECK_PKGS = ./driver/ ./internal/codec/ ./internal/engine/ ./internal/envelope/ ./internal/registry/ \
	./internal/face/ ./internal/helm3codec/ ./internal/helm4codec/ ./internal/partcache/ ./helm3/ ./helm4/ \
	./memstore/ ./cas/ ./drivertest/ ./encryption/ ./internal/testing/castest/
check: vet staticcheck
	$(GO) test -count=1 -short $(CHECK_PKGS)

## SLOW_PKGS are named first so that go test, which starts packages in the order it is
## given them (two at a time on 2 cores), starts the longest first: ./... then adds the rest.
## (-p 3 with the benchmarks beside the tests overloaded 2 cores: slower, measured 2026-12-07.)
SLOW_PKGS = ./crsplit/ ./cosmos/ ./redis/ ./cmd/helmstore/ ./sql/mysql/ ./sql/postgres/ ./sql/sqlite/ ./internal/testing/helmsuites/ ./cas/ ./memstore/

## test: the whole suite. Tests find their services (PostgreSQL, MariaDB, Redis
## standalone and Cluster, a kube-apiserver on etcd, both built from source) or start them.
## Every long step says so before it starts.
test: services vet staticcheck
	@$(GO) run ./internal/testing/testenv/cmd/kubebin -optional
	@echo "test: running the tests of every package, then every benchmark once (bench-smoke): about 30 minutes on 2 otherwise idle cores once built (crsplit the longest), longer on a busy machine (a first run first compiles the test binaries: a few minutes more); go test prints one line per package as it ends, in the order of the command line"
	$(GO) test -count=1 -timeout 80m -parallel 4 $(SLOW_PKGS) ./...
	@$(MAKE) --no-print-directory bench-smoke

## fuzz: each fuzz test for FUZZTIME beyond its seed corpus (which every plain go test runs);
## one fuzz target per go test -fuzz run. A first run compiles the package's dependencies
## with coverage instrumentation (a few minutes on 2 cores); a failing input is saved under
## the package's testdata/fuzz/ and then runs in every go test.
FUZZTIME ?= 20s
fuzz:
	@echo "fuzz: FuzzRedact for $(FUZZTIME) (a first run first compiles the dependencies with coverage instrumentation: a few minutes)"
	$(GO) test -count=1 -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(FUZZTIME) ./helm3/

## helm-suites: Helm's own pkg/action and pkg/storage tests, of Helm 3 and Helm 4, on our stores
## against Helm's Secrets driver, with the report (CONTRIBUTING.md "Helm's own test suites").
## make test runs them too, within go test ./...
helm-suites:
	@echo "helm-suites: Helm's pkg/action and pkg/storage tests on memstore, sqlite and postgres (1.5-2 minutes; a first run compiles Helm: a few minutes more)"
	$(GO) test -count=1 -v -run TestHelmSuites ./internal/testing/helmsuites/

vet:
	@echo "vet: go vet ./..."
	$(GO) vet ./...

## staticcheck: its default checks. The first run downloads and compiles staticcheck (about a
## minute) and compiles every dependency for it (a few minutes more); later runs take about a minute.
staticcheck:
	@echo "staticcheck: $(STATICCHECK) ./... (about a minute; a first run downloads and compiles staticcheck and every dependency first: a few minutes more)"
	$(GO) run $(STATICCHECK) ./...

## services: the non-Go program tests start: redis-server + redis-cli (HELMSTORE_REDIS_SERVER,
## else on PATH, else installs Debian's redis-server). Without it and without a way to
## install it, says why and goes on (the redis tests skip), unless HELMSTORE_REQUIRE_SERVICES=1.
## (etcd and the Kubernetes binaries are Go: `make kube` builds them.)
services:
	@sh tools/ensure-redis.sh

## kube: builds etcd from tools/etcd and kube-apiserver and kube-controller-manager from
## tools/kube into the cache (8-11 minutes cold on 2 cores, with progress lines; one line
## each when already built). The tests build them on demand too; this makes the wait
## visible. `make test` runs it with -optional: a failed build is reported and the other
## tests still run, unless HELMSTORE_REQUIRE_SERVICES=1.
kube:
	@$(GO) run ./internal/testing/testenv/cmd/kubebin

## BENCH_PKGS: the packages with benchmarks (go test -bench ./... would link every test binary
## for nothing; a -bench run also runs its packages one at a time, so it is not merged into the tests').
BENCH_PKGS = $(shell grep -rl --include='*_test.go' '^func Benchmark' . | xargs -n1 dirname | sort -u)

## bench-smoke: every benchmark once, to prove they run. Quiet when they pass; when one
## fails, the output of the failing packages (the benchmark's log and failure).
bench-smoke:
	@echo "bench-smoke: every benchmark once (-benchtime 1x), through both Helms where a backend has them, quietly (about 5-7 minutes; the output is shown only if one fails)"
	@out=$$(mktemp "$${TMPDIR:-/tmp}/helmstore-bench-smoke.XXXXXX"); \
	if $(GO) test -count=1 -run '^$$' -bench '$(BENCH)' -benchtime 1x $(BENCH_PKGS) >"$$out" 2>&1; then \
		rm -f "$$out"; echo "bench-smoke: every benchmark ran"; \
	else s=$$?; \
		echo "bench-smoke: FAILED (exit $$s); the output of each failing package follows (all of it: $$out)"; \
		awk '{ b = b $$0 "\n" } /^# / { e = 1 } /^(ok|FAIL|\?) *\t/ { if (e || $$0 ~ /^FAIL\t/) printf "%s", b; b = ""; e = 0 } END { printf "%s", b }' "$$out" | tail -n 300; \
		exit $$s; \
	fi

## bench: the benchmarks behind the tables of docs/benchmarks.md (our stores beside Helm's own drivers,
## each through Helm 3 and Helm 4: sub-benchmarks .../face=helm3 and .../face=helm4), six samples each
## for benchstat (go run golang.org/x/perf/cmd/benchstat@latest bench-*.txt; with -col /face, the two
## Helms side by side). The listing benchmarks (ActionList, Summaries) skip their large sets (10,000 releases
## x 3 revisions; 200 x 3 of the 2.2 MB release on Helm's drivers: each takes more than ~20 s to store) unless
## HELMSTORE_BENCH_LARGE=1 (crsplit's and cosmos's all of them: their servers take 25-90 s to store 1,000 x 3),
## e.g. HELMSTORE_BENCH_LARGE=1 make bench BENCH='ActionList|Summaries'.
bench:
	$(GO) test -count=6 -run '^$$' -bench '$(BENCH)' -benchtime 1s ./sql/ > bench-sql.txt; s=$$?; cat bench-sql.txt; exit $$s
	$(GO) test -count=6 -run '^$$' -bench '$(BENCH)' -benchtime 30x ./crsplit/ > bench-crsplit.txt; s=$$?; cat bench-crsplit.txt; exit $$s
	$(GO) test -count=6 -run '^$$' -bench '$(BENCH)' -benchtime 1s ./redis/ > bench-redis.txt; s=$$?; cat bench-redis.txt; exit $$s
	$(GO) test -count=6 -run '^$$' -bench '$(BENCH)' -benchtime 10x ./cosmos/ > bench-cosmos.txt; s=$$?; cat bench-cosmos.txt; exit $$s
