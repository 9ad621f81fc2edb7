//! Ed25519 as §6.4 requires it: strict point decoding (canonical `y < p`, on the curve, no
//! negative zero, in the prime-order subgroup; public keys not the identity), `S < L`, and the
//! plain cofactorless equation `[S]B = R + [k]A`. ed25519-dalek's `verify_strict` is not this
//! rule (it rejects identity `R`, accepts mixed-order points), so only its signer is used.

use core::fmt;
use core::hint::black_box;
use std::sync::OnceLock;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use ed25519_dalek::Signer as _;
use sha2::{Digest, Sha256, Sha512};

/// Why 32 bytes are not an acceptable Ed25519 point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointError {
    /// Not exactly 32 bytes.
    Length,
    /// The encoded `y` is not below `p = 2^255 − 19`.
    NonCanonical,
    /// No `x` satisfies the curve equation for this `y`.
    OffCurve,
    /// `x = 0` with the sign bit set.
    NegativeZero,
    /// The identity point, which a public key must not be.
    Identity,
    /// Not in the prime-order subgroup (small-order or mixed-order).
    Torsion,
}

impl fmt::Display for PointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Length => "point encoding is not 32 bytes",
            Self::NonCanonical => "point encoding is not canonical (y >= p)",
            Self::OffCurve => "point is not on the curve",
            Self::NegativeZero => "point encodes negative zero",
            Self::Identity => "point is the identity",
            Self::Torsion => "point is not in the prime-order subgroup",
        })
    }
}

impl std::error::Error for PointError {}

/// Whether the little-endian `y` (sign bit cleared) is at least `p = 2^255 − 19`.
fn y_is_noncanonical(bytes: &[u8; 32]) -> bool {
    bytes[31] & 0x7F == 0x7F && bytes[1..31].iter().all(|&b| b == 0xFF) && bytes[0] >= 0xED
}

/// Decodes a point strictly (§6.4, `spec-digest` §3.9 steps 1–7).
pub fn decode_point(bytes: &[u8], allow_identity: bool) -> Result<EdwardsPoint, PointError> {
    let bytes: &[u8; 32] = bytes.try_into().map_err(|_| PointError::Length)?;
    if y_is_noncanonical(bytes) {
        return Err(PointError::NonCanonical);
    }
    let point = CompressedEdwardsY(*bytes)
        .decompress()
        .ok_or(PointError::OffCurve)?;
    // With y canonical, re-encoding differs only when x = 0 and the sign bit was set.
    if point.compress().0 != *bytes {
        return Err(PointError::NegativeZero);
    }
    if point.is_identity() {
        return if allow_identity {
            Ok(point)
        } else {
            Err(PointError::Identity)
        };
    }
    if !point.is_torsion_free() {
        return Err(PointError::Torsion);
    }
    Ok(point)
}

/// A public key that passed the strict checks once; verification reuses the decoded point.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey {
    bytes: [u8; 32],
    negated: EdwardsPoint,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PublicKey({})",
            crate::schema_formats::encode_base64url(&self.bytes)
        )
    }
}

impl PublicKey {
    /// Strictly decodes a 32-byte public key (identity rejected).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PointError> {
        let point = decode_point(bytes, false)?;
        let mut encoded = [0u8; 32];
        encoded.copy_from_slice(bytes);
        Ok(Self {
            bytes: encoded,
            negated: -point,
        })
    }

    /// The 32-byte encoding.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.bytes
    }

    /// The cofactorless equation only: `[S]B − [k]A` must encode to exactly `Renc`. The caller
    /// has already checked `S < L` (stage 3). When the encodings are equal, `Renc` was a
    /// canonical on-curve prime-order point, so the success path needs no decoding of `R`.
    pub fn verify_equation(&self, r_bytes: &[u8; 32], s: &Scalar, message: &[u8]) -> bool {
        crate::work_count::tally(|work| work.equations += 1);
        let k = challenge(r_bytes, &self.bytes, message);
        let r_check = EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &self.negated, s);
        r_check.compress().0 == *r_bytes
    }
}

