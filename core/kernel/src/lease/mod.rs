//! Fenced leases (§11.3, §7.2, `lease.schema.json`).
//!
//! A [`Lease`] is bound at creation to its holder Agent, Session Epoch and — by type — to a
//! WorkItem and Ownership Epoch or to a Coordinator Epoch. Only an `active` lease changes:
//! renewal is strictly monotonic and strictly extending and must happen before expiry; closure
//! (`released`, `revoked`, `expired`) is immutable: repeating the identical closure is a no-op,
//! any other closure attempt is an error. Time is always an argument ([`UnixMillis`]).

use crate::resources::MAX_SAFE_INTEGER;
use crate::unix_millis::UnixMillis;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes};
use missionweaveprotocol::schema_formats::is_protocol_id;

mod document;

pub use self::document::LeaseDocumentError;

/// Maximum length of a closure reason and of identifiers (`lease.schema.json`, `common.id`).
pub const MAX_REASON_CHARS: usize = 512;

/// `leaseType` (`lease.schema.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseType {
    /// The current Coordinator's lease (§7.2); carries a Coordinator Epoch.
    Coordinator,
    /// Queued ownership of a WorkItem (§11.3); carries an Ownership Epoch and a start-by deadline.
    Ownership,
    /// Active execution of a WorkItem (§11.3).
    Execution,
    /// Ownership retained while blocked (§11.4, "bounded blocked lease").
    Blocked,
}

missionweaveprotocol::spelling!(LeaseType {
    Coordinator => "coordinator",
    Ownership => "ownership",
    Execution => "execution",
    Blocked => "blocked",
});

/// `state` (`lease.schema.json`). Non-active states are terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// Live until `expiresAt`.
    Active,
    /// Timed out (§11.3 "timeout expires it").
    Expired,
    /// Session replacement, reassignment, cancellation or failure (§11.3).
    Revoked,
    /// Checkpoint, block or submission (§11.3).
    Released,
}

missionweaveprotocol::spelling!(LeaseState {
    Active => "active",
    Expired => "expired",
    Revoked => "revoked",
    Released => "released",
});

/// Why a lease operation or a lease-bound Command was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseError {
    /// A required field is empty, too long or out of range (the name says which).
    InvalidField(&'static str),
    /// `issuedAt ≤ startsAt < expiresAt` (and type-specific deadlines) does not hold.
    InvalidWindow,
    /// The lease is past `expiresAt` (or its `startBy`) at the given instant.
    Expired,
    /// The lease is already closed; carries the state it closed with.
    Closed(LeaseState),
    /// A different closure was attempted on an already closed lease.
    ClosureConflict,
    /// Renewal time is not strictly after the previous renewal or is before the start.
    NonMonotonicRenewal,
    /// The renewal does not strictly extend `expiresAt` (or passes the grace bound).
    NotExtending,
    /// A Command cited another (older) Lease ID (§11.3).
    StaleLease,
    /// A Command's Ownership Epoch is fenced (§4.5).
    StaleOwnership,
    /// A Command's Session Epoch is fenced (§6.3).
    StaleSession,
    /// A Command's Coordinator Epoch is fenced (§7.2).
    StaleCoordinator,
    /// The holder is not the acting Agent.
    WrongHolder,
    /// A timestamp cannot be rendered in the RFC 3339 profile (years 0001–9999).
    UnrenderableTimestamp,
}

impl LeaseError {
    /// The §19 wire error code.
    ///
    /// A delayed Command with an older Lease ID maps to `WORK_LEASE_EXPIRED` ("required lease is
    /// no longer valid"); the spec leaves this choice open (digest §8 item 9).
    pub const fn code(&self) -> WireCode {
        match self {
            LeaseError::InvalidField(_)
            | LeaseError::InvalidWindow
            | LeaseError::NonMonotonicRenewal
            | LeaseError::NotExtending
            | LeaseError::UnrenderableTimestamp => WireCode::InvalidCommand,
            LeaseError::Expired | LeaseError::StaleLease | LeaseError::Closed(_) => {
                WireCode::WorkLeaseExpired
            }
            LeaseError::ClosureConflict => WireCode::InvalidStateTransition,
            LeaseError::StaleOwnership => WireCode::WorkStaleOwnership,
            LeaseError::StaleSession => WireCode::AuthStaleSession,
            LeaseError::StaleCoordinator => WireCode::AuthStaleCoordinator,
            LeaseError::WrongHolder => WireCode::AuthForbidden,
        }
    }
}

