"""What `wirebroker` prints when it is ready, for the person who started it: one line per listener (its name,
security protocol and address), one with what start-up loaded from the log directories, and one naming the Apache
Kafka release it emulates, if any. They follow the command's first line ("... ready in N ms"), which tools and tests
wait for.
"""

from __future__ import annotations

from wirebroker.apis.emulation import read_release, release_versions
from wirebroker.config import EMULATE_KEY
from wirebroker.server.broker import Broker


def startup_lines(broker: Broker) -> list[str]:
    config = broker.config
    lines = [f"listener {listener.name} ({config.security_protocols[listener.name]}) on "
             f"{listener.host or '*'}:{listener.port}" for listener in broker.bound_listeners()]
    stats = broker.log_manager.load_stats
    recovered = " (recovered after an unclean shutdown)" if stats.unclean_dirs and stats.logs else ""
    lines.append(f"loaded {stats.logs} partitions of {len(stats.topics)} topics ({stats.segments} segments) in "
                 f"{stats.seconds * 1000:.0f} ms{recovered}; groups and transactions load in the background "
                 f"(logged when done)")
    if config[EMULATE_KEY] is not None:
        table = broker.dispatcher.table
        release = release_versions(read_release(config[EMULATE_KEY]))
        narrowed = sum(versions != release[key] for key, versions in table.advertised.items())
        lines.append(f"emulating Apache Kafka {table.release}: {len(table.advertised)} of its {len(release)} APIs "
                     f"advertised ({len(release) - len(table.advertised)} not served here), {narrowed} of them at "
                     f"fewer versions than it serves")
    return lines
