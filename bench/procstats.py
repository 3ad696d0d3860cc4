"""What a broker process costs, read from Linux's /proc: CPU seconds, resident memory, and a sampler for peaks.

/proc/<pid>/stat fields 14 and 15 (utime, stime) are the process's user and system time summed over all of its
threads, in clock ticks (SC_CLK_TCK, usually 100 per second). /proc/<pid>/status holds VmRSS (resident now) and
VmHWM (the resident high-water mark since the process started), both in kB. The load generator's CPU comes from
getrusage: this process and the children it has waited for.
"""

from __future__ import annotations

import os
import resource
import threading
from pathlib import Path

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# proc(5) numbers the stat fields from 1: pid, (comm), state, ...; utime is 14 and stime 15.
STATE_FIELD, UTIME_FIELD, STIME_FIELD = 3, 14, 15
SAMPLE_INTERVAL_S = 0.25
KIB_PER_MIB = 1024


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds the process has used so far (all threads)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name may hold spaces and parentheses: the fields proper start after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    utime, stime = int(fields[UTIME_FIELD - STATE_FIELD]), int(fields[STIME_FIELD - STATE_FIELD])
    return (utime + stime) / CLOCK_TICKS_PER_S


def load_cpu_seconds() -> float:
    """CPU seconds of this process plus its waited-for children so far: the load tools it ran to completion."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def memory_mib(pid: int) -> dict[str, float]:
    """{"rss_mib": VmRSS, "hwm_mib": VmHWM} of the process, in MiB."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[f"{key[2:].lower()}_mib"] = int(rest.split()[0]) / KIB_PER_MIB
    return values


class PeakRssSampler:
    """Samples VmRSS in a background thread while in a `with` block; .peak_mib is the largest value seen."""

    def __init__(self, pid: int, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self._pid = pid
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-rss-sampler", daemon=True)
        self.peak_mib = 0.0

    def _run(self) -> None:
        while True:
            try:
                self.peak_mib = max(self.peak_mib, memory_mib(self._pid)["rss_mib"])
            except (OSError, KeyError):
                return  # the process is gone
            if self._stop.wait(self._interval_s):
                return

    def __enter__(self) -> PeakRssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
