//! The statements, prepared once per connection (`pool.rs`). Key lists travel as arrays, so a
//! commit reads and writes each table in one round trip whatever its size.

/// Takes the commit's advisory locks in the order given (sorted by the caller, `locks.rs`):
/// `unnest` yields them in array order.
pub(crate) const LOCK: &str = "SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::int8[]) AS k";

/// For each given receipt key (with its Action key, `integrity::action_key`): the stored
/// receipt with its checksum, or, when none is stored, the Event or aggregate recording the
/// Action (a receipt removed behind the store's back). One row per key; all NULL for a new one.
pub(crate) const LOAD_RECEIPTS: &str = "
SELECT k.t, k.i, k.a, r.signing_hash, r.event_id, r.group_id, r.sequence, r.checksum,
       e.group_id, e.sequence, g.kind, g.id
FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[]) AS k (t, i, a, action)
LEFT JOIN receipts r ON r.actor_type = k.t AND r.actor_id = k.i AND r.action_id = k.a
LEFT JOIN LATERAL (
  SELECT group_id, sequence FROM events WHERE action_key = k.action AND r.actor_type IS NULL
  LIMIT 1
) e ON true
LEFT JOIN LATERAL (
  SELECT kind, id FROM aggregates WHERE action_key = k.action AND r.actor_type IS NULL
  LIMIT 1
) g ON true";

/// The heads of the given Groups (with their checksum and what it covers) and the chain hash
/// the next append follows: the last Event's, or `chain_before` when no Event is online (NULL
/// when that Event's row is missing).
pub(crate) const LOAD_HEADS: &str = "
SELECT g.group_id, g.next_sequence, g.first_online, g.chain_before, e.chain_hash,
       g.snapshot_hash, g.checksum
FROM groups g
LEFT JOIN events e ON e.group_id = g.group_id AND e.sequence = g.next_sequence - 1
WHERE g.group_id = ANY($1::text[])";

/// The stored aggregates among the given keys, with what their checksum covers.
pub(crate) const LOAD_AGGREGATES: &str = "
SELECT a.kind, a.id, a.revision, a.value, a.checksum, a.action_key
FROM aggregates a
JOIN unnest($1::text[], $2::text[]) AS k (kind, id) ON a.kind = k.kind AND a.id = k.id";

/// Writes validated write sets in one statement. Every part is guarded by the state the
/// validation read (a new row must not exist, an updated one must still be at the read
/// revision or head), and the counts are compared by the caller: the unique keys and guards
/// are the backstop behind the locks (`commit.rs`). Every row carries its authenticator
/// (`store::integrity`); the first Event of a Command its Action key.
pub(crate) const APPLY: &str = "
WITH r AS (
  INSERT INTO receipts (actor_type, actor_id, action_id, signing_hash, event_id, group_id, sequence,
                        checksum)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::int8[], $8::bytea[])
  ON CONFLICT DO NOTHING RETURNING 1
), e AS (
  INSERT INTO events (group_id, sequence, event_id, body, chain_hash, action_key)
  SELECT * FROM unnest($9::text[], $10::int8[], $11::text[], $12::bytea[], $13::bytea[],
                       $14::bytea[])
  ON CONFLICT DO NOTHING RETURNING 1
), gu AS (
  UPDATE groups SET next_sequence = t.next, checksum = t.checksum
  FROM unnest($15::text[], $16::int8[], $17::int8[], $18::bytea[]) AS t (group_id, next, stored,
                                                                          checksum)
  WHERE groups.group_id = t.group_id AND groups.next_sequence = t.stored
  RETURNING 1
), gi AS (
  INSERT INTO groups (group_id, next_sequence, first_online, chain_before, checksum)
  SELECT t.group_id, t.next, 1, $21::bytea, t.checksum
  FROM unnest($19::text[], $20::int8[], $22::bytea[]) AS t (group_id, next, checksum)
  ON CONFLICT DO NOTHING RETURNING 1
), au AS (
  UPDATE aggregates SET revision = t.revision, value = t.value, checksum = t.checksum,
                        action_key = t.action
  FROM unnest($23::text[], $24::text[], $25::int8[], $26::bytea[], $27::bytea[], $28::int8[],
              $29::bytea[])
    AS t (kind, id, revision, value, checksum, stored, action)
  WHERE aggregates.kind = t.kind AND aggregates.id = t.id AND aggregates.revision = t.stored
  RETURNING 1
), ai AS (
  INSERT INTO aggregates (kind, id, revision, value, checksum, action_key)
  SELECT * FROM unnest($30::text[], $31::text[], $32::int8[], $33::bytea[], $34::bytea[],
                       $35::bytea[])
  ON CONFLICT DO NOTHING RETURNING 1
)
SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM e), (SELECT count(*) FROM gu),
       (SELECT count(*) FROM gi), (SELECT count(*) FROM au), (SELECT count(*) FROM ai)";

