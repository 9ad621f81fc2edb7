#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! §6.4 Ed25519 strictness: point decoding for R (identity allowed) and A (identity rejected),
//! `S < L`, RFC 8032 determinism.

use missionweaveprotocol::crypto::{
    PointError, PublicKey, SignatureEncodingError, SigningKey, check_r, decode_point,
    split_signature,
};

fn hex32(text: &str) -> [u8; 32] {
    let bytes: Vec<u8> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect();
    bytes.try_into().unwrap()
}

const IDENTITY: &str = "0100000000000000000000000000000000000000000000000000000000000000";
const NEGATIVE_ZERO: &str = "0100000000000000000000000000000000000000000000000000000000000080";
const Y_IS_P: &str = "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f";
const Y_IS_P_PLUS_1: &str = "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f";
const OFF_CURVE_Y2: &str = "0200000000000000000000000000000000000000000000000000000000000000";
const ORDER_2_Y_P_MINUS_1: &str =
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f";
/// RFC 8032 test 1 public key.
const RFC8032_1_PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const RFC8032_1_SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const RFC8032_1_SIGNATURE: &str = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
/// L, the prime group order, little-endian.
const L: &str = "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010";

#[test]
fn r_allows_identity_but_public_keys_do_not() {
    assert!(decode_point(&hex32(IDENTITY), true).is_ok());
    assert_eq!(
        decode_point(&hex32(IDENTITY), false).unwrap_err(),
        PointError::Identity
    );
    assert_eq!(
        PublicKey::from_bytes(&hex32(IDENTITY)).unwrap_err(),
        PointError::Identity
    );
}

#[test]
fn noncanonical_negative_zero_off_curve_and_torsion_are_rejected() {
    for (text, expected) in [
        (NEGATIVE_ZERO, PointError::NegativeZero),
        (Y_IS_P, PointError::NonCanonical),
        (Y_IS_P_PLUS_1, PointError::NonCanonical),
        (OFF_CURVE_Y2, PointError::OffCurve),
        (ORDER_2_Y_P_MINUS_1, PointError::Torsion),
    ] {
        for allow_identity in [true, false] {
            assert_eq!(
                decode_point(&hex32(text), allow_identity).unwrap_err(),
                expected,
                "{text}"
            );
        }
    }
    // A mixed-order point: a valid key plus the order-2 point (0, -1).
    let valid = decode_point(&hex32(RFC8032_1_PUBLIC), false).unwrap();
    let torsion = decode_point(&hex32(ORDER_2_Y_P_MINUS_1), true).err();
    assert_eq!(torsion, Some(PointError::Torsion));
    let order2 = curve25519_dalek::edwards::CompressedEdwardsY(hex32(ORDER_2_Y_P_MINUS_1))
        .decompress()
        .unwrap();
    let mixed = (valid + order2).compress().0;
    assert_eq!(decode_point(&mixed, true).unwrap_err(), PointError::Torsion);
    assert_eq!(
        decode_point(&[0u8; 31], true).unwrap_err(),
        PointError::Length
    );
}

#[test]
fn s_must_be_below_the_group_order() {
    let mut signature = [0u8; 64];
    signature[..32].copy_from_slice(&hex32(IDENTITY));
    signature[32..].copy_from_slice(&hex32(L));
    assert_eq!(
        split_signature(&signature).unwrap_err(),
        SignatureEncodingError::SNotReduced
    );
    let mut below = hex32(L);
    below[0] -= 1;
    signature[32..].copy_from_slice(&below);
    assert!(split_signature(&signature).is_ok());
    assert_eq!(
        split_signature(&signature[..63]).unwrap_err(),
        SignatureEncodingError::Length
    );
    assert!(matches!(
        check_r(&hex32(NEGATIVE_ZERO)),
        Err(SignatureEncodingError::R(PointError::NegativeZero))
    ));
}

#[test]
fn rfc8032_test_1_signs_deterministically_and_verifies() {
    let key = SigningKey::from_seed("k", &hex32(RFC8032_1_SEED));
    assert_eq!(key.public_key_bytes(), hex32(RFC8032_1_PUBLIC));
    let signature = key.sign(b"");
    let expected: Vec<u8> = (0..128)
        .step_by(2)
        .map(|i| u8::from_str_radix(&RFC8032_1_SIGNATURE[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(signature.as_slice(), expected.as_slice());
    let public = PublicKey::from_bytes(&key.public_key_bytes()).unwrap();
    let parts = split_signature(&signature).unwrap();
    assert!(public.verify_equation(&parts.r, &parts.s, b""));
    assert!(!public.verify_equation(&parts.r, &parts.s, b"x"));
}

#[test]
fn weak_key_forgery_does_not_verify_under_a_real_key() {
    // R = identity, S = 0 satisfies the equation only for a small-order A.
    let public = PublicKey::from_bytes(&hex32(RFC8032_1_PUBLIC)).unwrap();
    let mut signature = [0u8; 64];
    signature[..32].copy_from_slice(&hex32(IDENTITY));
    let parts = split_signature(&signature).unwrap();
    assert!(check_r(&parts.r).is_ok());
    assert!(!public.verify_equation(&parts.r, &parts.s, b"anything"));
}

#[test]
fn the_full_work_r_check_agrees_with_the_strict_decoding() {
    // `check_r` never stops early (§6.4 timing), but its verdict is `decode_point(r, true)`'s,
    // for every class of bad R and for valid, identity and mixed-order points.
    let valid = decode_point(&hex32(RFC8032_1_PUBLIC), false).unwrap();
    let order2 = curve25519_dalek::edwards::CompressedEdwardsY(hex32(ORDER_2_Y_P_MINUS_1))
        .decompress()
        .unwrap();
    let mut inputs: Vec<[u8; 32]> = [
        IDENTITY,
        NEGATIVE_ZERO,
        Y_IS_P,
        Y_IS_P_PLUS_1,
        OFF_CURVE_Y2,
        ORDER_2_Y_P_MINUS_1,
        RFC8032_1_PUBLIC,
    ]
    .map(hex32)
    .to_vec();
    inputs.push((valid + order2).compress().0);
    // Every y from 0 to 63 with both sign bits, and the top of the noncanonical range.
    for y in 0..64u8 {
        for sign in [0u8, 0x80] {
            let mut bytes = [0u8; 32];
            bytes[0] = y;
            bytes[31] = sign;
            inputs.push(bytes);
            let mut high = [0xFFu8; 32];
            high[0] = 0xC0 + y;
            high[31] = 0x7F | sign;
            inputs.push(high);
        }
    }
    let mut verdicts = std::collections::BTreeSet::new();
    for r in inputs {
        let expected = decode_point(&r, true)
            .map(|_| ())
            .map_err(SignatureEncodingError::R);
        assert_eq!(check_r(&r), expected, "{r:?}");
        verdicts.insert(format!("{expected:?}"));
    }
    // Valid, noncanonical, off-curve, negative zero and torsion all occurred.
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
}
