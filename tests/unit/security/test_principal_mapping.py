"""ssl.principal.mapping.rules as Kafka's SslPrincipalMapper applies them (examples from Kafka's documentation)."""

from __future__ import annotations

import pytest

from wirebroker.security.principal import NoMatchingRuleError, SslPrincipalMapper

RULES = ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
         "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
         "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U")


@pytest.mark.parametrize(("dn", "name"), [
    ("CN=kafka1,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "kafka1"),
    ("CN=duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US", "duke@javasoft"),
    ("CN=Duke,OU=Sales", "DUKE"),
])
def test_the_first_matching_rule_names_the_principal(dn, name):
    assert SslPrincipalMapper(RULES).apply(dn) == name


def test_default_keeps_the_dn_and_no_matching_rule_refuses():
    assert SslPrincipalMapper("DEFAULT").apply("CN=a,O=b") == "CN=a,O=b"
    with pytest.raises(NoMatchingRuleError):
        SslPrincipalMapper("RULE:^CN=(x)$/$1/").apply("CN=y")


def test_a_malformed_rule_is_refused():
    with pytest.raises(ValueError):
        SslPrincipalMapper("RULE:nonsense")
