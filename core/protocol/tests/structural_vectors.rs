#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The 58 structural vectors, straight through the schema catalog.

use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::json::parse;
use missionweaveprotocol::schema::SchemaCatalog;

#[test]
fn all_structural_vectors_match_their_expectation() {
    let catalog = SchemaCatalog::embedded();
    assert_eq!(catalog.names().len(), 22);
    let manifest = parse(embedded_file("conformance/manifest.json").unwrap()).unwrap();
    let entries = manifest.as_array().unwrap();
    assert_eq!(entries.len(), 58);
    let mut failures = Vec::new();
    for entry in entries {
        let schema = entry.get("schema").unwrap().as_str().unwrap();
        let instance = entry.get("instance").unwrap().as_str().unwrap();
        let expected = entry.get("valid").unwrap().as_bool().unwrap();
        let value = parse(embedded_file(instance).unwrap()).unwrap();
        let name = schema.trim_start_matches("schemas/");
        let result = catalog.validate(name, &value);
        if result.is_ok() != expected {
            failures.push(format!("{instance}: expected {expected}, got {result:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