/// Several point reads in one statement (one snapshot, one round trip): the receipts, the
/// aggregates and the Group heads among the given keys, each row tagged with its table (`0`
/// receipt, `1` aggregate, `2` head) and the key's 1-based position in its array. Columns
/// (`read_many.rs`): a receipt's in 2–5 and its checksum in 6, or, when it is not stored, the
/// row recording its Action in 10 and 12 (an Event) or 11 and 13 (an aggregate); an
/// aggregate's revision, value, checksum and Action in 5, 6, 7 and 9; a head's snapshot, next
/// sequence, first online sequence, chain hash before and checksum in 2, 5, 8, 9 and 7. Absent
/// keys answer no row.
pub(crate) const READ_MANY: &str = "
SELECT 0::int2, k.n, r.signing_hash, r.event_id, r.group_id, r.sequence, r.checksum,
       NULL::bytea, NULL::int8, NULL::bytea, e.group_id, g.kind, e.sequence, g.id
FROM unnest($1::text[], $2::text[], $3::text[], $7::bytea[]) WITH ORDINALITY AS k (t, i, a, action, n)
LEFT JOIN receipts r ON r.actor_type = k.t AND r.actor_id = k.i AND r.action_id = k.a
LEFT JOIN LATERAL (
  SELECT group_id, sequence FROM events WHERE action_key = k.action AND r.actor_type IS NULL
  LIMIT 1
) e ON true
LEFT JOIN LATERAL (
  SELECT kind, id FROM aggregates WHERE action_key = k.action AND r.actor_type IS NULL
  LIMIT 1
) g ON true
WHERE r.actor_type IS NOT NULL OR e.group_id IS NOT NULL OR g.kind IS NOT NULL
UNION ALL
SELECT 1::int2, k.n, NULL, NULL, NULL, a.revision, a.value, a.checksum, NULL, a.action_key,
       NULL, NULL, NULL, NULL
FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS k (kind, id, n)
JOIN aggregates a ON a.kind = k.kind AND a.id = k.id
UNION ALL
SELECT 2::int2, k.n, g.snapshot_hash, NULL, NULL, g.next_sequence, NULL, g.checksum,
       g.first_online, g.chain_before, NULL, NULL, NULL, NULL
FROM unnest($6::text[]) WITH ORDINALITY AS k (group_id, n)
JOIN groups g ON g.group_id = k.group_id";

pub(crate) const AGGREGATE: &str =
    "SELECT revision, value, checksum, action_key FROM aggregates WHERE kind = $1 AND id = $2";

/// A range scan on the primary key: IDs from the prefix on (no upper bound exists).
pub(crate) const LIST: &str = "
SELECT id, revision, value, checksum, action_key FROM aggregates
WHERE kind = $1 AND id >= $2 ORDER BY id";

/// A range scan on the primary key: IDs from the prefix up to its successor.
pub(crate) const LIST_BOUNDED: &str = "
SELECT id, revision, value, checksum, action_key FROM aggregates
WHERE kind = $1 AND id >= $2 AND id < $3 ORDER BY id";

/// One receipt with its checksum, or, when it is not stored, the row recording its Action
/// (`$4`, `integrity::action_key`): always one row, in one snapshot.
pub(crate) const RECEIPT: &str = "
SELECT r.signing_hash, r.event_id, r.group_id, r.sequence, r.checksum,
       e.group_id, e.sequence, g.kind, g.id
FROM (SELECT $1::text AS t, $2::text AS i, $3::text AS a, $4::bytea AS action) k
LEFT JOIN receipts r ON r.actor_type = k.t AND r.actor_id = k.i AND r.action_id = k.a
LEFT JOIN LATERAL (
  SELECT group_id, sequence FROM events WHERE action_key = k.action AND r.actor_type IS NULL
  LIMIT 1
) e ON true
LEFT JOIN LATERAL (
  SELECT kind, id FROM aggregates WHERE action_key = k.action AND r.actor_type IS NULL
  LIMIT 1
) g ON true";

pub(crate) const HEAD: &str = "SELECT next_sequence, first_online, snapshot_hash, chain_before, \
     checksum FROM groups WHERE group_id = $1";

/// One replay page and the head it was read against, in one statement (one snapshot): the
/// head's columns on every row, then the Events from the anchor on (the row before the first
/// wanted one, whose stored chain hash the page is verified from; none when the page starts at
/// the first online Event, verified from `chain_before`), at most `$3` rows. `$2` is the first
/// wanted sequence. A Group without Events online answers one row of NULL Event columns.
pub(crate) const REPLAY: &str = "
SELECT g.next_sequence, g.first_online, g.snapshot_hash, g.chain_before,
       e.sequence, e.event_id, e.body, e.chain_hash, e.action_key, g.checksum
FROM groups g
LEFT JOIN LATERAL (
  SELECT sequence, event_id, body, chain_hash, action_key FROM events
  WHERE events.group_id = g.group_id
    AND events.sequence >= GREATEST(GREATEST($2::int8, g.first_online) - 1, g.first_online)
    AND events.sequence < g.next_sequence
  ORDER BY events.sequence
  LIMIT $3::int8
) e ON true
WHERE g.group_id = $1
ORDER BY e.sequence";

/// Archival: the head (with what its checksum covers) and the chain hash of the last archived
/// Event (`$2 - 1`).
pub(crate) const ARCHIVE_HEAD: &str = "
SELECT g.next_sequence, g.first_online, e.chain_hash, g.snapshot_hash, g.chain_before, g.checksum
FROM groups g
LEFT JOIN events e ON e.group_id = g.group_id AND e.sequence = $2::int8 - 1
WHERE g.group_id = $1";
