"""Coverage-guided fuzz targets (atheris): the frame reader, every request decoder, RecordBatch parsing.

Each target feeds arbitrary bytes to one parser; the only exceptions allowed are the layer's own typed errors.
Anything else (an IndexError, a MemoryError from an unchecked length, a crash) is a finding.
    python -m tests.fuzz.fuzz_targets frames|requests|records -runs=N
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from wirebroker.protocol import records
    from wirebroker.protocol.api_messages import broker_request_class, request_class
    from wirebroker.protocol.errors import KafkaError
    from wirebroker.protocol.frames import FrameError, FrameReader
    from wirebroker.protocol.headers import read_request_header
    from wirebroker.protocol.message import UnsupportedVersion
    from wirebroker.protocol.messages import API_SPECS
    from wirebroker.protocol.primitives import DecodeError

MAX_FRAME = 1 << 20
# every request class, and the flat reader the broker reads Produce with (codegen/flat.py)
REQUEST_CLASSES = {key: {request_class(key), broker_request_class(key)} for key in API_SPECS}


def fuzz_frames(data: bytes) -> None:
    reader = FrameReader(MAX_FRAME)
    fdp = atheris.FuzzedDataProvider(data)
    try:
        while fdp.remaining_bytes():
            reader.receive_data(fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 64)))
            while reader.next_frame() is not None:
                pass
    except FrameError:
        pass


def fuzz_requests(data: bytes) -> None:
    frame = memoryview(bytearray(data))
    try:
        header, position = read_request_header(frame)
        for cls in REQUEST_CLASSES.get(header.api_key, ()):
            try:
                cls.read(frame, position, header.api_version)
            except DecodeError:
                pass
    except (DecodeError, UnsupportedVersion):
        pass


def fuzz_records(data: bytes) -> None:
    buf = memoryview(bytearray(data))
    try:
        for header in records.validate_batches(buf, MAX_FRAME):
            for _ in records.iter_records(buf, 0, header, MAX_FRAME):
                pass
    except KafkaError:
        pass
    try:
        header = records.read_header(buf)
        for _ in records.iter_records(buf, 0, header, MAX_FRAME):
            pass
    except KafkaError:
        pass


TARGETS = {"frames": fuzz_frames, "requests": fuzz_requests, "records": fuzz_records}

if __name__ == "__main__":
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()
