"""Base classes of the generated message classes: equality, repr, and version-checked encode/decode.

A generated class lists its fields in `__slots__` and carries `_READERS`/`_WRITERS`, tuples indexed by version
of the straight-line functions the generator wrote (None below the first valid version).
"""

from __future__ import annotations

import struct
from typing import Any, Callable, ClassVar, TypeVar

from wirebroker.protocol.primitives import DecodeError, Output

M = TypeVar("M", bound="Message")
S = TypeVar("S", bound="Struct")


class _Unset:
    """A constructor argument not given (None can be a value: null, for nullable fields)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


class Struct:
    """A generated struct: fields in `__slots__`, compared by value.

    No __getattr__ here, nor in any subclass: CPython specialises slot reads only for types without one, and every
    handler and encoder reads these attributes on its hot path."""

    __slots__ = ()
    _VALUE_TYPE: ClassVar[type[Struct]]  # the generated class whose values these are (a shared default's parent)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_VALUE_TYPE" not in cls.__dict__:
            cls._VALUE_TYPE = cls

    def __eq__(self, other: object) -> bool:
        kind = self._VALUE_TYPE
        return getattr(other, "_VALUE_TYPE", None) is kind and all(
            getattr(self, s) == getattr(other, s) for s in kind.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, like Kafka's generated data classes

    def __repr__(self) -> str:
        kind = self._VALUE_TYPE
        fields = ", ".join(f"{s}={getattr(self, s)!r}" for s in kind.__slots__ if s != "unknown_tagged_fields")
        return f"{kind.__qualname__}({fields})"


class _SharedDefault:
    """Makes a struct read-only: see `shared_default`."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__qualname__} is a shared default value: assign a new struct to the "
                             f"field instead of changing this one")

    def __copy__(self) -> Any:  # read-only: a copy may be the same object, as for a tuple
        return self

    def __deepcopy__(self, memo: dict) -> Any:
        return self

    def __reduce__(self) -> tuple:  # unpickled as a fresh default of the generated class
        return self._VALUE_TYPE, ()


def shared_default(cls: type[S]) -> S:
    """The one read-only instance of `cls` with every field at its default, which the fields whose default it is
    share (Fetch's DivergingEpoch, CurrentLeader, SnapshotId ... in every partition that does not carry them), so
    that neither decoding nor constructing builds a fresh struct per element. It compares equal to `cls()`; setting
    one of its fields raises AttributeError."""
    frozen = type(cls.__name__, (_SharedDefault, cls), {"__slots__": (), "__qualname__": cls.__qualname__,
                                                         "_VALUE_TYPE": cls})
    value = cls()
    object.__setattr__(value, "__class__", frozen)
    return value


class UnsupportedVersion(ValueError):
    """A message asked for at a version its schema does not define."""


class Message(Struct):
    """A top-level generated message (request, response, header or data record) covering all its versions."""

    __slots__ = ()
    API_KEY: ClassVar[int | None] = None
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]
    _READERS: ClassVar[tuple[Callable[[Any, int], tuple[Any, int]] | None, ...]]
    _WRITERS: ClassVar[tuple[Callable[[Any, Output], None] | None, ...]]

    @classmethod
    def check_version(cls, version: int) -> None:
        if not cls.MIN_VERSION <= version <= cls.MAX_VERSION:
            raise UnsupportedVersion(
                f"{cls.__name__} has versions {cls.MIN_VERSION}-{cls.MAX_VERSION}, not {version}"
            )

    @classmethod
    def read(cls: type[M], buf: bytes | bytearray | memoryview, pos: int, version: int) -> tuple[M, int]:
        """Decode from `buf` at `pos`; any malformed input raises DecodeError, never anything else."""
        if not cls.MIN_VERSION <= version <= cls.MAX_VERSION:  # the check inlined: this is the broker's hot path
            cls.check_version(version)
        try:
            return cls._READERS[version](buf, pos)  # type: ignore[misc]
        except DecodeError:
            raise
        except (struct.error, IndexError, UnicodeDecodeError, ValueError, OverflowError) as exc:
            raise DecodeError(f"{cls.__name__} v{version}: {exc}") from None

    @classmethod
    def decode(cls: type[M], data: bytes | bytearray | memoryview, version: int) -> M:
        # read() inlined: decoding a whole message is the hot path, and two calls cost as much as a small struct.
        if not cls.MIN_VERSION <= version <= cls.MAX_VERSION:
            cls.check_version(version)
        try:
            return cls._READERS[version](data, 0)[0]  # bytes as they are: a reader views its records in them
        except DecodeError:
            raise
        except (struct.error, IndexError, UnicodeDecodeError, ValueError, OverflowError) as exc:
            raise DecodeError(f"{cls.__name__} v{version}: {exc}") from None

    def write(self, out: Output, version: int) -> None:
        if not self.MIN_VERSION <= version <= self.MAX_VERSION:
            self.check_version(version)
        self._WRITERS[version](self, out)  # type: ignore[misc]

    def encode(self, version: int) -> bytes:
        if not self.MIN_VERSION <= version <= self.MAX_VERSION:  # write() inlined, as in decode()
            self.check_version(version)
        out = Output()
        self._WRITERS[version](self, out)  # type: ignore[misc]
        parts = out.parts()
        return parts[0] if len(parts) == 1 else b"".join(parts)
