"""Issue 14 item 5 on a real broker: DescribeClientQuotas / AlterClientQuotas (raw requests and Kafka's own
kafka-configs.sh), their validation errors as Kafka gives them, and quotas kept across a restart."""

from __future__ import annotations

import pytest

from tests.integration.raw_client import RawClient
from tests.integration.test_authorizer import OP, cluster, secured  # noqa: F401  (secured: a fixture)
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_client_quotas import AlterClientQuotasRequest
from wirebroker.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
)

DESCRIBE, ALTER = 48, 49
EXACT, DEFAULT, SPECIFIED = 0, 1, 2
_Entry, _Entity, _Op = (AlterClientQuotasRequest.EntryData, AlterClientQuotasRequest.EntityData,
                        AlterClientQuotasRequest.OpData)
_Component = DescribeClientQuotasRequest.ComponentData


def alteration(entity: dict, **ops) -> _Entry:
    return _Entry(entity=[_Entity(entity_type=t, entity_name=n) for t, n in entity.items()],
                  ops=[_Op(key=k, value=v or 0.0, remove=v is None) for k, v in ops.items()])


def alter(client: RawClient, *entries: _Entry, version: int = 1, validate_only: bool = False) -> list:
    response = client.request(ALTER, version, entries=list(entries), validate_only=validate_only)
    return [(e.error_code, e.error_message) for e in response.entries]


def describe(client: RawClient, *components: tuple, strict: bool = False, version: int = 1):
    response = client.request(DESCRIBE, version, strict=strict, components=[
        _Component(entity_type=t, match_type=m, match=name) for t, m, name in components])
    if response.error_code:
        return response.error_code, response.error_message
    return {tuple((e.entity_type, e.entity_name) for e in entry.entity): {v.key: v.value for v in entry.values}
            for entry in response.entries}


@pytest.mark.parametrize("version", [0, 1])
def test_alter_then_describe_with_kafkas_match_rules(broker, version):
    with RawClient(broker.bootstrap) as client:
        assert alter(client, alteration({"user": "alice"}, producer_byte_rate=1024.0),
                     alteration({"user": "alice", "client-id": "app"}, consumer_byte_rate=2048.0,
                                request_percentage=50.5),
                     alteration({"client-id": None}, producer_byte_rate=4096.0),
                     alteration({"ip": "127.0.0.1"}, connection_creation_rate=10.0),
                     version=version) == [(0, None)] * 4
        everything = describe(client, version=version)
        assert len(everything) == 4
        assert describe(client, ("user", EXACT, "alice"), version=version) == {
            (("user", "alice"),): {"producer_byte_rate": 1024.0},
            (("client-id", "app"), ("user", "alice")): {"consumer_byte_rate": 2048.0, "request_percentage": 50.5}}
        assert describe(client, ("user", EXACT, "alice"), strict=True) == {
            (("user", "alice"),): {"producer_byte_rate": 1024.0}}
        assert describe(client, ("client-id", DEFAULT, None)) == {
            (("client-id", None),): {"producer_byte_rate": 4096.0}}
        assert list(describe(client, ("client-id", SPECIFIED, None))) == [
            (("client-id", "app"), ("user", "alice")), (("client-id", None),)]
        assert describe(client, ("ip", SPECIFIED, None)) == {(("ip", "127.0.0.1"),): {"connection_creation_rate": 10.0}}
        # removing the last key removes the entity; removing a key never set is no error
        assert alter(client, alteration({"user": "alice"}, producer_byte_rate=None, consumer_byte_rate=None)) == [
            (0, None)]
        assert describe(client, ("user", EXACT, "alice"), strict=True) == {}
        # validate_only answers and changes nothing
        assert alter(client, alteration({"user": "bob"}, producer_byte_rate=1.0), validate_only=True) == [(0, None)]
        assert describe(client, ("user", EXACT, "bob")) == {}


