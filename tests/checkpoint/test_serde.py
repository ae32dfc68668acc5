"""Tests for the checkpoint serializers: msgpack with an allowlist, pickle, and AES-GCM encryption."""

from __future__ import annotations

import contextlib
import datetime as dt
import enum
import pickle
import re
import sys
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import InitVar, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import msgpack
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorgraph._model.errors import SerializationError
from actorgraph.checkpoint._protocol import Serializer
from actorgraph.checkpoint.serde import EncryptedSerializer, MsgpackSerializer, PickleSerializer

# -- user classes, at module level so that they can be found by their path -----------------


@dataclass(frozen=True)
class Address:
    city: str
    zip_code: str = ""


@dataclass
class Profile:
    name: str
    address: Address
    tags: set[str] = field(default_factory=set)


@dataclass
class Counter:
    start: int
    current: int = field(init=False)
    history: list[int] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.current = self.start


@dataclass(frozen=True, slots=True)
class Frozen:
    key: tuple[int, ...]
    extra: int = field(init=False, default=0)


@dataclass
class WithInitVar:
    value: int
    scale: InitVar[int]

    def __post_init__(self, scale: int) -> None:
        self.value *= scale


@dataclass
class Holder:
    item: Any


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Perm(enum.Flag):
    READ = 1
    WRITE = 2


class Point(pydantic.BaseModel):
    x: int
    y: int


class Shape(pydantic.BaseModel):
    name: str
    points: list[Point]
    created: dt.datetime
    tags: frozenset[str] = frozenset()
    color: Color = Color.RED


class Unlisted(pydantic.BaseModel):
    label: str


class Opaque:
    pass


ALL = [Address, Profile, Counter, Frozen, Holder, Color, Level, Perm, Point, Shape]


def roundtrip(value: Any, serializer: Serializer | None = None) -> Any:
    serializer = serializer or MsgpackSerializer(allowed=ALL)
    return serializer.loads(serializer.dumps(value))


def canon(value: Any) -> Any:
    """A hashable form that tells apart values that are equal but of different types or forms."""
    kind = type(value).__qualname__
    if isinstance(value, list | tuple):
        return kind, tuple(canon(item) for item in value)
    if isinstance(value, set | frozenset):
        return kind, frozenset(canon(item) for item in value)
    if isinstance(value, dict):
        return kind, tuple((canon(key), canon(item)) for key, item in value.items())
    return kind, repr(value)


def assert_same(a: Any, b: Any) -> None:
    assert a == b
    assert canon(a) == canon(b)


# -- strategies ---------------------------------------------------------------------------

fixed_offsets = st.builds(
    dt.timezone,
    st.timedeltas(
        min_value=dt.timedelta(hours=-23, minutes=-59), max_value=dt.timedelta(hours=23, minutes=59)
    ),
)
tzinfos = st.none() | st.just(dt.UTC) | fixed_offsets | st.timezones()
hashable_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64)
    | st.integers(max_value=-(2**63) - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
    | st.datetimes(timezones=tzinfos)
    | st.dates()
    | st.times(timezones=tzinfos)
    | st.timedeltas()
    | st.uuids()
    | st.decimals(allow_nan=False)
)
hashables = st.recursive(
    hashable_scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=6
)
plain_values = st.recursive(
    hashable_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        | st.dictionaries(hashables, inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.sets(hashables, max_size=3)
        | st.frozensets(hashables, max_size=3)
    ),
    max_leaves=20,
)


# -- MsgpackSerializer: round trips ---------------------------------------------------------


