"""State versions stored as a small manifest and content-addressed parts.

A version's blob (keyed by its lineage id) is a *manifest*: for a mapping
state, its keys and one reference per key; for any other state, one reference.
A reference is either

- bytes: the value's own serialization, kept in the manifest (values of at
  most `INLINE_MAX` bytes, where a separate part would cost more than it saves);
- a part id `p:<32 hex digits>`: the content address of the value's
  serialization, stored as a blob of its own. Equal values get equal ids, so
  `put(blobs=...)`, which leaves an id already stored as it is, stores them once;
- a list of such references: a list longer than `CHUNK_ITEMS` items, cut into
  chunks of that many items, so a list that grows at its end shares its earlier
  chunks with its previous version.

Dataclasses, pydantic models and other non-mapping states are one reference
(splitting them would need the serializer's class handling in the manifest). A
state of scalars only is kept in its manifest as it is (`["val", state]`):
serialized once, as small states always were.

A value is serialized only when it changed: each version's layout (its
references) is remembered, and a child version reuses its parent's reference
for a value that is its parent's value (`is`), or equal to it in every way a
reader can tell (`_model/sameness.py`: `==`, and the same types, key order and
signs all the way down: `[1.0]` is not kept as `[1]`). Addresses are digests of the plaintext serialization:
SHA-256 for plain serializers (checked again when a part is read, so a part
stored under another id is refused), and a keyed digest for
`EncryptedSerializer`, whose parts are also AEAD-bound to their thread and id.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from actorgraph._model.errors import SerializationError
from actorgraph._model.sameness import unchanged
from actorgraph.checkpoint._protocol import Serializer

__all__ = [
    "CHUNK_ITEMS",
    "INLINE_MAX",
    "Layout",
    "PartCodec",
    "Ref",
    "assemble",
    "encode_state",
    "is_part_id",
    "is_small",
    "layout_of",
]

INLINE_MAX = 1024
"""Values whose serialization is at most this many bytes stay in the manifest."""

CHUNK_ITEMS = 256
"""A list longer than this is stored in chunks of this many items."""

_PREFIX = "p:"
_HEX = frozenset("0123456789abcdef")
_SCALARS = frozenset({type(None), bool, int, float})
_SMALL_STATE = 32  # keys of a scalar-only state kept whole in its manifest
_SHORT = 64  # characters of a str that counts as a scalar there

Ref: TypeAlias = "bytes | str | list[bytes | str]"
"""Inline bytes, a part id, or the references of a long list's chunks."""


def is_part_id(blob_id: object) -> bool:
    """Whether `blob_id` is a part's content address (`p:` and 32 hex digits)."""
    return (
        type(blob_id) is str
        and len(blob_id) == len(_PREFIX) + 32
        and blob_id.startswith(_PREFIX)
        and _HEX.issuperset(blob_id[len(_PREFIX) :])
    )


class PartCodec:
    """Serializes parts of one thread: plaintext, address, sealing and opening.

    With an `EncryptedSerializer` (anything with `inner`, `seal`, `unseal` and
    `address`) the plaintext is the inner serializer's, addresses are keyed and
    each part is encrypted bound to its thread and id. With any other
    serializer the stored bytes are the plaintext and the address is their
    SHA-256, checked again on reading.
    """

    def __init__(self, serializer: Serializer, thread_id: str, part_aad: bytes) -> None:
        self.thread_id = thread_id
        inner = getattr(serializer, "inner", None)
        sealing = inner is not None and all(
            callable(getattr(serializer, name, None)) for name in ("seal", "unseal", "address")
        )
        self._sealer: Any = serializer if sealing else None
        self._plain: Serializer = inner if inner is not None and sealing else serializer
        self._aad = part_aad

    def dumps(self, value: Any) -> bytes:
        """The plaintext serialization of a value (what its address is a digest of)."""
        return self._plain.dumps(value, aad=self._aad)

    def loads(self, plain: bytes) -> Any:
        """The value of a plaintext serialization."""
        return self._plain.loads(plain, aad=self._aad)

    def address(self, plain: bytes) -> str:
        """The part id of a plaintext serialization."""
        import hashlib  # noqa: PLC0415 - it loads OpenSSL (3 MiB): on first use, not at `import actorgraph`

        if self._sealer is not None:
            return _PREFIX + str(self._sealer.address(plain))
        return _PREFIX + hashlib.sha256(plain).digest()[:16].hex()

    def seal(self, plain: bytes, aad: bytes) -> bytes:
        """The stored bytes of a part (`aad` binds them to the thread and the part's id)."""
        return plain if self._sealer is None else bytes(self._sealer.seal(plain, aad=aad))

    def open(self, part_id: str, data: bytes, aad: bytes) -> bytes:
        """The plaintext of a stored part, refused if it is not the part `part_id` names.

        Raises:
            SerializationError: the bytes fail authentication or do not match the address.
        """
        if self._sealer is not None:
            return bytes(self._sealer.unseal(data, aad=aad))
        if self.address(data) != part_id:
            raise SerializationError(
                f"stored part {part_id!r} of thread {self.thread_id!r} does not match its content "
                f"address: it was damaged or swapped for another part. Restore the store from a "
                f"good copy, or resume from a checkpoint that does not use it"
            )
        return data


