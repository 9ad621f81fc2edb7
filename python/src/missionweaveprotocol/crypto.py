"""Ed25519 keys (RFC 8032 pure Ed25519, deterministic), from the Rust core.

The core is sans-IO and holds no randomness: new keys take their seed from the operating
system here (``os.urandom``, through :meth:`SigningKey.generate`).

The helpers follow the reference's ``crypto.py`` names. Where the reference returns a
``cryptography`` key object, these return the package's own :class:`SigningKey` (private) or
the 32 public-key bytes (public): the package does not depend on ``cryptography``. Key text is
unpadded base64url; padded text is accepted on input, as in the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Tuple, Union

from ._native import SigningKey, encode_base64url, key_bytes, verify_detached
from .errors import MissionWeaveError

ALGORITHM = "Ed25519"

#: The key ID given to keys loaded without one (for :func:`generate_keypair` and
#: :func:`load_private_key`); name your keys with your Registry key IDs instead.
UNNAMED_KEY_ID = "urn:missionweaveprotocol:key:unnamed"


class _HasPublicKeyBytes(Protocol):
    @property
    def public_key_bytes(self) -> bytes: ...


#: A private key: a :class:`SigningKey`, its 32-byte seed, or the seed's base64url text.
PrivateKeyLike = Union[SigningKey, bytes, str]
#: A public key: any key object with ``public_key_bytes``, 32 bytes, or their base64url text.
PublicKeyLike = Union[_HasPublicKeyBytes, bytes, str]


@dataclass(frozen=True)
class Ed25519SigningKey:
    """The reference's key dataclass: ``Ed25519SigningKey(key_id, private_key)``, where
    ``private_key`` is a :class:`SigningKey`, a 32-byte seed or its base64url text. It satisfies
    the ``SigningKey`` Protocol, so ``SignedDocumentCodec.sign`` accepts it; signing runs in the
    core."""

    key_id: str
    private_key: PrivateKeyLike = field(repr=False)
    _key: SigningKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        seed = load_private_key(self.private_key).seed_bytes()
        object.__setattr__(self, "_key", SigningKey(self.key_id, seed))

    @property
    def algorithm(self) -> str:
        return ALGORITHM

    @property
    def public_key_bytes(self) -> bytes:
        return self._key.public_key_bytes

    @property
    def public_key(self) -> str:
        """The public key as unpadded base64url."""
        return self._key.public_key

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)


def generate_keypair() -> Tuple[str, str]:
    """A fresh key pair as ``(private_key, public_key)``, both canonical unpadded base64url.

    The private key is the 32-byte seed; ``SigningKey(key_id, private_key)`` or
    :func:`load_private_key` turn it back into a key.
    """
    key = SigningKey.generate(UNNAMED_KEY_ID)
    return key.to_base64url(), key.public_key


def generate_signing_key(key_id: str) -> SigningKey:
    """A fresh signing key for the Registry key ID ``key_id``."""
    return SigningKey.generate(key_id)


def load_private_key(value: PrivateKeyLike, key_id: str = UNNAMED_KEY_ID) -> SigningKey:
    """A :class:`SigningKey` from a key, a 32-byte seed or its base64url text.

    Raises :class:`~missionweaveprotocol.errors.InvalidInputError` (a ``ValueError``) when the
    value is not 32 bytes or not base64url. A :class:`SigningKey` is returned unchanged.
    """
    if isinstance(value, SigningKey):
        return value
    return SigningKey(key_id, value)


def load_public_key(value: PublicKeyLike) -> bytes:
    """The 32 public-key bytes of a key object, of 32 bytes, or of their base64url text.

    Raises :class:`~missionweaveprotocol.errors.InvalidInputError` (a ``ValueError``) otherwise.
    """
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return key_bytes(value, "public key")
    # A key object; anything else reaches key_bytes, which raises InvalidInputError.
    raw: Any = getattr(value, "public_key_bytes", value)
    return key_bytes(raw, "public key")


def encode_private_key(key: PrivateKeyLike) -> str:
    """The private key (seed) as canonical unpadded base64url."""
    return load_private_key(key).to_base64url()


def encode_public_key(key: PublicKeyLike) -> str:
    """The public key as canonical unpadded base64url (the Registry's ``publicKey`` text)."""
    return encode_base64url(load_public_key(key))


def sign_bytes(value: bytes, private_key: PrivateKeyLike) -> str:
    """The Ed25519 signature of ``value`` as unpadded base64url (the reference's)."""
    return encode_base64url(load_private_key(private_key).sign(value))


def verify_bytes(value: bytes, signature: str, public_key: PublicKeyLike) -> bool:
    """Whether ``signature`` (base64url text) is a valid Ed25519 signature of ``value`` by
    ``public_key``. Never raises: a malformed key, signature or value is ``False``.

    Strict, unlike the reference's (which used a permissive verifier, its gap §7.2): the
    core's §6.4 rules (canonical unpadded base64url, 64 bytes, ``S < L``, canonical
    prime-order ``R``, a strict prime-order public key, the cofactorless equation)."""
    try:
        key = load_public_key(public_key)
    except (MissionWeaveError, ValueError, TypeError):
        return False
    if not isinstance(value, (bytes, bytearray, memoryview)):
        return False
    return verify_detached(key, bytes(value), signature)


def sign_canonical(value: Any, private_key: PrivateKeyLike) -> str:
    """The Ed25519 signature (base64url) of the RFC 8785 bytes of ``value``
    (:func:`~missionweaveprotocol.canonical.canonical_bytes`: pydantic models, enums, aware
    datetimes … are normalised as the reference does).

    This is the reference's *non-normative* helper: the protocol's signed documents (Commands,
    Events, Agent Cards, …) are signed by ``SignedDocumentCodec.sign`` over their wire form
    (§6.4), and our Core refuses a Command signed with this helper."""
    from .canonical import canonical_bytes

    return sign_bytes(canonical_bytes(value), private_key)


def verify_canonical(value: Any, signature: str, public_key: PublicKeyLike) -> bool:
    """Whether ``signature`` signs the RFC 8785 bytes of ``value`` (strict, as
    :func:`verify_bytes`). Never raises: a value that has no canonical form is ``False``."""
    from .canonical import canonical_bytes

    try:
        message = canonical_bytes(value)
    except (MissionWeaveError, ValueError, TypeError):
        return False
    return verify_bytes(message, signature, public_key)


__all__ = [
    "ALGORITHM",
    "Ed25519SigningKey",
    "PrivateKeyLike",
    "PublicKeyLike",
    "SigningKey",
    "UNNAMED_KEY_ID",
    "encode_private_key",
    "encode_public_key",
    "generate_keypair",
    "generate_signing_key",
    "load_private_key",
    "load_public_key",
    "sign_bytes",
    "sign_canonical",
    "verify_bytes",
    "verify_canonical",
]
