# Two commands do all the set-up on a fresh machine with only Python 3.11+:
#   make demo   start the gateway on its embedded PostgreSQL, with a demo tenant
#   make test   lint, type-check, check import contracts, run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo serve test lint bench clean browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,otel]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/ctxgw serve --demo

serve: $(STAMP)
	$(BIN)/ctxgw serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The console's browser tests drive Debian's Chromium (never a downloaded build). Installed here
# when missing and we may (root, as CI runs); otherwise those tests say what is missing.
browser:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi

test: lint browser
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .ctxgw .mypy_cache .ruff_cache .pytest_cache
