//! The store's statements are planned as index lookups even on an empty store (`PLANNING`):
//! each statement's generic plan on a fresh, empty schema must not scan a table sequentially
//! or hash/merge-join it (the plan every connection keeps while the tables grow).
#![cfg(test)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use postgres::{Client, NoTls};

use crate::pool::PLANNING;
use crate::schema::quote;
use crate::{PostgresOptions, PostgresStore, sql, test_server};

/// The highest `$n` of a statement: how many parameters `EXECUTE` passes.
fn parameters(statement: &str) -> usize {
    let bytes = statement.as_bytes();
    let mut highest = 0;
    for (i, _) in statement.match_indices('$') {
        let digits: String = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .map(|&b| char::from(b))
            .collect();
        highest = highest.max(digits.parse().unwrap_or(0));
    }
    highest
}

fn plan(client: &mut Client, name: &str, statement: &str) -> String {
    client
        .batch_execute(&format!("PREPARE {name} AS {statement}"))
        .unwrap();
    let nulls = vec!["NULL"; parameters(statement)].join(", ");
    let rows = client
        .query(&format!("EXPLAIN EXECUTE {name}({nulls})"), &[])
        .unwrap();
    rows.iter()
        .map(|row| row.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_statement_is_planned_as_index_lookups_on_an_empty_store() {
    let url = test_server::url();
    let schema = format!("plans_{}", std::process::id());
    let store = PostgresStore::connect_with(url, PostgresOptions::default().schema(schema.clone()))
        .unwrap();
    let mut client = Client::connect(url, NoTls).unwrap();
    client
        .batch_execute(&format!("SET search_path = {}; {PLANNING}", quote(&schema)))
        .unwrap();
    let statements = [
        ("load_receipts", sql::LOAD_RECEIPTS),
        ("load_heads", sql::LOAD_HEADS),
        ("load_aggregates", sql::LOAD_AGGREGATES),
        ("apply", sql::APPLY),
        ("read_many", sql::READ_MANY),
        ("aggregate", sql::AGGREGATE),
        ("list", sql::LIST),
        ("list_bounded", sql::LIST_BOUNDED),
        ("receipt", sql::RECEIPT),
        ("head", sql::HEAD),
        ("replay", sql::REPLAY),
        ("archive_head", sql::ARCHIVE_HEAD),
    ];
    let mut bad = Vec::new();
    for (name, statement) in statements {
        let plan = plan(&mut client, name, statement);
        if ["Seq Scan", "Hash Join", "Merge Join"]
            .iter()
            .any(|node| plan.contains(node))
        {
            bad.push(format!("{name}:\n{plan}"));
        }
    }
    drop(client);
    store.drop_schema().unwrap();
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

/// The check above can fail: without `PLANNING`, a fresh store's generic plan of the key
/// lookups by array is a hash join over a sequential scan.
#[test]
fn without_the_planning_settings_an_empty_store_is_scanned() {
    let url = test_server::url();
    let schema = format!("plans_default_{}", std::process::id());
    let store = PostgresStore::connect_with(url, PostgresOptions::default().schema(schema.clone()))
        .unwrap();
    let mut client = Client::connect(url, NoTls).unwrap();
    client
        .batch_execute(&format!(
            "SET search_path = {}; SET plan_cache_mode = force_generic_plan;",
            quote(&schema)
        ))
        .unwrap();
    let plan = plan(&mut client, "read_many", sql::READ_MANY);
    drop(client);
    store.drop_schema().unwrap();
    assert!(plan.contains("Seq Scan"), "{plan}");
}
