"""Writes one Python module per API: the message classes and straight-line readers/writers for every version.

For each message and version the emitter writes a reader `_r_<Message>_<n>(b, p) -> (obj, p)` and a writer
`_w_<Message>_<n>(o, w)`; versions whose code comes out identical share one function. The code of nested structs is
written inline, inside the loop over their array or where their field is, so that an element costs no call; only
the rare path of a struct that carries tagged fields on the wire is a function of its own (`_t_<Struct>_<n>(b, p,
o) -> p`). Runs of fixed-width fields become a single `struct` call. A struct-valued default that a version does
not read (a field absent from it, a tagged field not sent) is the struct's shared read-only default
(message.shared_default) when it holds only numbers and strings, so that no element builds one. A compact length
or count of one byte (nearly all) is read without the varint path. Every count read from the wire is checked against
the bytes left (`bl`, the buffer's length) before anything is allocated from it; a string or bytes length needs no
check where it is read (its slice stops at the end of the buffer and allocates no more), only once at the end of the
message, except inside a tagged field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field

from wirebroker.protocol.codegen.schema import Field, Message, Struct

_FIXED = {
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}
ARRAY_TABLE_SIZE = 64  # arrays of numbers up to this long use a prebuilt struct; longer ones build one
_NULL_MARKERS = {"int16": "b'\\xff\\xff'", "int32": "b'\\xff\\xff\\xff\\xff'"}


def _fixed_runs(fields: list[Field]) -> list[list[Field] | Field]:
    """The fields in order, consecutive fixed-width ones grouped into lists (each list becomes one struct call)."""
    groups: list[list[Field] | Field] = []
    for f in fields:
        if f.type not in _FIXED:
            groups.append(f)
        elif groups and isinstance(groups[-1], list):
            groups[-1].append(f)
        else:
            groups.append([f])
    return groups


def _with_view(body: list[str]) -> list[str]:
    """A reader's body, with `mv`, a memoryview of the input, when it slices records (or zeroCopy bytes) out of it:
    they stay views of the input, not copies, while everything else reads `b` as given (bytes index and unpack
    faster than a memoryview)."""
    if not any("mv[" in line for line in body):
        return body
    return [body[0], "mv = b if type(b) is memoryview else memoryview(b)", *body[1:]]


def _indent(lines: list[str], depth: int = 1) -> list[str]:
    pad = "    " * depth
    return [pad + line if line else line for line in lines]


@dataclass
class ModuleState:
    """What the functions of one module share: struct formats and the functions already written."""

    formats: dict[str, str] = dc_field(default_factory=dict)  # format -> constant name
    functions: dict[str, str] = dc_field(default_factory=dict)  # body text -> function name
    definitions: list[str] = dc_field(default_factory=list)
    counters: dict[str, int] = dc_field(default_factory=dict)  # function prefix -> functions written so far
    arrays: set[str] = dc_field(default_factory=set)  # struct codes of fixed-width arrays (one table each)

    def unpack_table(self, code: str) -> str:
        """The name of a table of unpack_from functions for arrays of `code`, indexed by count + 1 (a compact
        array's first byte): entry h reads h - 1 elements."""
        self.arrays.add(code)
        return f"_UNPACK_{code}"

    def array_table(self, code: str) -> str:
        """The name of a table of structs for arrays of `code` with 0..ARRAY_TABLE_SIZE-1 elements."""
        self.arrays.add(code)
        return f"_ARRAY_{code}"

    def fmt(self, fmt: str) -> str:
        if fmt not in self.formats:
            self.formats[fmt] = f"_S{len(self.formats)}"
        return self.formats[fmt]

    codecs: dict[tuple[str, str, int], tuple[str, str]] = dc_field(default_factory=dict)

    def codec(self, message: Message, version: int) -> tuple[str, str]:
        """The (reader, writer) function names of a message at a version, writing them (nested structs inline)
        once."""
        key = (message.name, message.struct.name, version)
        if key not in self.codecs:
            codec = StructCodec(self, message, message.struct, version)
            stem = message.name
            reader = self.function(f"_r_{stem}", "b, p", codec.reader_body())
            writer = self.function(f"_w_{stem}", "o, w", codec.writer_body())
            self.codecs[key] = (reader, writer)
        return self.codecs[key]

    def function(self, prefix: str, signature: str, body: list[str]) -> str:
        """The name of a function with this body, defining it once."""
        text = "\n".join(body)
        name = self.functions.get(text)
        if name is None:
            name = f"{prefix}_{self.counters.get(prefix, 0)}"
            self.counters[prefix] = self.counters.get(prefix, 0) + 1
            self.functions[text] = name
            self.definitions.append(f"def {name}({signature}):\n" + "\n".join(_indent(body)) + "\n")
        return name


class Temps:
    """Fresh local names, so nested array code never clobbers an outer loop's variables."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"


def class_path(message: Message, struct: Struct) -> str:
    """The module-level alias of a struct's class: the message class itself, or `_<Message>_<Struct>`."""
    return message.name if struct is message.struct else f"_{message.name}_{struct.name}"


class StructCodec:
    """Writes the reader and writer of one struct at one version, and those of its nested structs inline."""

    def __init__(self, module: ModuleState, message: Message, struct: Struct, version: int,
                 bounded: bool = False) -> None:
        self.module = module
        # bounded: every string or bytes length checked where it is read (a tagged field's value, whose reader
        # moves on to the field's end whatever it read); elsewhere one check at the end of the message suffices
        self.bounded = bounded
        self.message = message
        self.struct = struct
        self.version = version
        self.flexible = version in message.flexible_versions
        present = [f for f in struct.fields if version in f.versions]
        self.tagged = sorted((f for f in present if self._is_tagged(f)), key=lambda f: f.tag)
        self.regular = [f for f in present if not self._is_tagged(f)]
        self.absent = [f for f in struct.fields if version not in f.versions]

    def _is_tagged(self, f: Field) -> bool:
        return self.flexible and self.version in f.tagged_versions

    def _compact(self, f: Field) -> bool:
        if f.flexible_versions is not None:
            return self.version in f.flexible_versions
        return self.flexible

    def _nullable(self, f: Field) -> bool:
        return self.version in f.nullable_versions

    def child(self, struct: Struct) -> StructCodec:
        return StructCodec(self.module, self.message, struct, self.version, self.bounded)

    # ---- readers -------------------------------------------------------------------------------------------

    def reader_body(self) -> list[str]:
        """A string or bytes value whose length runs past the end is cut short by its slice and leaves `p` past the
        end, where every later read fails; the last one is caught here."""
        return _with_view(["bl = len(b)", *self.read_struct_into("o", Temps()),
                           "if p > bl:",
                           f"    raise DecodeError('{self.struct.name}: a length runs past the end')",
                           "return o, p"])

    def read_struct_into(self, o: str, temps: Temps) -> list[str]:
        """Lines that read this struct at `p` into a new object named `o`, leaving `p` after it."""
        lines = self.start_struct(o)
        groups = _fixed_runs(self.regular)
        prefix = None  # the next field's length or count, read by the fixed-width run before it
        for i, group in enumerate(groups):
            if isinstance(group, list):
                code = "".join(_FIXED[f.type][0] for f in group)
                size = sum(_FIXED[f.type][1] for f in group)
                targets = [self.attribute(o, f) for f in group]
                following = self.length_code(groups[i + 1]) if i + 1 < len(groups) else None
                if following:
                    prefix = temps("h")
                    code, size, targets = code + following[0], size + following[1], [*targets, prefix]
                lines.append(f"{', '.join(targets)}, = {self.module.fmt('>' + code)}.unpack_from(b, p)")
                lines.append(f"p += {size}")
            else:
                lines += self.read_value(group, self.attribute(o, group), temps, prefix=prefix)
                prefix = None
        return lines + self.finish_struct(o)

    def start_struct(self, o: str) -> list[str]:
        """Lines that make the object a struct's fields are read into."""
        return [f"{o} = _new({class_path(self.message, self.struct)})"]

    def attribute(self, o: str, f: Field) -> str:
        """Where the reader puts a field's value."""
        return f"{o}.{f.attr}"

    def finish_struct(self, o: str) -> list[str]:
        """Lines after a struct's regular fields: the defaults of those not read, then its tagged fields."""
        lines = [f"{o}.{f.attr} = {default_expr(self.message, f)}" for f in self.absent + self.tagged]
        if not self.flexible:
            return lines + [f"{o}.unknown_tagged_fields = None"]
        stem = class_path(self.message, self.struct).lstrip("_")
        tags = self.module.function(f"_t_{stem}", "b, p, o", self.read_tagged_section())
        return lines + ["if b[p] == 0:  # no tagged fields, the common case",
                        f"    {o}.unknown_tagged_fields = None",
                        "    p += 1",
                        "else:",
                        f"    p = {tags}(b, p, {o})"]

    def length_code(self, group: list[Field] | Field) -> tuple[str, int] | None:
        """The struct code and size of the length or count that starts this field, if it has one: compact lengths
        by their first byte (a longer varint is finished after it), the others whole."""
        if isinstance(group, list) or (group.is_struct and not group.is_array):
            return None
        if self._compact(group):
            return "B", 1
        return ("h", 2) if group.type == "string" else ("i", 4)

    def read_length(self, f: Field, var: str, size_type: str, prefix: str | None = None) -> list[str]:
        """Reads a length or count into `var`; compact forms store N+1, so the result is N (-1 for null). With
        `prefix`, the previous fixed-width run has read it (the first byte of a compact one) into that name."""
        if self._compact(f):
            first = [f"{var} = {prefix} - 1"] if prefix else [f"{var} = b[p] - 1", "p += 1"]
            return [*first, f"if {var} > 126:", f"    {var}, p = _uvt(b, p, {var} + 1)", f"    {var} -= 1"]
        if prefix:
            return [f"{var} = {prefix}"]
        struct_name = self.module.fmt(">" + _FIXED[size_type][0])
        return [f"{var}, = {struct_name}.unpack_from(b, p)", f"p += {_FIXED[size_type][1]}"]

    def null_branch(self, f: Field, target: str, var: str) -> list[str]:
        if self._nullable(f):
            return [f"if {var} < 0:", f"    {target} = None", "else:"]
        return [f"if {var} < 0:", f"    raise DecodeError('{self.struct.name}.{f.name}: null where not nullable')", "else:"]

    def read_value(self, f: Field, target: str, temps: Temps, element: bool = False,
                   prefix: str | None = None) -> list[str]:
        kind = f.element_type if element else f.type
        if kind in _FIXED:
            fmt = self.module.fmt(">" + _FIXED[kind][0])
            return [f"{target}, = {fmt}.unpack_from(b, p)", f"p += {_FIXED[kind][1]}"]
        if f.is_array and not element:
            return self.read_array(f, target, temps, prefix)
        if f.is_struct:
            return self.read_struct(f, target, temps)
        n = temps("n")
        q = temps("q")
        if kind == "string":
            size_type, value = "int16", "str(b[{start}:{end}], 'utf-8')"
        elif kind == "records" or f.zero_copy:
            size_type, value = "int32", "mv[{start}:{end}]"
        else:
            size_type, value = "int32", "bytes(b[{start}:{end}])"

        def general(prefix: str | None) -> list[str]:
            lines = self.read_length(f, n, size_type, prefix)
            if element:
                lines += [f"if {n} < 0:", f"    raise DecodeError('{self.struct.name}.{f.name}: null element')",
                          "else:"]
            else:
                lines += self.null_branch(f, target, n)
            check = [f"if {q} > bl:",
                     f"    raise DecodeError('{self.struct.name}.{f.name}: length ' + str({n}) + ' past the end')"]
            return lines + _indent([f"{q} = p + {n}", *(check if self.bounded else []),
                                    f"{target} = {value.format(start='p', end=q)}", f"p = {q}"])

        def fast(h: str, start: str) -> list[str]:
            end = f"p + {h} - 1" if start == "p" else f"p + {h}"
            return [f"{q} = {end}", f"{target} = {value.format(start=start, end=q)}", f"p = {q}"]

        if not self._compact(f) or self.bounded or kind == "records":  # a record batch is rarely under 127 bytes
            return general(prefix)
        return self.compact_fast_path(f, target, temps, prefix, fast, general, 128, not element)

    def compact_fast_path(self, f: Field, target: str, temps: Temps, prefix: str | None,
                          fast: Callable[[str, str], list[str]] | None, general: Callable[[str], list[str]],
                          limit: int, may_be_null: bool, empty_list: bool = False) -> list[str]:
        """A compact length or count is N+1 as an unsigned varint, nearly always one byte: `fast(h, start)` reads
        a value whose first byte `h` is 1 to limit-1 (the value starting at `start`), a null (h == 0) of a nullable
        field is set inline, and `general(h)` reads any other (a null where not nullable, a longer varint, a long
        array) with `p` past that byte. `prefix`: the byte, read by the fixed-width run before, `p` already past.
        `empty_list`: an empty array (h == 1) is set inline too, before the fast path."""
        h = prefix or temps("h")
        skip = [] if prefix else ["p += 1"]
        branches = [(f"{h} == 1", [f"{target} = []", *skip])] if empty_list else []
        if fast is not None:
            branches.append((f"0 < {h} < {limit}", fast(h, "p" if prefix else "p + 1")))
        if may_be_null and self._nullable(f):
            branches.append((f"{h} == 0", [f"{target} = None", *skip]))
        lines = [] if prefix else [f"{h} = b[p]"]
        for i, (condition, body) in enumerate(branches):
            lines += [f"{'elif' if i else 'if'} {condition}:", *_indent(body)]
        return [*lines, "else:", *_indent([*skip, *general(h)])]

    def read_array(self, f: Field, target: str, temps: Temps, prefix: str | None = None) -> list[str]:
        n = temps("n")
        past_end = [
            f"if {n} > bl - p:",
            f"    raise DecodeError('{self.struct.name}.{f.name}: count ' + str({n}) + ' past the end')",
        ]
        element = f.element_type
        if element in _FIXED and element != "uuid":
            # A short array needs no count check: unpack_from refuses a buffer too short for the prebuilt struct.
            code, size = _FIXED[element]
            table = self.module.array_table(code)

            def general(prefix: str | None) -> list[str]:
                lines = self.read_length(f, n, "int32", prefix)
                lines += self.null_branch(f, target, n)
                lines[-1] = f"elif {n} < {ARRAY_TABLE_SIZE}:"
                lines += [f"    {target} = [*{table}[{n}].unpack_from(b, p)]", f"    p += {size} * {n}", "else:"]
                long = f"{target} = [*_struct.Struct('>' + str({n}) + '{code}').unpack_from(b, p)]"
                return lines + _indent([*past_end, long, f"p += {size} * {n}"])

            def fast(h: str, start: str) -> list[str]:  # the table of unpackers is indexed by the count + 1
                back = size if start == "p" else size - 1
                return [f"{target} = [*{self.module.unpack_table(code)}[{h}](b, {start})]",
                        f"p += {size} * {h} - {back}" if back else f"p += {size} * {h}"]

            if not self._compact(f) or self.bounded:
                return general(prefix)
            # Empty arrays of numbers are common (offline replicas, partitions of a topic not asked for): a list
            # literal costs a third of the empty unpack it saves (bench/ANALYSIS.md section 8).
            return self.compact_fast_path(f, target, temps, prefix, fast, general, ARRAY_TABLE_SIZE + 1, True,
                                          empty_list=True)
        items = temps("xs")
        item = temps("e")
        if f.is_struct:
            element_lines = self.child(f.struct).read_struct_into(item, temps)
        else:
            element_lines = self.read_value(f, item, temps, element=True)

        def loop(over: str) -> list[str]:
            return self.collect(f, over, items, item, element_lines, target)

        def general_elements(prefix: str | None) -> list[str]:
            return [*self.read_length(f, n, "int32", prefix), *self.null_branch(f, target, n),
                    *_indent([*past_end, *loop(f"range({n})")])]

        if not self._compact(f) or self.bounded:
            return general_elements(prefix)
        if self._nullable(f):  # a null array: one test
            return self.compact_fast_path(f, target, temps, prefix, None, general_elements, 0, True)
        # A one-byte count (under 127 elements) needs neither the varint path nor the count check, and loops over a
        # prebuilt range (_counts, indexed by that byte); the loop is shared with the general path.
        h = prefix or temps("h")
        over = temps("r")
        general = [*self.read_length(f, n, "int32", h), *self.null_branch(f, target, n)[:-1], *past_end,
                   f"{over} = range({n})"]
        first = [] if prefix else [f"{h} = b[p]", "p += 1"]
        return [*first, f"if 0 < {h} < 128:", f"    {over} = _counts[{h}]", "else:", *_indent(general), *loop(over)]

    def collect(self, f: Field, over: str, items: str, item: str, element_lines: list[str],
                target: str) -> list[str]:
        """The loop over an array's elements (`over`, a range), each read by `element_lines` into `item`."""
        return [f"{items} = []", f"for _ in {over}:", *_indent(element_lines), f"    {items}.append({item})",
                f"{target} = {items}"]

    def read_struct(self, f: Field, target: str, temps: Temps) -> list[str]:
        item = temps("s")
        read = [*self.child(f.struct).read_struct_into(item, temps), f"{target} = {item}"]
        if not self._nullable(f):
            return read
        # Kafka writes a nullable struct behind an int8 marker: -1 for null, 1 for present.
        return ["if b[p] > 127:", f"    {target} = None", "    p += 1", "else:", "    p += 1", *_indent(read)]

    def read_tagged_section(self) -> list[str]:
        """The body of `_t_<Struct>(b, p, o) -> p`: the tagged fields sent, known ones into `o`, the rest kept."""
        temps = Temps()
        bounded = StructCodec(self.module, self.message, self.struct, self.version, bounded=True)
        lines = [
            "bl = len(b)",
            "nt = b[p]",
            "p += 1",
            "if nt > 127:",
            "    nt, p = _uvt(b, p, nt)",
            "if nt > bl - p:",
            f"    raise DecodeError('{self.struct.name}: tagged field count past the end')",
            "unknown = None",
            "for _ in range(nt):",
            "    tag, p = _ruv(b, p)",
            "    size, p = _ruv(b, p)",
            "    end = p + size",
            "    if end > bl:",
            f"        raise DecodeError('{self.struct.name}: tagged field past the end')",
        ]
        branch = "if"
        for f in self.tagged:
            lines.append(f"    {branch} tag == {f.tag}:")
            lines += _indent(bounded.read_value(f, f"o.{f.attr}", temps), 2)
            branch = "elif"
        unknown = ["if unknown is None:", "    unknown = []", "unknown.append((tag, bytes(b[p:end])))"]
        if self.tagged:
            lines.append("    else:")
            lines += _indent(unknown, 2)
        else:
            lines += _indent(unknown)
        lines += ["    p = end", "o.unknown_tagged_fields = unknown", "return p"]
        return _with_view(lines)

    # ---- writers -------------------------------------------------------------------------------------------

    def writer_body(self) -> list[str]:
        return self.write_struct_from("o", "w", Temps()) or ["pass"]

    def write_struct_from(self, o: str, out: str, temps: Temps) -> list[str]:
        """Lines that write the struct object named `o` to `out`."""
        lines: list[str] = []
        for f in self.absent:
            if not f.ignorable and not self._is_tagged_somewhere(f):
                lines += [
                    f"if {non_default_test(self.message, f, o + '.' + f.attr, self.version)}:",
                    f"    raise UnsupportedFieldError('{self.struct.name}.{f.name} exists only in versions {_range(f)}')",
                ]
        for group in _fixed_runs(self.regular):
            if isinstance(group, list):
                fmt = self.module.fmt(">" + "".join(_FIXED[f.type][0] for f in group))
                lines.append(f"{out} += {fmt}.pack({', '.join(f'{o}.{f.attr}' for f in group)})")
            else:
                lines += self.write_value(group, f"{o}.{group.attr}", out, temps)
        if self.flexible:
            lines += self.write_tagged_section(o, out, temps)
        return lines

    def _is_tagged_somewhere(self, f: Field) -> bool:
        return bool(f.tagged_versions)

    def write_length(self, f: Field, out: str, length: str, size_type: str) -> list[str]:
        if self._compact(f):  # N+1 as an unsigned varint: one byte in all but rare cases, so that case is inline
            return [f"ln = {length} + 1", "if ln < 128:", f"    {out}.append(ln)", "else:", f"    _wuv({out}, ln)"]
        return [f"{out} += {self.module.fmt('>' + _FIXED[size_type][0])}.pack({length})"]

    def write_null(self, f: Field, out: str, size_type: str) -> str:
        return f"{out}.append(0)" if self._compact(f) else f"{out} += {_NULL_MARKERS[size_type]}"

    def write_value(self, f: Field, value: str, out: str, temps: Temps, element: bool = False) -> list[str]:
        kind = f.element_type if element else f.type
        if kind in _FIXED:
            return [f"{out} += {self.module.fmt('>' + _FIXED[kind][0])}.pack({value})"]
        if f.is_array and not element:
            return self.write_array(f, value, out, temps)
        if f.is_struct:
            return self.write_struct(f, value, out, temps)
        v = temps("v")
        size_type = "int16" if kind == "string" else "int32"
        if kind == "string":
            body = [f"{v} = {v}.encode()"]
            body += self.write_length(f, out, f"len({v})", size_type)
            body.append(f"{out} += {v}")
        elif kind == "records":
            body = self.write_length(f, out, f"len({v})", size_type) + [f"_wrec({out}, {v})"]
        else:
            body = self.write_length(f, out, f"len({v})", size_type) + [f"{out} += {v}"]
        lines = [f"{v} = {value}"]
        if self._nullable(f) and not element:
            lines += [f"if {v} is None:", f"    {self.write_null(f, out, size_type)}", "else:"]
            lines += _indent(body)
        else:
            lines += body
        return lines

    def write_array(self, f: Field, value: str, out: str, temps: Temps) -> list[str]:
        items = temps("xs")
        body = self.write_length(f, out, f"len({items})", "int32")
        element = f.element_type
        if element in _FIXED and element != "uuid":
            table = self.module.array_table(_FIXED[element][0])
            body += [f"if len({items}) < {ARRAY_TABLE_SIZE}:",
                     f"    {out} += {table}[len({items})].pack(*{items})",
                     "else:",
                     f"    {out} += _pack('>' + str(len({items})) + '{_FIXED[element][0]}', *{items})"]
        else:
            item = temps("e")
            body.append(f"for {item} in {items}:")
            if f.is_struct:
                body += _indent(self.child(f.struct).write_struct_from(item, out, temps) or ["pass"])
            else:
                body += _indent(self.write_value(f, item, out, temps, element=True))
        lines = [f"{items} = {value}"]
        if self._nullable(f):
            lines += [f"if {items} is None:", f"    {self.write_null(f, out, 'int32')}", "else:"]
            return lines + _indent(body)
        return lines + body

    def write_struct(self, f: Field, value: str, out: str, temps: Temps) -> list[str]:
        item = temps("s")
        write = self.child(f.struct).write_struct_from(item, out, temps)
        if not self._nullable(f):
            return [f"{item} = {value}", *write]
        return [f"{item} = {value}", f"if {item} is None:", f"    {out}.append(255)", "else:", f"    {out}.append(1)",
                *_indent(write)]

    def write_tagged_section(self, o: str, out: str, temps: Temps) -> list[str]:
        if not self.tagged:
            return [
                f"if {o}.unknown_tagged_fields:",
                f"    _wtags({out}, {o}.unknown_tagged_fields)",
                "else:",
                f"    {out}.append(0)",
            ]
        tags = temps("tags")
        lines = [f"{tags} = []"]
        for f in self.tagged:
            t = temps("t")
            lines.append(f"if {non_default_test(self.message, f, o + '.' + f.attr, self.version)}:")
            lines += _indent([f"{t} = bytearray()"] + self.write_value(f, f"{o}.{f.attr}", t, temps))
            lines.append(f"    {tags}.append(({f.tag}, {t}))")
        lines += [
            f"if {o}.unknown_tagged_fields:",
            f"    {tags} = sorted({tags} + {o}.unknown_tagged_fields, key=_first)",
            f"if {tags}:",
            f"    _wtags({out}, {tags})",
            "else:",
            f"    {out}.append(0)",
        ]
        return lines


def _range(f: Field) -> str:
    high = f.versions.high
    return f"{f.versions.low}+" if high >= 1 << 15 else f"{f.versions.low}-{high}"


def shared_default_name(message: Message, struct: Struct) -> str:
    """The module-level name of a struct's shared read-only default (message.shared_default)."""
    return "_DEFAULT_" + class_path(message, struct).removeprefix("_")


def has_shared_default(f: Field) -> bool:
    """A struct field (not an array) whose default is the struct with its fields' defaults, not null, and whose
    fields are all numbers, strings or bytes: a default that a read-only struct can share (no list or struct
    inside that could be changed in place)."""
    return (f.is_struct and not f.is_array and f.default != "null"
            and not any(sub.is_struct or sub.is_array for sub in f.struct.fields))


def default_expr(message: Message, f: Field) -> str:
    """A Python expression for the field's default: a fresh list or struct each time, or a struct's shared
    read-only default (has_shared_default)."""
    default = f.default
    if f.is_array:
        return "None" if default == "null" else "[]"
    if f.is_struct:
        if default == "null":
            return "None"
        return shared_default_name(message, f.struct) if has_shared_default(f) else f"{class_path(message, f.struct)}()"
    kind = f.type
    if kind in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return str(int(default, 0)) if default else "0"
    if kind == "float64":
        return repr(float(default)) if default else "0.0"
    if kind == "bool":
        return "True" if (default or "false").lower() == "true" else "False"
    if kind == "uuid":
        return "UUID_ZERO"
    if kind == "string":
        return "None" if default == "null" else repr(default or "")
    if kind == "records":
        return "None"
    return "None" if default == "null" else "b''"


def non_default_test(message: Message, f: Field, value: str, version: int) -> str:
    """A test that is true when the value differs from the field's default (what Kafka writes or refuses)."""
    expr = default_expr(message, f)
    if expr == "None":
        return f"{value} is not None"
    if f.is_struct and not f.is_array:  # the shared default at once, then field by field (no generic __eq__)
        present = [sub for sub in f.struct.fields if version in sub.versions]
        tests = [f"({non_default_test(message, sub, value + '.' + sub.attr, version)})" for sub in present]
        if version in f.nullable_versions:
            tests.insert(0, f"{value} is None")
        differs = " or ".join([*tests, f"{value}.unknown_tagged_fields"])
        return f"{value} is not {expr} and ({differs})" if has_shared_default(f) else differs
    if expr in ("[]", "b''", "''"):
        return f"{value}"
    if version in f.nullable_versions and (f.is_array or f.type in ("string", "bytes")):
        return f"{value} is None or {value}"
    return f"{value} != {expr}"
