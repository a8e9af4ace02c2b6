# Each target bootstraps .venv from pyproject.toml when it is missing or older than pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The extras a fresh venv gets; .ci/run adds `spark` (pyspark, 456 MB: not for every edit loop).
EXTRAS ?= dev,notebooks

.PHONY: demo test test-fast lint format lab bench notebooks clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/searchkit demo --out demo-output

lint: $(STAMP)
	$(VENV)/bin/ruff check searchkit tests bench
	$(VENV)/bin/ruff format --check searchkit tests bench
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format searchkit tests bench
	$(VENV)/bin/ruff check --fix searchkit tests bench

# Both cores (pytest-xdist): a file's tests stay on one worker, so a module's shared servers
# start once and a notebook's cells run in order; the longest files are handed out first
# (tests/conftest.py). `make test JOBS=0` runs in this one process (for a debugger).
JOBS ?= 2
PARALLEL := $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist loadfile --no-loadscope-reorder)

# Bytecode is cached (__pycache__/, git-ignored) even where the environment sets
# PYTHONDONTWRITEBYTECODE: without it every worker compiles searchkit and rewrites the
# asserts of every test module again on each run (about 3 s of CPU a worker).
SUITE_ENV := PYTHONDONTWRITEBYTECODE=

test: lint
	$(SUITE_ENV) $(PY) -m pytest $(PARALLEL) tests notebooks --nbval --nbval-sanitize-with notebooks/sanitize.cfg

# The edit loop: everything but the browser, the load tests, slow tests and the notebooks.
FAST_TESTS := tests --ignore=tests/browser --ignore=tests/load -m "not slow and not browser"
# Without nbval's plugin (importing it builds jsonschema's URI grammars: about 2.5 s of CPU
# in the controller and again in each worker) or anyio's (no test uses it).
FAST_PLUGINS := -p no:nbval -p no:anyio
# Each property test tries a quarter of its examples here (Hypothesis profile "fast",
# tests/conftest.py); `make test`, which CI runs, tries them all.
FAST_EXAMPLES := --hypothesis-profile fast

# Four workers on the two cores: about a third of the edit loop's wall time is tests waiting
# on deadlines, retry backoff and idle timeouts (asleep, not computing), which the two extra
# workers fill. Quiet, 2 cores, 1,786 tests: 133 s with 2 workers, 119.5 s with 3, 113 s with 4.
# `make test` (CI) stays at JOBS; `make test-fast FAST_JOBS=2` runs as before.
FAST_JOBS ?= $(if $(filter command line,$(origin JOBS)),$(JOBS),4)
FAST_PARALLEL := $(if $(filter 0,$(FAST_JOBS)),,-n $(FAST_JOBS) --dist loadfile --no-loadscope-reorder)

test-fast: $(STAMP)
	$(SUITE_ENV) $(PY) -m pytest $(FAST_PARALLEL) $(FAST_PLUGINS) $(FAST_EXAMPLES) $(FAST_TESTS)

# Every figure the README gives, re-measured in one run and printed beside the baseline it is
# compared with (measured in the same run), then one table of them all against what the README
# says (bench/readme_figures.py; each script hands its figures over through bench/figures.py):
# parsing, start-up, the wire path (beside ebb8985, before the layered redesign), the history
# at scale, the forecast, S3 requests, pruning, today's rollup and the alerts' speed (about
# 25 minutes on 2 cores). Unless QUICK=1: the accuracy tables, the 30-day collected layout and
# the year (about 40 minutes more, 2.3 GiB written unless YEAR_STORE=DIR holds it already;
# with YEAR_STORE, that year on moto's S3 too: 6 minutes, 2.1 GiB in /tmp).
# BASE=COMMIT measures the same figures for that commit's code too (a git worktree under
# .bench/trees), each script alternately for this code and that one (ROUNDS=N times), and adds
# that commit's figure and the ratio to the table; YEAR_BASE_STORE=DIR is a year store that
# commit's code wrote. ONLY=list,history runs just those jobs (bench/readme_figures.py --help);
# OUT=DIR gathers the figures of several runs in one folder (--differ DIR, --table DIR).
bench: $(STAMP)
	$(PY) bench/readme_figures.py $(if $(QUICK),--quick) $(if $(BASE),--base $(BASE)) \
		$(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(ONLY),--only $(ONLY)) \
		$(if $(YEAR_STORE),--year-store $(YEAR_STORE)) \
		$(if $(YEAR_BASE_STORE),--year-base-store $(YEAR_BASE_STORE)) $(if $(OUT),--out $(OUT))

# Re-run the example notebooks in place (after changing what they show), then drop the
# per-cell execution timestamps so a re-run changes only what really changed. The plots are
# pinned light: they would follow this machine's JupyterLab theme otherwise.
notebooks: $(STAMP)
	cd notebooks && SEARCHKIT_PLOT_THEME=light ../$(VENV)/bin/jupyter nbconvert --log-level=WARN --to notebook \
		--execute --inplace 01-quickstart.ipynb 02-throughput.ipynb 03-create-index.ipynb \
		04-usage-history.ipynb 05-alerts.ipynb 06-cockpit.ipynb
	$(PY) -c "import nbformat, pathlib; \
	[nbformat.write(nb, p) for p in sorted(pathlib.Path('notebooks').glob('*.ipynb')) \
	 for nb in [nbformat.read(p, as_version=4)] \
	 if [c.metadata.pop('execution', None) for c in nb.cells] is not None]"

# Copies of the notebooks in searchkit-notebooks/ (git-ignored): saving them leaves the
# tracked notebooks, which the tests compare with, as they are.
lab: $(STAMP)
	$(PY) -m searchkit lab --dir searchkit-notebooks

clean:
	rm -rf $(VENV) demo-output .pytest_cache