/// The identity part common to every lease type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseBinding {
    /// Stable Lease ID (§11.3).
    pub lease_id: String,
    /// Mission the lease belongs to.
    pub mission_id: String,
    /// Group of that Mission.
    pub group_id: String,
    /// Holder Agent.
    pub holder_agent_id: String,
    /// Holder's Session Epoch at issue (≥ 1).
    pub session_epoch: u64,
}

/// The validity window of a new lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseWindow {
    /// When the authority issued the lease.
    pub issued_at: UnixMillis,
    /// When the lease starts (≥ `issued_at`).
    pub starts_at: UnixMillis,
    /// When it lapses unless renewed (> `starts_at`).
    pub expires_at: UnixMillis,
}

/// What a lease-bound Command claims (§11.3 "every renewal, checkpoint, block, … MUST reference
/// the current Lease ID").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseClaim<'a> {
    /// The Agent acting.
    pub agent_id: &'a str,
    /// The Lease ID the Command cites.
    pub lease_id: &'a str,
    /// The Command's Session Epoch.
    pub session_epoch: u64,
    /// The Command's Ownership Epoch (WorkItem leases).
    pub ownership_epoch: Option<u64>,
    /// The Command's Coordinator Epoch (Coordinator leases).
    pub coordinator_epoch: Option<u64>,
}

/// One fenced lease record.
///
/// ```
/// use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseClaim, LeaseError, LeaseWindow};
/// use missionweaveprotocol_kernel::unix_millis::UnixMillis;
///
/// let t0 = UnixMillis::from_secs(1_784_107_800);
/// let mut lease = Lease::execution(
///     LeaseBinding {
///         lease_id: "urn:missionweaveprotocol:lease:l-1".into(),
///         mission_id: "urn:missionweaveprotocol:mission:m".into(),
///         group_id: "urn:missionweaveprotocol:group:g".into(),
///         holder_agent_id: "urn:missionweaveprotocol:agent:worker".into(),
///         session_epoch: 3,
///     },
///     "urn:missionweaveprotocol:work-item:w",
///     1,
///     LeaseWindow { issued_at: t0, starts_at: t0, expires_at: t0.saturating_add_ms(60_000) },
/// )?;
/// let claim = LeaseClaim {
///     agent_id: "urn:missionweaveprotocol:agent:worker",
///     lease_id: "urn:missionweaveprotocol:lease:l-1",
///     session_epoch: 3,
///     ownership_epoch: Some(1),
///     coordinator_epoch: None,
/// };
/// lease.check_claim(&claim, t0.saturating_add_ms(30_000))?;
/// // An older Session is fenced; after expiry the lease no longer authorizes anything.
/// let stale = LeaseClaim { session_epoch: 2, ..claim };
/// assert_eq!(lease.check_claim(&stale, t0).unwrap_err().code().as_str(), "AUTH_STALE_SESSION");
/// assert_eq!(lease.check_claim(&claim, t0.saturating_add_ms(60_000)), Err(LeaseError::Expired));
///
/// // Renewal strictly extends; release closes it for good.
/// lease.renew(t0.saturating_add_ms(50_000), t0.saturating_add_ms(120_000))?;
/// assert!(lease.release(t0.saturating_add_ms(90_000), "submitted")?);
/// assert!(lease.renew(t0.saturating_add_ms(95_000), t0.saturating_add_ms(180_000)).is_err());
/// # Ok::<(), LeaseError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    binding: LeaseBinding,
    lease_type: LeaseType,
    work_item_id: Option<String>,
    ownership_epoch: Option<u64>,
    coordinator_epoch: Option<u64>,
    start_by: Option<UnixMillis>,
    grace_expires_at: Option<UnixMillis>,
    window: LeaseWindow,
    state: LeaseState,
    renewal_count: u64,
    last_renewed_at: Option<UnixMillis>,
    closed_at: Option<UnixMillis>,
    closure_reason: Option<String>,
}

