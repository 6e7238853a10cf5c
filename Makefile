# rpctl — see README.md. `make demo` and `make test` are what a newcomer runs.
GO          ?= go
BIN         := bin/rpctl
DEMO_DB     := .demo/cloud.db
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Integration tests use a private MariaDB started here (scripts/mariadb-start.sh);
# set RPCTL_TEST_MYSQL to a DSN prefix of your own server to use that instead.
MARIADB_DIR ?= $(or $(TMPDIR),/tmp)/rpctl-make-mariadb
MARIADB_PORT ?= 33308
# The 2025.1 leg (issue 33): the chroot holding Nova 31 and Placement 13 that
# scripts/release-chroot.sh builds (.ci/run does, here). make test hands it
# to the tests as RPCTL_CHROOT_2025_1 when it exists; its tests skip without it.
CHROOT_2025_1 ?= $(or $(RPCTL_CHROOT_2025_1),/work/chroots/trixie)

.PHONY: build test unit demo bench lint clean fuzz stress docs install deb deb-check galera stop-services

# rpctl --version: release (git describe), commit and build date.
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE  ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
# EXTRA_LDFLAGS: e.g. -s -w (make deb strips the binary it packages).
LDFLAGS     := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(BUILD_DATE) $(EXTRA_LDFLAGS)

# rpctl-exporter is rpctl with the Prometheus server linked in (rpctl
# exporter runs it from beside rpctl): client_golang's package init stays out
# of every other command's start-up. rpctl-chart, likewise, is rpctl with
# gonum/plot linked in (rpctl capacity --plot runs it): its fonts load at init.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rpctl
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-exporter ./cmd/rpctl-exporter
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-chart ./cmd/rpctl-chart

# Unit and integration tests. Integration tests run against a real MariaDB and
# the real placement-api / Nova tools; under `make test` a missing service is a
# failure, not a skip (RPCTL_INTEGRATION=1).
#
# The tests run with a TMPDIR of their own (/tmp/rpctl-test.XXXXXX): when
# they end — passed, failed, timed out or interrupted — every process that
# names it or inherited it (Galera nodes, rsync daemons, placement-api,
# Keystone, Prometheus, private MariaDBs) is stopped, and so is the MariaDB
# this run started (scripts/stop-test-servers.sh).
test:
	@set -e; $(TEST_SETUP); $(CHROOT_SETUP); \
	TMPDIR=$$tmp RPCTL_INTEGRATION=1 $(GO) test -count=1 -timeout 30m ./...

# CHROOT_SETUP: RPCTL_CHROOT_2025_1 when CHROOT_2025_1 holds a finished
# chroot (scripts/release-chroot.sh writes .rpctl-release-chroot last).
CHROOT_SETUP = if [ -f "$(CHROOT_2025_1)/.rpctl-release-chroot" ]; then \
	  export RPCTL_CHROOT_2025_1="$(CHROOT_2025_1)"; echo "make test: the 2025.1 leg runs in $(CHROOT_2025_1)"; \
	else \
	  unset RPCTL_CHROOT_2025_1; echo "make test: no 2025.1 chroot in $(CHROOT_2025_1) (scripts/release-chroot.sh 2025.1 $(CHROOT_2025_1)): its tests skip"; \
	fi

# TEST_SETUP: the MariaDB (unless RPCTL_TEST_MYSQL names one) and the
# private TMPDIR, and a trap that stops both when the recipe's shell exits.
TEST_SETUP = tmp=$$(mktemp -d /tmp/rpctl-test.XXXXXX); chmod 1777 $$tmp; started=; \
	trap 'scripts/stop-test-servers.sh $$tmp $$started; rm -rf $$tmp' EXIT; trap 'exit 130' INT TERM HUP; \
	if [ -z "$$RPCTL_TEST_MYSQL" ]; then \
	  eval "$$(scripts/mariadb-start.sh $(MARIADB_DIR) $(MARIADB_PORT))"; export RPCTL_TEST_MYSQL; \
	  if [ "$$MARIADB_STARTED" = 1 ]; then started=$(MARIADB_DIR); fi; \
	fi

# Stop every server rpctl's tests may have left on this machine, whoever
# started it: make test's MariaDB ($(MARIADB_DIR)), the one plain `go test`
# starts on port 33307, Galera clusters, private MariaDBs and whatever a
# make test run's TMPDIR still has running (a run killed with SIGKILL).
TMP := $(or $(TMPDIR),/tmp)
stop-services:
	@scripts/stop-test-servers.sh $(MARIADB_DIR) $(TMP)/rpctl-test-mariadb \
	  $$(ls -d /tmp/rpctl-test.* $(TMP)/rpctl-galera-* $(TMP)/rpctl-private-mariadb-* 2>/dev/null)

# The lost-update proof of issue #10 alone (make test runs it too): 8
# writers x 1,000 read-modify-write edits of one inventory, half through the
# real placement-api, half through the database.
stress:
	@set -e; $(TEST_SETUP); \
	TMPDIR=$$tmp RPCTL_INTEGRATION=1 $(GO) test -count=1 -timeout 60m -run '^TestNoLostUpdates$$' -v ./placementclient