fn challenge(r: &[u8; 32], a: &[u8; 32], message: &[u8]) -> Scalar {
    let digest: [u8; 64] = Sha512::new()
        .chain_update(r)
        .chain_update(a)
        .chain_update(message)
        .finalize()
        .into();
    Scalar::from_bytes_mod_order_wide(&digest)
}

/// Why a 64-byte signature fails stage 3 of §6.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureEncodingError {
    /// Not exactly 64 bytes.
    Length,
    /// `Renc` is not an acceptable point (identity allowed).
    R(PointError),
    /// `S` is not below the group order `L`.
    SNotReduced,
}

impl fmt::Display for SignatureEncodingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length => f.write_str("signature is not 64 bytes"),
            Self::R(error) => write!(f, "signature R: {error}"),
            Self::SNotReduced => f.write_str("signature S is not below the group order L"),
        }
    }
}

impl std::error::Error for SignatureEncodingError {}

/// A signature split into `Renc` and a canonical `S`.
#[derive(Debug, Clone, Copy)]
pub struct SignatureParts {
    pub r: [u8; 32],
    pub s: Scalar,
}

/// The cheap stage-3 checks: 64 bytes and `S < L`. `R` is checked by [`check_r`], which the
/// verifier runs on every rejection before reporting it.
pub fn split_signature(bytes: &[u8]) -> Result<SignatureParts, SignatureEncodingError> {
    let bytes: &[u8; 64] = bytes
        .try_into()
        .map_err(|_| SignatureEncodingError::Length)?;
    let mut r = [0u8; 32];
    r.copy_from_slice(&bytes[..32]);
    let mut s = [0u8; 32];
    s.copy_from_slice(&bytes[32..]);
    let s = Option::<Scalar>::from(Scalar::from_canonical_bytes(s))
        .ok_or(SignatureEncodingError::SNotReduced)?;
    Ok(SignatureParts { r, s })
}

/// Strict `Renc` validation (identity allowed), with the same verdict as
/// `decode_point(r, true)`. Unlike [`decode_point`] it never stops early: decompression,
/// re-encoding and the subgroup check run for every input (on the basepoint when `r` is off the
/// curve), so a bad `R` costs what a good one does and a stage-3 rejection for `R` is not told
/// apart from a stage-4 or stage-6 one by its time (§6.4).
pub fn check_r(r: &[u8; 32]) -> Result<(), SignatureEncodingError> {
    crate::work_count::tally(|work| work.r_decodings += 1);
    let noncanonical = y_is_noncanonical(r);
    let decompressed = CompressedEdwardsY(*r).decompress();
    let on_curve = decompressed.is_some();
    let point = decompressed.unwrap_or(ED25519_BASEPOINT_POINT);
    // With y canonical, re-encoding differs only when x = 0 and the sign bit was set.
    let reencodes = point.compress().0 == *r;
    let identity = point.is_identity();
    let torsion_free = point.is_torsion_free();
    // Every fact is computed before any is looked at: nothing can be skipped or reordered.
    let (noncanonical, on_curve, reencodes, identity, torsion_free) =
        black_box((noncanonical, on_curve, reencodes, identity, torsion_free));
    let error = if noncanonical {
        PointError::NonCanonical
    } else if !on_curve {
        PointError::OffCurve
    } else if !reencodes {
        PointError::NegativeZero
    } else if identity || torsion_free {
        return Ok(());
    } else {
        PointError::Torsion
    };
    Err(SignatureEncodingError::R(error))
}

/// The key, `Renc` and `S` a rejection uses when it has none of its own (the envelope is
/// malformed, or stage 4 selected no key), so that it still evaluates the equation on the real
/// signing input: every stage-3, stage-4 and stage-6 rejection does the same curve work (§6.4).
/// Never a verdict: the result of an equation on stand-ins is discarded.
#[derive(Debug)]
pub(crate) struct StandIn {
    pub key: PublicKey,
    pub r: [u8; 32],
    pub s: Scalar,
}

