//! Integrity of data at rest: what a durable backend stores beside each row so that a row
//! changed, removed or planted behind the store's back is detected when read and reported as
//! [`StoreError::Corrupt`], never served (`docs/store.md`, "Data at rest").
//!
//! Every row carries a 32-byte authenticator computed by an [`Integrity`] scheme: SHA-256
//! without a key, or HMAC-SHA256 under an [`IntegrityKey`] ([`StoreOptions::integrity_key`]).
//! Every field is length-prefixed or of fixed size, and each kind of row has its own domain
//! string, so no two different rows hash alike.
//!
//! - **Events** form one chain per Group: the chain hash of the Event at sequence `n` covers
//!   the chain hash of `n - 1` ([`GENESIS`] before sequence 1), `n`, the Group, the Event ID,
//!   SHA-256 of the body and the Action the Event records (below). A backend stores each
//!   Event's chain hash in its row and the chain hash just before the first online Event in the
//!   Group's head, so archival (§7.4) does not break verification of what stays online.
//! - **Aggregates** carry a checksum over kind, ID, revision, the Action the row records and
//!   the value.
//! - **Receipts** (§15.1) carry a checksum over their key, signing hash and first Event.
//! - **Group heads** carry a checksum over the next sequence, the first online sequence, the
//!   snapshot pointer and the chain hash before the first online Event.
//!
//! **Receipts that vanish.** A checksum cannot show that a row is missing, and a missing
//! receipt would let a re-sent Command apply twice. So the first Event of every Command records
//! its Action: [`ActionBindings::of`] finds, in the transaction that records a receipt, the
//! row holding that receipt's first Event — the appended Event at the receipt's position, or
//! for an Organization-scoped Event the aggregate created under its Event ID — and the backend
//! stores the receipt key's [`action_key`] in that row, covered by the row's chain hash or
//! checksum. When a receipt is not found, the backend looks the Action up among the recorded
//! ones ([`CommitView::recorded_action`](super::CommitView::recorded_action)): a recorded
//! Action without its receipt is [`missing_receipt`], at the dedup read and again at commit.
//! Removing the record too means changing or removing a chained Event row, which the chain
//! reports.
//!
//! **What a key adds.** Without a key anyone who can write the database can also recompute
//! every hash: the checks then catch damage and careless edits only. With a key the
//! authenticators cannot be recomputed without it, so an edited aggregate, a receipt changed or
//! removed, a log cut short (its head moved back) are detected even when the tamperer
//! recomputed the unkeyed hashes. What no per-row check can see is the whole database (or one
//! Group's log with its head) put back to an earlier state in which every row was genuine: that
//! is detected only against an anchor kept outside the store, the last Event a client saw
//! (`docs/store.md`).

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use crate::store::{
    aggregate::Aggregate,
    error::StoreError,
    event_log::GroupHead,
    receipt::{Receipt, ReceiptKey},
    transaction::Transaction,
};

/// A 32-byte chain hash, checksum or MAC.
pub type Hash32 = [u8; 32];

/// The chain hash "before sequence 1" of every Group.
pub const GENESIS: Hash32 = [0; 32];

/// The shortest [`IntegrityKey`] accepted: 32 bytes, the strength of the MAC.
pub const MIN_KEY_LEN: usize = 32;

const EVENT_DOMAIN: &[u8] = b"missionweaveprotocol/store/event-chain/v2\0";
const AGGREGATE_DOMAIN: &[u8] = b"missionweaveprotocol/store/aggregate/v2\0";
const RECEIPT_DOMAIN: &[u8] = b"missionweaveprotocol/store/receipt/v1\0";
const HEAD_DOMAIN: &[u8] = b"missionweaveprotocol/store/group-head/v1\0";
const ACTION_DOMAIN: &[u8] = b"missionweaveprotocol/store/action/v1\0";
const KEY_CHECK_DOMAIN: &[u8] = b"missionweaveprotocol/store/key-check/v1\0";
const ADOPTED_KEY_CHECK_DOMAIN: &[u8] = b"missionweaveprotocol/store/key-check/adopted/v1\0";

type HmacSha256 = Hmac<Sha256>;

/// The secret that authenticates every stored row (HMAC-SHA256). At least [`MIN_KEY_LEN`]
/// bytes; never shown by `Debug`, wiped from memory when dropped. Keep it outside the
/// database (a secret store, a file the database's operators cannot read): whoever holds it
/// can forge rows.
#[derive(Clone)]
pub struct IntegrityKey {
    bytes: Box<[u8]>,
    mac: HmacSha256,
}

impl IntegrityKey {
    /// A key of `bytes` (at least [`MIN_KEY_LEN`]; 32 random bytes is right).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, StoreError> {
        let mut bytes = bytes.into();
        if bytes.len() < MIN_KEY_LEN {
            let len = bytes.len();
            bytes.zeroize();
            return Err(StoreError::InvalidArgument {
                argument: "integrity_key",
                detail: format!("{len} bytes; an integrity key has at least {MIN_KEY_LEN}"),
            });
        }
        let bytes = bytes.into_boxed_slice();
        let mac = <HmacSha256 as KeyInit>::new_from_slice(&bytes).map_err(|_| {
            StoreError::InvalidArgument {
                argument: "integrity_key",
                detail: "HMAC-SHA256 refused the key".to_owned(),
            }
        })?;
        Ok(Self { bytes, mac })
    }

    /// A key written in hexadecimal (64 digits or more; whitespace around it is ignored).
    pub fn from_hex(text: &str) -> Result<Self, StoreError> {
        let text = text.trim();
        let invalid = || StoreError::InvalidArgument {
            argument: "integrity_key",
            detail: "not an even number of hexadecimal digits".to_owned(),
        };
        if !text.len().is_multiple_of(2) {
            return Err(invalid());
        }
        let mut bytes = Vec::with_capacity(text.len() / 2);
        for pair in text.as_bytes().chunks(2) {
            let digit = |c: u8| char::from(c).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(high), Some(low)) => bytes.push((high * 16 + low) as u8),
                _ => {
                    bytes.zeroize();
                    return Err(invalid());
                }
            }
        }
        Self::new(bytes)
    }
}