def test_refusals_are_kafkas(broker):
    """The messages are Apache Kafka 4.3.1's for the same requests (one result per entity, as its map gives)."""
    invalid = ErrorCode.INVALID_REQUEST
    with RawClient(broker.bootstrap) as client:
        assert sorted(alter(client,
                            alteration({}, producer_byte_rate=1.0),
                            alteration({"group": "g"}, producer_byte_rate=1.0),
                            alteration({"user": ""}, producer_byte_rate=1.0),
                            alteration({"user": "u", "ip": "127.0.0.1"}, producer_byte_rate=1.0),
                            alteration({"user": "u"}, producer_byte_rate=1.5),
                            alteration({"user": "v"}, connection_creation_rate=1.0),
                            alteration({"ip": "127.0.0.1"}, producer_byte_rate=1.0),
                            alteration({"ip": "no-such-host.invalid"}, connection_creation_rate=1.0),
                            alteration({"client-id": "c"}, request_percentage=12.5),
                            alteration({"client-id": "c"}, request_percentage=10.0),
                            alteration({"ip": "127.0.0.2"}, connection_creation_rate=2.5),
                            alteration({"ip": "127.0.0.3"}, connection_creation_rate=0.0),
                            alteration({"ip": "127.0.0.5"}, connection_creation_rate=3e9),
                            alteration({"user": "w"}, producer_byte_rate=-1.0),
                            alteration({"user": "x"}, request_percentage=0.0),
                            alteration({"user": "y"}, producer_byte_rate=1e20),
                            alteration({"user": "z"}, **{"SCRAM-SHA-256": 1.0}),
                            alteration({"client-id": "fine"}, controller_mutation_rate=0.5)), key=str) == sorted([
            (invalid, "Invalid empty client quota entity"),
            (invalid, "Unhandled client quota entity type: group"),
            (invalid, "Empty user not supported"),
            (invalid, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
            (invalid, "producer_byte_rate cannot be a fractional value."),
            (invalid, "Invalid configuration key connection_creation_rate"),
            (invalid, "Invalid configuration key producer_byte_rate"),
            (invalid, "no-such-host.invalid is not a valid IP or resolvable host."),
            (invalid, "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c})"),
            (invalid, "connection_creation_rate cannot be a fractional value."),
            (invalid, "Quota connection_creation_rate must be greater than 0"),
            (invalid, "Proposed value for connection_creation_rate is too large for an INT."),
            (invalid, "Quota producer_byte_rate must be greater than 0"),
            (invalid, "Quota request_percentage must be greater than 0"),
            (invalid, "Proposed value for producer_byte_rate is too large for a LONG."),
            (invalid, "Invalid configuration key SCRAM-SHA-256"),
            (0, None),
        ], key=str)
        assert describe(client) == {(("client-id", "fine"),): {"controller_mutation_rate": 0.5}}  # the valid one
        # a type named twice in one entity keeps its last name, as Kafka's map does
        entry = alteration({"user": "k"}, producer_byte_rate=1.0)
        entry.entity.append(AlterClientQuotasRequest.EntityData(entity_type="user", entity_name="l"))
        assert alter(client, entry) == [(0, None)]
        assert describe(client, ("user", SPECIFIED, None)) == {(("user", "l"),): {"producer_byte_rate": 1.0}}
        assert describe(client, ("user", EXACT, None)) == (
            invalid, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
        assert describe(client, ("user", DEFAULT, "x")) == (
            invalid, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
        assert describe(client, ("user", SPECIFIED, None), ("user", SPECIFIED, None)) == (
            invalid, "Entity type user cannot appear more than once in the filter.")
        assert describe(client, ("ip", SPECIFIED, None), ("user", SPECIFIED, None)) == (
            invalid, ("Invalid entity filter component combination. IP filter component should not be used with "
                     "user or clientId filter component."))
        assert describe(client, ("group", SPECIFIED, None)) == (
            ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type group")
        assert describe(client, ("user", 7, None)) == (invalid, "Unknown match type 7")


def test_quotas_survive_a_restart(broker):
    with RawClient(broker.bootstrap) as client:
        assert alter(client, alteration({"user": None, "client-id": None}, producer_byte_rate=10.0)) == [(0, None)]
    broker.restart()
    with RawClient(broker.bootstrap) as client:
        assert describe(client) == {(("client-id", None), ("user", None)): {"producer_byte_rate": 10.0}}


def test_kafka_configs_alters_and_describes_client_quotas(broker):
    """Kafka 4.3.1's ConfigCommand (kafka-configs.sh) against wirebroker."""
    from compat_tests.reference_kafka import TOOLS, install_jars, run_tool

    jars = install_jars()

    def configs(*args: str) -> str:
        done = run_tool(jars, TOOLS["configs"], ["--bootstrap-server", broker.bootstrap, *args])
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    out = configs("--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients",
                  "--entity-name", "app", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152")
    assert "Completed updating config for user alice." in out, out
    configs("--alter", "--entity-type", "users", "--entity-default", "--add-config", "request_percentage=200")
    out = configs("--describe", "--entity-type", "users")
    assert "Quota configs for the default user-principal are request_percentage=200.0" in out, out
    out = configs("--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients")
    assert ("Quota configs for user-principal 'alice', client-id 'app' are consumer_byte_rate=2097152.0, "
            "producer_byte_rate=1048576.0") in out, out
    configs("--alter", "--entity-type", "ips", "--entity-name", "127.0.0.1", "--add-config",
            "connection_creation_rate=100")
    out = configs("--describe", "--entity-type", "ips")
    assert "Quota configs for ip '127.0.0.1' are connection_creation_rate=100.0" in out, out


def test_an_authorizer_asks_describe_configs_and_alter_configs_on_the_cluster(secured):  # noqa: F811
    refused = secured()
    with RawClient(refused.bootstrap) as client:
        assert alter(client, alteration({"user": "u"}, producer_byte_rate=1.0),
                     alteration({"client-id": "c"}, producer_byte_rate=1.0)) == [
            (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)] * 2
        assert describe(client)[0] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    allowed = secured(cluster(OP.ALTER_CONFIGS), cluster(OP.DESCRIBE_CONFIGS))
    with RawClient(allowed.bootstrap) as client:
        assert alter(client, alteration({"user": "u"}, producer_byte_rate=1.0)) == [(0, None)]
        assert describe(client) == {(("user", "u"),): {"producer_byte_rate": 1.0}}
