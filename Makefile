# Two commands do all set-up on a fresh machine: `make test` and `make demo`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# two stamps: what grading needs (`make demo`), then the development extras on top (`make test` and the rest)
BASE_STAMP := $(VENV)/.installed-base
STAMP  := $(VENV)/.installed

.PHONY: test test-containers fuzz demo setup lint stubs build clean bench docs stacks

$(BASE_STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip -c constraints.txt
	$(PY) -m pip install -q -c constraints.txt torch==2.13.0
	$(PY) -m pip install -q -c constraints.txt -e .
	touch $(BASE_STAMP)

$(STAMP): $(BASE_STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# on every core: tests that read one shared grading or look at the whole machine share a worker (tests/conftest.py:
# test_group, pytest_xdist_make_scheduler). Three workers on CI's two cores: with two, 15% of the CPU stayed idle
# while tests waited on subprocesses, start-ups and time limits (docs/benchmarks.md, "make test's time")
TEST_WORKERS ?= 3
# one OpenBLAS thread in every test process, as the grader has (cli/app.py): numpy's pool spins ~0.1 CPU-s a process
# Bytecode for the grader's own code first: where PYTHONDONTWRITEBYTECODE is set (this CI image sets it) no
# process writes any, and each of the suite's few hundred interpreters (CLI runs, zygotes, pytest entries)
# compiled every autograder module it imported again, ~0.3-0.5 CPU-s each (docs/benchmarks.md)
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m compileall -q autograder benchmarks scripts > /dev/null
	OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS)

# + the opt-in paths that grade inside Docker containers (docs/benchmarks.md: what they prove, how long they take)
test-containers: $(STAMP)
	TAPETRACE_CONTAINERS=1 $(PY) -m pytest -q -p no:cacheprovider -m container

# the property-based fuzzing of what a student controls (tests/test_fuzz_*.py, docs/security.md#fuzzing) with
# FUZZ_FACTOR times `make test`'s fixed budget, on a fresh random seed (printed; FUZZ_SEED=N replays a run)
FUZZ_FACTOR ?= 100
ifndef FUZZ_SEED
FUZZ_SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
fuzz: $(STAMP)
	@echo "make fuzz: seed $(FUZZ_SEED) (replay: make fuzz FUZZ_SEED=$(FUZZ_SEED))"
	TAPETRACE_FUZZ=1 TAPETRACE_FUZZ_FACTOR=$(FUZZ_FACTOR) OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -q -p no:cacheprovider \
		-n 0 --hypothesis-seed=$(FUZZ_SEED) tests/test_fuzz_loader.py tests/test_fuzz_cells.py tests/test_fuzz_outputs.py \
		tests/test_fuzz_grading.py tests/test_text_intake.py tests/adversarial/test_round6_platform.py \
		tests/adversarial/test_round6_identity.py

# grading needs no development extras: a fresh machine installs only the package (and the CPU torch)
demo: $(BASE_STAMP)
	$(VENV)/bin/tapetrace grade examples/submissions/* --device cpu --seed 2026 --jobs 2

lint: $(STAMP)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

stubs: $(STAMP)
	$(VENV)/bin/tapetrace stubs

# each step checks what it wrote (docs/instructors/index.md, "What the build checks"): minutes, not seconds;
# `tapetrace build --no-verify` skips it
build: $(STAMP)
	$(VENV)/bin/tapetrace build
	$(VENV)/bin/tapetrace build --lang es --only template

# the documentation site (mkdocs.yml, docs/) into site/; warnings (broken links, anchors, nav) fail it
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# the student notebook on every stack of docs/supported-versions.md (venvs under ~/.cache/tapetrace/stacks/,
# several GB: torch builds from the registry); rewrites the page's matrix. `make test` runs the floor and newest.
stacks: $(STAMP)
	$(PY) scripts/stack_matrix.py --write docs/supported-versions.md

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) dist build site *.egg-info
