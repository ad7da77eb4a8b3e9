# The two set-up commands are `make demo` and `make test`; both build everything they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SMOKE := .venv-smoke
# openai-v2 2.3b0 (its messages as OTLP log records) needs wrapt<2, which the test venv's other
# packages do not take: it gets a virtualenv of its own, made once (tests/test_traces_libraries.py).
OTEL_LEGACY := .venv-otel-legacy
EXTRAS ?= dev
TEST_EXTRAS ?= dev,otel,otel-libraries,oracles,math,json,rl,docs,server,hf,ray
export PYO3_PYTHON := $(abspath $(BIN)/python)

.PHONY: demo test lint rust-check pytest pytest-postgres postgres docs wheel-smoke bench build clean \
	recipes

# A virtualenv with the package (release build of the Rust core) and the dev tools.
$(BIN)/.ready: pyproject.toml Cargo.toml $(wildcard rust/src/*.rs rust/src/*/*.rs)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "maturin>=1.5,<2"
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --quiet --extras $(EXTRAS)
	touch $@

# What the tests check against: oracles (statsmodels, scikit-learn, scipy, sympy), OpenTelemetry's
# SDK, verifiers (the rl extra), and TRL's data utilities, installed without torch (trl --no-deps
# next to datasets, transformers, jinja2 and tokenizers: the data utilities need no torch).
# CodeExec's sandbox tests run under bubblewrap (Debian package `bubblewrap`); the pages are
# checked in a real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by
# Selenium). Both are installed when missing and apt-get is there as root; otherwise the sandbox
# tests use `unshare` or skip, and the browser tests skip, each saying why.
$(BIN)/.test-ready: $(BIN)/.ready
	command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; } \
	  || echo "note: bubblewrap not installed; CodeExec tests use unshare or skip"
	{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq \
	  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } \
	  || echo "note: chromium not installed; the browser tests skip"
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --quiet --extras $(TEST_EXTRAS)
	$(BIN)/python -m pip install --quiet "datasets>=4.7" transformers jinja2 tokenizers
	$(BIN)/python -m pip install --quiet --no-deps trl
	$(BIN)/python -m pip install --quiet selenium
	touch $@

$(OTEL_LEGACY)/bin/.ready:
	test -x $(OTEL_LEGACY)/bin/python || $(PYTHON) -m venv $(OTEL_LEGACY)
	$(OTEL_LEGACY)/bin/python -m pip install --quiet openai httpx "wrapt<2" \
	  opentelemetry-sdk opentelemetry-exporter-otlp-proto-http \
	  "opentelemetry-instrumentation-openai-v2==2.3b0"
	touch $@

build: $(BIN)/.ready

demo: build
	$(BIN)/whileai demo

rust-check: build
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	cargo test --quiet

lint: $(BIN)/.test-ready
	$(BIN)/ruff check python tests benches tools recipes
	$(BIN)/mypy
	$(BIN)/python -m mypy.stubtest whileai._native

pytest: $(BIN)/.test-ready $(OTEL_LEGACY)/bin/.ready
	WHILEAI_REQUIRE_NATIVE=1 $(BIN)/python -m pytest
	WHILEAI_PURE=1 $(BIN)/python -m pytest

# Every recipe under recipes/ runs offline (temp home, no network) and prints what its README
# says it prints; tools/run_recipes.py names the first missing line of each failing recipe.
recipes: $(BIN)/.test-ready
	$(BIN)/python tools/run_recipes.py

# The documentation site (docs/ and the API reference from the docstrings) in strict mode: a
# broken link, anchor or reference fails. The site lands in site/ (not committed).
docs: $(BIN)/.test-ready
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The platform tests and the pages again on PostgreSQL: a throwaway cluster (Debian's postgresql, installed
# when missing) in a temp dir on a free loopback port, stopped at the end even on failure.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql)

pytest-postgres: $(BIN)/.test-ready postgres
	tools/pg_cluster.sh run -- $(BIN)/python -m pytest tests/test_platform_*.py \
	  tests/test_dashboard_pages.py

# The wheel as a user gets it: built by maturin, installed with plain pip into a clean venv.
wheel-smoke: build
	rm -rf dist $(SMOKE)
	$(BIN)/maturin build --release --quiet --out dist
	$(PYTHON) -m venv $(SMOKE)
	$(SMOKE)/bin/python -m pip install --quiet dist/*.whl
	cd / && WHILEAI_REQUIRE_NATIVE=1 $(abspath $(SMOKE))/bin/python -c \
	  "import whileai, whileai.simulations; assert whileai.BACKEND == 'rust', whileai.BACKEND; print('wheel ok:', whileai.__version__, whileai.BACKEND)"

test: rust-check lint pytest recipes pytest-postgres docs wheel-smoke

bench: build
	$(BIN)/python -m pip install --quiet numpy scipy scikit-learn
	for b in benches/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf target dist site $(VENV) $(SMOKE)
