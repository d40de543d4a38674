# The two commands: `make demo` and `make test`. Both build .venv from nothing when it is missing.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
DEMO_DIR ?= datasets/demo
STORE ?= rca-store
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install test demo bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

install: $(VENV)/.installed

test: $(VENV)/.installed
	$(PY) -m pytest

demo: $(VENV)/.installed
	@test -d $(DEMO_DIR)/logs || $(VENV)/bin/rca datasets generate --out $(DEMO_DIR) --days 7 --hosts 6 --size 20MB --seed 7
	$(VENV)/bin/rca ingest $(DEMO_DIR)/logs --store $(STORE)
	$(VENV)/bin/rca eval --store $(STORE) --truth $(DEMO_DIR)/ground_truth.csv
	@echo ""
	@echo "results in $(STORE)/: events.parquet (event table), files.parquet (ingest manifest),"
	@echo "  incidents.parquet + incident_events.parquet (correlated incidents); corpus and ground truth in $(DEMO_DIR)/"
	@echo "next: $(VENV)/bin/rca incidents --store $(STORE)   |   $(VENV)/bin/rca timeline INCIDENT_ID --store $(STORE)"

bench: $(VENV)/.installed
	$(PY) benchmarks/ingest.py
	$(PY) benchmarks/templates.py

clean:
	rm -rf $(STORE) $(DEMO_DIR) .pytest_cache
