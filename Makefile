# The two set-up commands: `make run` starts a broker on localhost:9092; `make test` runs every test.
PYTHON ?= python3

.PHONY: install run test

install:
	$(PYTHON) -m pip install -q -e '.[test]'

run: install
	wirebroker

test: install
	$(PYTHON) -m pytest -q
