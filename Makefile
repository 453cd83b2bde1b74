# Two commands for a fresh machine: `make demo` and `make test`.
# Each creates .venv if it is missing and installs the project into it.
PYTHON ?= python3
# Extras to install: dev (tests, lint), compare (ikpy, for the report); add train to
# cross-check RPROP against PyTorch.
EXTRAS ?= dev,compare
VENV := .venv
BIN := $(VENV)/bin
comma := ,
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: demo test soak bench report lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/nao-ik demo

test: $(STAMP)
	$(BIN)/ruff check nao_ik sim_stub tests
	$(BIN)/python -m pytest -q

# The long variant of the reliability tests: 2000 examples per property and a
# one-minute load run with 4 client processes.
soak: $(STAMP)
	NAO_IK_SOAK=1 $(BIN)/python -m pytest -q tests/test_reliability.py
	$(BIN)/nao-ik loadtest --clients 4 --seconds 60

report: $(STAMP)
	$(BIN)/nao-ik report --out docs/report

bench: $(STAMP)
	$(BIN)/nao-ik bench --out docs/bench.md

lint: $(STAMP)
	$(BIN)/ruff check nao_ik sim_stub tests
	$(BIN)/ruff format --check nao_ik sim_stub tests
	$(BIN)/shellcheck deploy.sh .ci/run

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
