//! Group commit over the SQLite file store: the store suite unchanged through
//! `GroupCommit<SqliteStore>`, and one engine shared by many threads whose Commands share
//! durable transactions, every Mission on disk after a reopen (issue 11, "Group commit";
//! §15.1, §15.2).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, json,
};
use missionweaveprotocol_authority::engine::Engine;
use missionweaveprotocol_authority::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_authority::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_authority::store::{
    Aggregate, AggregateKey, GroupCommit, GroupHead, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_authority::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteStore;

const ORG: &str = "urn:missionweaveprotocol:organization:acme";
const OWNER: &str = "urn:missionweaveprotocol:human:alice";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
/// 2026-07-15T09:30:00Z.
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);

/// A file store in its own temporary directory, removed with it.
#[derive(Debug)]
struct TempFileStore {
    store: SqliteStore,
    _dir: tempfile::TempDir,
}

impl TempFileStore {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("store.sqlite")).unwrap();
        Self { store, _dir: dir }
    }
}

impl Store for TempFileStore {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.store.commit(tx)
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        self.store.commit_many(txs)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.store.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.store.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.store.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.store.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.store.replay(group, after, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.store.archive_before(group, before, snapshot)
    }
}

mod suite_over_a_file {
    use super::{GroupCommit, TempFileStore};

    missionweaveprotocol_authority::store_test_suite!(|| GroupCommit::new(TempFileStore::new()));
}

struct Keys {
    owner: SigningKey,
    authority: SigningKey,
    registry: Arc<KeyRegistrySnapshot>,
}

fn keys() -> Keys {
    let owner = SigningKey::from_seed("urn:missionweaveprotocol:key:alice-1", &[8; 32]);
    let authority = SigningKey::from_seed("urn:missionweaveprotocol:key:authority-1", &[10; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    for (key, kind, id) in [
        (&owner, PrincipalType::Human, OWNER),
        (&authority, PrincipalType::Service, AUTHORITY),
    ] {
        builder
            .add_key(
                key.key_id(),
                Principal::new(kind, id),
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
    }
    let registry = Arc::new(builder.build().unwrap().1);
    Keys {
        owner,
        authority,
        registry,
    }
}

type GroupEngine = Engine<GroupCommit<SqliteStore>, SigningKey, SequentialEventIds>;

fn engine(keys: &Keys, path: &Path) -> GroupEngine {
    Engine::new(
        GroupCommit::new(SqliteStore::open(path).unwrap()),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:group-"),
    )
}

fn create(keys: &Keys, t: u64, i: u64) -> VerifiedCommand {
    let text = format!(
        r#"{{"protocolVersion": "0.1",
        "actionId": "urn:uuid:00000000-0000-4000-8000-{t:06}{i:06}",
        "actor": {{"type": "human", "id": "{OWNER}"}},
        "groupId": "urn:missionweaveprotocol:group:t{t}-{i}",
        "kind": "mission.create", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
        "issuedAt": "2026-07-15T09:30:00Z",
        "payload": {{"missionId": "urn:missionweaveprotocol:mission:t{t}-{i}",
          "objective": "Close the July books",
          "definitionOfDone": [{{"criterionId": "balanced", "description": "The ledger balances",
                                "evidenceRequired": ["human_review"]}}],
          "budget": {{"modelTokenLimit": 100000}}, "deadline": "2026-08-01T00:00:00Z",
          "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
          "coordinator": {{"agentId": "urn:missionweaveprotocol:agent:planner",
                          "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:c1"}},
          "mainConversationId": "urn:missionweaveprotocol:conversation:main"}}}}"#
    );
    let unsigned = json::parse(text.as_bytes()).unwrap();
    let bytes = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, &keys.owner)
        .unwrap()
        .bytes;
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&bytes, &keys.registry, NOW)
        .unwrap()
}

/// 16 threads × 4 Missions through one engine over `GroupCommit<SqliteStore>`: every Command
/// applied once (its duplicate answered from the receipt), every Group log contiguous from 1,
/// all of it on disk after a reopen, and the batches account for every commit.
#[test]
fn many_submitters_share_durable_transactions() {
    const THREADS: u64 = 16;
    const EACH: u64 = 4;
    let keys = keys();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authority.sqlite");
    let commands: Vec<Vec<VerifiedCommand>> = (0..THREADS)
        .map(|t| (0..EACH).map(|i| create(&keys, t, i)).collect())
        .collect();
    {
        let engine = engine(&keys, &path);
        std::thread::scope(|scope| {
            for batch in &commands {
                let engine = &engine;
                scope.spawn(move || {
                    for command in batch {
                        let performed = engine.perform(command, NOW).unwrap();
                        assert!(!performed.duplicate);
                        assert_eq!(performed.events[0].sequence, 1);
                    }
                });
            }
        });
        let stats = engine.store().stats();
        assert_eq!(stats.transactions, THREADS * EACH, "{stats:?}");
        assert!(stats.batches >= 1 && stats.batches <= THREADS * EACH);
    }
    let engine = engine(&keys, &path);
    for t in 0..THREADS {
        for i in 0..EACH {
            let mission = format!("urn:missionweaveprotocol:mission:t{t}-{i}");
            assert!(engine.mission(&mission).unwrap().is_some(), "{mission}");
            let group = format!("urn:missionweaveprotocol:group:t{t}-{i}");
            let page = engine.replay(&group, 0, 100).unwrap();
            let sequences: Vec<u64> = page.events.iter().map(|e| e.sequence).collect();
            assert_eq!(sequences, (1..=page.last_sequence).collect::<Vec<_>>());
            for event in &page.events {
                SignedDocumentCodec::new()
                    .verify(SignedDocumentKind::Event, &event.body, &keys.registry)
                    .unwrap();
            }
        }
    }
    // The same signed Command again: the original Event, nothing appended (§15.1).
    let again = engine.perform(&commands[3][2], NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0].sequence, 1);
}
