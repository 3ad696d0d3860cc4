"""Flat readers: a request read into just what the broker's handler uses, one tuple per innermost array element.

The broker's Produce handler needs, per partition, the topic (its name, or its id from v13), the partition index and
the records; building a TopicProduceData and a PartitionProduceData object per partition for that was half the cost
of reading a small request (bench/ANALYSIS.md section 8). A flat reader reads the same bytes with the same checks as
the full reader, but keeps the fields of the flattened structs in locals and appends one tuple per innermost element
(the outer structs' fields, then the element's, in schema order, those present at the version) to one list. The
message's own fields are attributes of a `Flat<Message>` object, as in the full one. Unknown tagged fields are
skipped; a flattened struct with known tagged fields is not supported (none on the path the broker uses).

The full reader stays what clients, tests and tools use; the broker's dispatcher reads with the flat one where the
registry names it (ApiSpec.broker_request), so the handler has one form to read.
"""

from __future__ import annotations

from wirebroker.protocol.codegen.emit import (
    ModuleState,
    StructCodec,
    Temps,
    _indent,
    _with_view,
    default_expr,
)
from wirebroker.protocol.codegen.schema import Field, Message, Struct

# message -> the chain of array-of-struct fields flattened, outermost first
FLAT_READERS: dict[str, tuple[str, ...]] = {
    "ProduceRequest": ("TopicData", "PartitionData"),  # apis/produce.py: (topic, index, records) per partition
}


def flat_name(message: Message) -> str:
    return f"Flat{message.name}"


def flat_fields(message: Message) -> tuple[list[Field], list[Field]]:
    """(the message's own fields the flat object keeps, the chain of flattened array fields)."""
    chain: list[Field] = []
    struct = message.struct
    for name in FLAT_READERS[message.name]:
        field = next(f for f in struct.fields if f.name == name)
        if not (field.is_array and field.is_struct):
            raise ValueError(f"{message.name}: {name} is not an array of structs, it cannot be flattened")
        chain.append(field)
        struct = field.struct
    return [f for f in message.struct.fields if f is not chain[0]], chain


class FlatCodec(StructCodec):
    """The reader of one struct of a flat chain (the message at depth 0) at one version."""

    def __init__(self, module: ModuleState, message: Message, struct: Struct, version: int, chain: list[Field],
                 depth: int = 0, keys: tuple[str, ...] = (), out: str = "") -> None:
        super().__init__(module, message, struct, version)
        self.chain = chain
        self.depth = depth
        self.keys = keys  # the locals of the enclosing structs' fields, the first values of each tuple
        self.out = out  # the local name of the flat list
        if self.depth and self.tagged:
            raise ValueError(f"{message.name}.{struct.name} v{version}: a flattened struct with tagged fields")
        self.values: tuple[str, ...] = ()

    def reader_body(self) -> list[str]:
        self.out = "flat"
        return _with_view(["bl = len(b)", *self.read_struct_into("o", Temps()),
                           "if p > bl:",
                           f"    raise DecodeError('{self.struct.name}: a length runs past the end')",
                           "return o, p"])

    def _kept(self) -> list[Field]:
        return [f for f in self.regular if not (self.depth < len(self.chain) and f is self.chain[self.depth])]

    def start_struct(self, o: str) -> list[str]:
        self.values = tuple(self.attribute(o, f) for f in self._kept())
        if self.depth:
            return []
        return [f"{o} = _new({flat_name(self.message)})", f"{self.out} = []"]

    def attribute(self, o: str, f: Field) -> str:
        return f"{o}.{f.attr}" if self.depth == 0 else f"{o}_{f.attr}"

    def finish_struct(self, o: str) -> list[str]:
        """The message's absent fields get their defaults and the flat list; every tagged section is skipped."""
        lines = []
        if self.depth == 0:
            if self.tagged:
                raise ValueError(f"{self.message.name} v{self.version}: a flat message with tagged fields")
            lines = [f"{o}.{f.attr} = {default_expr(self.message, f)}" for f in self.absent if f is not self.chain[0]]
            lines.append(f"{o}.{self.chain[-1].attr} = {self.out}")
        if not self.flexible:
            return lines
        return [*lines, "if b[p] == 0:  # no tagged fields, the common case", "    p += 1", "else:",
                "    p = _skip_tags(b, p)"]

    def child(self, struct: Struct) -> StructCodec:
        if self.depth < len(self.chain) and struct is self.chain[self.depth].struct:
            return FlatCodec(self.module, self.message, struct, self.version, self.chain, self.depth + 1,
                             self.keys + self.values if self.depth else self.keys, self.out)
        return super().child(struct)

    def collect(self, f: Field, over: str, items: str, item: str, element_lines: list[str],
                target: str) -> list[str]:
        """A flattened array builds no list of its own: the innermost appends one tuple per element."""
        if not (self.depth < len(self.chain) and f is self.chain[self.depth]):
            return super().collect(f, over, items, item, element_lines, target)
        if self.depth + 1 < len(self.chain):
            return [f"for _ in {over}:", *_indent(element_lines)]
        leaf = self.child(f.struct)
        leaf.start_struct(item)  # the element's locals, as its reader names them
        values = ", ".join((*self.keys, *(self.values if self.depth else ()), *leaf.values))
        return [f"for _ in {over}:", *_indent(element_lines), f"    {self.out}.append(({values}))"]


def flat_reader(state: ModuleState, message: Message, version: int) -> str:
    """The name of the flat reader of a message at a version (versions reading alike share one)."""
    chain = flat_fields(message)[1]
    return state.function(f"_f_{message.name}", "b, p", FlatCodec(state, message, message.struct, version,
                                                                   chain).reader_body())


def render_flat_class(message: Message, state: ModuleState) -> tuple[list[str], list[str]]:
    """(class text, table text) of the flat form of a message."""
    kept, chain = flat_fields(message)
    slots = ", ".join(repr(f.attr) for f in [*kept, chain[-1]])
    described = " x ".join(f.name for f in chain)
    readers = ", ".join("None" if v < message.valid_versions.low else flat_reader(state, message, v)
                        for v in range(message.valid_versions.high + 1))
    flexible = message.flexible_versions.low if message.flexible_versions else None
    lines = [
        f"class {flat_name(message)}(Message):",
        f'    """{message.name} as the broker\'s handler reads it: its own fields, and `{chain[-1].attr}`, one tuple per',
        f"    {chain[-1].name} ({described}): the enclosing structs' fields then the element's, those present at the",
        '    version, in schema order. Read only: written as a full message."""',
        "",
        f"    API_KEY = {message.api_key}",
        f"    MIN_VERSION = {message.valid_versions.low}",
        f"    MAX_VERSION = {message.valid_versions.high}",
        f"    FIRST_FLEXIBLE_VERSION = {flexible}",
        f"    __slots__ = ({slots},)",
    ]
    tables = [f"{flat_name(message)}._READERS = ({readers},)",
              f"{flat_name(message)}._WRITERS = ({', '.join(['None'] * (message.valid_versions.high + 1))},)"]
    return lines, tables