impl Drop for IntegrityKey {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl fmt::Debug for IntegrityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IntegrityKey(<redacted>)")
    }
}

/// Compares in time independent of where the keys differ.
impl PartialEq for IntegrityKey {
    fn eq(&self, other: &Self) -> bool {
        self.bytes.len() == other.bytes.len()
            && self
                .bytes
                .iter()
                .zip(other.bytes.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

impl Eq for IntegrityKey {}

/// What every backend is opened with, besides its own connection settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// Authenticate every row with HMAC-SHA256 under this key (`None`: unkeyed SHA-256, which
    /// catches damage but not a tamperer who recomputes the hashes). A store sealed with a key
    /// opens only with that key; an unkeyed store opens with a key only when
    /// [`adopt_key`](Self::adopt_key) is set.
    pub integrity_key: Option<IntegrityKey>,
    /// Seal an existing unkeyed store with [`integrity_key`](Self::integrity_key) when it is
    /// opened: every row is verified under the unkeyed scheme and re-authenticated under the
    /// key, in the opening transaction. Only an explicit choice: a keyed store that suddenly
    /// reads as unkeyed is a tamperer's downgrade, and is refused without it.
    pub adopt_key: bool,
}

impl StoreOptions {
    /// Options with `key` as the integrity key.
    pub fn keyed(key: IntegrityKey) -> Self {
        Self {
            integrity_key: Some(key),
            adopt_key: false,
        }
    }

    /// These options, sealing an unkeyed store with the key ([`adopt_key`](Self::adopt_key)).
    pub fn adopting_key(mut self) -> Self {
        self.adopt_key = true;
        self
    }

    /// The scheme these options select.
    pub fn integrity(&self) -> Integrity {
        self.integrity_key
            .as_ref()
            .map_or_else(Integrity::unkeyed, Integrity::keyed)
    }
}

/// How rows are authenticated: SHA-256, or HMAC-SHA256 under an [`IntegrityKey`]. Cheap to
/// clone (the key's HMAC state is prepared once).
#[derive(Clone, Default)]
pub struct Integrity {
    mac: Option<HmacSha256>,
}

impl fmt::Debug for Integrity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Integrity")
            .field("scheme", &self.scheme())
            .finish()
    }
}

/// One authenticator being computed.
enum Hasher {
    Plain(Sha256),
    Keyed(HmacSha256),
}

impl Hasher {
    fn update(&mut self, data: &[u8]) {
        match self {
            Self::Plain(hasher) => Digest::update(hasher, data),
            Self::Keyed(mac) => Mac::update(mac, data),
        }
    }

    fn integer(&mut self, value: u64) {
        self.update(&value.to_be_bytes());
    }

    /// Length-prefixed bytes.
    fn bytes(&mut self, data: &[u8]) {
        self.integer(data.len() as u64);
        self.update(data);
    }

    /// 0 for none, 1 and the hash for one.
    fn optional(&mut self, hash: Option<&Hash32>) {
        match hash {
            None => self.update(&[0]),
            Some(hash) => {
                self.update(&[1]);
                self.update(hash);
            }
        }
    }

    fn finish(self) -> Hash32 {
        match self {
            Self::Plain(hasher) => hasher.finalize().into(),
            Self::Keyed(mac) => mac.finalize().into_bytes().into(),
        }
    }
}

impl Integrity {
    /// SHA-256: detects damage, not a tamperer who recomputes the hashes.
    pub fn unkeyed() -> Self {
        Self { mac: None }
    }

    /// HMAC-SHA256 under `key`.
    pub fn keyed(key: &IntegrityKey) -> Self {
        Self {
            mac: Some(key.mac.clone()),
        }
    }

    /// Whether rows are authenticated under a key.
    pub fn is_keyed(&self) -> bool {
        self.mac.is_some()
    }

