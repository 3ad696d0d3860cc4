"""The single-node default loads nothing of ZooKeeper mode: no zookeeper.connect, no kazoo (start-up time)."""

from __future__ import annotations

import subprocess
import sys


def test_a_single_node_broker_does_not_import_kazoo():
    probe = ("import sys, wirebroker.cli, wirebroker.server.broker, wirebroker.apis; "
             "print(sorted(m for m in sys.modules if m.startswith(('kazoo', 'wirebroker.server.zk_mode', "
             "'wirebroker.cluster.zk.controller', 'wirebroker.cluster.zk.admin'))))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
