"""The cleaner process: where a cleaner thread's cleanings run, so that they do not take the broker's interpreter.

One interpreter runs one thread at a time (the GIL). A cleaning run in a broker thread, a loop over every record of a
dirty section, takes the interpreter from the network and request handler threads, and producers and consumers of
every topic slow down: bench/compaction_ab.py measured them at 0.59 of their throughput without the cleaner. Kafka's
cleaner threads cost the JVM's request threads nothing of the kind, and a user expects the defaults to behave so.
Each cleaner thread therefore hands its cleanings (compaction.Cleaner.clean: the offset map, the cleaned segments) to
a process of its own and waits; the broker keeps only the cheap steps: choosing the log, taking its picture and
swapping the cleaned segments in under the log's lock (cleaner_jobs.py), the checkpoint and the log line.

  * The process is `python -m wirebroker.log.cleaner_process`, started when its thread first has a log to clean (a
    broker whose compacted logs never need cleaning starts none) and kept until the cleaner shuts down; it holds one
    offset map, its thread's share of log.cleaner.dedupe.buffer.size. It is a fresh interpreter, never a fork of a
    threaded broker, and not multiprocessing's 'spawn', which re-runs the parent's main script in the child (an
    embedding script without a __main__ guard would start a second broker there).
  * Jobs and answers are pickled over a socket pair (multiprocessing.connection's framing): ("done", result),
    ("aborted", why) or ("failed", traceback). An abort (the log is being deleted or paused, the broker shuts down) is
    a message the process looks for between batches; it then deletes its partial output and answers "aborted".
  * The process runs at a lower CPU priority (NICENESS): it takes spare cores, not the broker's share of busy ones.
  * log.cleaner.io.max.bytes.per.second is one throttle for all cleaner processes: its state lives in a small
    shared file mapped by each, under a POSIX record lock (each process is single-threaded).
  * A process whose broker died (kill -9) exits at its next batch without touching a file: the .cleaned files it
    leaves are never read, and are deleted when the broker next loads the log (loader.py) or cleans it.
  * A process that dies (killed, out of memory) fails its cleaning like an unexpected error (the log is marked
    uncleanable until the broker restarts) and is started afresh for the next one.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wirebroker.log.cleaner_offset_map import SkimpyOffsetMap
from wirebroker.log.compaction import (
    Cleaner,
    CleaningJob,
    CleaningResult,
    LogCleaningAbortedError,
)
from wirebroker.log.files import TopicPartition
from wirebroker.log.throttler import NO_THROTTLE, Throttler

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

log = logging.getLogger(__name__)

ABORT = "abort"  # the message that stops the running cleaning
ABORT_POLL_S = 0.1  # how often the waiting thread looks for an abort: the delay a log deletion may wait for
STOP_TIMEOUT_S = 10.0  # how long shutdown waits for a process to finish before killing it
# The cleaner is background work: on a machine whose cores are all busy (the broker's threads, its clients, other
# programs), the scheduler gives the cleaner process the CPU time left over rather than an equal share, so producers
# and consumers keep their throughput. Nice 19 weighs about 1.5% of nice 0 under Linux's scheduler: a saturated
# machine still cleans, slowly; a spare core cleans at full speed. bench/compaction_ab.py on the shared 2-core
# machine: producers at 0.70 of their cleaner-off throughput with nice 10 (load 12-20), 1.01 with nice 19 (load 8-11).
NICENESS = 19
THROTTLE_STATE_BYTES = 16  # two doubles: the throttle window's start (time.monotonic) and the bytes seen in it


class CleanerProcessError(Exception):
    """A cleaning failed in the cleaner process (its traceback in the message), or the process died."""


class SharedThrottle:
    """The state of log.cleaner.io.max.bytes.per.second's throttle in an unlinked file that every cleaner process
    maps (the file descriptor is passed to each)."""

    def __init__(self, rate: float, check_interval_ms: int = 300) -> None:
        self.rate = rate
        self.check_interval_ms = check_interval_ms  # Kafka's LogCleaner checks every 300 ms
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the cleaner
        self.fd = self._file.fileno()
        os.ftruncate(self.fd, THROTTLE_STATE_BYTES)
        _mapped_state(self.fd)[0] = time.monotonic()


class _RecordLock:
    """fcntl.lockf over a file: excludes other processes (not other threads: each cleaner process has one)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_UN)


def _mapped_state(fd: int) -> memoryview:
    return memoryview(mmap.mmap(fd, THROTTLE_STATE_BYTES)).cast("d")