    /// The scheme's stored name: `sha256` or `hmac-sha256`.
    pub fn scheme(&self) -> &'static str {
        if self.is_keyed() {
            "hmac-sha256"
        } else {
            "sha256"
        }
    }

    /// What a keyed store records to recognize its key at the next open (a MAC of a fixed
    /// message: it reveals nothing of the key). `None` without a key.
    pub fn key_check(&self) -> Option<Hash32> {
        self.mac
            .as_ref()
            .map(|_| self.hasher(KEY_CHECK_DOMAIN).finish())
    }

    /// What a keyed store records instead of [`key_check`](Self::key_check) when the key was
    /// adopted over Events already stored ([`StoreOptions::adopt_key`]): those Events were
    /// authenticated only under the unkeyed scheme before, which a tamperer can recompute, so
    /// the key vouches for them without having authenticated them when they were written. A
    /// MAC too: without the key one record cannot be turned into the other. `None` without a
    /// key.
    pub fn adopted_key_check(&self) -> Option<Hash32> {
        self.mac
            .as_ref()
            .map(|_| self.hasher(ADOPTED_KEY_CHECK_DOMAIN).finish())
    }

    /// The key check to record for a store sealed under this scheme: `adopted_over_events`
    /// when a key was adopted over stored Events ([`adopted_key_check`](Self::adopted_key_check)).
    pub fn recorded_key_check(&self, adopted_over_events: bool) -> Option<Hash32> {
        if adopted_over_events {
            self.adopted_key_check()
        } else {
            self.key_check()
        }
    }

    fn hasher(&self, domain: &[u8]) -> Hasher {
        let mut hasher = match &self.mac {
            None => Hasher::Plain(Sha256::new()),
            Some(mac) => Hasher::Keyed(mac.clone()),
        };
        hasher.update(domain);
        hasher
    }

    /// The chain hash of the Event at `sequence` of `group`, following `previous` (the chain
    /// hash of sequence `sequence - 1`, or [`GENESIS`] before sequence 1). `action` is the
    /// [`action_key`] the row records, if it is the first Event of a Command.
    pub fn event_chain(
        &self,
        previous: &Hash32,
        group: &str,
        sequence: u64,
        event_id: &str,
        body: &[u8],
        action: Option<&Hash32>,
    ) -> Hash32 {
        let mut hasher = self.hasher(EVENT_DOMAIN);
        hasher.update(previous);
        hasher.integer(sequence);
        hasher.bytes(group.as_bytes());
        hasher.bytes(event_id.as_bytes());
        hasher.update(&Sha256::digest(body));
        hasher.optional(action);
        hasher.finish()
    }

    /// The checksum of an aggregate row (`action`: the [`action_key`] it records, if any).
    pub fn aggregate_checksum(
        &self,
        kind: &str,
        id: &str,
        revision: u64,
        value: &[u8],
        action: Option<&Hash32>,
    ) -> Hash32 {
        let mut hasher = self.hasher(AGGREGATE_DOMAIN);
        hasher.bytes(kind.as_bytes());
        hasher.bytes(id.as_bytes());
        hasher.integer(revision);
        hasher.optional(action);
        hasher.bytes(value);
        hasher.finish()
    }

    /// The checksum of a receipt row.
    pub fn receipt_checksum(&self, key: &ReceiptKey, receipt: &Receipt) -> Hash32 {
        let mut hasher = self.hasher(RECEIPT_DOMAIN);
        hasher.bytes(key.actor_type.as_bytes());
        hasher.bytes(key.actor_id.as_bytes());
        hasher.bytes(key.action_id.as_bytes());
        hasher.bytes(receipt.signing_hash.as_bytes());
        hasher.bytes(receipt.first_event.event_id.as_bytes());
        match &receipt.first_event.position {
            None => hasher.update(&[0]),
            Some((group, sequence)) => {
                hasher.update(&[1]);
                hasher.bytes(group.as_bytes());
                hasher.integer(*sequence);
            }
        }
        hasher.finish()
    }

    /// The checksum of a Group's head row: where its log stands, what was archived and the
    /// chain hash before its first online Event.
    pub fn head_checksum(&self, group: &str, head: &GroupHead, chain_before: &Hash32) -> Hash32 {
        let mut hasher = self.hasher(HEAD_DOMAIN);
        hasher.bytes(group.as_bytes());
        hasher.integer(head.next_sequence);
        hasher.integer(head.first_online);
        match &head.snapshot {
            None => hasher.update(&[0]),
            Some(snapshot) => {
                hasher.update(&[1]);
                hasher.bytes(snapshot.artifact_hash.as_bytes());
            }
        }
        hasher.update(chain_before);
        hasher.finish()
    }

    /// A verifier of `group`'s Events read in sequence order from `first_sequence`, chained
    /// after `previous` (the stored chain hash of `first_sequence - 1`).
    pub fn verifier<'a>(
        &'a self,
        group: &'a str,
        first_sequence: u64,
        previous: Hash32,
    ) -> ChainVerifier<'a> {
        ChainVerifier {
            integrity: self,
            group,
            previous,
            next_sequence: first_sequence,
        }
    }

    /// Checks an aggregate row's stored checksum.
    pub fn check_aggregate(
        &self,
        kind: &str,
        id: &str,
        revision: u64,
        value: &[u8],
        action: Option<&Hash32>,
        stored: &Hash32,
    ) -> Result<(), StoreError> {
        if &self.aggregate_checksum(kind, id, revision, value, action) == stored {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                what: "aggregate",
                locator: format!("{kind} {id}"),
                detail: format!("revision {revision} or its value does not match the row checksum"),
            })
        }
    }

    /// An aggregate row read back (`revision`, `value`, the `action` and `stored` checksum
    /// columns), served only if the checksum covers exactly that row of that key.
    pub fn verified_aggregate(
        &self,
        kind: &str,
        id: &str,
        revision: u64,
        value: &[u8],
        action: Option<&[u8]>,
        stored: &[u8],
    ) -> Result<Aggregate, StoreError> {
        let locator = || format!("{kind} {id}");
        let stored = hash_from_slice("aggregate", locator, stored)?;
        let action = action
            .map(|action| hash_from_slice("aggregate", locator, action))
            .transpose()?;
        self.check_aggregate(kind, id, revision, value, action.as_ref(), &stored)?;
        Ok(Aggregate {
            revision,
            value: value.into(),
        })
    }

    /// Checks a receipt row's stored checksum: an edited signing hash or first Event is
    /// corrupt, never an `ACTION_ID_COLLISION` or another Event's answer.
    pub fn check_receipt(
        &self,
        key: &ReceiptKey,
        receipt: &Receipt,
        stored: &[u8],
    ) -> Result<(), StoreError> {
        let stored = hash_from_slice("receipt", || receipt_locator(key), stored)?;
        if self.receipt_checksum(key, receipt) == stored {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                what: "receipt",
                locator: receipt_locator(key),
                detail: "its signing hash or first Event does not match the row checksum"
                    .to_owned(),
            })
        }
    }

    /// Checks a Group head row's stored checksum.
    pub fn check_head(
        &self,
        group: &str,
        head: &GroupHead,
        chain_before: &Hash32,
        stored: &[u8],
    ) -> Result<(), StoreError> {
        let stored = hash_from_slice("group", || group.to_owned(), stored)?;
        if self.head_checksum(group, head, chain_before) == stored {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                what: "group",
                locator: group.to_owned(),
                detail: format!(
                    "the head (next sequence {}, first online {}) does not match its checksum",
                    head.next_sequence, head.first_online
                ),
            })
        }
    }
}