# The Galera proofs alone (make test runs them too): each test starts its own
# 3-node MariaDB Galera cluster on 127.0.0.1 (scripts/galera-start.sh, ports
# in 24400-24499, below the kernel's ephemeral ports) and stops it. About 2.5 minutes on a 2-core machine.
galera:
	@set -e; tmp=$$(mktemp -d /tmp/rpctl-test.XXXXXX); chmod 1777 $$tmp; \
	trap 'scripts/stop-test-servers.sh $$tmp; rm -rf $$tmp' EXIT; trap 'exit 130' INT TERM HUP; \
	TMPDIR=$$tmp RPCTL_INTEGRATION=1 $(GO) test -count=1 -timeout 20m -v ./internal/galeratest

# Unit tests only: integration tests skip without a server.
unit:
	$(GO) test ./...

# The main job on the embedded default: a legacy cloud, the upgrade check
# that warns about it, the migrations, the check that passes, and the
# built-in Placement core answering (and explaining) a placement question.
demo: build
	@mkdir -p $(dir $(DEMO_DB)); rm -f $(DEMO_DB)*
	$(BIN) --db $(DEMO_DB) sample-cloud --nodes 60 --seed 2
	$(BIN) --db $(DEMO_DB) compute-node list
	$(BIN) --db $(DEMO_DB) status || echo "(status exit $$?: the embedded cloud has no nova.conf, so nova-status' Placement API and Service User Token checks fail as nova-status' would; rpctl's own checks warn before the migration)"
	$(BIN) --db $(DEMO_DB) migrate all
	$(BIN) --db $(DEMO_DB) status --check rpctl --check placement-status
	$(BIN) --db $(DEMO_DB) candidates --resources VCPU:4,MEMORY_MB:8192,DISK_GB:40 --limit 3
	$(BIN) --db $(DEMO_DB) candidates --resources PCPU:16,MEMORY_MB:32768,DISK_GB:100 --limit 3 --explain

bench:
	@scripts/bench.sh

# The command reference (docs/reference/*.md) and man pages (docs/man/*.1),
# generated from the cobra tree by cmd/internal/gendocs, which is not linked into
# rpctl. They are committed; make test fails when they are stale.
docs:
	$(GO) run ./cmd/internal/gendocs -out docs

# Native Go fuzzing of every parser of operator or database input, each target
# for FUZZTIME (outside make test; their regression inputs under
# testdata/fuzz run in make test). Crashers land in the package's
# testdata/fuzz/<Target>: fix the parser and commit the input.
FUZZTIME ?= 1m
FUZZ_TARGETS := candidates:FuzzParseQuery internal/novaformats/fuzz:FuzzParsePCIStats internal/novaformats/fuzz:FuzzParseNUMATopology \
	internal/novaformats/fuzz:FuzzParseExtraResources internal/novaformats/fuzz:FuzzParseCPUSpec internal/config:FuzzParseINI internal/dsn:FuzzParse
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== $${t#*:} ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*}; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# make install [PREFIX=/usr/local] [DESTDIR=]: the binary, the man pages
# and the bash/zsh/fish completion files (written by the binary just built,
# from the same cobra tree) where each tool looks for them.
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      := $(DESTDIR)$(PREFIX)/bin
MAN1DIR     := $(DESTDIR)$(PREFIX)/share/man/man1
BASHCOMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  := $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

install: build
	install -d $(BINDIR) $(MAN1DIR) $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0755 $(BIN) $(BINDIR)/rpctl
	install -m 0755 $(BIN)-exporter $(BINDIR)/rpctl-exporter
	install -m 0755 $(BIN)-chart $(BINDIR)/rpctl-chart
	install -m 0644 docs/man/*.1 $(MAN1DIR)/
	# rpctl-chart draws capacity --plot: its page is capacity's (rpctl-exporter's
	# is the exporter command's, generated under that very name).
	printf '.so man1/rpctl-capacity.1\n' > $(MAN1DIR)/rpctl-chart.1
	chmod 0644 $(MAN1DIR)/rpctl-chart.1
	$(BIN) completion bash > $(BASHCOMPDIR)/rpctl
	$(BIN) completion zsh > $(ZSHCOMPDIR)/_rpctl
	$(BIN) completion fish > $(FISHCOMPDIR)/rpctl.fish
	chmod 0644 $(BASHCOMPDIR)/rpctl $(ZSHCOMPDIR)/_rpctl $(FISHCOMPDIR)/rpctl.fish

# make deb: dist/rpctl_VERSION_ARCH.deb, built by dpkg-deb from a tree that
# `make install` staged (scripts/deb.sh). make deb-check also runs lintian
# (errors fail), installs the package, checks the man pages, the bash
# completion and --version, and removes it again (root; scripts/deb-check.sh).
deb:
	@GO=$(GO) scripts/deb.sh

deb-check:
	@GO=$(GO) scripts/deb-check.sh

clean:
	rm -rf bin .demo dist
