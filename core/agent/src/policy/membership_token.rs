//! Membership tokens (§8, §6.3): a short-lived proof that an Agent holds given roles in one
//! Group at one Membership Epoch under one Session Epoch.
//!
//! Verification refuses, in this order: a malformed or forged token (`AUTH_INVALID_SIGNATURE`),
//! an expired one (`AUTH_INVALID_SIGNATURE`, `token_expired`), another principal
//! (`AUTH_FORBIDDEN`), another Group (`MEMBERSHIP_REQUIRED`: a token never crosses Groups), a
//! fenced Session Epoch (`AUTH_STALE_SESSION`), a fenced Membership Epoch or changed roles
//! (`MEMBERSHIP_STALE`, §8: a role change moves the Membership Epoch).

use core::fmt;

use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::{Principal, PrincipalType, WireCode};

use super::error::PolicyError;
use super::token::{
    TokenKey, check_epoch, check_id, check_ttl, check_window, count, expiry, get_count,
    get_instant, get_text, get_texts, instant, sorted_unique, texts,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The MAC domain of membership tokens.
const DOMAIN: &str = "missionweaveprotocol.membership-token.v1";

/// The longest lifetime a service may be configured with (the reference's default, 15 min).
pub const MAXIMUM_TTL_MS: u64 = 15 * 60 * 1000;

/// Membership tokens are issued to Agents only (§8): any other principal type is refused
/// (`INVALID_COMMAND`, `invalid_argument`, field `principal`).
pub fn check_token_principal(principal_type: &str) -> Result<(), PolicyError> {
    if principal_type == "agent" {
        Ok(())
    } else {
        Err(PolicyError::invalid(
            "principal",
            "membership tokens are issued to Agents only",
        ))
    }
}

/// What a membership token states (the reference's `MembershipTokenClaims`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipTokenClaims {
    /// Unique token ID.
    pub token_id: String,
    /// The Agent (membership tokens are for Agents only).
    pub principal_id: String,
    /// The Group.
    pub group_id: String,
    /// Roles, ≥ 1, unique, sorted.
    pub roles: Vec<String>,
    /// The Membership Epoch (§8).
    pub membership_epoch: u64,
    /// The Session Epoch (§6.3).
    pub session_epoch: u64,
    /// Issue instant.
    pub issued_at: UnixMillis,
    /// Expiry instant.
    pub expires_at: UnixMillis,
}

impl MembershipTokenClaims {
    /// The canonical claims object (camelCase; instants in Unix milliseconds).
    pub fn to_value(&self) -> Value {
        let mut principal = Object::new();
        principal.insert("type", Value::string("agent"));
        principal.insert("id", Value::string(self.principal_id.as_str()));
        let mut o = Object::new();
        o.insert("tokenId", Value::string(self.token_id.as_str()));
        o.insert("principal", Value::Object(principal));
        o.insert("groupId", Value::string(self.group_id.as_str()));
        o.insert("roles", texts(&self.roles));
        o.insert("membershipEpoch", count(self.membership_epoch));
        o.insert("sessionEpoch", count(self.session_epoch));
        o.insert("issuedAt", instant(self.issued_at));
        o.insert("expiresAt", instant(self.expires_at));
        Value::Object(o)
    }

    fn from_object(o: &Object) -> Result<Self, PolicyError> {
        let principal = o
            .get("principal")
            .and_then(Value::as_object)
            .ok_or_else(|| super::token::malformed("principal"))?;
        if principal.get("type").and_then(Value::as_str) != Some("agent") {
            return Err(super::token::malformed("principal.type"));
        }
        Ok(Self {
            token_id: get_text(o, "tokenId")?,
            principal_id: get_text(principal, "id")?,
            group_id: get_text(o, "groupId")?,
            roles: get_texts(o, "roles")?,
            membership_epoch: get_count(o, "membershipEpoch")?,
            session_epoch: get_count(o, "sessionEpoch")?,
            issued_at: get_instant(o, "issuedAt")?,
            expires_at: get_instant(o, "expiresAt")?,
        })
    }
}