/// The key under which a receipt's Action is recorded in the row of its first Event: SHA-256
/// of the receipt key (not secret: it is a lookup key; the row's authenticator covers it).
pub fn action_key(key: &ReceiptKey) -> Hash32 {
    let mut hasher = Hasher::Plain(Sha256::new());
    hasher.update(ACTION_DOMAIN);
    hasher.bytes(key.actor_type.as_bytes());
    hasher.bytes(key.actor_id.as_bytes());
    hasher.bytes(key.action_id.as_bytes());
    hasher.finish()
}

/// How errors name a receipt: `actor_type actor_id action_id`.
pub fn receipt_locator(key: &ReceiptKey) -> String {
    format!("{} {} {}", key.actor_type, key.actor_id, key.action_id)
}

/// The receipt of `key` is missing although `recorded_by` (`event g #3`, `aggregate kind id`)
/// records its Action: the Command was applied, and its receipt was removed behind the
/// store's back. Never answered as "new" (§15.1: it would apply a second time).
pub fn missing_receipt(key: &ReceiptKey, recorded_by: &str) -> StoreError {
    StoreError::Corrupt {
        what: "receipt",
        locator: receipt_locator(key),
        detail: format!("missing, but {recorded_by} records this Action as applied"),
    }
}

/// A stored hash column read back: exactly 32 bytes, or the row is corrupt.
pub fn hash_from_slice(
    what: &'static str,
    locator: impl FnOnce() -> String,
    bytes: &[u8],
) -> Result<Hash32, StoreError> {
    Hash32::try_from(bytes).map_err(|_| StoreError::Corrupt {
        what,
        locator: locator(),
        detail: format!("a stored hash of {} bytes, not 32", bytes.len()),
    })
}

/// What opening a store must do, given the scheme it is sealed with (`scheme`, `key_check` as
/// recorded in the store) and the integrity the options want: the one rule every durable
/// backend follows. A keyed store opens only with its key; an unkeyed one takes a key only when
/// the options adopt it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealCheck {
    /// Read and write under the wanted integrity as the store already is.
    Accept,
    /// A keyed store whose key was adopted over Events already stored
    /// ([`Integrity::adopted_key_check`]): read and write under the wanted integrity, but its
    /// Events are not all authenticated since they were written.
    AcceptAdopted,
    /// An unkeyed store adopting the wanted key: every row is verified and sealed anew first.
    Adopt,
}

/// [`SealCheck`] for a store sealed with `scheme` and `key_check`, opened for `wanted`
/// (`adopt_key` from the options). A refusal is `IntegrityKeyRefused`; an unknown scheme is
/// `damaged(detail)` (the backend's own corruption locator).
pub fn check_seal(
    scheme: &str,
    key_check: Option<&[u8]>,
    wanted: &Integrity,
    adopt_key: bool,
    damaged: impl FnOnce(String) -> StoreError,
) -> Result<SealCheck, StoreError> {
    let refused = |detail: &str| StoreError::IntegrityKeyRefused {
        detail: detail.to_owned(),
    };
    match (scheme, wanted.is_keyed()) {
        ("sha256", false) => Ok(SealCheck::Accept),
        ("hmac-sha256", true)
            if key_check.is_some() && key_check == wanted.key_check().as_ref().map(|c| &c[..]) =>
        {
            Ok(SealCheck::Accept)
        }
        ("hmac-sha256", true)
            if key_check.is_some()
                && key_check == wanted.adopted_key_check().as_ref().map(|c| &c[..]) =>
        {
            Ok(SealCheck::AcceptAdopted)
        }
        ("hmac-sha256", true) => Err(refused("the store is sealed under another integrity key")),
        ("hmac-sha256", false) => Err(refused(
            "the store is sealed under an integrity key: open it with that key",
        )),
        ("sha256", true) if adopt_key => Ok(SealCheck::Adopt),
        ("sha256", true) => Err(refused(
            "the store was sealed without an integrity key: set adopt_key to verify every row \
             and seal it under this key",
        )),
        (other, _) => Err(damaged(format!("unknown integrity scheme {other:?}"))),
    }
}

