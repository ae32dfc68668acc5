"""Serializers for checkpoints: states to bytes and back.

Security model:

- `MsgpackSerializer` (the default) stores plain data and, for user classes
  (enums, dataclasses, pydantic models), a class path checked against an
  allowlist. Saving refuses anything it could not load back; loading looks every
  class path up in the allowlist *before* importing anything, so forged bytes
  cannot make it import or call code you did not allow.
- `PickleSerializer` saves arbitrary objects. Loading pickles runs arbitrary
  code: use it only for data that only you can write.
- `EncryptedSerializer` wraps either one with AES-GCM. The engine's `aad` (the
  thread and the checkpoint, version or part id) is authenticated with the
  bytes, so bytes tampered with, moved to another thread or checkpoint, or
  encrypted with another key are refused. Parts of states are addressed by a
  keyed digest of their plaintext (`address`), which tells nothing without the key.
"""

from __future__ import annotations

import hmac
import os
import pickle
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from actorgraph._model.errors import ConfigError, MissingDependencyError, SerializationError
from actorgraph.checkpoint._allowlist import Allowlist, Refused
from actorgraph.checkpoint._msgpack_ext import MAGIC as _MSGPACK_MAGIC
from actorgraph.checkpoint._msgpack_ext import Codec
from actorgraph.checkpoint._protocol import Serializer

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["EncryptedSerializer", "MsgpackSerializer", "PickleSerializer"]

_PICKLE_MAGIC = b"AGp\x01"
_ENCRYPTED_MAGIC = b"AGe\x01"
_NONCE = 12
_TAG = 16
_KEY_SIZES = (16, 24, 32)
_WRITERS = {
    _MSGPACK_MAGIC[:3]: "MsgpackSerializer",
    _PICKLE_MAGIC[:3]: "PickleSerializer",
    _ENCRYPTED_MAGIC[:3]: "EncryptedSerializer",
}


def _error(message: str, *, path: str | None = None) -> SerializationError:
    exc = SerializationError(message)
    exc.path = path  # type: ignore[attr-defined]
    return exc


