# The two set-up commands: `make run` starts a broker on localhost:9092; `make test` runs every test.
PYTHON ?= python3

.PHONY: install tools run test

install:
	$(PYTHON) -m pip install -q -e '.[test]'
	$(PYTHON) -m compileall -q wirebroker  # bytecode now, so start-up never compiles (even with PYTHONDONTWRITEBYTECODE)

tools:  # external programs the tests drive; installed here, never by hand
	@missing=""; for tool in kcat docker-compose; do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	[ -e /usr/share/java/zookeeper.jar ] || missing="$$missing zookeeper"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing:$$missing; install with 'apt-get install$$missing'"; fi; fi

run: install
	wirebroker

test: install tools
	$(PYTHON) -m pytest -q