/// The authenticator to store for a row that did (`ok`) or did not verify as sealed before.
pub fn sealed(new: Hash32, ok: bool) -> Hash32 {
    if ok { new } else { poisoned(&new) }
}

/// A value that is not `hash`: what a migration stores for a row that failed its old check, so
/// that the damage stays detected at that row after the row is sealed anew.
pub fn poisoned(hash: &Hash32) -> Hash32 {
    let mut poisoned = *hash;
    poisoned[0] ^= 0xff;
    poisoned
}

/// Verifies Events read in sequence order, starting from the chain hash stored before the
/// first of them ([`Integrity::verifier`]). Feed every row a read returns, in order; the first
/// mismatch is the error.
#[derive(Debug, Clone)]
pub struct ChainVerifier<'a> {
    integrity: &'a Integrity,
    group: &'a str,
    previous: Hash32,
    next_sequence: u64,
}

impl ChainVerifier<'_> {
    /// Checks one row: its sequence is the next one and `stored` is the chain hash recomputed
    /// over its contents (`action`: the Action it records).
    pub fn check(
        &mut self,
        sequence: u64,
        event_id: &str,
        body: &[u8],
        action: Option<&Hash32>,
        stored: &Hash32,
    ) -> Result<(), StoreError> {
        let locator = || format!("{} #{sequence}", self.group);
        if sequence != self.next_sequence {
            return Err(StoreError::Corrupt {
                what: "event",
                locator: locator(),
                detail: format!("sequence {} is missing", self.next_sequence),
            });
        }
        let expected = self.integrity.event_chain(
            &self.previous,
            self.group,
            sequence,
            event_id,
            body,
            action,
        );
        if &expected != stored {
            return Err(StoreError::Corrupt {
                what: "event",
                locator: locator(),
                detail: "the Event's bytes, ID or recorded Action do not match its hash chain"
                    .to_owned(),
            });
        }
        self.previous = expected;
        self.next_sequence = sequence + 1;
        Ok(())
    }

    /// The chain hash of the last row checked (or the starting one).
    pub fn last(&self) -> Hash32 {
        self.previous
    }
}

/// The Event at `sequence` of `group` that the log should hold but does not (§15.2: the
/// online log has no gap): the head promises it, or a read or an archive needs its chain hash.
pub fn missing_event(group: &str, sequence: u64) -> StoreError {
    StoreError::Corrupt {
        what: "event",
        locator: format!("{group} #{sequence}"),
        detail: format!("sequence {sequence} is missing"),
    }
}

/// Which rows of a transaction record its receipts' Actions ([`action_key`]): for each
/// receipt, the row holding its first Event, when the transaction writes it —
///
/// - a Group Event: the append at the receipt's position with the receipt's Event ID;
/// - an Organization-scoped Event (no position, `docs/store.md`): the aggregate the
///   transaction creates (over revision 0) under the receipt's Event ID.
///
/// The engine's transactions always write the first Event with its receipt. A receipt whose
/// first Event is not in its transaction is stored with its checksum but bound to no row: its
/// removal would go unseen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionBindings {
    appends: Vec<Option<Hash32>>,
    writes: Vec<Option<Hash32>>,
}

impl ActionBindings {
    /// The bindings of `tx`'s receipts.
    pub fn of(tx: &Transaction) -> Self {
        let mut bindings = Self {
            appends: vec![None; tx.appends().len()],
            writes: vec![None; tx.writes().len()],
        };
        for (key, receipt) in tx.receipts() {
            let first = &receipt.first_event;
            let slot = match &first.position {
                Some((group, sequence)) => tx
                    .appends()
                    .iter()
                    .position(|(g, event)| {
                        g == group
                            && event.sequence == *sequence
                            && *event.event_id == *first.event_id
                    })
                    .and_then(|i| bindings.appends.get_mut(i)),
                None => tx
                    .writes()
                    .iter()
                    .position(|write| {
                        write.value.is_some()
                            && write.expected_revision == 0
                            && write.key.id == first.event_id
                    })
                    .and_then(|i| bindings.writes.get_mut(i)),
            };
            if let Some(slot) = slot {
                slot.get_or_insert_with(|| action_key(key));
            }
        }
        bindings
    }

    /// The Action the `index`-th append of the transaction records.
    pub fn append(&self, index: usize) -> Option<&Hash32> {
        self.appends.get(index).and_then(Option::as_ref)
    }

    /// The Action the `index`-th aggregate write of the transaction records.
    pub fn write(&self, index: usize) -> Option<&Hash32> {
        self.writes.get(index).and_then(Option::as_ref)
    }
}

/// The formulas of schema versions before receipts were bound and rows could be keyed, for
/// the migrations that verify old rows before sealing them anew.
pub mod v1 {
    use sha2::{Digest, Sha256};

    use super::Hash32;

    const EVENT_DOMAIN: &[u8] = b"missionweaveprotocol/store/event-chain/v1\0";
    const AGGREGATE_DOMAIN: &[u8] = b"missionweaveprotocol/store/aggregate/v1\0";

    fn put_text(hasher: &mut Sha256, text: &str) {
        hasher.update((text.len() as u64).to_be_bytes());
        hasher.update(text.as_bytes());
    }

