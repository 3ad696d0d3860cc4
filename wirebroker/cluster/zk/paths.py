"""The znodes of Kafka's ZooKeeper layout (Kafka's kafka.zk.ZkData), by path.

    /cluster/id                                    the cluster id (persistent)
    /controller                                    the active controller (ephemeral, its session's life)
    /controller_epoch                              the controller epoch, a decimal number (persistent)
    /brokers/ids/<id>                              a live broker's registration (ephemeral)
    /brokers/topics/<topic>                        a topic's replica assignment (persistent)
    /brokers/topics/<topic>/partitions/<p>/state   a partition's leader, leader epoch and ISR; its znode version
                                                   is the partition epoch (persistent)
    /config/topics/<topic>                         a topic's config overrides (persistent)
    /config/changes/config_change_<seq>            a config change notification (persistent sequential)
    /admin/delete_topics/<topic>                   a topic queued for deletion (persistent, no data)
    /isr_change_notification/isr_change_<seq>      partitions whose ISR a leader changed (persistent sequential)
    /latest_producer_id_block                      the last block of producer ids a broker claimed (persistent)

Every JSON payload is described in data.py.
"""

from __future__ import annotations

CLUSTER_ID = "/cluster/id"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
BROKER_IDS = "/brokers/ids"
BROKER_SEQUENCE_ID = "/brokers/seqid"
TOPICS = "/brokers/topics"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CONFIG_CHANGES = "/config/changes"
DELETE_TOPICS = "/admin/delete_topics"
ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
LATEST_PRODUCER_ID_BLOCK = "/latest_producer_id_block"
CONFIG_CHANGE_PREFIX = "config_change_"
ISR_CHANGE_PREFIX = "isr_change_"

# Kafka's ZkData.PersistentZkPaths (less the pre-0.9 consumers' path): created by every broker at start-up.
PERSISTENT_PATHS = (
    BROKER_IDS, TOPICS, CONFIG_CHANGES, CONFIG_TOPICS, CONFIG_BROKERS, DELETE_TOPICS, BROKER_SEQUENCE_ID,
    ISR_CHANGE_NOTIFICATION,
)


def broker(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic(name: str) -> str:
    return f"{TOPICS}/{name}"


def topic_partitions(name: str) -> str:
    return f"{TOPICS}/{name}/partitions"


def topic_partition(name: str, partition: int) -> str:
    return f"{TOPICS}/{name}/partitions/{partition}"


def partition_state(name: str, partition: int) -> str:
    return f"{TOPICS}/{name}/partitions/{partition}/state"


def topic_config(name: str) -> str:
    return f"{CONFIG_TOPICS}/{name}"


def delete_topic(name: str) -> str:
    return f"{DELETE_TOPICS}/{name}"
