# Two commands do all set-up on a fresh machine: `make test` and `make demo`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: test test-containers demo setup lint stubs build clean bench docs stacks

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip -c constraints.txt
	$(PY) -m pip install -q -c constraints.txt torch==2.13.0
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

demo: $(STAMP)
	$(VENV)/bin/tapetrace grade examples/submissions/* --device cpu --seed 2026 --jobs 2

lint: $(STAMP)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

stubs: $(STAMP)
	$(VENV)/bin/tapetrace stubs

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