def _check_header(data: object, magic: bytes, name: str) -> memoryview:
    """The body after `magic`, or `SerializationError` saying whose bytes these are."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise _error(
            f"{name}.loads() takes bytes, not {type(data).__name__}; pass the bytes dumps() returned"
        )
    body = memoryview(data)
    head = bytes(body[: len(magic)])
    if head == magic:
        return body[len(magic) :]
    if len(head) < len(magic):
        raise _error(
            f"these bytes are too short for data written by {name} ({len(head)} bytes); they are "
            f"truncated or damaged: restore them from a good copy or resume from an older checkpoint"
        )
    writer = _WRITERS.get(head[:3])
    if writer == name:
        raise _error(
            f"these bytes were written in format {head[3]} of {name}, which this version of actorgraph "
            f"cannot read (it reads format {magic[3]}); upgrade actorgraph to load them"
        )
    if writer is not None:
        raise _error(
            f"these bytes were written by {writer}, not {name}; configure the checkpointer with the "
            f"serializer that wrote them"
        )
    raise _error(
        f"these bytes were not written by {name} (they do not start with its header); they are "
        f"damaged or come from another store"
    )


class MsgpackSerializer:
    """The safe default serializer: msgpack with an allowlist for user classes.

    Saves None, bool, int (any size), float, str, bytes, list, dict (with keys
    of any hashable supported type), tuple, set, frozenset, `datetime`
    (`datetime`, `date`, `time` with `timezone` or `ZoneInfo` tzinfo, `timedelta`),
    `UUID` and `Decimal`; and enum members, dataclass instances and pydantic v2
    models whose class is allowed. Values come back equal and of the same types
    (bytearray and memoryview come back as bytes).

    Saving refuses, with `SerializationError`, any value that could not be loaded
    back; the error's message and its `path` attribute say where in the value
    the offending part is (like `['user']['address'].city`). Loading never
    imports or calls a class that is not allowed. `aad` is ignored.

    Args:
        allowed: the user classes that may be saved and loaded: classes,
            `"module"` strings (every class defined in that module, not its
            submodules) or `"module:QualName"` strings. Subclasses of an allowed
            class are not allowed by it.

    Raises:
        ValueError: an `allowed` string is not a module name or class path.
        TypeError: an `allowed` item is neither a string nor an enum, dataclass
            or pydantic model class.
    """

    def __init__(self, allowed: Iterable[type | str] = ()) -> None:
        self._codec = Codec(Allowlist(allowed))

    def dumps(self, value: Any, *, aad: bytes = b"") -> bytes:  # noqa: ARG002 - the protocol's signature
        """Encode `value` as msgpack.

        Args:
            value: the value to save.
            aad: ignored (it matters to authenticating serializers only).

        Returns:
            The bytes, starting with this format's header.

        Raises:
            SerializationError: a part of `value` could not be loaded back (its
                `path` attribute says which part).
        """
        try:
            return self._codec.pack(value, _MSGPACK_MAGIC)
        except (Refused, ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise self._refusal(value, exc) from (None if isinstance(exc, Refused) else exc)

    def _refusal(self, value: Any, exc: Exception) -> SerializationError:
        found = self._codec.find_refusal(value)
        if found is None:  # not located by the walk: report the failure as it came
            cause = exc.reason if isinstance(exc, Refused) else f"{type(exc).__name__}: {exc}"
            return _error(
                f"MsgpackSerializer cannot save this value ({cause}); if it nests very deeply "
                f"(about 1000 levels), flatten it"
            )
        path, refused = found
        cls = type(refused.value)
        kind = f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else cls.__qualname__
        where = f"the value at {path}" if path else "the value"
        return _error(f"MsgpackSerializer cannot save {where}, of type {kind}: {refused.reason}", path=path)

    def loads(self, data: bytes, *, aad: bytes = b"") -> Any:  # noqa: ARG002 - the protocol's signature
        """Decode bytes written by `dumps`.

        Args:
            data: the bytes.
            aad: ignored.

        Returns:
            The value, equal to the one saved and of the same types.

        Raises:
            SerializationError: the bytes are damaged or not from this
                serializer, or name a class this serializer does not allow.
        """
        return self._codec.unpack(_check_header(data, _MSGPACK_MAGIC, "MsgpackSerializer"))


class PickleSerializer:
    """Serializer for arbitrary objects (lambdas, closures, any class) with cloudpickle.

    WARNING: LOADING RUNS ARBITRARY CODE; FOR TRUSTED DATA ONLY. Anyone who can
    write the stored bytes can run any code in your process when they are
    loaded. Use it only for stores that only you can write, or wrap it in
    `EncryptedSerializer` so that bytes not written with your key are refused
    before they are unpickled. Prefer `MsgpackSerializer` for everything else.

    `aad` is ignored.
    """

    def dumps(self, value: Any, *, aad: bytes = b"") -> bytes:  # noqa: ARG002 - the protocol's signature
        """Pickle `value` (functions and classes by value where needed).

        Args:
            value: the value to save.
            aad: ignored.

        Returns:
            The bytes, starting with this format's header.

        Raises:
            SerializationError: `value` cannot be pickled (the cause is chained).
        """
        try:
            import cloudpickle  # noqa: PLC0415 - only this serializer needs it

            pickled: bytes = cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise _error(
                f"PickleSerializer cannot pickle this value ({type(exc).__name__}: {exc}); remove the "
                f"unpicklable part (open files, locks, sockets...) from the state"
            ) from exc
        return _PICKLE_MAGIC + pickled

    def loads(self, data: bytes, *, aad: bytes = b"") -> Any:  # noqa: ARG002 - the protocol's signature
        """Unpickle bytes written by `dumps`. Runs arbitrary code: trusted data only.

        Args:
            data: the bytes.
            aad: ignored.

        Returns:
            The value.

        Raises:
            SerializationError: the bytes cannot be unpickled (the cause is chained).
        """
        body = _check_header(data, _PICKLE_MAGIC, "PickleSerializer")
        try:
            return pickle.loads(body)  # noqa: S301 - this serializer is for trusted data, as documented
        except Exception as exc:
            raise _error(
                f"PickleSerializer cannot unpickle the stored data ({type(exc).__name__}: {exc}); it "
                f"is damaged, or a module or class it refers to is missing in this process"
            ) from exc


class EncryptedSerializer:
    """Serializer that encrypts and authenticates another serializer's bytes with AES-GCM.

    Each `dumps` uses a fresh random 12-byte nonce and binds `aad` (the engine
    passes the thread and the checkpoint or blob id) to the bytes; `loads`
    refuses bytes that were tampered with, moved to another thread or
    checkpoint, or encrypted with another key.

    Args:
        inner: the serializer whose bytes are encrypted.
        key: a 16-, 24- or 32-byte AES key, or a list of them for key rotation:
            the first encrypts, all are tried when decrypting. Keep keys secret;
            `generate_key()` makes one.

    Raises:
        ValueError: a key has the wrong length, or no key was given.
        ImportError: the `cryptography` package is missing.
    """

    def __init__(self, inner: Serializer, key: bytes | Sequence[bytes]) -> None:
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415 - optional
        except ImportError as exc:
            raise MissingDependencyError(
                'EncryptedSerializer needs the cryptography package: pip install "actorgraph[encryption]"'
            ) from exc
        keys = [key] if isinstance(key, bytes | bytearray) else list(key)
        if not keys:
            raise ConfigError("EncryptedSerializer needs at least one key; make one with generate_key()")
        for index, one in enumerate(keys):
            if not isinstance(one, bytes | bytearray) or len(one) not in _KEY_SIZES:
                size = f"{len(one)} bytes" if isinstance(one, bytes | bytearray) else type(one).__name__
                which = "the key" if len(keys) == 1 else f"key {index}"
                raise ConfigError(
                    f"EncryptedSerializer: {which} is {size}; AES keys are 16, 24 or 32 bytes. Make "
                    f"one with EncryptedSerializer.generate_key()"
                )
        self.inner = inner
        self._ciphers: list[AESGCM] = [AESGCM(bytes(one)) for one in keys]
        # content addresses of stored parts are keyed, so they reveal nothing to whoever lacks the key
        self._address_key = hmac.digest(bytes(keys[0]), b"actorgraph part address", "sha256")

    @staticmethod
    def generate_key() -> bytes:
        """Make a new random 32-byte (AES-256) key.

        Returns:
            The key; store it as a secret.
        """
        return os.urandom(32)

    def dumps(self, value: Any, *, aad: bytes = b"") -> bytes:
        """Encode `value` with the inner serializer and encrypt it with the first key.

        Args:
            value: the value to save.
            aad: where the bytes belong; `loads` needs the same `aad`.

        Returns:
            Header, nonce and ciphertext.

        Raises:
            SerializationError: the inner serializer refused the value.
        """
        return self.seal(self.inner.dumps(value, aad=aad), aad=aad)

    def seal(self, plain: bytes, *, aad: bytes) -> bytes:
        """Encrypt bytes of the inner serializer with the first key, bound to `aad`."""
        nonce = os.urandom(_NONCE)
        return _ENCRYPTED_MAGIC + nonce + self._ciphers[0].encrypt(nonce, plain, _ENCRYPTED_MAGIC + aad)

    def address(self, plain: bytes) -> str:
        """A keyed digest of bytes of the inner serializer (32 hex digits): their content address.

        Equal bytes get equal addresses under one key, so parts are stored once;
        without the key an address tells nothing about the content.
        """
        return hmac.digest(self._address_key, plain, "sha256")[:16].hex()

    def loads(self, data: bytes, *, aad: bytes = b"") -> Any:
        """Decrypt and authenticate bytes written by `dumps`, then decode them.

        Args:
            data: the bytes.
            aad: the `aad` they were written with.

        Returns:
            The value.

        Raises:
            SerializationError: the bytes failed authentication, or the inner
                serializer could not decode them.
        """
        return self.inner.loads(self.unseal(data, aad=aad), aad=aad)

    def unseal(self, data: bytes, *, aad: bytes) -> bytes:
        """Decrypt and authenticate bytes written by `seal`; the inner serializer's bytes.

        Raises:
            SerializationError: the bytes failed authentication with every key.
        """
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415 - optional dependency

        body = _check_header(data, _ENCRYPTED_MAGIC, "EncryptedSerializer")
        if len(body) < _NONCE + _TAG:
            raise _error(
                "the encrypted data is truncated (shorter than a nonce and a tag); restore it from a "
                "good copy or resume from an older checkpoint"
            )
        nonce, sealed = bytes(body[:_NONCE]), bytes(body[_NONCE:])
        for cipher in self._ciphers:
            try:
                return cipher.decrypt(nonce, sealed, _ENCRYPTED_MAGIC + aad)
            except InvalidTag:
                continue
        keys = "the key" if len(self._ciphers) == 1 else f"any of the {len(self._ciphers)} keys"
        raise _error(
            f"the encrypted data failed authentication with {keys}: it was tampered with, moved "
            f"from another thread or checkpoint, or encrypted with another key. Configure the key "
            f"that wrote it (keys=[new, old] during rotation), or discard the data"
        )