fn check_id(value: &str, field: &'static str) -> Result<(), LeaseError> {
    // Every identifier of `lease.schema.json` is `common.schema.json#/$defs/id` (§2): refusing
    // here what the schema refuses keeps `from_json(lease.to_json())` total.
    if !is_protocol_id(value) {
        return Err(LeaseError::InvalidField(field));
    }
    Ok(())
}

fn check_epoch(value: u64, field: &'static str) -> Result<(), LeaseError> {
    if value == 0 || value > MAX_SAFE_INTEGER {
        return Err(LeaseError::InvalidField(field));
    }
    Ok(())
}

fn check_reason(reason: &str) -> Result<(), LeaseError> {
    if reason.trim().is_empty() || reason.chars().count() > MAX_REASON_CHARS {
        return Err(LeaseError::InvalidField("closureReason"));
    }
    Ok(())
}

/// A closure reason as a lease records it: surrounding whitespace removed (the reference
/// runtime strips every model string; a reason is free text, so unlike an identifier nothing
/// can silently become another), then non-empty and at most [`MAX_REASON_CHARS`] characters.
/// [`Lease::close`] applies it; bindings apply it to a reason given to a lease constructor.
pub fn closure_reason(reason: &str) -> Result<&str, LeaseError> {
    let reason = reason.trim();
    check_reason(reason)?;
    Ok(reason)
}

impl Lease {
    fn base(
        binding: LeaseBinding,
        lease_type: LeaseType,
        window: LeaseWindow,
    ) -> Result<Lease, LeaseError> {
        check_id(&binding.lease_id, "leaseId")?;
        check_id(&binding.mission_id, "missionId")?;
        check_id(&binding.group_id, "groupId")?;
        check_id(&binding.holder_agent_id, "holderAgentId")?;
        check_epoch(binding.session_epoch, "sessionEpoch")?;
        if window.issued_at > window.starts_at || window.starts_at >= window.expires_at {
            return Err(LeaseError::InvalidWindow);
        }
        Ok(Lease {
            binding,
            lease_type,
            work_item_id: None,
            ownership_epoch: None,
            coordinator_epoch: None,
            start_by: None,
            grace_expires_at: None,
            window,
            state: LeaseState::Active,
            renewal_count: 0,
            last_renewed_at: None,
            closed_at: None,
            closure_reason: None,
        })
    }

    fn for_work(
        binding: LeaseBinding,
        lease_type: LeaseType,
        work_item_id: &str,
        ownership_epoch: u64,
        window: LeaseWindow,
    ) -> Result<Lease, LeaseError> {
        check_id(work_item_id, "workItemId")?;
        check_epoch(ownership_epoch, "ownershipEpoch")?;
        let mut lease = Lease::base(binding, lease_type, window)?;
        lease.work_item_id = Some(work_item_id.to_owned());
        lease.ownership_epoch = Some(ownership_epoch);
        Ok(lease)
    }

    /// A Coordinator lease (§7.2).
    pub fn coordinator(
        binding: LeaseBinding,
        coordinator_epoch: u64,
        window: LeaseWindow,
    ) -> Result<Lease, LeaseError> {
        check_epoch(coordinator_epoch, "coordinatorEpoch")?;
        let mut lease = Lease::base(binding, LeaseType::Coordinator, window)?;
        lease.coordinator_epoch = Some(coordinator_epoch);
        Ok(lease)
    }

