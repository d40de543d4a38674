# The two commands: `make demo` and `make test`. Both build .venv from nothing when it is missing.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
DEMO_DIR ?= datasets/demo
STORE ?= rca-store
REPORTS ?= reports
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install test demo bench fuzz clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

install: $(VENV)/.installed

# One pytest worker per core, each taking whole test files (module fixtures are built once).
test: $(VENV)/.installed
	$(PY) -m pytest -n auto --dist loadfile

demo: $(VENV)/.installed
	@test -d $(DEMO_DIR)/logs || $(VENV)/bin/rca datasets generate --out $(DEMO_DIR) --days 7 --hosts 6 --size 20MB --seed 7
	$(VENV)/bin/rca ingest $(DEMO_DIR)/logs --store $(STORE)
	$(VENV)/bin/rca cluster --store $(STORE)
	$(VENV)/bin/rca eval --store $(STORE) --truth $(DEMO_DIR)/ground_truth.csv
	$(VENV)/bin/rca digest --store $(STORE) --out $(REPORTS)
	$(VENV)/bin/rca postmortem $$($(PY) -c "import rca; print(rca.open_store('$(STORE)').incidents().sort('start')['incident_id'][-1])") --store $(STORE) --out $(REPORTS)/postmortem.ipynb --html
	@echo ""
	@echo "results in $(STORE)/: events/ (event table, by date and host), files.parquet (ingest manifest),"
	@echo "  incidents.parquet + incident_events.parquet (incidents), failure_modes.parquet (failure modes)"
	@echo "reports in $(REPORTS)/: the weekly digest (.md, .html) and a postmortem notebook (.ipynb, .html)"
	@echo "next: $(VENV)/bin/rca incidents --store $(STORE)   |   $(VENV)/bin/rca timeline INCIDENT_ID --store $(STORE)"

bench: $(VENV)/.installed
	$(PY) benchmarks/ingest.py
	$(PY) benchmarks/templates.py

# Coverage-guided fuzzing (atheris), FUZZ_SECONDS per target; not part of `make test`. Findings go to build/fuzz/artifacts/.
FUZZ_SECONDS ?= 60
$(VENV)/.fuzz-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[fuzz]'
	touch $@

fuzz: $(VENV)/.fuzz-installed
	$(PY) fuzz/run.py --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(STORE) $(DEMO_DIR) $(REPORTS) .pytest_cache
