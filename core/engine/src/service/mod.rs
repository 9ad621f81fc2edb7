//! The authoritative core as one object every binding serves: wire Command bytes in, signed
//! ordered Events out, queries and replay (the reference's `Core`, `reference-python.md` §1.5).
//!
//! [`Core`] owns the [`Engine`] (store, Event issuer, Event ID source), the
//! Organization's Registry and the [`CommandIngress`] (with its freshness window and
//! authorizer), and exposes the call shapes the Python, Node and wasm bindings use:
//!
//! - [`perform_bytes`](Core::perform_bytes): six-stage verification (Command profile)
//!   against the Registry, freshness, authorization, then `perform` (with the manifest
//!   resolver for `artifact.publish`). A Command whose signature does not verify is never
//!   applied (the reference's gap 1, `reference-python.md` §7).
//! - [`query`](Core::query): the [`QueryKind`]s the engine answers (logic in
//!   `engine/query.rs`); absent entities are `NOT_FOUND`-family errors.
//! - [`replay`](Core::replay) with the reference's bounds (`after ≥ 0`,
//!   `1 ≤ limit ≤ 10,000`); every Event is checked before it is first served
//!   (`served_events.rs`: its log position and the Group Authority's signature), then
//!   recognized by digest (`verified_events.rs`: verify once, issue 27 item 3); a store
//!   keyed since its Events were written is trusted on its keyed check alone.
//! - [`replay_read`](Core::replay_read): the same, but a cursor before an archived
//!   Group's online log answers with the signed snapshot itself (§16 `CURSOR_TOO_OLD`), which
//!   `missionweaveprotocol_agent::replay::CoreReplaySource` hands to an Agent's replay.
//!
//! Every refusal is a [`CoreError`] carrying its §19 wire code and its reference
//! [`ErrorFamily`] (one table, `error.rs`). The facade is `Sync`: bindings share it between
//! threads (different Groups never conflict; Commands of one Group are serialized by the store).

mod authorizer;
mod error;
mod served_events;
mod verified_events;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, Fields, KeyRegistrySnapshot};

pub use authorizer::default_authorizer;
pub use error::{CoreError, ErrorFamily, STORE_FAILURE_REASONS, wire_code_families};

use crate::archive::snapshot::ArchivedSnapshot;
use crate::engine::{Engine, Performed, Query, QueryKind};
use crate::events::{EventIdSource, EventIssuer};
use crate::ingress::{CommandAuthorizer, CommandIngress, FreshnessWindow, VerifiedCommand};
use crate::store::{InMemoryStore, ReplayPage, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The authorizer an [`Core`] consults after verification (§6.4).
pub type BoxedAuthorizer = Box<dyn CommandAuthorizer + Send + Sync>;
/// The Event ID source of an [`Core`].
pub type BoxedEventIds = Box<dyn EventIdSource + Send>;

/// One answer of [`Core::replay_read`] (§16).
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayRead {
    /// Events after the cursor, checked like [`Core::replay`]'s.
    Page(ReplayPage),
    /// `CURSOR_TOO_OLD`: the cursor lies before the online log of an archived Group; resume
    /// from this snapshot (after its `throughSequence`).
    CursorTooOld(ArchivedSnapshot),
}

/// The largest replay page (the reference's bound, `Core.replay(limit ≤ 10,000)`).
pub const MAX_REPLAY_LIMIT: i64 = 10_000;

/// The authoritative core over a store `S`, signing Events with `G`.
pub struct Core<S = Arc<InMemoryStore>, G = missionweaveprotocol::crypto::SigningKey> {
    engine: Engine<S, G, BoxedEventIds>,
    registry: Arc<KeyRegistrySnapshot>,
    ingress: CommandIngress<BoxedAuthorizer>,
    /// Digests of the served Events already checked in full (`verified_events.rs`).
    verified: verified_events::VerifiedEvents,
    /// How many served Events were checked in full (signature included) so far.
    full_checks: AtomicU64,
}

impl<S, G> core::fmt::Debug for Core<S, G> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Core")
            .field("window", self.ingress.window())
            .finish_non_exhaustive()
    }
}

impl<S: Store, G: Signer> Core<S, G> {
    /// A core over `store`, verifying Commands against `registry`, signing Events with
    /// `issuer` (whose Principal must be bound to its key in `registry`, so that receivers
    /// verify the Events), authorizing signers with `authorizer`, naming Events from
    /// `event_ids` (`RandomEventIds` in deployments, `SequentialEventIds` in tests), with the
    /// default freshness window.
    pub fn new(
        store: S,
        registry: Arc<KeyRegistrySnapshot>,
        issuer: EventIssuer<G>,
        authorizer: BoxedAuthorizer,
        event_ids: BoxedEventIds,
    ) -> Self {
        Self {
            engine: Engine::new(store, issuer, event_ids),
            registry,
            ingress: CommandIngress::new(authorizer),
            verified: verified_events::VerifiedEvents::default(),
            full_checks: AtomicU64::new(0),
        }
    }

