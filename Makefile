# kbls — `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
KBLS := $(VENV)/bin/kbls

.PHONY: venv demo test test-python test-neovim test-vscode lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	rm -rf .cache/demo-store
	$(KBLS) index --root tests/fixtures/notes --store .cache/demo-store
	$(KBLS) search "who owns a value after it is moved" --root tests/fixtures/notes --store .cache/demo-store --limit 5

test: venv
	bash scripts/test-all.sh

test-python: venv
	$(PY) -m pytest -q tests

lint: venv
	bash scripts/lint.sh

test-neovim: venv
	bash neovim/run-tests.sh

test-vscode: venv
	bash vscode-extension/run-tests.sh

# Long (the rust-web-src phase downloads a Debian package and indexes 3,280 files once).
bench: venv
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/bench_daemon.py
	$(PY) benchmarks/bench_load.py

clean:
	rm -rf $(VENV) .cache .pytest_cache