@pytest.mark.slow
@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(plain_values)
def test_plain_values_round_trip_exactly(value: Any) -> None:
    assert_same(roundtrip(value, MsgpackSerializer()), value)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -1,
        2**63 - 1,
        2**64 - 1,
        2**64,
        -(2**63),
        -(2**63) - 1,
        10**100,
        -(10**100),
        1.5,
        -0.0,
        float("inf"),
        "",
        "text with \u00e9 and \U0001f600",
        "lone surrogate \ud800",
        b"\x00\xff",
        [],
        [[1, [2, [3]]]],
        (),
        (1,),
        ((1, 2), [3, (4,)]),
        set(),
        {1, "a", (2, 3)},
        frozenset({frozenset({1})}),
        {"a": {"b": {"c": [1, 2]}}},
        {(1, 2): "tuple key", frozenset({3}): "frozenset key", 4: "int", 1.5: "float", None: "none"},
        {True: "bool key", b"k": "bytes key", 10**30: "big int key"},
        {Color.RED: 1, Address("Oslo"): 2},
        dt.datetime(2024, 2, 29, 23, 59, 59, 999999),  # noqa: DTZ001 - naive datetimes are supported
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-3, minutes=-30))),
        dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=2), "CEST")),
        dt.datetime(2024, 10, 27, 2, 30, tzinfo=ZoneInfo("Europe/Berlin"), fold=1),
        dt.date(1, 1, 1),
        dt.time(12, 30, 1, 5),
        dt.time(1, 2, tzinfo=ZoneInfo("America/New_York")),
        dt.timedelta(days=-1, seconds=5, microseconds=7),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        Decimal("-0.00"),
        Decimal("1E+30"),
        Decimal("Infinity"),
    ],
    ids=repr,
)
def test_each_supported_type_round_trips(value: Any) -> None:
    assert_same(roundtrip(value), value)


def test_timezones_are_restored_as_the_same_tzinfo() -> None:
    berlin = dt.datetime(2024, 6, 1, tzinfo=ZoneInfo("Europe/Berlin"))
    named = dt.datetime(2024, 6, 1, tzinfo=dt.timezone(dt.timedelta(hours=2), "CEST"))
    back = roundtrip([berlin, named, dt.datetime(2024, 6, 1, tzinfo=dt.UTC)])
    assert back[0].tzinfo is ZoneInfo("Europe/Berlin")
    assert back[1].tzname() == "CEST"
    assert back[2].tzinfo is dt.UTC


def test_dataclasses_round_trip_nested_frozen_and_with_init_false_fields() -> None:
    counter = Counter(5)
    counter.current = 9
    counter.history.append(1)
    frozen = Frozen((1, 2))
    object.__setattr__(frozen, "extra", 3)
    value = {
        "profile": Profile("ada", Address("London", "N1"), {"admin"}),
        "counter": counter,
        "frozen": frozen,
        "holder": Holder((Level.HIGH, {Color.BLUE})),
    }
    back = roundtrip(value)
    assert_same(back, value)
    assert back["counter"].current == 9
    assert back["counter"].history == [1]
    assert back["frozen"].extra == 3
    assert type(back["profile"].address) is Address


def test_enums_round_trip_as_their_own_members() -> None:
    value = [Color.RED, Level.LOW, Perm.READ | Perm.WRITE, {Level.HIGH: Color.BLUE}]
    back = roundtrip(value)
    assert_same(back, value)
    assert back[0] is Color.RED
    assert type(back[1]) is Level


def test_pydantic_models_round_trip() -> None:
    shape = Shape(
        name="tri",
        points=[Point(x=0, y=0), Point(x=1, y=2)],
        created=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        tags=frozenset({"a"}),
        color=Color.BLUE,
    )
    back = roundtrip({"shape": shape, "point": Point(x=3, y=4)})
    assert back == {"shape": shape, "point": Point(x=3, y=4)}
    assert type(back["shape"].points[0]) is Point


def test_allowed_as_module_string() -> None:
    serializer = MsgpackSerializer(allowed=[__name__])
    value = {"profile": Profile("x", Address("y")), "color": Color.RED, "point": Point(x=1, y=2)}
    assert_same(roundtrip(value, serializer), value)


def test_allowed_as_class_path_string() -> None:
    serializer = MsgpackSerializer(allowed=[f"{__name__}:Profile", f"{__name__}:Address"])
    value = Profile("x", Address("y"))
    assert_same(roundtrip(value, serializer), value)
    with pytest.raises(SerializationError, match="Color"):
        serializer.dumps(Color.RED)


def test_a_class_defined_in_a_function_is_saved_when_allowed_as_the_class_itself() -> None:
    @dataclass
    class Local:
        x: int

    assert roundtrip(Local(1), MsgpackSerializer(allowed=[Local])) == Local(1)
    with pytest.raises(SerializationError, match="does not lead back") as info:
        MsgpackSerializer(allowed=[__name__]).dumps({"a": Local(1)})
    assert info.value.path == "['a']"  # type: ignore[attr-defined]


