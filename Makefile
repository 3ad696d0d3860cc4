# The two set-up commands: `make run` starts a broker on localhost:9092; `make test` runs every test.
PYTHON ?= python3

.PHONY: install tools run test reliability schemas releases

install:
	$(PYTHON) -m pip install -q -e '.[test]'
	$(PYTHON) -m compileall -q wirebroker  # bytecode now, so start-up never compiles (even with PYTHONDONTWRITEBYTECODE)

tools:  # external programs the tests drive; installed here, never by hand
	@missing=""; for tool in kcat docker-compose; do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	[ -e /usr/share/java/zookeeper.jar ] || missing="$$missing zookeeper"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing:$$missing; install with 'apt-get install$$missing'"; fi; fi

run: install
	wirebroker

test: install tools
	$(PYTHON) -m pytest -q

# The heavy scenarios at the issues' full sizes (`make test` runs them reduced): failover (20 leader kills; three
# brokers and a ZooKeeper), the exactly-once copy (100,000 records, 3 broker and 3 copier kills), compaction
# (1,000,000 records), share groups (10,000 records; every scenario on Apache Kafka 4.3.1 too; 6,000 across a
# three-broker cluster, two brokers killed), the Spark data source (20,000 records per codec, the examples as single
# commands) and the connection flood (4,000).
reliability: install tools
	WIREBROKER_RELIABILITY=full $(PYTHON) -m pytest -q --timeout 3600 tests/integration/test_failover.py \
	  tests/integration/test_cluster_process.py tests/integration/test_compose.py \
	  tests/integration/test_transactions_eos.py tests/integration/test_compaction.py \
	  tests/integration/test_share_groups.py tests/integration/test_share_groups_cluster.py \
	  tests/integration/test_spark_datasource.py \
	  tests/integration/test_spark_examples.py tests/integration/test_connection_flood.py

# Refresh schemas/ from the Kafka jars pinned in schemas/jars.json (fetched by Maven into .cache/kafka-jars/, sha256
# checked), then regenerate wirebroker/protocol/messages/ from them.
schemas:
	$(PYTHON) -m wirebroker.protocol.codegen.sync
	$(PYTHON) -m wirebroker.protocol.codegen

# Ask each Kafka release that `wirebroker --emulate` takes (its real broker from Maven Central's jars) what it
# advertises in ApiVersions, and store the answers in wirebroker/apis/releases/.
releases:
	$(PYTHON) -m compat_tests.kafka_releases
