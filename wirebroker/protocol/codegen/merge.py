"""Older versions into a newer spec: one message spec that reads every version either release has.

Kafka 4 dropped old versions from its specs (KIP-896: Produce v0-2, Fetch v0-3, ListOffsets v0, OffsetCommit v0-1 ...)
and the ZooKeeper-era inter-broker APIs (LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown: "none"),
which this broker still serves (old clients; its ZooKeeper mode). `merge(older, newer)` keeps the newer spec for
every version it has and the older spec for the versions below the newer one's lowest: a field's version ranges are
the older release's below that floor joined to the newer release's from it, a field the newer release removed keeps
its older versions (in the older field order), and a message the newer release removed is the older spec whole.

`check_merged` proves it: the merged spec lays out every version exactly as the release it came from does.
"""

from __future__ import annotations

import copy

from wirebroker.protocol.codegen.schema import NO_VERSIONS, Versions, field_versions

OPEN = 1 << 15  # Versions' "and every later version"
_RANGE_KEYS = ("versions", "nullableVersions", "taggedVersions")


class MergeError(ValueError):
    """The older versions cannot be joined to the newer spec (ranges with a gap, fields in another order)."""


def floor(spec: dict) -> int:
    """The lowest version of a spec; above every version for a spec with none (an API the release removed)."""
    valid = Versions.parse(spec.get("validVersions"))
    return valid.low if valid else OPEN + 1


def merge(older: dict, newer: dict, *, older_unstable: bool = False) -> dict:
    """`newer` extended with `older`'s stable versions below newer's lowest (unchanged when there are none);
    `older_unstable`: older's latest version is early access (a response spec learns it from its request's)."""
    if older_range(older, newer, older_unstable=older_unstable) is None:
        return newer
    low = floor(newer)
    if low > OPEN:
        return older
    merged = copy.deepcopy(newer)
    for key in ("validVersions", "flexibleVersions"):
        if key in older or key in newer:
            merged[key] = _join(older.get(key), newer.get(key), low)
    merged["fields"] = _merge_fields(older.get("fields", []), newer.get("fields", []), low)
    if "commonStructs" in older or "commonStructs" in newer:
        merged["commonStructs"] = _merge_fields(older.get("commonStructs", []), newer.get("commonStructs", []), low)
    return merged


def older_range(older: dict, newer: dict, *, older_unstable: bool = False) -> str | None:
    """The versions `merge` takes from `older` (stable ones only: an early-access version is no API), or None."""
    valid = Versions.parse(older.get("validVersions"))
    stable_high = valid.high - 1 if older_unstable else valid.high
    taken = Versions(valid.low, min(stable_high, floor(newer) - 1))
    return format_versions(taken) if taken else None


def format_versions(v: Versions) -> str:
    if not v:
        return "none"
    if v.high >= OPEN:
        return f"{v.low}+"
    return str(v.low) if v.low == v.high else f"{v.low}-{v.high}"


def _join(older: str | None, newer: str | None, low: int) -> str:
    below = _clip(Versions.parse(older), 0, low - 1)
    above = _clip(Versions.parse(newer), low, OPEN)
    if not below:
        return format_versions(above)
    if not above:
        return format_versions(below)
    if below.high + 1 != above.low:
        raise MergeError(f"versions {format_versions(below)} and {format_versions(above)} leave a gap")
    return format_versions(Versions(below.low, above.high))


def _clip(v: Versions, low: int, high: int) -> Versions:
    clipped = Versions(max(v.low, low), min(v.high, high))
    return clipped if clipped else NO_VERSIONS


def _merge_fields(older: list[dict], newer: list[dict], low: int) -> list[dict]:
    older_by_name = {f["name"]: f for f in older}
    merged = []
    for field in newer:
        joined = _merge_field(older_by_name.get(field["name"]), field, low)
        if joined is not None:
            merged.append(joined)
    names = [f["name"] for f in merged]
    for i, field in enumerate(older):
        if field["name"] in names:
            continue
        kept = _merge_field(field, None, low)
        if kept is None:
            continue
        before = next((f["name"] for f in reversed(older[:i]) if f["name"] in names), None)
        at = names.index(before) + 1 if before is not None else 0
        merged.insert(at, kept)
        names.insert(at, field["name"])
    return merged


def _merge_field(older: dict | None, newer: dict | None, low: int) -> dict | None:
    """One field (or common struct) over both version ranges, or None when it is in neither's share."""
    base = copy.deepcopy(newer if newer is not None else older)
    assert base is not None
    for key in _RANGE_KEYS:
        if (older and key in older) or (newer and key in newer):
            base[key] = _join(older.get(key) if older else None, newer.get(key) if newer else None, low)
    if base.get("versions") == "none":
        return None
    if "fields" in base:
        base["fields"] = _merge_fields((older or {}).get("fields", []), (newer or {}).get("fields", []), low)
    return base


def check_merged(merged: dict, older: dict, newer: dict) -> None:
    """Raise MergeError unless `merged` lays out each version as the release that version comes from."""
    low = floor(newer)
    for version in range(Versions.parse(merged.get("validVersions")).low, min(low, OPEN)):
        _same_layout(merged, older, version, "older")
    if low <= OPEN:
        for version in range(low, Versions.parse(newer["validVersions"]).high + 1):
            _same_layout(merged, newer, version, "newer")


def _same_layout(merged: dict, source: dict, version: int, which: str) -> None:
    if layout(merged, version) != layout(source, version):
        raise MergeError(f"{merged['name']} v{version} is not laid out as the {which} release's spec")


def layout(spec: dict, version: int) -> tuple:
    """What the wire (and the generated class) of one version depends on: flexibility, then each field present."""
    structs = {s["name"]: s for s in spec.get("commonStructs", [])}
    flexible = version in Versions.parse(spec.get("flexibleVersions"))
    return flexible, _fields_layout(spec.get("fields", []), version, structs)


def _fields_layout(fields: list[dict], version: int, structs: dict[str, dict]) -> tuple:
    out = []
    for f in fields:
        if version not in field_versions(f):
            continue
        nested = f.get("fields")
        if nested is None:
            struct = structs.get(f["type"].removeprefix("[]"))
            nested = struct["fields"] if struct else None
        out.append((
            f["name"], f["type"], version in Versions.parse(f.get("nullableVersions")),
            f.get("tag") if version in Versions.parse(f.get("taggedVersions")) else None,
            f.get("flexibleVersions"), _fields_layout(nested, version, structs) if nested is not None else None,
        ))
    return tuple(out)
