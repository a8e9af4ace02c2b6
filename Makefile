# Each target bootstraps .venv from pyproject.toml when it is missing or older than pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint format lab bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/searchkit demo --out demo-output

lint: $(STAMP)
	$(VENV)/bin/ruff check searchkit tests bench
	$(VENV)/bin/ruff format --check searchkit tests bench

format: $(STAMP)
	$(VENV)/bin/ruff format searchkit tests bench
	$(VENV)/bin/ruff check --fix searchkit tests bench

test: lint
	$(PY) -m pytest tests notebooks --nbval --sanitize-with notebooks/sanitize.cfg

bench: $(STAMP)
	$(PY) bench/throughput.py

lab: $(STAMP)
	$(PY) -m searchkit lab

clean:
	rm -rf $(VENV) demo-output .pytest_cache