    /// How many served Events [`replay`](Self::replay) has checked in full — parsed, placed
    /// and their Group Authority signature verified — since this core was made. An Event
    /// served again with the same bytes at the same position is recognized by digest and not
    /// counted (`verified_events.rs`), nor is any Event of a store that authenticates its Events
    /// ([`Store::authenticates_events`]); tests and benchmarks read this to see which replays
    /// ran Ed25519.
    pub fn served_events_checked(&self) -> u64 {
        self.full_checks.load(Ordering::Relaxed)
    }

    /// The same core with other §20 cooperation limits (default: the reference's).
    pub fn with_cooperation_limits(
        mut self,
        limits: missionweaveprotocol_kernel::cooperation::CooperationLimits,
    ) -> Self {
        self.engine = self.engine.with_cooperation_limits(limits);
        self
    }

    /// The same core with other bounds on reconciling offline progress (§11.5; default:
    /// `engine::Engine::with_offline_limits`'s).
    pub fn with_offline_limits(
        mut self,
        limits: missionweaveprotocol_kernel::offline::OfflineLimits,
    ) -> Self {
        self.engine = self.engine.with_offline_limits(limits);
        self
    }

    /// The same core with another freshness and clock-skew window (§6.4, Organization policy).
    pub fn with_freshness(mut self, window: FreshnessWindow) -> Self {
        self.ingress = self.ingress.with_window(window);
        self
    }