/// An issued token: its claims and the bearer string. `Debug` hides the string.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedMembershipToken {
    /// What it states.
    pub claims: MembershipTokenClaims,
    /// The bearer token.
    pub token: String,
}

impl fmt::Debug for IssuedMembershipToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedMembershipToken")
            .field("claims", &self.claims)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// What a token must match (issue request and verification expectation alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MembershipBinding<'a> {
    /// The Agent.
    pub principal_id: &'a str,
    /// The Group.
    pub group_id: &'a str,
    /// Its roles (any order).
    pub roles: &'a [String],
    /// Current Membership Epoch.
    pub membership_epoch: u64,
    /// Current Session Epoch.
    pub session_epoch: u64,
}

/// The parts of a `membership.schema.json` document a token binds to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipView {
    /// The member.
    pub member: Principal,
    /// Its Group.
    pub group_id: String,
    /// Its role (one per Membership in 0.1).
    pub roles: Vec<String>,
    /// Its Membership Epoch.
    pub membership_epoch: u64,
    /// `state == "active"`.
    pub active: bool,
}

impl MembershipView {
    /// Reads a Membership document (`member`, `groupId`, `role`, `membershipEpoch`, `state`).
    pub fn from_document(document: &Value) -> Result<Self, PolicyError> {
        let bad = |field: &'static str| {
            PolicyError::invalid(
                field,
                format!("the Membership's {field} is missing or malformed"),
            )
        };
        let member = document.get("member").ok_or_else(|| bad("member"))?;
        let kind = member
            .get("type")
            .and_then(Value::as_str)
            .and_then(PrincipalType::parse)
            .ok_or_else(|| bad("member"))?;
        let id = member
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("member"))?;
        let group_id = document
            .get("groupId")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("groupId"))?;
        let role = document
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("role"))?;
        let epoch = document
            .get("membershipEpoch")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .ok_or_else(|| bad("membershipEpoch"))?;
        let state = document
            .get("state")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("state"))?;
        Ok(Self {
            member: Principal::new(kind, id),
            group_id: group_id.to_owned(),
            roles: vec![role.to_owned()],
            membership_epoch: epoch,
            active: state == "active",
        })
    }

    fn binding(&self, session_epoch: u64) -> Result<MembershipBinding<'_>, PolicyError> {
        if self.member.kind != PrincipalType::Agent {
            return Err(PolicyError::invalid(
                "principal",
                "membership tokens are issued to Agents only",
            ));
        }
        if !self.active {
            return Err(PolicyError::new(
                WireCode::MembershipRequired,
                "membership_not_active",
                "the Membership is not active",
            ));
        }
        Ok(MembershipBinding {
            principal_id: &self.member.id,
            group_id: &self.group_id,
            roles: &self.roles,
            membership_epoch: self.membership_epoch,
            session_epoch,
        })
    }
}

/// Issues and verifies membership tokens under one secret (the reference's
/// `MembershipTokenService`). `Debug` hides the secret.
#[derive(Clone, Debug)]
pub struct MembershipTokenService {
    key: TokenKey,
    maximum_ttl_ms: u64,
}

impl MembershipTokenService {
    /// A service keyed with `secret` (32..=1024 bytes), maximum TTL 15 minutes.
    pub fn new(secret: &[u8]) -> Result<Self, PolicyError> {
        Ok(Self {
            key: TokenKey::new(secret)?,
            maximum_ttl_ms: MAXIMUM_TTL_MS,
        })
    }

    /// The same service with a shorter maximum TTL (1 ms ..= 15 min).
    pub fn with_maximum_ttl(mut self, maximum_ttl_ms: u64) -> Result<Self, PolicyError> {
        check_ttl(maximum_ttl_ms, MAXIMUM_TTL_MS).map_err(|_| {
            PolicyError::invalid("maximum_ttl", "maximum_ttl must be 1 ms to 15 min")
        })?;
        self.maximum_ttl_ms = maximum_ttl_ms;
        Ok(self)
    }

