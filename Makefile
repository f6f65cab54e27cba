.PHONY: install install-dev test test-fast lint typecheck golden bench bench-executors bench-aggregate weights check-weights results docs readme-board

PY ?= python

# The core: what `fbench sweep` and the tour need. A local CPU build of torch first; a
# looser pin can pull a multi-GB CUDA build (any torch>=2.2 already installed works).
install:
	$(PY) -m pip install "torch==2.13.0"
	$(PY) -m pip install -e .

# Everything the full suite needs: every extra (incumbents, StateBench, MiniLM, the
# cluster's job server, docs, dev tools) and the outside plugin package the plugin tests
# install. Chromium and libfaketime are the system's: `apt-get install chromium faketime`
# (their tests skip, naming that, when they are missing).
install-dev:
	$(PY) -m pip install "torch==2.13.0"
	$(PY) -m pip install -e ".[all]"
	$(PY) -m pip install --no-deps -e examples/fbench-example

# The suite on both cores (pytest-xdist, a test file per worker: module fixtures run
# once), then the tests that start Ray clusters and time their faults, alone.
test:
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not cluster"
	$(PY) -m pytest -q -m cluster

# The contributor's loop, on both cores: the suite without the slow
# tests, Ray (embedded or a cluster), the incumbents, the browser and libfaketime;
# make test runs them all. Tests whose install is missing skip, naming it.
test-fast:
	$(PY) -m pytest -q -n 2 --dist loadfile \
		-m "not slow and not cluster and not ray and not incumbents and not browser and not faketime"

lint:
	$(PY) -m ruff check .

typecheck:
	$(PY) -m mypy

# Regenerate the exact golden files in tests/golden/ (review the diff before committing).
golden:
	$(PY) -m tests.regen_golden

bench:
	$(PY) -m benchmarks

weights:
	fbench train all

check-weights:
	fbench train all --check

bench-executors:
	$(PY) benchmarks/bench_executors.py

bench-aggregate:
	$(PY) benchmarks/bench_aggregate.py

# The repository's RESULTS.md (and RESULTS.html, not committed): the committed sweep
# configs into published/, each sweep's published rows (`fbench aggregate --finals`), each
# included sweep's own report (published/SWEEP/RESULTS.md: its tables per setting, which
# RESULTS.md links), then the report and README's board. Each published sweep keeps in
# git its rows (finals.parquet, checkpoints.parquet), sweep.json, memories.json,
# summary.parquet, comparisons.csv, RESULTS.md and plots/ (its shards stay local; the
# report reads the same from the rows), beside published/calibration/, the headroom
# check of every default workload. A sweep longer than a sitting is published part by
# part (its rows committed as they come; `fbench sweep --config ...` resumes it).
CALIBRATED = contradiction contradiction.retrievable lifecycle lifecycle.durable_heavy \
	lifecycle.recency_biased lifecycle.high_freq_skew lifecycle.bursty
PUBLISHED = published
SWEEPS = results incumbents incumbents-bounded incumbents-more frontier outside-sweep
INCLUDED = $(filter-out results,$(SWEEPS))

results:
	fbench sweep --config sweeps/results.toml --no-report
	fbench sweep --config sweeps/incumbents.toml --no-report
	fbench sweep --config sweeps/incumbents-bounded.toml --no-report
	fbench sweep --config sweeps/incumbents-more.toml --no-report
	fbench sweep --config sweeps/frontier.toml --no-report
	fbench sweep --config sweeps/outside.toml --no-report
	mkdir -p $(PUBLISHED)/calibration
	for w in $(CALIBRATED); do fbench calibrate $$w --seeds 20 --executor ray \
		--json $(PUBLISHED)/calibration/$$w.json; done
	for s in $(SWEEPS); do fbench aggregate $(PUBLISHED)/$$s --finals >/dev/null; done
	for s in $(INCLUDED); do fbench report $(PUBLISHED)/$$s >/dev/null; done
	fbench report $(PUBLISHED)/results $(foreach s,$(INCLUDED),--include $(PUBLISHED)/$(s)) \
		--output RESULTS.md --html --calibration $(PUBLISHED)/calibration
	$(PY) -m runner.report.headline README.md

# The docs site (mkdocs-material, mkdocs.yml) into site/, failing on any warning.
docs:
	$(PY) -m mkdocs build --strict

# README's board: the top of the published board, from the rows in published/.
readme-board:
	$(PY) -m runner.report.headline README.md