/// The process-wide stand-ins, derived once from fixed labels.
pub(crate) fn stand_in() -> &'static StandIn {
    static STAND_IN: OnceLock<StandIn> = OnceLock::new();
    STAND_IN.get_or_init(|| {
        let wide = |label: &[u8]| -> [u8; 64] { Sha512::digest(label).into() };
        let key = SigningKey::from_seed("", &Sha256::digest(b"mwp stand-in key").into());
        // A canonical prime-order point and a full-width scalar, like an honest signature's.
        let nonce = Scalar::from_bytes_mod_order_wide(&wide(b"mwp stand-in nonce"));
        StandIn {
            key: key.public_key,
            r: EdwardsPoint::mul_base(&nonce).compress().0,
            s: Scalar::from_bytes_mod_order_wide(&wide(b"mwp stand-in S")),
        }
    })
}

/// Why an external signer produced no signature (an HSM or KMS refused, a host-language
/// callback raised). The codec reports it as a signing failure; it never becomes a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignerError {
    /// What the signer reported (protected: may name devices or keys).
    pub detail: String,
}

impl SignerError {
    /// A failure with its description.
    pub fn new(detail: impl Into<String>) -> Self {
        Self {
            detail: detail.into(),
        }
    }
}

impl fmt::Display for SignerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the signer failed: {}", self.detail)
    }
}

impl std::error::Error for SignerError {}

/// Anything that can produce pure Ed25519 signatures for a Registry key: an in-process
/// [`SigningKey`], or an adapter over an HSM, a KMS or a host-language signer. The codec checks
/// what a signer hands back (length, `S < L`, the equation against its public key) exactly as a
/// verifier would, so a misbehaving signer can never produce a document.
pub trait Signer {
    /// The Registry key ID the signature envelope names.
    fn key_id(&self) -> &str;
    /// The algorithm the signer implements; protocol 0.1 knows only `Ed25519` (§6.4).
    fn algorithm(&self) -> &str {
        "Ed25519"
    }
    /// The 32-byte public key.
    fn public_key_bytes(&self) -> [u8; 32];
    /// Signs `message` (pure Ed25519, RFC 8032). The bytes are checked by the caller; a signer
    /// that cannot sign returns an error instead.
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignerError>;
    /// The strictly decoded public key. The default decodes (and rejects weak keys) on every
    /// call; signers that hold a decoded key return it.
    fn public_key(&self) -> Result<PublicKey, PointError> {
        PublicKey::from_bytes(&self.public_key_bytes())
    }
}

impl Signer for SigningKey {
    fn key_id(&self) -> &str {
        SigningKey::key_id(self)
    }

    fn public_key_bytes(&self) -> [u8; 32] {
        SigningKey::public_key_bytes(self)
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignerError> {
        Ok(SigningKey::sign(self, message).to_vec())
    }

    fn public_key(&self) -> Result<PublicKey, PointError> {
        Ok(self.public_key)
    }
}

/// An Ed25519 signing key (RFC 8032 pure Ed25519, deterministic) with its Registry key ID.
#[derive(Clone)]
pub struct SigningKey {
    key_id: String,
    inner: ed25519_dalek::SigningKey,
    public_key: PublicKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("key_id", &self.key_id)
            .field(
                "public_key",
                &crate::schema_formats::encode_base64url(&self.public_key_bytes()),
            )
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A key from its 32-byte seed.
    pub fn from_seed(key_id: impl Into<String>, seed: &[u8; 32]) -> Self {
        let inner = ed25519_dalek::SigningKey::from_bytes(seed);
        // A = [a]B with a clamped nonzero scalar multiple of 8 below 2^255: always a canonical,
        // non-identity point of the prime-order subgroup, so the strict decoding succeeds.
        let point = inner.verifying_key().to_edwards();
        Self {
            key_id: key_id.into(),
            public_key: PublicKey {
                bytes: inner.verifying_key().to_bytes(),
                negated: -point,
            },
            inner,
        }
    }

