//! The statements, prepared once per connection (`pool.rs`). Key lists travel as arrays, so a
//! commit reads and writes each table in one round trip whatever its size.

/// Takes the commit's advisory locks in the order given (sorted by the caller, `locks.rs`):
/// `unnest` yields them in array order.
pub(crate) const LOCK: &str = "SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::int8[]) AS k";

/// The stored receipts among the given keys.
pub(crate) const LOAD_RECEIPTS: &str = "
SELECT r.actor_type, r.actor_id, r.action_id, r.signing_hash, r.event_id, r.group_id, r.sequence
FROM receipts r
JOIN unnest($1::text[], $2::text[], $3::text[]) AS k (t, i, a)
  ON r.actor_type = k.t AND r.actor_id = k.i AND r.action_id = k.a";

/// The heads of the given Groups with the chain hash the next append follows: the last
/// Event's, or `chain_before` when no Event is online (NULL when that Event's row is missing).
pub(crate) const LOAD_HEADS: &str = "
SELECT g.group_id, g.next_sequence, g.first_online, g.chain_before, e.chain_hash
FROM groups g
LEFT JOIN events e ON e.group_id = g.group_id AND e.sequence = g.next_sequence - 1
WHERE g.group_id = ANY($1::text[])";

/// The stored aggregates among the given keys, with what their checksum covers.
pub(crate) const LOAD_AGGREGATES: &str = "
SELECT a.kind, a.id, a.revision, a.value, a.checksum
FROM aggregates a
JOIN unnest($1::text[], $2::text[]) AS k (kind, id) ON a.kind = k.kind AND a.id = k.id";

/// Writes validated write sets in one statement. Every part is guarded by the state the
/// validation read (a new row must not exist, an updated one must still be at the read
/// revision or head), and the counts are compared by the caller: the unique keys and guards
/// are the backstop behind the locks (`commit.rs`).
pub(crate) const APPLY: &str = "
WITH r AS (
  INSERT INTO receipts (actor_type, actor_id, action_id, signing_hash, event_id, group_id, sequence)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::int8[])
  ON CONFLICT DO NOTHING RETURNING 1
), e AS (
  INSERT INTO events (group_id, sequence, event_id, body, chain_hash)
  SELECT * FROM unnest($8::text[], $9::int8[], $10::text[], $11::bytea[], $12::bytea[])
  ON CONFLICT DO NOTHING RETURNING 1
), gu AS (
  UPDATE groups SET next_sequence = t.next
  FROM unnest($13::text[], $14::int8[], $15::int8[]) AS t (group_id, next, stored)
  WHERE groups.group_id = t.group_id AND groups.next_sequence = t.stored
  RETURNING 1
), gi AS (
  INSERT INTO groups (group_id, next_sequence, first_online, chain_before)
  SELECT t.group_id, t.next, 1, $18::bytea FROM unnest($16::text[], $17::int8[]) AS t (group_id, next)
  ON CONFLICT DO NOTHING RETURNING 1
), au AS (
  UPDATE aggregates SET revision = t.revision, value = t.value, checksum = t.checksum
  FROM unnest($19::text[], $20::text[], $21::int8[], $22::bytea[], $23::bytea[], $24::int8[])
    AS t (kind, id, revision, value, checksum, stored)
  WHERE aggregates.kind = t.kind AND aggregates.id = t.id AND aggregates.revision = t.stored
  RETURNING 1
), ai AS (
  INSERT INTO aggregates (kind, id, revision, value, checksum)
  SELECT * FROM unnest($25::text[], $26::text[], $27::int8[], $28::bytea[], $29::bytea[])
  ON CONFLICT DO NOTHING RETURNING 1
)
SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM e), (SELECT count(*) FROM gu),
       (SELECT count(*) FROM gi), (SELECT count(*) FROM au), (SELECT count(*) FROM ai)";

/// Several point reads in one statement (one snapshot, one round trip): the receipts, the
/// aggregates and the Group heads among the given keys, each row tagged with its table (`0`
/// receipt, `1` aggregate, `2` head) and the key's 1-based position in its array; then a
/// receipt's columns from 2, an aggregate's from 5, a head's in 5, 8 and 2 (`read_many.rs`).
/// Absent keys answer no row.
pub(crate) const READ_MANY: &str = "
SELECT 0::int2, k.n, r.signing_hash, r.event_id, r.group_id, r.sequence, NULL::bytea, NULL::bytea,
       NULL::int8
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k (t, i, a, n)
JOIN receipts r ON r.actor_type = k.t AND r.actor_id = k.i AND r.action_id = k.a
UNION ALL
SELECT 1::int2, k.n, NULL, NULL, NULL, a.revision, a.value, a.checksum, NULL
FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS k (kind, id, n)
JOIN aggregates a ON a.kind = k.kind AND a.id = k.id
UNION ALL
SELECT 2::int2, k.n, g.snapshot_hash, NULL, NULL, g.next_sequence, NULL, NULL, g.first_online
FROM unnest($6::text[]) WITH ORDINALITY AS k (group_id, n)
JOIN groups g ON g.group_id = k.group_id";

pub(crate) const AGGREGATE: &str =
    "SELECT revision, value, checksum FROM aggregates WHERE kind = $1 AND id = $2";

/// A range scan on the primary key: IDs from the prefix on (no upper bound exists).
pub(crate) const LIST: &str = "
SELECT id, revision, value, checksum FROM aggregates
WHERE kind = $1 AND id >= $2 ORDER BY id";

/// A range scan on the primary key: IDs from the prefix up to its successor.
pub(crate) const LIST_BOUNDED: &str = "
SELECT id, revision, value, checksum FROM aggregates
WHERE kind = $1 AND id >= $2 AND id < $3 ORDER BY id";

pub(crate) const RECEIPT: &str = "
SELECT signing_hash, event_id, group_id, sequence FROM receipts
WHERE actor_type = $1 AND actor_id = $2 AND action_id = $3";

pub(crate) const HEAD: &str =
    "SELECT next_sequence, first_online, snapshot_hash FROM groups WHERE group_id = $1";

/// One replay page and the head it was read against, in one statement (one snapshot): the
/// head's columns on every row, then the Events from the anchor on (the row before the first
/// wanted one, whose stored chain hash the page is verified from; none when the page starts at
/// the first online Event, verified from `chain_before`), at most `$3` rows. `$2` is the first
/// wanted sequence. A Group without Events online answers one row of NULL Event columns.
pub(crate) const REPLAY: &str = "
SELECT g.next_sequence, g.first_online, g.snapshot_hash, g.chain_before,
       e.sequence, e.event_id, e.body, e.chain_hash
FROM groups g
LEFT JOIN LATERAL (
  SELECT sequence, event_id, body, chain_hash FROM events
  WHERE events.group_id = g.group_id
    AND events.sequence >= GREATEST(GREATEST($2::int8, g.first_online) - 1, g.first_online)
    AND events.sequence < g.next_sequence
  ORDER BY events.sequence
  LIMIT $3::int8
) e ON true
WHERE g.group_id = $1
ORDER BY e.sequence";

/// Archival: the head and the chain hash of the last archived Event (`$2 - 1`).
pub(crate) const ARCHIVE_HEAD: &str = "
SELECT g.next_sequence, g.first_online, e.chain_hash
FROM groups g
LEFT JOIN events e ON e.group_id = g.group_id AND e.sequence = $2::int8 - 1
WHERE g.group_id = $1";