    /// The version-1 chain hash of an Event.
    pub fn event_chain(
        previous: &Hash32,
        group: &str,
        sequence: u64,
        event_id: &str,
        body: &[u8],
    ) -> Hash32 {
        let body_hash = Sha256::digest(body);
        let mut hasher = Sha256::new();
        hasher.update(EVENT_DOMAIN);
        hasher.update(previous);
        hasher.update(sequence.to_be_bytes());
        put_text(&mut hasher, group);
        put_text(&mut hasher, event_id);
        hasher.update(body_hash);
        hasher.finalize().into()
    }

    /// The version-1 checksum of an aggregate row.
    pub fn aggregate_checksum(kind: &str, id: &str, revision: u64, value: &[u8]) -> Hash32 {
        let mut hasher = Sha256::new();
        hasher.update(AGGREGATE_DOMAIN);
        put_text(&mut hasher, kind);
        put_text(&mut hasher, id);
        hasher.update(revision.to_be_bytes());
        hasher.update(value);
        hasher.finalize().into()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::store::{
        aggregate::AggregateKey,
        event_log::{EventRecord, SnapshotPointer},
        receipt::EventRef,
    };
    use missionweaveprotocol::{DescribeError, WireCode};

    fn key(byte: u8) -> IntegrityKey {
        IntegrityKey::new(vec![byte; 32]).unwrap()
    }

    fn schemes() -> [Integrity; 3] {
        [
            Integrity::unkeyed(),
            Integrity::keyed(&key(1)),
            Integrity::keyed(&key(2)),
        ]
    }

    fn chain(integrity: &Integrity, rows: &[(&str, &[u8])]) -> Vec<Hash32> {
        let mut previous = GENESIS;
        rows.iter()
            .enumerate()
            .map(|(i, (id, body))| {
                previous = integrity.event_chain(&previous, "g", i as u64 + 1, id, body, None);
                previous
            })
            .collect()
    }

    fn corrupt(r: Result<(), StoreError>) -> StoreError {
        let e = r.unwrap_err();
        assert_eq!(e.wire_code(), WireCode::InternalError);
        assert_eq!(e.reason(), "store_corrupt");
        assert!(!e.retryable(), "damage at rest is not transient");
        e
    }

    #[test]
    fn an_untouched_log_verifies_under_every_scheme() {
        let rows: [(&str, &[u8]); 3] = [("e1", b"{}"), ("e2", b"{\"a\":1}"), ("e3", b"[]")];
        for integrity in schemes() {
            let hashes = chain(&integrity, &rows);
            let mut verifier = integrity.verifier("g", 1, GENESIS);
            for (i, (id, body)) in rows.iter().enumerate() {
                verifier
                    .check(i as u64 + 1, id, body, None, &hashes[i])
                    .unwrap();
            }
            assert_eq!(verifier.last(), hashes[2]);
            // A reader starting mid-log from the stored hash of the row before verifies too.
            let mut verifier = integrity.verifier("g", 3, hashes[1]);
            verifier.check(3, "e3", b"[]", None, &hashes[2]).unwrap();
        }
    }

    #[test]
    fn a_changed_body_id_group_action_or_gap_is_corrupt() {
        let rows: [(&str, &[u8]); 3] = [("e1", b"{}"), ("e2", b"{\"a\":1}"), ("e3", b"[]")];
        let integrity = Integrity::keyed(&key(1));
        let hashes = chain(&integrity, &rows);
        let first = || integrity.verifier("g", 1, GENESIS);
        corrupt(first().check(1, "e1", b"{ }", None, &hashes[0]));
        corrupt(first().check(1, "eX", b"{}", None, &hashes[0]));
        corrupt(first().check(1, "e1", b"{}", Some(&[7; 32]), &hashes[0]));
        corrupt(
            integrity
                .verifier("h", 1, GENESIS)
                .check(1, "e1", b"{}", None, &hashes[0]),
        );
        let mut verifier = first();
        verifier.check(1, "e1", b"{}", None, &hashes[0]).unwrap();
        let e = corrupt(verifier.check(3, "e3", b"[]", None, &hashes[2]));
        assert!(e.to_string().contains("sequence 2 is missing"), "{e}");
        // Swapping two rows' hashes breaks the chain as well.
        corrupt(first().check(1, "e1", b"{}", None, &hashes[1]));
    }

    #[test]
    fn a_key_adopted_over_events_is_recorded_and_recognized_apart() {
        let damaged = |d: String| StoreError::Corrupt {
            what: "store",
            locator: "integrity".to_owned(),
            detail: d,
        };
        let mine = Integrity::keyed(&key(1));
        let other = Integrity::keyed(&key(2));
        let born = mine.recorded_key_check(false).unwrap();
        let adopted = mine.recorded_key_check(true).unwrap();
        assert_ne!(born, adopted);
        assert_eq!(Integrity::unkeyed().recorded_key_check(true), None);
        let seal = |check: &Hash32, wanted: &Integrity| {
            check_seal("hmac-sha256", Some(&check[..]), wanted, false, damaged)
        };
        assert_eq!(seal(&born, &mine).unwrap(), SealCheck::Accept);
        assert_eq!(seal(&adopted, &mine).unwrap(), SealCheck::AcceptAdopted);
        // Either record under another key is refused: neither can be made without the key.
        for check in [born, adopted] {
            assert_eq!(
                seal(&check, &other).unwrap_err().reason(),
                "integrity_key_refused"
            );
        }
    }

    #[test]
    fn keyed_authenticators_differ_from_unkeyed_and_between_keys() {
        let [plain, one, two] = schemes();
        let receipt_key = ReceiptKey::new("agent", "a", "act");
        let receipt = Receipt {
            signing_hash: "sha256:1".into(),
            first_event: EventRef {
                event_id: "e1".into(),
                position: Some(("g".into(), 1)),
            },
        };
        let head = GroupHead {
            next_sequence: 4,
            first_online: 1,
            snapshot: None,
        };
        let all = |i: &Integrity| {
            [
                i.event_chain(&GENESIS, "g", 1, "e1", b"{}", None),
                i.aggregate_checksum("mission", "m", 1, b"{}", None),
                i.receipt_checksum(&receipt_key, &receipt),
                i.head_checksum("g", &head, &GENESIS),
            ]
        };
        let (p, a, b) = (all(&plain), all(&one), all(&two));
        for i in 0..4 {
            assert_ne!(p[i], a[i]);
            assert_ne!(a[i], b[i]);
        }
        // The same key gives the same values.
        assert_eq!(all(&Integrity::keyed(&key(1))), a);
        assert_eq!(plain.key_check(), None);
        assert_ne!(one.key_check(), two.key_check());
        assert_eq!(one.key_check(), Integrity::keyed(&key(1)).key_check());
        assert_eq!((plain.scheme(), one.scheme()), ("sha256", "hmac-sha256"));
        // The unkeyed Event chain and aggregate checksum are not the version-1 formulas:
        // migrated rows are sealed anew.
        assert_ne!(p[0], v1::event_chain(&GENESIS, "g", 1, "e1", b"{}"));
        assert_ne!(p[1], v1::aggregate_checksum("mission", "m", 1, b"{}"));
    }

    #[test]
    fn an_aggregate_checksum_binds_revision_value_and_action() {
        for integrity in schemes() {
            let sum = integrity.aggregate_checksum("work_item", "w", 3, b"{}", None);
            let check = |id, revision, value: &[u8], action: Option<&Hash32>| {
                integrity.check_aggregate("work_item", id, revision, value, action, &sum)
            };
            check("w", 3, b"{}", None).unwrap();
            assert!(check("w", 4, b"{}", None).is_err());
            assert!(check("w", 3, b"{ }", None).is_err());
            assert!(check("v", 3, b"{}", None).is_err());
            assert!(check("w", 3, b"{}", Some(&[1; 32])).is_err());
            // Bytes moved between the value and the recorded Action do not verify.
            let bound = integrity.aggregate_checksum("k", "i", 1, b"{}", Some(&[1; 32]));
            let mut shifted = b"{}".to_vec();
            shifted.push(1);
            shifted.extend([1; 32]);
            assert_ne!(
                bound,
                integrity.aggregate_checksum("k", "i", 1, &shifted, None)
            );
        }
        assert!(hash_from_slice("event", || "g #1".into(), &[0; 31]).is_err());
    }

    #[test]
    fn a_verified_aggregate_is_served_only_with_its_checksum() {
        let integrity = Integrity::keyed(&key(3));
        let action = [9; 32];
        let sum = integrity.aggregate_checksum("work_item", "w", 3, b"{}", Some(&action));
        let aggregate = integrity
            .verified_aggregate("work_item", "w", 3, b"{}", Some(&action), &sum)
            .unwrap();
        assert_eq!((aggregate.revision, &*aggregate.value), (3, &b"{}"[..]));
        for (revision, value, action, stored) in [
            (4, &b"{}"[..], Some(&action[..]), &sum[..]),
            (3, &b"{ }"[..], Some(&action[..]), &sum[..]),
            (3, &b"{}"[..], None, &sum[..]),
            (3, &b"{}"[..], Some(&action[..31]), &sum[..]),
            (3, &b"{}"[..], Some(&action[..]), &sum[..31]),
        ] {
            let e = integrity
                .verified_aggregate("work_item", "w", revision, value, action, stored)
                .unwrap_err();
            assert!(
                matches!(&e, StoreError::Corrupt { what: "aggregate", locator, .. } if locator == "work_item w"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn a_receipt_checksum_binds_its_hash_and_first_event() {
        let integrity = Integrity::keyed(&key(4));
        let k = ReceiptKey::new("agent", "a", "act-1");
        let receipt = Receipt {
            signing_hash: "sha256:1".into(),
            first_event: EventRef {
                event_id: "e1".into(),
                position: Some(("g".into(), 1)),
            },
        };
        let sum = integrity.receipt_checksum(&k, &receipt);
        integrity.check_receipt(&k, &receipt, &sum).unwrap();
        let mut other = receipt.clone();
        other.signing_hash = "sha256:2".into();
        let e = corrupt(integrity.check_receipt(&k, &other, &sum));
        assert_eq!(
            e.fields().get("locator").cloned(),
            Some(missionweaveprotocol::FieldValue::Text(
                "agent a act-1".into()
            ))
        );
        let mut moved = receipt.clone();
        moved.first_event.position = Some(("g".into(), 2));
        corrupt(integrity.check_receipt(&k, &moved, &sum));
        moved.first_event.position = None;
        corrupt(integrity.check_receipt(&k, &moved, &sum));
        corrupt(integrity.check_receipt(&ReceiptKey::new("agent", "b", "act-1"), &receipt, &sum));
        corrupt(integrity.check_receipt(&k, &receipt, &sum[..16]));
        // Unkeyed, the same row under the unkeyed checksum verifies (anyone can recompute it).
        let plain = Integrity::unkeyed();
        plain
            .check_receipt(&k, &other, &plain.receipt_checksum(&k, &other))
            .unwrap();
        corrupt(integrity.check_receipt(&k, &other, &plain.receipt_checksum(&k, &other)));
    }

    #[test]
    fn a_head_checksum_binds_where_the_log_stands() {
        let integrity = Integrity::keyed(&key(5));
        let head = GroupHead {
            next_sequence: 6,
            first_online: 3,
            snapshot: Some(SnapshotPointer {
                artifact_hash: "sha256:s".into(),
            }),
        };
        let before = [3; 32];
        let sum = integrity.head_checksum("g", &head, &before);
        integrity.check_head("g", &head, &before, &sum).unwrap();
        let moved_back = GroupHead {
            next_sequence: 4,
            ..head.clone()
        };
        let e = corrupt(integrity.check_head("g", &moved_back, &before, &sum));
        assert!(
            matches!(e, StoreError::Corrupt { what: "group", .. }),
            "{e:?}"
        );
        corrupt(integrity.check_head("g", &head, &[4; 32], &sum));
        corrupt(integrity.check_head("h", &head, &before, &sum));
        let unarchived = GroupHead {
            snapshot: None,
            ..head.clone()
        };
        corrupt(integrity.check_head("g", &unarchived, &before, &sum));
    }

    #[test]
    fn keys_are_long_enough_hidden_and_compared_whole() {
        let e = IntegrityKey::new(vec![1; 31]).unwrap_err();
        assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
        assert!(e.to_string().contains("31 bytes"), "{e}");
        let hex = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";
        let from_hex = IntegrityKey::from_hex(&format!(" {hex}\n")).unwrap();
        assert_eq!(
            from_hex,
            IntegrityKey::new((0..32u8).map(|i| (i % 16) * 0x11).collect::<Vec<u8>>()).unwrap()
        );
        for bad in ["0", "zz", &hex[..62]] {
            assert!(IntegrityKey::from_hex(bad).is_err(), "{bad}");
        }
        assert_ne!(key(1), key(2));
        assert_ne!(key(1), IntegrityKey::new(vec![1; 33]).unwrap());
        // Never shown: not by the key, the options or the scheme.
        let options = StoreOptions::keyed(key(0xab)).adopting_key();
        for shown in [
            format!("{:?}", key(0xab)),
            format!("{options:?}"),
            format!("{:?}", options.integrity()),
        ] {
            assert!(!shown.contains("171"), "{shown}");
        }
        assert!(format!("{options:?}").contains("<redacted>"));
        assert_eq!(
            format!("{:?}", options.integrity()),
            "Integrity { scheme: \"hmac-sha256\" }"
        );
        assert!(!StoreOptions::default().integrity().is_keyed());
    }

    #[test]
    fn receipts_bind_to_the_row_of_their_first_event() {
        let receipt = |event: &str, position: Option<(&str, u64)>| Receipt {
            signing_hash: "sha256:1".into(),
            first_event: EventRef {
                event_id: event.into(),
                position: position.map(|(g, s)| (g.to_owned(), s)),
            },
        };
        let a = ReceiptKey::new("agent", "a", "1");
        let b = ReceiptKey::new("service", "s", "2");
        let mut tx = Transaction::new();
        tx.append("g", EventRecord::new(4, "e4", &b"{}"[..]))
            .append("g", EventRecord::new(5, "e5", &b"{}"[..]))
            .put(AggregateKey::new("mission", "m"), 0, b"{}"[..].into())
            .put(
                AggregateKey::new("organization_event", "o1"),
                0,
                b"{}"[..].into(),
            )
            .record_receipt(a.clone(), receipt("e4", Some(("g", 4))))
            .record_receipt(b.clone(), receipt("o1", None));
        let bindings = ActionBindings::of(&tx);
        assert_eq!(bindings.append(0), Some(&action_key(&a)));
        assert_eq!(bindings.append(1), None);
        assert_eq!(bindings.write(0), None);
        assert_eq!(bindings.write(1), Some(&action_key(&b)));
        assert_eq!(bindings.append(9), None);
        assert_ne!(action_key(&a), action_key(&b));

        // A receipt whose first Event the transaction does not write binds nothing: another
        // Event ID, another position, an update rather than a creation.
        let mut tx = Transaction::new();
        tx.append("g", EventRecord::new(4, "e4", &b"{}"[..]))
            .put(
                AggregateKey::new("organization_event", "o1"),
                1,
                b"{}"[..].into(),
            )
            .record_receipt(a.clone(), receipt("e5", Some(("g", 4))))
            .record_receipt(a.clone(), receipt("e4", Some(("g", 5))))
            .record_receipt(b, receipt("o1", None));
        assert_eq!(
            ActionBindings::of(&tx),
            ActionBindings {
                appends: vec![None],
                writes: vec![None],
            }
        );
    }

    #[test]
    fn a_missing_receipt_or_event_names_where() {
        let e = missing_event("g", 3);
        assert_eq!(e.wire_code(), WireCode::InternalError);
        assert_eq!(
            e.to_string(),
            "stored event g #3 failed its integrity check: sequence 3 is missing"
        );
        let e = missing_receipt(&ReceiptKey::new("agent", "a", "act-1"), "event g #1");
        assert_eq!(
            e.to_string(),
            "stored receipt agent a act-1 failed its integrity check: missing, but event g #1 \
             records this Action as applied"
        );
        assert!(!e.retryable());
        assert_ne!(poisoned(&[5; 32]), [5; 32]);
    }
}