@dataclass(frozen=True, slots=True)
class Layout:
    """How one version is stored: the manifest's references, and the parts they name.

    Attributes:
        refs: for a state stored by key, each key's reference; else None.
        whole: for a state stored as one value, its reference; else None.
        parts: every part id the references name (what `refs` of a row must list).
    """

    refs: dict[Any, Ref] | None
    whole: Ref | None
    parts: tuple[str, ...]

    def manifest(self) -> list[Any]:
        """The manifest as plain values: `["map", keys, refs]` or `["one", ref]`."""
        if self.refs is not None:
            return ["map", list(self.refs), list(self.refs.values())]
        return ["one", self.whole]


SMALL = Layout(None, None, ())
"""The layout of a small state (`["val", state]`): no parts, nothing to lend its children."""


def _names(refs: Iterable[Ref]) -> Iterator[str]:
    for ref in refs:
        if type(ref) is str:
            yield ref
        elif type(ref) is list:
            yield from (r for r in ref if type(r) is str)


def _layout(refs: dict[Any, Ref] | None, whole: Ref | None) -> Layout:
    found = _names(refs.values() if refs is not None else (whole,))  # type: ignore[arg-type]
    return Layout(refs, whole, tuple(dict.fromkeys(found)))


class _Encoder:
    """Encodes one state: references for its values, and the parts not stored yet."""

    def __init__(self, codec: PartCodec, part_aad: Any) -> None:
        self.codec = codec
        self.part_aad = part_aad
        self.parts: dict[str, bytes] = {}

    def fresh(self, value: Any) -> Ref:
        plain = self.codec.dumps(value)
        if len(plain) <= INLINE_MAX:
            return plain
        part_id = self.codec.address(plain)
        if part_id not in self.parts:
            self.parts[part_id] = self.codec.seal(plain, self.part_aad(part_id))
        return part_id

    def ref(self, value: Any, hints: list[tuple[Any, Ref]]) -> Ref:
        """The reference of `value`; `hints` are (earlier value, its reference), parents first."""
        for old, ref in hints:
            if old is value:
                return ref
        if hints and unchanged(hints[0][0], value):
            return hints[0][1]
        if type(value) is list and len(value) > CHUNK_ITEMS:
            old_list, old_refs = next(
                ((o, r) for o, r in hints if type(o) is list and type(r) is list), ([], [])
            )
            count = -(-len(value) // CHUNK_ITEMS)
            return [self._chunk(value, index, old_list, old_refs) for index in range(count)]
        return self.fresh(value)

    def _chunk(self, items: list[Any], index: int, old: list[Any], old_refs: list[Any]) -> bytes | str:
        start, stop = index * CHUNK_ITEMS, (index + 1) * CHUNK_ITEMS
        chunk = items[start:stop]
        if index < len(old_refs) and unchanged(old[start:stop], chunk):
            return old_refs[index]  # type: ignore[no-any-return]
        return self.fresh(chunk)  # type: ignore[return-value]


def is_small(state: Any) -> bool:
    """A state of scalars only (None, bool, int, float, short str), stored in its manifest as it is.

    Splitting it would cost more than it could save, and storing it as it is
    serializes it once, as a whole state always was.
    """
    kind = type(state)
    if kind in _SCALARS:
        return True
    if kind is not dict or len(state) > _SMALL_STATE:
        return False
    for value in state.values():
        kind = type(value)
        if kind not in _SCALARS and not (kind is str and len(value) <= _SHORT):
            return False
    return True


def encode_state(
    codec: PartCodec, state: Any, parents: list[tuple[Any, Layout]], part_aad: Any
) -> tuple[Layout, dict[str, bytes]]:
    """The layout of `state` and the bytes of the parts it needs that are new here.

    Args:
        codec: the thread's part codec.
        state: the version's state.
        parents: (state, layout) of its parent versions whose layouts are known.
        part_aad: `part_aad(part_id)` is the associated data that binds a part.

    Raises:
        SerializationError: a value cannot be stored; its `path` says where in the state.
    """
    encoder = _Encoder(codec, part_aad)
    if type(state) is not dict:
        hints = [(old, layout.whole) for old, layout in parents if layout.whole is not None]
        return _layout(None, _at(encoder.ref, state, hints, "")), encoder.parts
    keyed = [(old, layout.refs) for old, layout in parents if type(old) is dict and layout.refs is not None]
    refs: dict[Any, Ref] = {}
    for key, value in state.items():
        hints = [(old[key], by_key[key]) for old, by_key in keyed if key in old and key in by_key]
        refs[key] = _at(encoder.ref, value, hints, f"[{key!r}]")
    return _layout(refs, None), encoder.parts


def _at(ref: Any, value: Any, hints: list[tuple[Any, Ref]], where: str) -> Ref:
    try:
        return ref(value, hints)  # type: ignore[no-any-return]
    except SerializationError as exc:
        if where:
            exc.path = where + (getattr(exc, "path", "") or "")  # type: ignore[attr-defined]
        raise


def layout_of(manifest: Any, where: str) -> Layout:
    """The layout a stored manifest describes, its shape checked.

    Raises:
        SerializationError: the manifest is not one this version wrote (`where` names it).
    """
    if type(manifest) is list and len(manifest) == 3 and manifest[0] == "map":  # noqa: PLR2004
        keys, refs = manifest[1], manifest[2]
        if type(keys) is list and type(refs) is list and len(keys) == len(refs):
            try:
                by_key = dict(zip(keys, refs, strict=True))
            except TypeError:
                by_key = None
            if by_key is not None and len(by_key) == len(keys) and all(map(_valid_ref, refs)):
                return _layout(by_key, None)
    elif type(manifest) is list and len(manifest) == 2:  # noqa: PLR2004
        if manifest[0] == "one" and _valid_ref(manifest[1]):
            return _layout(None, manifest[1])
        if manifest[0] == "val":
            return SMALL
    raise SerializationError(
        f"{where} is damaged: its manifest is not a list of keys and part references this version "
        f"of actorgraph wrote. Restore the store from a good copy, or resume from another checkpoint"
    )


def _valid_ref(ref: object, *, nested: bool = False) -> bool:
    if type(ref) is bytes:
        return True
    if type(ref) is str:
        return is_part_id(ref)
    return not nested and type(ref) is list and all(_valid_ref(r, nested=True) for r in ref)


def assemble(codec: PartCodec, layout: Layout, parts: Mapping[str, Any], where: str) -> Any:
    """The state a layout describes, from its inline values and the decoded `parts`.

    Raises:
        SerializationError: a part is missing, or a chunk is not a list.
    """

    def value(ref: Ref) -> Any:
        if type(ref) is bytes:
            return codec.loads(ref)
        if type(ref) is str:
            if ref not in parts:
                raise SerializationError(
                    f"{where} is damaged: its part {ref!r} is not stored (deleted or never written). "
                    f"Restore the store from a good copy, or resume from another checkpoint"
                )
            return parts[ref]
        items: list[Any] = []
        for chunk in map(value, ref):  # type: ignore[arg-type]
            if type(chunk) is not list:
                raise SerializationError(f"{where} is damaged: a chunk of a list is not a list")
            items.extend(chunk)
        return items

    if layout.refs is None:
        return value(layout.whole)  # type: ignore[arg-type]
    return {key: value(ref) for key, ref in layout.refs.items()}