class CleanerProcess:
    """A cleaner thread's process (started at its first cleaning)."""

    def __init__(self, cleaner_id: int, offset_map_memory: int, load_factor: float,
                 throttle: Callable[[], SharedThrottle | None]) -> None:
        """`throttle` gives the shared throttle when the process starts."""
        self.cleaner_id = cleaner_id
        self._offset_map_memory = offset_map_memory
        self._load_factor = load_factor
        self._throttle = throttle
        self._process: subprocess.Popen | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        """The process's id, None before its first cleaning."""
        return self._process.pid if self._process is not None else None

    def run(self, job: CleaningJob, is_aborted: Callable[[], bool]) -> CleaningResult:
        """Clean in the process; raises LogCleaningAbortedError when aborted (asked by `is_aborted`, or the log
        changed under the cleaning) and CleanerProcessError when it failed."""
        conn = self._started()
        try:
            conn.send(job)
            abort_sent = False
            while not conn.poll(ABORT_POLL_S):
                if not abort_sent and is_aborted():
                    conn.send(ABORT)
                    abort_sent = True
            kind, answer = conn.recv()
        except (EOFError, OSError) as exc:
            code = self._reap()
            raise CleanerProcessError(f"The log cleaner process {self.cleaner_id} exited (code {code}) while "
                                      f"cleaning {job.log_name}") from exc
        if kind == "aborted":
            raise LogCleaningAbortedError(answer)
        if kind == "failed":
            raise CleanerProcessError(answer)
        return answer

    def _started(self) -> Connection:
        if self._process is not None and self._process.poll() is not None:
            log.warning("Log cleaner process %d exited (code %s) between cleanings; starting another",
                        self.cleaner_id, self._process.returncode)
            self._reap()
        if self._conn is None:
            # multiprocessing is imported with the first cleaner process only.
            from multiprocessing.connection import Connection
            ours, theirs = socket.socketpair()
            throttle = self._throttle()
            args = [str(theirs.fileno()), str(self.cleaner_id), str(self._offset_map_memory), str(self._load_factor),
                    str(os.getpid()), str(throttle.fd if throttle else -1), repr(throttle.rate if throttle else 0.0),
                    str(throttle.check_interval_ms if throttle else 0)]
            pass_fds = (theirs.fileno(), throttle.fd) if throttle else (theirs.fileno(),)
            self._process = subprocess.Popen([sys.executable, "-m", __name__, *args], pass_fds=pass_fds,
                                             stdin=subprocess.DEVNULL, env=_child_environment())
            theirs.close()
            self._conn = Connection(ours.detach())
            log.info("Started log cleaner process %d (pid %d)", self.cleaner_id, self._process.pid)
        return self._conn

    def _reap(self) -> int | None:
        """Forget a dead process (the next cleaning starts another); its exit code."""
        process, self._process = self._process, None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if process is None:
            return None
        try:
            return process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def stop(self) -> None:
        """Ask the process to exit (killed if it does not within STOP_TIMEOUT_S)."""
        if self._conn is None:
            return
        try:
            self._conn.send(None)
        except OSError:
            pass  # already gone
        self._reap()


def _child_environment() -> dict[str, str]:
    """The broker's environment, with this wirebroker first on the path (the broker may have been started with a
    sys.path of its own)."""
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds wirebroker/
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}


def serve(conn: Connection, cleaner_id: int, offset_map_memory: int, load_factor: float, broker_pid: int,
          throttler: Throttler) -> None:
    """The process's loop: clean each job received and answer; stop at None or when the broker is gone. The
    throttle's sleeps end early when a message (an abort) arrives."""
    throttler.sleep = conn.poll

    def check_done(tp: TopicPartition) -> None:
        if os.getppid() != broker_pid:
            os._exit(1)  # the broker died: a new one may own these files now, touch nothing
        while conn.poll():
            if conn.recv() == ABORT:
                raise LogCleaningAbortedError(f"The cleaning of {tp} was aborted")

    cleaner = Cleaner(cleaner_id, SkimpyOffsetMap(offset_map_memory), load_factor, throttler, check_done)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        if job == ABORT:
            continue  # it came after the cleaning it was for had finished
        try:
            answer: tuple[str, Any] = ("done", cleaner.clean(job))
        except LogCleaningAbortedError as exc:
            answer = ("aborted", str(exc))
        except Exception:  # noqa: BLE001 - any failure goes back to the broker, which marks the log uncleanable
            answer = ("failed", f"Cleaning {job.log_name} failed in the log cleaner process:\n{traceback.format_exc()}")
        conn.send(answer)


def main(argv: list[str]) -> None:
    """python -m wirebroker.log.cleaner_process SOCKET_FD CLEANER_ID MAP_BYTES LOAD_FACTOR BROKER_PID THROTTLE_FD RATE
    CHECK_INTERVAL_MS"""
    from multiprocessing.connection import Connection
    os.nice(NICENESS)
    fd, cleaner_id, memory, load_factor, broker_pid, throttle_fd, rate, check_interval_ms = argv
    if int(throttle_fd) >= 0:
        throttle_fd_ = int(throttle_fd)
        throttler = Throttler(float(rate), int(check_interval_ms), _RecordLock(throttle_fd_),
                              _mapped_state(throttle_fd_))
    else:
        throttler = Throttler(NO_THROTTLE)
    serve(Connection(int(fd)), int(cleaner_id), int(memory), float(load_factor), int(broker_pid), throttler)


if __name__ == "__main__":
    main(sys.argv[1:])
