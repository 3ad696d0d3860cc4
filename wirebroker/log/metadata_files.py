"""Small metadata files of Kafka's log directories.

<partition dir>/partition.metadata (Kafka's PartitionMetadataFile), the topic id of the partition's topic:

    version: 0
    topic_id: <topic id as Kafka prints a Uuid: URL-safe base64 of its 16 bytes, no padding (22 chars)>

<log.dir>/meta.properties (Kafka's MetaProperties, version 1 as a KRaft-mode node writes it), Java properties:

    #
    #<date>
    node.id=1
    directory.id=<Uuid, same encoding as topic ids>
    version=1
    cluster.id=<cluster id>

<log.dir>/.kafka_cleanshutdown (Kafka's CleanShutdownFileHandler), JSON, present only after a clean shutdown so that
the next start can skip log recovery:

    {"version":0,"brokerEpoch":<broker epoch, -1 when unknown>}
"""

from __future__ import annotations

import base64
import json
import os
import time
import uuid
from typing import NamedTuple

from wirebroker.log.checkpoints import write_file_atomically
from wirebroker.log.files import (
    PARTITION_METADATA_FILE,
    delete_file_if_exists,
    read_text_or_none,
)
from wirebroker.protocol.errors import InconsistentTopicIdError

PARTITION_METADATA_VERSION = 0
META_PROPERTIES_FILE = "meta.properties"
META_PROPERTIES_VERSION = 1
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
CLEAN_SHUTDOWN_VERSION = 0


class MetadataFileError(ValueError):
    """A metadata file that exists but does not follow its format."""


def uuid_to_kafka_string(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_kafka_string(text: str) -> uuid.UUID:
    try:
        raw = base64.urlsafe_b64decode(text.strip() + "==")
    except ValueError:
        raise MetadataFileError(f"{text!r} is not a base64 Uuid") from None
    if len(raw) != 16:
        raise MetadataFileError(f"{text!r} is not a 16-byte Uuid")
    return uuid.UUID(bytes=raw)


# --- partition.metadata ---

def write_partition_metadata(partition_dir: str, topic_id: uuid.UUID) -> None:
    text = f"version: {PARTITION_METADATA_VERSION}\ntopic_id: {uuid_to_kafka_string(topic_id)}"
    write_file_atomically(os.path.join(partition_dir, PARTITION_METADATA_FILE), text)


def read_partition_metadata(partition_dir: str) -> uuid.UUID | None:
    """The topic id recorded in the partition dir, or None if there is no partition.metadata."""
    path = os.path.join(partition_dir, PARTITION_METADATA_FILE)
    text = read_text_or_none(path)
    if text is None:
        return None
    fields = _colon_fields(text)
    if fields.get("version") != str(PARTITION_METADATA_VERSION) or "topic_id" not in fields:
        raise MetadataFileError(f"Malformed partition metadata file {path}: {fields!r}")
    return uuid_from_kafka_string(fields["topic_id"])


def _colon_fields(text: str) -> dict[str, str]:
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


# --- meta.properties ---

class MetaProperties(NamedTuple):
    cluster_id: str
    node_id: int
    directory_id: uuid.UUID


def write_meta_properties(log_dir: str, meta: MetaProperties) -> None:
    stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
    lines = ["#", f"#{stamp}", f"node.id={meta.node_id}", f"directory.id={uuid_to_kafka_string(meta.directory_id)}",
             f"version={META_PROPERTIES_VERSION}", f"cluster.id={meta.cluster_id}"]
    write_file_atomically(os.path.join(log_dir, META_PROPERTIES_FILE), "\n".join(lines) + "\n")


def read_meta_properties(log_dir: str) -> MetaProperties | None:
    path = os.path.join(log_dir, META_PROPERTIES_FILE)
    text = read_text_or_none(path)
    if text is None:
        return None
    props = _java_properties(text)
    try:
        if props.get("version") != str(META_PROPERTIES_VERSION):
            raise ValueError(f"unsupported version {props.get('version')}")
        directory_id = props.get("directory.id")
        return MetaProperties(props["cluster.id"], int(props["node.id"]),
                              uuid_from_kafka_string(directory_id) if directory_id else uuid.uuid4())
    except (KeyError, ValueError) as exc:
        raise MetadataFileError(f"Malformed {path}: {exc}") from None


def _java_properties(text: str) -> dict[str, str]:
    props = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        key, _, value = stripped.partition("=")
        props[key.strip()] = value.strip()
    return props


# --- .kafka_cleanshutdown ---

def write_clean_shutdown_file(log_dir: str, broker_epoch: int = -1) -> None:
    text = json.dumps({"version": CLEAN_SHUTDOWN_VERSION, "brokerEpoch": broker_epoch}, separators=(",", ":"))
    write_file_atomically(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE), text)


def has_clean_shutdown_file(log_dir: str) -> bool:
    return os.path.exists(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE))


def delete_clean_shutdown_file(log_dir: str) -> None:
    delete_file_if_exists(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE))


def check_topic_id(directory: str, topic_id: uuid.UUID | None, name: str) -> uuid.UUID | None:
    """The topic id of the partition: the one on disk must match the one given; a new one is written."""
    recorded = read_partition_metadata(directory)
    if recorded is not None and topic_id is not None and recorded != topic_id:
        raise InconsistentTopicIdError(f"Tried to assign topic ID {topic_id} to log for topic partition {name}, "
                                       f"but log already contained topic ID {recorded}")
    if recorded is None and topic_id is not None:
        write_partition_metadata(directory, topic_id)
    return topic_id if topic_id is not None else recorded
