# Two commands for a fresh machine: `make demo` and `make test`.
# Each creates .venv if it is missing and installs the project into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/nao-ik demo

test: $(STAMP)
	$(BIN)/ruff check nao_ik sim_stub tests
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/nao-ik bench --out docs/bench.md

lint: $(STAMP)
	$(BIN)/ruff check nao_ik sim_stub tests
	$(BIN)/ruff format --check nao_ik sim_stub tests

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
