"""Benchmarks of wirebroker against Apache Kafka 4.3.1 on the same machine (`python -m bench`; see bench/README.md)."""