def test_dumps_writes_a_version_header() -> None:
    data = MsgpackSerializer().dumps({"a": 1})
    assert data[:3] == b"AGm"
    assert data != MsgpackSerializer().dumps({"a": 2})


def test_aad_is_ignored_by_msgpack() -> None:
    serializer = MsgpackSerializer()
    assert serializer.loads(serializer.dumps([1], aad=b"x"), aad=b"y") == [1]


def test_serializers_satisfy_the_protocol() -> None:
    key = EncryptedSerializer.generate_key()
    for serializer in (
        MsgpackSerializer(),
        PickleSerializer(),
        EncryptedSerializer(MsgpackSerializer(), key),
    ):
        assert isinstance(serializer, Serializer)


# -- MsgpackSerializer: refusing at save ------------------------------------------------------


def test_a_dataclass_that_is_not_allowed_is_refused_with_its_path() -> None:
    value = {"user": {"profile": Profile("ada", Address("London"))}}
    with pytest.raises(SerializationError) as info:
        MsgpackSerializer(allowed=[Address]).dumps(value)
    message = str(info.value)
    assert "['user']['profile']" in message
    assert "Profile" in message
    assert "allowed=[" in message
    assert "PickleSerializer" in message
    assert info.value.path == "['user']['profile']"  # type: ignore[attr-defined]


def test_a_nested_part_that_is_not_allowed_is_located_inside_an_allowed_dataclass() -> None:
    value = {"user": Profile("ada", Address("London"))}
    with pytest.raises(SerializationError) as info:
        MsgpackSerializer(allowed=[Profile]).dumps(value)
    assert info.value.path == "['user'].address"  # type: ignore[attr-defined]
    assert "Address" in str(info.value)


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        ({"f": lambda x: x}, "['f']", "function"),
        ({"items": [1, 2, 3, threading.Lock()]}, "['items'][3]", "lock"),
        ([(i for i in range(3))], "[0]", "generator"),
        ({"o": Opaque()}, "['o']", "Opaque"),
        ({"tuple": (1, {"deep": [object()]})}, "['tuple'][1]['deep'][0]", "object"),
        ({"s": {1, Opaque()}}, "['s']{...}", "Opaque"),
        ({(1, Opaque()): 1}, "[<key tuple>][1]", "Opaque"),
        ({"od": OrderedDict(a=1)}, "['od']", "OrderedDict"),
        ({"cls": Opaque}, "['cls']", "type"),
        (Holder(item=print), ".item", "builtin_function_or_method"),
        ({"model": Unlisted(label="x")}, "['model']", "Unlisted"),
        (Opaque(), "", "Opaque"),
    ],
    ids=repr,
)
def test_unsupported_values_are_refused_with_their_path(value: Any, path: str, type_name: str) -> None:
    with pytest.raises(SerializationError) as info:
        MsgpackSerializer(allowed=ALL).dumps(value)
    assert info.value.path == path  # type: ignore[attr-defined]
    assert path in str(info.value)
    assert type_name in str(info.value)
    assert "PickleSerializer" in str(info.value)


def test_an_unsupported_tzinfo_is_refused() -> None:
    class Custom(dt.tzinfo):
        def utcoffset(self, _: dt.datetime | None) -> dt.timedelta:
            return dt.timedelta(0)

    with pytest.raises(SerializationError, match="tzinfo") as info:
        MsgpackSerializer().dumps({"when": [dt.datetime(2024, 1, 1, tzinfo=Custom())]})
    assert info.value.path == "['when'][0]"  # type: ignore[attr-defined]


def test_a_dataclass_whose_init_needs_more_than_its_fields_is_refused() -> None:
    with pytest.raises(SerializationError, match="InitVar"):
        MsgpackSerializer(allowed=[WithInitVar]).dumps(WithInitVar(1, 2))


def test_reference_cycles_are_refused() -> None:
    cyclic: list[Any] = [1]
    cyclic.append({"self": cyclic})
    with pytest.raises(SerializationError, match="cycle") as info:
        MsgpackSerializer().dumps(cyclic)
    assert info.value.path == "[1]['self']"  # type: ignore[attr-defined]


