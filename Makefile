# rfx — reproduce the papers' figures and tables, and test the workspace.
#   make reproduce   install what is missing, fetch the data, build (release), recompute every experiment from
#                    scratch into reproduced/ (resumable) and compare it with the committed results/
#   make verify      recompute a sample of the committed cells within 15 minutes and compare (results/verification.md)
#   make status      which experiments' results are complete, partial or stale
#   make bench       criterion benchmarks + rfx vs scikit-learn (results/performance.md)
#   make bench-jax   rfx vs neural-tangents/JAX: exact NTK and approximate NTK Grams (its section of results/performance.md)
#   make test        fmt check, clippy -D warnings, rustdoc -D warnings, all tests (under two OpenBLAS kernel
#                    settings), a quick end-to-end run
#   make test-cluster  sharded runs through GNU parallel and a one-node Slurm (job array + merge job), merged
#                    and compared with a whole run; installs slurm-wlm, munge and parallel if missing (root)
#   make python      the Python package rfxpy (crates/python) built with maturin into a venv ($(PYTHON_VENV))
SHELL := /bin/bash
CARGO ?= cargo
# Every experiment (experiments/Cargo.toml is the binary's manifest and experiments/papers.toml the coverage
# data file, not experiments). A subset by name:
# make reproduce EXPERIMENTS="gegenbauer-vs-taylor gaussian-krr".
ALL_EXPERIMENTS := $(sort $(basename $(notdir $(filter-out experiments/Cargo.toml experiments/papers.toml,$(wildcard experiments/*.toml)))))
EXPERIMENTS ?= $(ALL_EXPERIMENTS)
EXPERIMENT_FILES := $(addprefix experiments/,$(addsuffix .toml,$(EXPERIMENTS)))
# Where `make reproduce` writes (never results/, which holds the committed numbers).
RESULTS_DIR ?= reproduced
# Minutes of recomputation for `make verify` (CI runs `make test`, which verifies with VERIFY_CI_BUDGET).
VERIFY_BUDGET ?= 15
VERIFY_CI_BUDGET ?= 4
# A local mirror of the public data sets (see ../shared/data/README.md) is used when present;
# otherwise the data are downloaded from their public sources.
RFX_DATA_MIRROR ?= $(abspath $(wildcard ../shared/data))
RFX_DATA_DIR ?= $(CURDIR)/data-cache
export RFX_DATA_MIRROR RFX_DATA_DIR
# Where cargo puts binaries (honours a CARGO_TARGET_DIR set in the environment).
TARGET_DIR := $(if $(CARGO_TARGET_DIR),$(CARGO_TARGET_DIR),target)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all setup data build reproduce verify status report test test-cluster quick fmt clippy doc architecture bench \
  clean python-env python python-test bench-jax

all: build

## Installs the one system package the build needs (OpenBLAS for LAPACK/BLAS), if missing.
setup:
	@dpkg -s libopenblas-dev >/dev/null 2>&1 && dpkg -s pkg-config >/dev/null 2>&1 || { \
	  echo "installing libopenblas-dev pkg-config"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends libopenblas-dev pkg-config; }

build: setup
	$(CARGO) build --release --locked -p rfx-experiments

## Copies (from RFX_DATA_MIRROR) or downloads every data set into RFX_DATA_DIR, verifying sha256.
data: build
	$(TARGET_DIR)/release/rfx fetch --all

## Recomputes $(EXPERIMENTS) from scratch into $(RESULTS_DIR)/ (expected times printed first, from the committed
## cells' recorded times), writes that tree's report, then compares it with results/ (rfx compare: exit 1 when a
## cell differs beyond tolerance). RUN_FLAGS go to `rfx run`; e.g. RUN_FLAGS="--time-limit 150" stops starting
## cells after 150 minutes (finished cells are kept) and the same command later resumes.
RUN_FLAGS ?=
reproduce: setup data build
	@if [ "$(abspath $(RESULTS_DIR))" = "$(abspath results)" ]; then \
	  echo "RESULTS_DIR=results would overwrite the committed results; choose another folder"; exit 2; fi
	$(TARGET_DIR)/release/rfx run --times-from results --out $(RESULTS_DIR) $(RUN_FLAGS) $(EXPERIMENT_FILES)
	$(TARGET_DIR)/release/rfx compare results $(RESULTS_DIR)

## Recomputes a seeded, stratified sample of the committed cells of every experiment within VERIFY_BUDGET minutes
## and compares them with results/ (table in results/verification.md, not committed).
verify: setup data build
	$(TARGET_DIR)/release/rfx verify --budget $(VERIFY_BUDGET)

status: build
	$(TARGET_DIR)/release/rfx status $(EXPERIMENT_FILES)

report: build
	$(TARGET_DIR)/release/rfx report --root results

fmt:
	$(CARGO) fmt --all -- --check

clippy: setup
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

## Rustdoc of every crate, warnings as errors, with the KaTeX header (katex-header.html) that typesets the $…$
## equations. RUSTDOCFLAGS replaces .cargo/config.toml's rustdocflags, so the header is passed here too; the check
## after the build fails if a page came out without it.
doc: setup
	RUSTDOCFLAGS="-D warnings --html-in-header $(CURDIR)/katex-header.html" $(CARGO) doc --workspace --no-deps --locked
	@grep -q 'katex.min.js' $(TARGET_DIR)/doc/rfx_gzk/index.html || \
	  { echo "make doc: $(TARGET_DIR)/doc/rfx_gzk/index.html lacks the KaTeX header"; exit 1; }

## Rewrites ARCHITECTURE.md's crate table (rows and "depends on" column) from `cargo metadata`; the test of the
## same name (part of `cargo test`) fails while the table is stale.
architecture:
	UPDATE_ARCHITECTURE=1 $(CARGO) test -p rfx-tests --test architecture --locked

## The Python package rfxpy (crates/python): a venv under the target directory with the build and test tools
## (crates/python/requirements-dev.txt), the wheel built by maturin in the dev profile (optimised, as every
## build here) and installed into it. Users install with `pip install ./crates/python` (release build).
PYTHON ?= python3
PYTHON_VENV ?= $(TARGET_DIR)/pyenv
python-env:
	@[ -x $(PYTHON_VENV)/bin/python ] || $(PYTHON) -m venv $(PYTHON_VENV)
	@$(PYTHON_VENV)/bin/python -m pip install -q --disable-pip-version-check -r crates/python/requirements-dev.txt

python: setup python-env
	rm -rf $(TARGET_DIR)/wheels
	cd crates/python && $(abspath $(PYTHON_VENV))/bin/maturin build --profile dev --locked \
	  -i $(abspath $(PYTHON_VENV))/bin/python -o $(abspath $(TARGET_DIR))/wheels
	$(PYTHON_VENV)/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
	  $(TARGET_DIR)/wheels/rfxpy-*.whl

## rfx against neural-tangents (JAX) in one Python process (issue 26): a venv with bench/python/jax-requirements.txt
## (jax, neural-tangents and the TensorFlow it imports: about 1 GB from PyPI on the first run) and rfxpy as users
## install it (release wheel), then bench/python/jax_side_by_side.py, which rewrites its own section of
## results/performance.md (exact NTK Grams; NTK random features against the Monte Carlo NTK at comparable error).
JAX_VENV ?= $(TARGET_DIR)/jaxenv
bench-jax: setup data
	@[ -x $(JAX_VENV)/bin/python ] || $(PYTHON) -m venv $(JAX_VENV)
	$(JAX_VENV)/bin/python -m pip install -q --disable-pip-version-check -r bench/python/jax-requirements.txt
	$(JAX_VENV)/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./crates/python
	$(JAX_VENV)/bin/python bench/python/jax_side_by_side.py

## The pytest suite of rfxpy (scikit-learn's estimator checks, equality with `rfx features`/`rfx gram` through
## $(TARGET_DIR)/debug/rfx, pickling, bad input, MNIST pipeline): run from the tests folder so that the
## installed wheel, not the source tree, is imported. The binary is built as `make test`'s `cargo test` builds it
## (`--no-run`: the same feature set, so nothing is rebuilt after it).
PYTEST = cd crates/python/tests && RFX_BIN=$(abspath $(TARGET_DIR))/debug/rfx \
  $(abspath $(PYTHON_VENV))/bin/python -m pytest -q -p no:cacheprovider .
python-test: python
	$(CARGO) test --workspace --locked --no-run -q
	$(PYTEST)

## Every experiment with its [quick] settings, into results/quick (not committed).
# The build step is `cargo test --no-run`: it builds $(TARGET_DIR)/debug/rfx with the same feature set as `make test`'s
# `cargo test --workspace`, so after the tests nothing is rebuilt (a plain `cargo build -p` would resolve features
# differently and rebuild the dependencies).
QUICK_RUN = $(TARGET_DIR)/debug/rfx run --quick --no-progress
quick: setup
	$(CARGO) test --workspace --locked --no-run -q
	$(TARGET_DIR)/debug/rfx fetch --all
	$(QUICK_RUN) --out results/quick $(EXPERIMENT_FILES)

## After the build, the wheel is built on its artefacts and rfxpy's pytest suite runs alongside `cargo test`'s run,
## which keeps 2 cores ~75% busy (1.8 instead of 2.3 minutes; pytest's output: $(TARGET_DIR)/pytest.log).
## Every data set is fetched, then the quick runs are made twice, with all cores and with one thread; the two must be
## identical (results do not depend on the thread count). The one-thread run goes alongside the other, which keeps
## 2 cores only ~70% busy: 2.3 instead of 3.7 minutes on 2 cores (its output: $(TARGET_DIR)/quick-t1.log).
## The tests on real data (#[ignore]d in a plain `cargo test`) run with downloads forbidden: missing data fails
## them with the command that fetches it. Then a sample of the committed cells is recomputed and compared (rfx verify).
## The whole `cargo test` runs twice: under the OpenBLAS kernels the environment chose and under the other
## setting of the two this project meets (OPENBLAS_CORETYPE=Haswell when it is unset; unset, with
## OPENBLAS_L2_SIZE, when it is set), so that a green run on one machine kind means green on the other: a
## test asserting bit equality across BLAS call shapes or layouts fails under one of them (ARCHITECTURE.md,
## "Machine kinds"). The second run (cargo test and pytest side by side) takes about 75 s on 2 cores.
DATA_TESTS := --test real_data --test thread_determinism
OTHER_BLAS := $(if $(OPENBLAS_CORETYPE),env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE,env OPENBLAS_CORETYPE=Haswell)
OTHER_BLAS_NAME := $(if $(OPENBLAS_CORETYPE),OPENBLAS_CORETYPE unset (the host's default kernels),OPENBLAS_CORETYPE=Haswell)
test: setup fmt clippy doc
	$(CARGO) test --workspace --locked --no-run
	$(MAKE) --no-print-directory python
	@echo "cargo test under the environment's OpenBLAS kernels: $$($(TARGET_DIR)/debug/rfx machine)"
	($(PYTEST)) >$(TARGET_DIR)/pytest.log 2>&1 & py=$$!; \
	  $(CARGO) test --workspace --locked; s=$$?; \
	  wait $$py || { echo "pytest failed:"; tail -80 $(TARGET_DIR)/pytest.log; exit 1; }; \
	  echo "pytest: $$(tail -1 $(TARGET_DIR)/pytest.log)"; exit $$s
	@echo "cargo test and pytest again under $(OTHER_BLAS_NAME): $$($(OTHER_BLAS) $(TARGET_DIR)/debug/rfx machine)"
	($(OTHER_BLAS) bash -c '$(PYTEST)') >$(TARGET_DIR)/pytest-other-blas.log 2>&1 & py=$$!; \
	  $(OTHER_BLAS) $(CARGO) test --workspace --locked -q 2>&1 | grep -E '^(test result|failures|----|thread|error)' ; s=$${PIPESTATUS[0]}; \
	  wait $$py || { echo "pytest failed under $(OTHER_BLAS_NAME):"; tail -80 $(TARGET_DIR)/pytest-other-blas.log; exit 1; }; \
	  echo "pytest ($(OTHER_BLAS_NAME)): $$(tail -1 $(TARGET_DIR)/pytest-other-blas.log)"; exit $$s
	rm -rf results/quick results/quick-t1
	$(TARGET_DIR)/debug/rfx fetch --all
	$(QUICK_RUN) --threads 1 --out results/quick-t1 $(EXPERIMENT_FILES) >$(TARGET_DIR)/quick-t1.log 2>&1 & t1=$$!; \
	  $(QUICK_RUN) --out results/quick $(EXPERIMENT_FILES); s=$$?; \
	  wait $$t1 || { echo "the one-thread quick run failed:"; tail -20 $(TARGET_DIR)/quick-t1.log; exit 1; }; exit $$s
	RFX_DATA_NO_DOWNLOAD=1 $(CARGO) test --workspace --locked $(DATA_TESTS) -- --ignored
	$(TARGET_DIR)/debug/rfx compare --identical results/quick results/quick-t1
	$(TARGET_DIR)/debug/rfx verify --budget $(VERIFY_CI_BUDGET)

## Sharding (issue 28) end to end: scripts/cluster-test.sh runs quick experiments whole, as 3 shards through GNU
## parallel and as a Slurm job array of 4 shards + a dependent merge job on a one-node Slurm on this machine
## (scripts/slurm/local-cluster.sh), each merged result identical to the whole run, and a cancelled array task
## resubmitted alone. About a minute. The binary is `make test`'s (`cargo test --no-run`, as in `quick`): a plain
## `cargo build -p rfx-experiments` resolves features differently and rebuilt every dependency, minutes of CI.
test-cluster: setup
	@dpkg -s slurm-wlm >/dev/null 2>&1 && dpkg -s munge >/dev/null 2>&1 && dpkg -s parallel >/dev/null 2>&1 || { \
	  echo "installing slurm-wlm munge parallel"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends slurm-wlm munge parallel; }
	$(CARGO) test --workspace --locked --no-run -q
	RFX=$(TARGET_DIR)/debug/rfx $(if $(SUDO),sudo -E,) scripts/cluster-test.sh

## Criterion benchmarks of every crate (short settings, n = $(BENCH_N) rows where the bench takes RFX_BENCH_N),
## then rfx against scikit-learn side by side (bench/compare/run.sh: venv, MNIST .npy written by rfx); writes
## results/performance.md with the criterion summary of the same run. Not part of `make test`.
BENCH_N ?= 2000
bench: setup data
	mkdir -p $(TARGET_DIR)
	set -o pipefail; RFX_BENCH_N=$(BENCH_N) $(CARGO) bench --workspace --bench '*' --locked -- \
	  --warm-up-time 0.5 --measurement-time 2 2>&1 | tee $(TARGET_DIR)/bench-criterion.log
	RFX_BENCH_CRITERION_LOG=$(TARGET_DIR)/bench-criterion.log bench/compare/run.sh

clean:
	$(CARGO) clean
	rm -rf results/quick results/quick-t1 reproduced
