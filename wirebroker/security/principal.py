"""Principals (Kafka's KafkaPrincipal, "User:alice") and the TLS distinguished-name mapping (SslPrincipalMapper).

`ssl.principal.mapping.rules` is Kafka's list of `RULE:pattern/replacement/[LU]` and `DEFAULT`, tried in order:
the first rule whose pattern matches the whole DN gives the name (replacement with Java's `$1` back-references,
then lower- or upper-cased with L/U); DEFAULT gives the DN itself; no rule matching refuses the client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

USER_TYPE = "User"
ANONYMOUS = "User:ANONYMOUS"  # Kafka's KafkaPrincipal.ANONYMOUS: PLAINTEXT, and SSL without a client certificate


def user_principal(name: str) -> str:
    return f"{USER_TYPE}:{name}"


class NoMatchingRuleError(ValueError):
    """No ssl.principal.mapping.rules rule applies to a client certificate's DN."""


# Kafka's SslPrincipalMapper.RULE_PARSER: DEFAULT, or RULE:pattern/replacement/[LU], separated by commas or newlines.
_RULE_PARSER = re.compile(r"((DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?))\s*([,\n]\s*|$)")


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""  # "L", "U" or ""

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        name = self.pattern.sub(self.replacement, dn)
        return name.lower() if self.case == "L" else name.upper() if self.case == "U" else name


class SslPrincipalMapper:
    def __init__(self, rules: str = "DEFAULT") -> None:
        self._rules = _parse_rules(rules)

    def apply(self, dn: str) -> str:
        """The principal name for a certificate's DN (RFC 2253 form, as Java's X500Principal.getName())."""
        for rule in self._rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        raise NoMatchingRuleError(f"No rules apply to {dn}, rules {[r.pattern and r.pattern.pattern for r in self._rules]}")


def _parse_rules(text: str) -> list[_Rule]:
    rules: list[_Rule] = []
    text = text.strip()
    position = 0
    while position < len(text):
        match = _RULE_PARSER.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"ssl.principal.mapping.rules: invalid rule at '{text[position:]}'")
        if match.group(8):  # neither DEFAULT nor RULE:...
            raise ValueError(f"ssl.principal.mapping.rules: invalid rule '{match.group(8)}'")
        if match.group(2):
            rules.append(_Rule(None))
        elif match.group(3) is not None:
            replacement = re.sub(r"\$(\d+)", r"\\\1", match.group(5))  # Java's $1 is Python's \1
            rules.append(_Rule(re.compile(match.group(3)), replacement, match.group(7)))
        position = match.end()
    return rules or [_Rule(None)]