    /// An ownership lease: Ownership Epoch plus a start-by deadline within the window (§11.3).
    pub fn ownership(
        binding: LeaseBinding,
        work_item_id: &str,
        ownership_epoch: u64,
        start_by: UnixMillis,
        window: LeaseWindow,
    ) -> Result<Lease, LeaseError> {
        if start_by < window.starts_at || start_by > window.expires_at {
            return Err(LeaseError::InvalidWindow);
        }
        let mut lease = Lease::for_work(
            binding,
            LeaseType::Ownership,
            work_item_id,
            ownership_epoch,
            window,
        )?;
        lease.start_by = Some(start_by);
        Ok(lease)
    }

    /// An Execution Lease (§11.3): no start-by, no grace, no Coordinator Epoch.
    pub fn execution(
        binding: LeaseBinding,
        work_item_id: &str,
        ownership_epoch: u64,
        window: LeaseWindow,
    ) -> Result<Lease, LeaseError> {
        Lease::for_work(
            binding,
            LeaseType::Execution,
            work_item_id,
            ownership_epoch,
            window,
        )
    }

    /// A blocked lease (§11.4), optionally with a grace bound ≥ its expiry.
    pub fn blocked(
        binding: LeaseBinding,
        work_item_id: &str,
        ownership_epoch: u64,
        window: LeaseWindow,
        grace_expires_at: Option<UnixMillis>,
    ) -> Result<Lease, LeaseError> {
        if grace_expires_at.is_some_and(|g| g < window.expires_at) {
            return Err(LeaseError::InvalidWindow);
        }
        let mut lease = Lease::for_work(
            binding,
            LeaseType::Blocked,
            work_item_id,
            ownership_epoch,
            window,
        )?;
        lease.grace_expires_at = grace_expires_at;
        Ok(lease)
    }

    /// Stable Lease ID.
    pub fn lease_id(&self) -> &str {
        &self.binding.lease_id
    }
    /// Lease type.
    pub fn lease_type(&self) -> LeaseType {
        self.lease_type
    }
    /// Identity binding.
    pub fn binding(&self) -> &LeaseBinding {
        &self.binding
    }
    /// WorkItem (ownership, execution, blocked).
    pub fn work_item_id(&self) -> Option<&str> {
        self.work_item_id.as_deref()
    }
    /// Ownership Epoch (ownership, execution, blocked).
    pub fn ownership_epoch(&self) -> Option<u64> {
        self.ownership_epoch
    }
    /// Coordinator Epoch (coordinator leases).
    pub fn coordinator_epoch(&self) -> Option<u64> {
        self.coordinator_epoch
    }
    /// Start-by deadline (ownership leases).
    pub fn start_by(&self) -> Option<UnixMillis> {
        self.start_by
    }
    /// Grace bound (blocked leases, optional).
    pub fn grace_expires_at(&self) -> Option<UnixMillis> {
        self.grace_expires_at
    }
    /// Issue, start and current expiry.
    pub fn window(&self) -> LeaseWindow {
        self.window
    }
    /// Recorded state (see [`Lease::state_at`] for the observed one).
    pub fn state(&self) -> LeaseState {
        self.state
    }
    /// Number of renewals.
    pub fn renewal_count(&self) -> u64 {
        self.renewal_count
    }
    /// Time of the last renewal.
    pub fn last_renewed_at(&self) -> Option<UnixMillis> {
        self.last_renewed_at
    }
    /// Closure time, once closed.
    pub fn closed_at(&self) -> Option<UnixMillis> {
        self.closed_at
    }
    /// Closure reason, once closed.
    pub fn closure_reason(&self) -> Option<&str> {
        self.closure_reason.as_deref()
    }

    /// The state an observer sees at `now`: an active lease past its expiry is expired even if
    /// nobody has recorded that yet.
    pub fn state_at(&self, now: UnixMillis) -> LeaseState {
        if self.state == LeaseState::Active && now >= self.window.expires_at {
            LeaseState::Expired
        } else {
            self.state
        }
    }

    /// True while the lease is active and unexpired at `now`.
    pub fn is_live(&self, now: UnixMillis) -> bool {
        self.state_at(now) == LeaseState::Active && now >= self.window.starts_at
    }