    /// The same core with another bound on contention retries (at least 1).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.engine = self.engine.with_max_attempts(attempts);
        self
    }

    /// The engine.
    pub fn engine(&self) -> &Engine<S, G, BoxedEventIds> {
        &self.engine
    }

    /// The store.
    pub fn store(&self) -> &S {
        self.engine.store()
    }

    /// The Registry Commands are verified against.
    pub fn registry(&self) -> &Arc<KeyRegistrySnapshot> {
        &self.registry
    }

    /// The freshness window in use.
    pub fn freshness(&self) -> &FreshnessWindow {
        self.ingress.window()
    }

    /// Ingress alone: six stages, freshness, authorization (the reference's
    /// `CommandIngress.verify`, here also checking freshness and the signer).
    pub fn verify(&self, bytes: &[u8], now: UnixMillis) -> Result<VerifiedCommand, CoreError> {
        Ok(self.ingress.verify(bytes, &self.registry, now)?)
    }

    /// Verifies wire Command `bytes` at `now` and applies them: the Command's Events, or a
    /// refusal with nothing applied.
    pub fn perform_bytes(&self, bytes: &[u8], now: UnixMillis) -> Result<Performed, CoreError> {
        let command = self.verify(bytes, now)?;
        self.perform_verified(&command, now)
    }

    /// Applies a Command ingress already verified (benchmarks, hosts that verify elsewhere).
    /// `artifact.publish` manifests are verified against this core's Registry.
    pub fn perform_verified(
        &self,
        command: &VerifiedCommand,
        now: UnixMillis,
    ) -> Result<Performed, CoreError> {
        Ok(self
            .engine
            .perform_with_resolver(command, now, &self.registry)?)
    }

    /// Answers a query at `now`. Kinds this engine does not serve yet are `INVALID_COMMAND`
    /// (`query_kind_not_served`); an absent entity is `GROUP_NOT_FOUND`, family `not_found`.
    pub fn query(
        &self,
        kind: QueryKind,
        entity_id: &str,
        group_id: Option<&str>,
        actor_type: Option<&str>,
        now: UnixMillis,
    ) -> Result<Value, CoreError> {
        let query = Query {
            kind,
            entity_id: entity_id.to_owned(),
            group_id: group_id.map(str::to_owned),
            actor_type: actor_type.map(str::to_owned),
        };
        self.engine
            .query(&query, now)?
            .ok_or_else(|| CoreError::not_found(kind.as_str(), entity_id))
    }

    /// [`query`](Self::query) with the kind by name (bindings pass strings); an unknown name is
    /// `INVALID_COMMAND` (`unknown_query_kind`).
    pub fn query_named(
        &self,
        kind: &str,
        entity_id: &str,
        group_id: Option<&str>,
        actor_type: Option<&str>,
        now: UnixMillis,
    ) -> Result<Value, CoreError> {
        let parsed = QueryKind::parse(kind).ok_or_else(|| {
            CoreError::invalid(
                "unknown_query_kind",
                format!("{kind:?} is not a QueryKind"),
                Fields::new().text("query_kind", kind),
            )
        })?;
        self.query(parsed, entity_id, group_id, actor_type, now)
    }

    /// Up to `limit` Events of `group` after sequence `after`, with a continuation (§16).
    /// `after < 0` or `limit ∉ 1..=10,000` is `INVALID_COMMAND`; an unknown Group is
    /// `GROUP_NOT_FOUND`; archived history is `CURSOR_TOO_OLD` with the snapshot pointer.
    ///
    /// Each Event is checked before the page is served: it names the log position it was read
    /// from and carries the Group Authority's signature (`served_events.rs`), once per Core —
    /// served again with the same bytes at the same position, it is recognized by digest
    /// (`verified_events.rs`), while the store checks its integrity columns on every read. A
    /// store that authenticates its Events under a key since they were written
    /// ([`Store::authenticates_events`]) is not re-verified at all: its keyed check on read
    /// is the check (`served_events.rs`, "When the store's key is enough"). A stored Event
    /// that fails (or a row the store's own integrity check refuses) is `INTERNAL_ERROR`
    /// (`store_corrupt`) naming its Event ID and sequence, and nothing is served.
    pub fn replay(&self, group: &str, after: i64, limit: i64) -> Result<ReplayPage, CoreError> {
        let Ok(after) = u64::try_from(after) else {
            return Err(CoreError::invalid(
                "replay_after_negative",
                format!("after must be at least 0, not {after}"),
                Fields::new().integer("after", after),
            ));
        };
        if !(1..=MAX_REPLAY_LIMIT).contains(&limit) {
            return Err(CoreError::invalid(
                "replay_limit_out_of_range",
                format!("limit must be between 1 and {MAX_REPLAY_LIMIT}, not {limit}"),
                Fields::new().integer("limit", limit),
            ));
        }
        // Within 1..=10,000: fits every usize.
        let limit = usize::try_from(limit).unwrap_or(1);
        let page = self.engine.replay(group, after, limit)?;
        // The store checked its integrity columns on this read. A store keyed since its Events
        // were written authenticated each of them against anyone without its key: served as
        // read (`served_events.rs`, "When the store's key is enough"). Otherwise the Events this
        // Core already checked in full are recognized by digest, the others are checked now
        // (and then remembered). Issue 27 item 3: verify once where trust changes hands.
        if self.engine.store().authenticates_events() {
            return Ok(page);
        }
        let known = self.verified.known(group, &page.events);
        if known.contains(&false) {
            served_events::ServedEventCheck::new(self.engine.issuer(), &self.registry).check_page(
                group,
                &page.events,
                &known,
                &self.full_checks,
            )?;
            self.verified.remember(
                group,
                page.events
                    .iter()
                    .zip(&known)
                    .filter(|(_, k)| !**k)
                    .map(|(r, _)| r),
            );
        }
        Ok(page)
    }

    /// [`replay`](Self::replay), except that a cursor older than the online log of an archived
    /// Group answers [`ReplayRead::CursorTooOld`] with the Group's signed snapshot (§16: "the
    /// server returns `CURSOR_TOO_OLD` and a signed snapshot reference"); the caller verifies
    /// its hash and signature and resumes after its `throughSequence`.
    pub fn replay_read(
        &self,
        group: &str,
        after: i64,
        limit: i64,
    ) -> Result<ReplayRead, CoreError> {
        match self.replay(group, after, limit) {
            Ok(page) => Ok(ReplayRead::Page(page)),
            Err(e) if e.wire_code() == missionweaveprotocol::WireCode::CursorTooOld => {
                let pointer = self
                    .store()
                    .head(group)
                    .map_err(crate::error::EngineError::from)?
                    .snapshot;
                match (
                    crate::archive::snapshot::read_snapshot(self.store(), group)?,
                    pointer,
                ) {
                    // The hash is the log's pointer, not recomputed from the stored bytes: the
                    // reader checks that the bytes it got are the ones archived (§16).
                    (Some(mut snapshot), Some(pointer)) => {
                        snapshot.artifact_hash = pointer.artifact_hash;
                        Ok(ReplayRead::CursorTooOld(snapshot))
                    }
                    // History moved offline without an archive snapshot: the pointer alone.
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }
}

/// Every vocabulary of the facade by name, for `crate::vocabularies`: the query kinds and the
/// error families (value and class name).
pub fn vocabularies() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "query_kind",
            QueryKind::ALL.iter().map(|k| k.as_str()).collect(),
        ),
        (
            "error_family",
            ErrorFamily::ALL.iter().map(|f| f.as_str()).collect(),
        ),
        (
            "error_family_class",
            ErrorFamily::ALL.iter().map(|f| f.class_name()).collect(),
        ),
    ]
}
