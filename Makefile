# The two set-up commands: `make run` starts a broker on localhost:9092; `make test` runs every test.
PYTHON ?= python3

.PHONY: install tools run test

install:
	$(PYTHON) -m pip install -q -e '.[test]'

tools:  # external programs the tests drive; installed here, never by hand
	@command -v kcat >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq kcat >/dev/null) || \
	  echo "kcat is missing: install it with 'apt-get install kcat'"; }

run: install
	wirebroker

test: install tools
	$(PYTHON) -m pytest -q