    /// The maximum TTL in milliseconds.
    pub fn maximum_ttl_ms(&self) -> u64 {
        self.maximum_ttl_ms
    }

    /// Issues a token for `binding`, valid `ttl_ms` from `now`, named `token_id`.
    pub fn issue(
        &self,
        binding: &MembershipBinding<'_>,
        ttl_ms: u64,
        token_id: &str,
        now: UnixMillis,
    ) -> Result<IssuedMembershipToken, PolicyError> {
        check_id("token_id", token_id)?;
        check_id("principal", binding.principal_id)?;
        check_id("group_id", binding.group_id)?;
        let roles = sorted_unique("roles", binding.roles, true)?;
        check_epoch("membership_epoch", binding.membership_epoch)?;
        check_epoch("session_epoch", binding.session_epoch)?;
        check_ttl(ttl_ms, self.maximum_ttl_ms)?;
        let claims = MembershipTokenClaims {
            token_id: token_id.to_owned(),
            principal_id: binding.principal_id.to_owned(),
            group_id: binding.group_id.to_owned(),
            roles,
            membership_epoch: binding.membership_epoch,
            session_epoch: binding.session_epoch,
            issued_at: now,
            expires_at: expiry(now, ttl_ms)?,
        };
        let token = self.key.seal(DOMAIN, &claims.to_value())?;
        Ok(IssuedMembershipToken { claims, token })
    }

    /// Issues a token for an active Agent Membership document.
    pub fn issue_for_membership(
        &self,
        membership: &MembershipView,
        session_epoch: u64,
        ttl_ms: u64,
        token_id: &str,
        now: UnixMillis,
    ) -> Result<IssuedMembershipToken, PolicyError> {
        self.issue(&membership.binding(session_epoch)?, ttl_ms, token_id, now)
    }

    /// The claims of `token` if it is authentic, unexpired at `now` and matches `expected`.
    pub fn verify(
        &self,
        token: &str,
        expected: &MembershipBinding<'_>,
        now: UnixMillis,
    ) -> Result<MembershipTokenClaims, PolicyError> {
        let claims = MembershipTokenClaims::from_object(&self.key.open(DOMAIN, token)?)?;
        check_window(claims.issued_at, claims.expires_at, now)?;
        if claims.principal_id != expected.principal_id {
            return Err(PolicyError::new(
                WireCode::AuthForbidden,
                "token_principal_mismatch",
                "the token was issued to another principal",
            ));
        }
        if claims.group_id != expected.group_id {
            return Err(PolicyError::new(
                WireCode::MembershipRequired,
                "token_group_mismatch",
                "the token is for another Group",
            )
            .with_text("group_id", expected.group_id));
        }
        if claims.session_epoch != expected.session_epoch {
            return Err(PolicyError::new(
                WireCode::AuthStaleSession,
                "token_session_stale",
                "the token's Session Epoch is fenced",
            )
            .with_integer("current_session_epoch", expected.session_epoch));
        }
        if claims.membership_epoch != expected.membership_epoch {
            return Err(PolicyError::new(
                WireCode::MembershipStale,
                "token_membership_stale",
                "the token's Membership Epoch is fenced",
            )
            .with_integer("current_membership_epoch", expected.membership_epoch));
        }
        let mut roles = expected.roles.to_vec();
        roles.sort();
        roles.dedup();
        if claims.roles != roles {
            return Err(PolicyError::new(
                WireCode::MembershipStale,
                "token_roles_stale",
                "the token's roles differ from the Membership's",
            ));
        }
        Ok(claims)
    }

    /// Verifies `token` against the current Membership document.
    pub fn verify_membership(
        &self,
        token: &str,
        membership: &MembershipView,
        session_epoch: u64,
        now: UnixMillis,
    ) -> Result<MembershipTokenClaims, PolicyError> {
        self.verify(token, &membership.binding(session_epoch)?, now)
    }
}
