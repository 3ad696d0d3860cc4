"""The ZooKeeper launcher's checks that need no server: a missing install is named with the way to fix it."""

from __future__ import annotations

import pytest

from wirebroker.cluster.zookeeper_server import ZooKeeperNotInstalledError, ZooKeeperServer, zookeeper_classpath


def test_missing_jars_name_the_install_command(tmp_path):
    with pytest.raises(ZooKeeperNotInstalledError, match=r"zookeeper\.jar.*make tools.*apt-get install zookeeper"):
        ZooKeeperServer(jars_dir=tmp_path).start()


def test_classpath_takes_the_optional_jars_that_exist(tmp_path):
    for name in ("zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-simple"):
        (tmp_path / f"{name}.jar").touch()
    assert zookeeper_classpath(tmp_path).split(":") == [
        str(tmp_path / f"{name}.jar") for name in ("zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-simple")]
