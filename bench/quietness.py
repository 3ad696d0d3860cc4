"""How quiet the machine was: the share of its cores that processes other than the benchmark's own used.

A benchmark on a shared machine measures whatever the broker gets of the cores; when other work takes some of them
the figures of one broker are not comparable with the other's, taken at another time. So before and during each
workload the suite reads:

- /proc/stat, first line: the ticks every CPU spent in each state since boot (user nice system idle iowait irq
  softirq steal ...; guest time is already inside user). Busy = all but idle and iowait; total = all of them.
- /proc/<pid>/stat of the benchmark's own process tree: this process (the ping workloads' load and the harness),
  the broker under test and the load generator's JVMs, which are all its descendants. Fields 14-17 are utime,
  stime, cutime and cstime: a child's ticks move into its parent's cutime/cstime when the parent reaps it, so the
  sum over the live tree keeps counting a load tool that has finished.

Between two readings, others' share of the cores = (busy ticks - own ticks) / total ticks: 0.25 on 2 cores means
other processes kept half a core busy. A window is quiet when that share is at most the limit (DEFAULT_MAX_OTHERS,
`python -m bench --max-others`). This module only reads and accounts; bench.runner decides what to retry.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
# Ten per cent of the cores: on 2 cores, others may keep a fifth of one core busy (a shell, a cron job) but no more.
DEFAULT_MAX_OTHERS = 0.10
# /proc/stat's cpu line after the label: user nice system idle iowait irq softirq steal guest guest_nice.
IDLE_COLUMNS = (3, 4)  # idle, iowait
STATE_COLUMNS = 8  # guest and guest_nice are counted inside user and nice already
# proc(5) numbers the stat fields from 1 (pid, (comm), state, ppid, ...); utime..cstime are 14-17.
STATE_FIELD, PPID_FIELD, UTIME_FIELD, CSTIME_FIELD = 3, 4, 14, 17
SAMPLE_INTERVAL_S = 0.5


@dataclass(frozen=True)
class Sample:
    """One reading: the machine's busy and total CPU ticks, and the ticks of the benchmark's own process tree."""
    busy_ticks: int
    total_ticks: int
    own_ticks: int


@dataclass(frozen=True)
class Quietness:
    """Others' share of the cores over a window, and whether that is within the limit."""
    others_share: float  # of all the cores, 0..1
    own_share: float
    window_ticks: int  # the window's total ticks (all CPUs), to tell an empty window from a quiet one
    max_others: float

    @property
    def quiet(self) -> bool:
        return self.others_share <= self.max_others

    def as_dict(self) -> dict[str, float | bool]:
        return {"others_share": round(self.others_share, 4), "own_share": round(self.own_share, 4),
                "max_others": self.max_others, "quiet": self.quiet}


def system_ticks(proc: Path = PROC) -> tuple[int, int]:
    """(busy, total) ticks of all CPUs since boot, from /proc/stat's aggregate cpu line."""
    with open(proc / "stat") as stat:
        columns = [int(x) for x in stat.readline().split()[1:1 + STATE_COLUMNS]]
    idle = sum(columns[i] for i in IDLE_COLUMNS)
    return sum(columns) - idle, sum(columns)


def _stat_fields(proc: Path, pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat from `state` on (the command name may hold spaces), None if it is gone."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def tree_ticks(roots: tuple[int, ...], proc: Path = PROC) -> int:
    """utime+stime+cutime+cstime summed over the roots and every live descendant of them."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(proc, int(entry.name))
        if fields is None:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[PPID_FIELD - STATE_FIELD])
        ticks[pid] = sum(int(x) for x in fields[UTIME_FIELD - STATE_FIELD:CSTIME_FIELD - STATE_FIELD + 1])
    own = {r for r in roots if r in ticks}
    grew = True
    while grew:  # the tree is shallow (harness -> broker / JVM -> their children): a few passes
        grew = False
        for pid, ppid in parents.items():
            if ppid in own and pid not in own:
                own.add(pid)
                grew = True
    return sum(ticks[pid] for pid in own)


def sample(roots: tuple[int, ...], proc: Path = PROC) -> Sample:
    busy, total = system_ticks(proc)
    return Sample(busy, total, tree_ticks(roots, proc))


def between(first: Sample, last: Sample, max_others: float = DEFAULT_MAX_OTHERS) -> Quietness:
    """Others' and the benchmark's own share of the cores from `first` to `last`."""
    total = last.total_ticks - first.total_ticks
    busy = last.busy_ticks - first.busy_ticks
    own = last.own_ticks - first.own_ticks
    if total <= 0:
        return Quietness(0.0, 0.0, 0, max_others)
    # Own ticks and /proc/stat are sampled a moment apart, so own may overshoot busy by a tick: never below 0.
    return Quietness(max(0, busy - own) / total, own / total, total, max_others)


class QuietnessSampler:
    """Reads the machine and the benchmark's tree every SAMPLE_INTERVAL_S while in a `with` block; .result is the
    whole window's Quietness and .worst the busiest interval's share of others."""

    def __init__(self, roots: tuple[int, ...], max_others: float = DEFAULT_MAX_OTHERS,
                 interval_s: float = SAMPLE_INTERVAL_S, proc: Path = PROC) -> None:
        self._roots, self._max_others, self._interval_s, self._proc = roots, max_others, interval_s, proc
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-quietness", daemon=True)
        self._first: Sample | None = None
        self.result: Quietness | None = None
        self.worst = 0.0

    def _run(self) -> None:
        previous = self._first
        while not self._stop.wait(self._interval_s):
            current = sample(self._roots, self._proc)
            self.worst = max(self.worst, between(previous, current, self._max_others).others_share)
            previous = current

    def __enter__(self) -> QuietnessSampler:
        self._first = sample(self._roots, self._proc)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self.result = between(self._first, sample(self._roots, self._proc), self._max_others)


@dataclass(frozen=True)
class Gate:
    """When a workload's run counts: others' share at most max_others in the before_s seconds before it and while it
    runs. A busy run is tried again after wait_s, up to `retries` more times; the last try runs even when the
    machine is busy before it, so that every workload has figures, marked not comparable."""
    max_others: float = DEFAULT_MAX_OTHERS
    retries: int = 2
    wait_s: float = 10.0
    before_s: float = 2.0

    def check_before(self, roots: tuple[int, ...]) -> Quietness:
        """The machine over the next before_s seconds, with nothing of ours running but the idle broker."""
        with QuietnessSampler(roots, self.max_others) as sampler:
            self._sleep(self.before_s)
        assert sampler.result is not None
        return sampler.result

    @staticmethod
    def _sleep(seconds: float) -> None:
        threading.Event().wait(seconds)