    /// The strictly valid public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public_key
    }

    /// The Registry key ID the signature envelope names.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// `"Ed25519"`.
    pub fn algorithm(&self) -> &'static str {
        "Ed25519"
    }

    /// The 32-byte public key.
    pub fn public_key_bytes(&self) -> [u8; 32] {
        self.inner.verifying_key().to_bytes()
    }

    /// The 32-byte seed the key was made from (RFC 8032 private key). Secret: for storing the
    /// key, never for logs.
    pub fn seed_bytes(&self) -> [u8; 32] {
        self.inner.to_bytes()
    }

    /// Signs `message` (deterministic).
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.inner.sign(message).to_bytes()
    }
}

/// Strict verification of a detached Ed25519 signature over `message` with the §6.4 rules and
/// no Registry: the public key decodes strictly (canonical, on the curve, prime order, not the
/// identity), the signature is 64 bytes with `S < L` and a canonical prime-order `R`, then the
/// cofactorless equation. Backs the reference-named `crypto.verify_canonical` helper, which
/// the reference ran with a permissive verifier (reference gap §7.2); every failure is `false`.
pub fn verify_detached(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    let Ok(key) = PublicKey::from_bytes(public_key) else {
        return false;
    };
    let Ok(parts) = split_signature(signature) else {
        return false;
    };
    check_r(&parts.r).is_ok() && key.verify_equation(&parts.r, &parts.s, message)
}

/// A general-purpose (permissive) Ed25519 verification, kept only as the benchmark's physical
/// floor (`ed25519.raw_verify`). Protocol verification never uses it.
pub fn raw_verify(public_key: &[u8; 32], message: &[u8], signature: &[u8; 64]) -> bool {
    use ed25519_dalek::Verifier as _;
    ed25519_dalek::VerifyingKey::from_bytes(public_key).is_ok_and(|key| {
        key.verify(message, &ed25519_dalek::Signature::from_bytes(signature))
            .is_ok()
    })
}

#[cfg(test)]
mod detached_tests {
    use super::*;

    fn signed() -> (SigningKey, Vec<u8>, [u8; 64]) {
        let key = SigningKey::from_seed("urn:example:key:1", &[7u8; 32]);
        let message = b"{\"a\":1}".to_vec();
        let signature = key.sign(&message);
        (key, message, signature)
    }

    #[test]
    fn a_good_signature_verifies() {
        let (key, message, signature) = signed();
        assert!(verify_detached(
            &key.public_key_bytes(),
            &message,
            &signature
        ));
    }

    #[test]
    fn another_message_key_or_encoding_is_refused() {
        let (key, message, signature) = signed();
        let public = key.public_key_bytes();
        assert!(!verify_detached(&public, b"{\"a\":2}", &signature));
        let other = SigningKey::from_seed("urn:example:key:2", &[8u8; 32]);
        assert!(!verify_detached(
            &other.public_key_bytes(),
            &message,
            &signature
        ));
        assert!(!verify_detached(&public, &message, &signature[..63]));
        // S + L: the same signature with a non-reduced S (malleability) is refused.
        let mut malleated = signature;
        let mut carry = 0u16;
        for (out, (s, l)) in malleated[32..]
            .iter_mut()
            .zip(signature[32..].iter().zip(L_LE))
        {
            let sum = u16::from(*s) + u16::from(l) + carry;
            *out = (sum & 0xFF) as u8;
            carry = sum >> 8;
        }
        assert_eq!(carry, 0);
        assert!(!verify_detached(&public, &message, &malleated));
        // The identity is not a public key.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert!(!verify_detached(&identity, &message, &signature));
    }

    /// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
    const L_LE: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
}