def test_allowed_is_validated() -> None:
    with pytest.raises(ValueError, match="neither a module name"):
        MsgpackSerializer(allowed=["not a module"])
    with pytest.raises(TypeError, match="classes, module names"):
        MsgpackSerializer(allowed=[42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="not an enum, dataclass or pydantic model"):
        MsgpackSerializer(allowed=[Opaque])

    @dataclass
    class Local:
        x: int

    first = Local

    @dataclass
    class Local:  # type: ignore[no-redef]
        x: int

    with pytest.raises(ValueError, match="two different classes"):
        MsgpackSerializer(allowed=[first, Local])


# -- MsgpackSerializer: refusing at load ------------------------------------------------------


def test_bytes_naming_a_class_the_reader_does_not_allow_are_refused() -> None:
    data = MsgpackSerializer(allowed=[Profile, Address]).dumps({"p": Profile("a", Address("b"))})
    with pytest.raises(SerializationError, match=f"{__name__}:Profile") as info:
        MsgpackSerializer(allowed=[Address]).loads(data)
    assert "allowed=" in str(info.value)
    with pytest.raises(SerializationError, match="Color"):
        MsgpackSerializer().loads(MsgpackSerializer(allowed=[Color]).dumps(Color.RED))


def _forge(class_path: str) -> bytes:
    """Bytes as `dumps` writes them for a dataclass, renamed to `class_path`."""
    real = MsgpackSerializer(allowed=[Holder]).dumps(Holder(1))
    header = len(MsgpackSerializer().dumps(None)) - 1
    marker, _, init, other = msgpack.unpackb(real[header:])
    return real[:header] + msgpack.packb([marker, class_path, init, other])


@pytest.fixture
def probe_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A module on sys.path that leaves a file behind when it is imported."""
    name = f"ag_serde_probe_{uuid.uuid4().hex}"
    marker = tmp_path / "imported"
    (tmp_path / f"{name}.py").write_text(
        "import pathlib\n"
        "from dataclasses import dataclass\n"
        f"pathlib.Path({str(marker)!r}).write_text('imported')\n"
        "@dataclass\n"
        "class Holder:\n"
        "    item: object\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, marker
    sys.modules.pop(name, None)


def test_loading_forged_bytes_never_imports_a_module_that_is_not_allowed(
    probe_module: tuple[str, Path],
) -> None:
    name, marker = probe_module
    forged = _forge(f"{name}:Holder")
    for reader in (MsgpackSerializer(), MsgpackSerializer(allowed=[Holder, "json", f"{name}x:Holder"])):
        with pytest.raises(SerializationError, match=f"{name}:Holder") as info:
            reader.loads(forged)
        assert "nothing was imported" in str(info.value)
    assert name not in sys.modules
    assert not marker.exists()


def test_loading_imports_a_module_only_when_allowed(probe_module: tuple[str, Path]) -> None:
    name, marker = probe_module
    value = MsgpackSerializer(allowed=[name]).loads(_forge(f"{name}:Holder"))
    assert marker.exists()
    assert type(value).__module__ == name
    assert value.item == 1


def test_loading_a_stdlib_path_is_refused_without_importing_it() -> None:
    candidates = ("xml.dom.minidom", "mailbox", "imaplib", "nntplib", "tabnanny")
    module = next(name for name in candidates if name not in sys.modules)
    with pytest.raises(SerializationError, match=re.escape(f"{module}:Node")):
        MsgpackSerializer(allowed=[Holder]).loads(_forge(f"{module}:Node"))
    assert module not in sys.modules


def test_a_stored_path_that_is_not_the_stored_kind_is_refused() -> None:
    with pytest.raises(SerializationError, match="not one now"):
        MsgpackSerializer(allowed=[Color]).loads(_forge(f"{__name__}:Color"))


@settings(deadline=None, max_examples=300)
@given(st.binary(max_size=64))
def test_garbage_bytes_raise_serialization_error(data: bytes) -> None:
    with pytest.raises(SerializationError):
        MsgpackSerializer(allowed=ALL).loads(data)


@settings(deadline=None, max_examples=300)
@given(st.binary(max_size=64))
def test_garbage_after_the_header_raises_only_serialization_error(body: bytes) -> None:
    header = MsgpackSerializer().dumps(None)[:-1]
    with contextlib.suppress(SerializationError):
        MsgpackSerializer(allowed=ALL).loads(header + body)


def test_every_truncation_raises_serialization_error() -> None:
    serializer = MsgpackSerializer(allowed=ALL)
    data = serializer.dumps({"p": Profile("a", Address("b")), "t": (1, dt.date(2024, 1, 1)), "n": 10**40})
    for end in range(len(data)):
        with pytest.raises(SerializationError):
            serializer.loads(data[:end])


def test_trailing_bytes_and_unknown_ext_codes_are_refused() -> None:
    serializer = MsgpackSerializer()
    data = serializer.dumps([1])
    with pytest.raises(SerializationError, match="damaged"):
        serializer.loads(data + b"\x01")
    header = data[: len(data) - len(msgpack.packb([1]))]
    with pytest.raises(SerializationError, match="ext type 99"):
        serializer.loads(header + msgpack.packb(msgpack.ExtType(99, b"")))


def test_bytes_of_another_serializer_or_format_are_named() -> None:
    pickled = PickleSerializer().dumps(1)
    with pytest.raises(SerializationError, match="written by PickleSerializer"):
        MsgpackSerializer().loads(pickled)
    with pytest.raises(SerializationError, match="written by MsgpackSerializer"):
        PickleSerializer().loads(MsgpackSerializer().dumps(1))
    future = bytearray(MsgpackSerializer().dumps(1))
    future[3] += 1
    with pytest.raises(SerializationError, match="upgrade actorgraph"):
        MsgpackSerializer().loads(bytes(future))
    with pytest.raises(SerializationError, match="takes bytes"):
        MsgpackSerializer().loads("text")  # type: ignore[arg-type]


def _edit(data: bytes, change: Any) -> bytes:
    """`data` with its msgpack body decoded raw, changed by `change`, and encoded again."""
    header = len(MsgpackSerializer().dumps(None)) - 1
    return data[:header] + msgpack.packb(change(msgpack.unpackb(data[header:])))


def test_stored_values_a_class_rejects_are_refused_with_the_cause() -> None:
    data = MsgpackSerializer(allowed=[Level]).dumps(Level.LOW)
    forged = _edit(data, lambda items: [*items[:2], 99])
    with pytest.raises(SerializationError, match="could not re-create") as info:
        MsgpackSerializer(allowed=[Level]).loads(forged)
    assert isinstance(info.value.__cause__, ValueError)


def test_an_unknown_time_zone_says_to_install_tzdata() -> None:
    data = MsgpackSerializer().dumps(dt.datetime(2024, 1, 1, tzinfo=ZoneInfo("UTC")))
    forged = _edit(data, lambda items: [*items[:-1], "No/Such_Zone"])
    with pytest.raises(SerializationError, match="tzdata"):
        MsgpackSerializer().loads(forged)


def test_deeply_nested_values_round_trip() -> None:
    value: Any = ()
    for depth in range(450):
        value = (value,) if depth % 3 else Holder(value)
    assert roundtrip(value) == value


def test_values_nested_too_deeply_are_refused_at_save() -> None:
    value: Any = []
    for _ in range(5000):
        value = [value]
    with pytest.raises(SerializationError, match="nests very deeply"):
        MsgpackSerializer().dumps(value)


def test_forged_nesting_beyond_the_loader_stack_is_refused() -> None:
    header = MsgpackSerializer().dumps(None)[:-1]
    tuple_marker = msgpack.unpackb(MsgpackSerializer().dumps((1,))[len(header) :])[0]
    marker = msgpack.packb(tuple_marker)
    with pytest.raises(SerializationError, match="damaged"):
        MsgpackSerializer().loads(header + (b"\x92" + marker) * 5000 + b"\xc0")


@pytest.mark.parametrize("place", ["alone", "second", "dict value", "twice"])
def test_a_type_marker_out_of_place_is_refused(place: str) -> None:
    header = MsgpackSerializer().dumps(None)[:-1]
    marker = msgpack.unpackb(MsgpackSerializer().dumps((1,))[len(header) :])[0]
    forged = {"alone": marker, "second": [1, marker], "dict value": {"a": marker}, "twice": [marker, marker]}
    with pytest.raises(SerializationError, match="out of place"):
        MsgpackSerializer().loads(header + msgpack.packb(forged[place]))


def test_bytearray_and_memoryview_come_back_as_bytes() -> None:
    assert roundtrip([bytearray(b"ab"), memoryview(b"cd")]) == [b"ab", b"cd"]


# -- PickleSerializer --------------------------------------------------------------------------


def test_pickle_round_trips_lambdas_and_closures() -> None:
    offset = 10

    def add(x: int) -> int:
        return x + offset

    value = {"f": lambda x: x * 2, "g": add, "o": Opaque}
    back = roundtrip(value, PickleSerializer())
    assert back["f"](3) == 6
    assert back["g"](1) == 11
    assert back["o"] is Opaque


def test_pickle_errors_are_serialization_errors_with_the_cause() -> None:
    with pytest.raises(SerializationError, match="cannot pickle") as info:
        PickleSerializer().dumps({"lock": threading.Lock()})
    assert isinstance(info.value.__cause__, TypeError)
    header = PickleSerializer().dumps(None)[:4]
    with pytest.raises(SerializationError, match="cannot unpickle") as info:
        PickleSerializer().loads(header + b"\x80\x05garbage")
    assert isinstance(info.value.__cause__, pickle.UnpicklingError | ValueError | EOFError | KeyError)


def test_pickle_docstring_warns_about_untrusted_data() -> None:
    doc = PickleSerializer.__doc__ or ""
    assert "ARBITRARY CODE" in doc
    assert "TRUSTED DATA ONLY" in doc


# -- EncryptedSerializer -----------------------------------------------------------------------


@pytest.fixture
def key() -> bytes:
    return EncryptedSerializer.generate_key()


def test_encrypted_round_trip(key: bytes) -> None:
    serializer = EncryptedSerializer(MsgpackSerializer(allowed=ALL), key)
    value = {"p": Profile("a", Address("b")), "when": dt.datetime(2024, 1, 1, tzinfo=dt.UTC)}
    data = serializer.dumps(value, aad=b"thread\x00cp1")
    assert b"Profile" not in data
    assert_same(serializer.loads(data, aad=b"thread\x00cp1"), value)
    assert serializer.dumps(value, aad=b"x") != serializer.dumps(value, aad=b"x")  # fresh nonce


@pytest.mark.parametrize("key_size", [16, 24, 32])
def test_every_aes_key_size_works(key_size: int) -> None:
    serializer = EncryptedSerializer(PickleSerializer(), bytes(range(key_size)))
    assert serializer.loads(serializer.dumps(lambda: 7))() == 7


def test_a_tampered_byte_fails_authentication(key: bytes) -> None:
    serializer = EncryptedSerializer(MsgpackSerializer(), key)
    data = serializer.dumps({"a": 1})
    for position in range(4, len(data)):
        tampered = bytearray(data)
        tampered[position] ^= 0x01
        with pytest.raises(SerializationError, match="failed authentication"):
            serializer.loads(bytes(tampered))
    with pytest.raises(SerializationError, match="truncated"):
        serializer.loads(data[:20])


def test_a_wrong_key_fails_authentication(key: bytes) -> None:
    data = EncryptedSerializer(MsgpackSerializer(), key).dumps([1])
    other = EncryptedSerializer(MsgpackSerializer(), EncryptedSerializer.generate_key())
    with pytest.raises(SerializationError, match="encrypted with another key"):
        other.loads(data)


def test_bytes_moved_to_another_place_fail_authentication(key: bytes) -> None:
    serializer = EncryptedSerializer(MsgpackSerializer(), key)
    data = serializer.dumps([1], aad=b"thread-a\x00cp-1")
    with pytest.raises(SerializationError, match="moved from another thread or checkpoint"):
        serializer.loads(data, aad=b"thread-b\x00cp-1")
    with pytest.raises(SerializationError, match="failed authentication"):
        serializer.loads(data)


def test_key_rotation_decrypts_with_any_listed_key(key: bytes) -> None:
    new = EncryptedSerializer.generate_key()
    old_data = EncryptedSerializer(MsgpackSerializer(), key).dumps({"v": 1}, aad=b"a")
    rotated = EncryptedSerializer(MsgpackSerializer(), [new, key])
    assert rotated.loads(old_data, aad=b"a") == {"v": 1}
    new_data = rotated.dumps({"v": 2}, aad=b"a")
    assert EncryptedSerializer(MsgpackSerializer(), new).loads(new_data, aad=b"a") == {"v": 2}
    with pytest.raises(SerializationError, match="failed authentication"):
        EncryptedSerializer(MsgpackSerializer(), key).loads(new_data, aad=b"a")


@pytest.mark.parametrize("bad", [b"short", b"x" * 31, b"", [], [b"x" * 32, b"x" * 20], "k" * 32])
def test_bad_keys_are_value_errors(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"16, 24 or 32 bytes|at least one key"):
        EncryptedSerializer(MsgpackSerializer(), bad)


def test_generate_key_makes_distinct_32_byte_keys() -> None:
    first, second = EncryptedSerializer.generate_key(), EncryptedSerializer.generate_key()
    assert len(first) == 32
    assert first != second


def test_encrypted_refuses_plain_bytes(key: bytes) -> None:
    serializer = EncryptedSerializer(MsgpackSerializer(), key)
    with pytest.raises(SerializationError, match="written by MsgpackSerializer"):
        serializer.loads(MsgpackSerializer().dumps(1))


def test_encrypted_passes_on_the_inner_serializers_refusal(key: bytes) -> None:
    serializer = EncryptedSerializer(MsgpackSerializer(), key)
    with pytest.raises(SerializationError) as info:
        serializer.dumps({"x": [Opaque()]})
    assert info.value.path == "['x'][0]"  # type: ignore[attr-defined]


# -- a pydantic model is validated once, when it is made: loading it back runs no validator ---------


class Greeted(pydantic.BaseModel):
    """Its validators transform their input: run twice, they show it."""

    model_config = pydantic.ConfigDict(extra="allow")

    name: str
    point: Point | None = None
    count: int = 0

    @pydantic.field_validator("name")
    @classmethod
    def greet(cls, value: str) -> str:
        return f"Validated {value}"

    @pydantic.model_validator(mode="after")
    def counted(self) -> Greeted:
        self.count += 1
        return self


def test_a_pydantic_model_loads_back_as_it_was_without_its_validators_running_again() -> None:
    model = Greeted(name="Ann", point=Point(x=1, y=2), note=(1, 2.0))
    back = roundtrip(model, MsgpackSerializer(allowed=[*ALL, Greeted]))
    assert (back.name, back.count, back.point, back.model_extra) == (
        "Validated Ann",
        1,
        Point(x=1, y=2),
        {"note": (1, 2.0)},
    )
    assert type(back.point) is Point and back.model_fields_set == model.model_fields_set


def test_a_pydantic_model_stored_as_model_dump_data_still_loads_validated() -> None:
    """What actorgraph stored before: the class path and `model_dump()`, validated when loaded."""
    from actorgraph.checkpoint._msgpack_ext import _MARK, MAGIC, PYDANTIC

    serializer = MsgpackSerializer(allowed=[*ALL, Greeted])
    old = MAGIC + msgpack.packb(
        [_MARK[PYDANTIC], f"{__name__}:Greeted", {"name": "Ann", "point": {"x": 1, "y": 2}}]
    )
    back = serializer.loads(old)
    assert (back.name, back.count, type(back.point)) == ("Validated Ann", 1, Point)


@pytest.mark.parametrize(
    "payload",
    [
        [f"{__name__}:Greeted", {"name": "x"}, "name"],
        [f"{__name__}:Greeted", {1: "x"}, []],
        [f"{__name__}:Greeted", ["x"], []],
    ],
    ids=["fields set not a list", "a key not a name", "values not a mapping"],
)
def test_a_damaged_pydantic_record_is_refused(payload: list[Any]) -> None:
    from actorgraph.checkpoint._msgpack_ext import _MARK, MAGIC, PYDANTIC

    data = MAGIC + msgpack.packb([_MARK[PYDANTIC], *payload])
    with pytest.raises(SerializationError):
        MsgpackSerializer(allowed=[*ALL, Greeted]).loads(data)
