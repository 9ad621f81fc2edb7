"""Ed25519 signing keys (RFC 8032 pure Ed25519, deterministic), from the Rust core."""

from __future__ import annotations

from ._native import SigningKey

ALGORITHM = "Ed25519"

__all__ = ["ALGORITHM", "SigningKey"]
