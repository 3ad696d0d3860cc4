"""Reading a JAAS configuration as Kafka's `sasl.jaas.config` holds it (Kafka's JaasConfig parser, one module):

    org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret"
        user_admin="admin-secret" user_alice="alice-secret";
"""

from __future__ import annotations

import re
import shlex

_ENTRY = re.compile(r"^\s*(\S+)\s+(required|requisite|sufficient|optional)\b(.*?);?\s*$", re.DOTALL)


class JaasConfigError(ValueError):
    pass


def login_module_options(text: str) -> tuple[str, dict[str, str]]:
    """The login module's class name and its options (key=value, values quoted or bare)."""
    match = _ENTRY.match(text)
    if match is None:
        raise JaasConfigError("sasl.jaas.config: expected '<LoginModule class> required key=\"value\" ... ;'")
    options: dict[str, str] = {}
    try:
        tokens = shlex.split(match.group(3).rstrip().rstrip(";"), posix=True)
    except ValueError as exc:
        raise JaasConfigError(f"sasl.jaas.config: {exc}") from None
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise JaasConfigError(f"sasl.jaas.config: option '{token}' is not of the form key=\"value\"")
        options[key] = value
    return match.group(1), options