    /// Renews at `at` to `new_expires_at`: active, not expired, strictly after the previous
    /// renewal, strictly extending, and within the grace bound if one exists.
    pub fn renew(&mut self, at: UnixMillis, new_expires_at: UnixMillis) -> Result<(), LeaseError> {
        if self.state != LeaseState::Active {
            return Err(LeaseError::Closed(self.state));
        }
        if at >= self.window.expires_at {
            return Err(LeaseError::Expired);
        }
        if at < self.window.starts_at || self.last_renewed_at.is_some_and(|prev| at <= prev) {
            return Err(LeaseError::NonMonotonicRenewal);
        }
        if new_expires_at <= self.window.expires_at
            || self.grace_expires_at.is_some_and(|g| new_expires_at > g)
        {
            return Err(LeaseError::NotExtending);
        }
        if self.renewal_count >= MAX_SAFE_INTEGER {
            return Err(LeaseError::InvalidField("renewalCount"));
        }
        self.renewal_count += 1;
        self.last_renewed_at = Some(at);
        self.window.expires_at = new_expires_at;
        Ok(())
    }

    /// Restores recorded renewals when reading a lease back from its document: the count and
    /// the last renewal instant (which must lie in `[startsAt, expiresAt)`), with no renewal
    /// exactly when the count is zero.
    pub(crate) fn restore_history(
        &mut self,
        renewal_count: u64,
        last_renewed_at: Option<UnixMillis>,
    ) -> Result<(), LeaseError> {
        match (renewal_count, last_renewed_at) {
            (0, None) => Ok(()),
            (1..=MAX_SAFE_INTEGER, Some(at))
                if at >= self.window.starts_at && at < self.window.expires_at =>
            {
                self.renewal_count = renewal_count;
                self.last_renewed_at = Some(at);
                Ok(())
            }
            _ => Err(LeaseError::InvalidField("lastRenewedAt")),
        }
    }

    /// Checkpoint, block or submission (§11.3). Must happen before expiry.
    pub fn release(&mut self, at: UnixMillis, reason: &str) -> Result<bool, LeaseError> {
        self.close(LeaseState::Released, at, reason)
    }

    /// Session replacement, reassignment, cancellation or failure (§11.3). Before expiry.
    pub fn revoke(&mut self, at: UnixMillis, reason: &str) -> Result<bool, LeaseError> {
        self.close(LeaseState::Revoked, at, reason)
    }

    /// Records a timeout; `at` must be at or after `expiresAt`.
    pub fn expire(&mut self, at: UnixMillis, reason: &str) -> Result<bool, LeaseError> {
        self.close(LeaseState::Expired, at, reason)
    }

    /// Closes with `state`. Returns `Ok(true)` when it changed the lease and `Ok(false)` when
    /// the identical closure was already recorded (idempotent replay).
    pub fn close(
        &mut self,
        state: LeaseState,
        at: UnixMillis,
        reason: &str,
    ) -> Result<bool, LeaseError> {
        if state == LeaseState::Active {
            return Err(LeaseError::InvalidField("state"));
        }
        let reason = closure_reason(reason)?;
        if self.state != LeaseState::Active {
            let same = self.state == state
                && self.closed_at == Some(at)
                && self.closure_reason.as_deref() == Some(reason);
            return if same {
                Ok(false)
            } else {
                Err(LeaseError::ClosureConflict)
            };
        }
        let floor = self.last_renewed_at.unwrap_or(self.window.issued_at);
        if at < floor {
            return Err(LeaseError::InvalidWindow);
        }
        match state {
            // A lease that already lapsed cannot be released or revoked: it expired.
            LeaseState::Released | LeaseState::Revoked if at >= self.window.expires_at => {
                return Err(LeaseError::Expired);
            }
            LeaseState::Expired if at < self.window.expires_at => {
                return Err(LeaseError::InvalidWindow);
            }
            _ => {}
        }
        self.state = state;
        self.closed_at = Some(at);
        self.closure_reason = Some(reason.to_owned());
        Ok(true)
    }

