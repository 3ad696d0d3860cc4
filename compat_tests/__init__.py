"""Compatibility matrix: real Kafka clients × scenarios, against wirebroker and against Apache Kafka 4.3.1.

`python -m compat_tests` installs the clients (cached under .cache/compat/), starts the brokers, runs every
client × scenario cell and writes compat_tests/report/matrix.{md,json,html}. See compat_tests/README.md.
"""
