"""Security without I/O: TLS contexts, principals, SASL mechanisms (PLAIN, SCRAM, OAUTHBEARER), SCRAM credentials.

Nothing here is imported by a broker whose listeners are all PLAINTEXT: network/channel_security.py loads it only
for a listener that needs it, so `ssl`, `cryptography` and `jwt` stay out of a plain broker's start-up.
"""