    /// Fencing check for a lease-bound Command at `now` (§11.3, §4.5, §6.3, §7.2).
    ///
    /// Epoch checks come first so that a fenced actor learns to refresh its epoch; a matching
    /// epoch with an older Lease ID is still rejected (§11.3).
    pub fn check_claim(&self, claim: &LeaseClaim<'_>, now: UnixMillis) -> Result<(), LeaseError> {
        if claim.agent_id != self.binding.holder_agent_id {
            return Err(LeaseError::WrongHolder);
        }
        if claim.session_epoch != self.binding.session_epoch {
            return Err(LeaseError::StaleSession);
        }
        if self.ownership_epoch.is_some() && claim.ownership_epoch != self.ownership_epoch {
            return Err(LeaseError::StaleOwnership);
        }
        if self.coordinator_epoch.is_some() && claim.coordinator_epoch != self.coordinator_epoch {
            return Err(LeaseError::StaleCoordinator);
        }
        if claim.lease_id != self.binding.lease_id {
            return Err(LeaseError::StaleLease);
        }
        match self.state_at(now) {
            LeaseState::Active if now >= self.window.starts_at => Ok(()),
            LeaseState::Active => Err(LeaseError::InvalidWindow),
            LeaseState::Expired => Err(LeaseError::Expired),
            other => Err(LeaseError::Closed(other)),
        }
    }

    /// For ownership leases: may work start at `now`? (§11.3 start-by, §11.5 missed start).
    pub fn check_start_by(&self, now: UnixMillis) -> Result<(), LeaseError> {
        if !self.is_live(now) {
            return Err(match self.state_at(now) {
                LeaseState::Active => LeaseError::InvalidWindow,
                LeaseState::Expired => LeaseError::Expired,
                other => LeaseError::Closed(other),
            });
        }
        match self.start_by {
            Some(deadline) if now > deadline => Err(LeaseError::Expired),
            _ => Ok(()),
        }
    }

    /// The schema-shaped document (`lease.schema.json`, camelCase, RFC 3339 UTC timestamps) in
    /// RFC 8785 canonical form.
    pub fn to_json_string(&self) -> Result<String, LeaseError> {
        let ts = |t: UnixMillis| t.to_rfc3339().ok_or(LeaseError::UnrenderableTimestamp);
        let mut object = Object::new();
        let mut text = |name: &str, value: &str| object.insert(name, Value::string(value));
        text("leaseId", &self.binding.lease_id);
        text("leaseType", self.lease_type.as_str());
        text("missionId", &self.binding.mission_id);
        text("groupId", &self.binding.group_id);
        text("holderAgentId", &self.binding.holder_agent_id);
        text("issuedAt", &ts(self.window.issued_at)?);
        text("startsAt", &ts(self.window.starts_at)?);
        text("expiresAt", &ts(self.window.expires_at)?);
        text("state", self.state.as_str());
        if let Some(id) = &self.work_item_id {
            text("workItemId", id);
        }
        if let Some(at) = self.closed_at {
            text("closedAt", &ts(at)?);
        }
        if let Some(reason) = &self.closure_reason {
            text("closureReason", reason);
        }
        if let Some(g) = self.grace_expires_at {
            text("graceExpiresAt", &ts(g)?);
        }
        if let Some(at) = self.last_renewed_at {
            text("lastRenewedAt", &ts(at)?);
        }
        if let Some(at) = self.start_by {
            text("startBy", &ts(at)?);
        }
        let mut number =
            |name: &str, value: u64| object.insert(name, Value::Number(Number::from_u64(value)));
        number("renewalCount", self.renewal_count);
        number("sessionEpoch", self.binding.session_epoch);
        if let Some(epoch) = self.coordinator_epoch {
            number("coordinatorEpoch", epoch);
        }
        if let Some(epoch) = self.ownership_epoch {
            number("ownershipEpoch", epoch);
        }
        // Every member is a string or a safe integer, so the canonical form always exists.
        let bytes = canonical_bytes(&Value::Object(object))
            .map_err(|_| LeaseError::UnrenderableTimestamp)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
