//! `open_with_page_size`: the page size of a SQLite file the call creates (the server's
//! `--sqlite-page-size`); an existing file keeps its own, a size SQLite cannot use is refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_engine::store::{StoreError, StoreOptions};
use missionweaveprotocol_store_open::{StoreUrl, open, open_with_page_size};
use missionweaveprotocol_store_sqlite::{DEFAULT_PAGE_SIZE, SqliteStore};

fn page_size_of(path: &std::path::Path) -> u32 {
    SqliteStore::open(path).unwrap().page_size().unwrap()
}

#[test]
fn a_new_file_gets_the_page_size_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.db");
    let url = StoreUrl::sqlite_path(path.to_str().unwrap()).unwrap();
    drop(open_with_page_size(&url, &StoreOptions::default(), 4096).unwrap());
    assert_eq!(page_size_of(&path), 4096);
    // `open` keeps the store's default.
    let other = dir.path().join("default.db");
    drop(open(&StoreUrl::sqlite_path(other.to_str().unwrap()).unwrap()).unwrap());
    assert_eq!(page_size_of(&other), DEFAULT_PAGE_SIZE);
}

#[test]
fn an_existing_file_keeps_its_page_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let url = StoreUrl::sqlite_path(path.to_str().unwrap()).unwrap();
    drop(open(&url).unwrap());
    drop(open_with_page_size(&url, &StoreOptions::default(), 4096).unwrap());
    assert_eq!(page_size_of(&path), DEFAULT_PAGE_SIZE);
}

#[test]
fn a_page_size_sqlite_cannot_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::sqlite_path(dir.path().join("a.db").to_str().unwrap()).unwrap();
    for size in [3000, 256, 131_072] {
        match open_with_page_size(&url, &StoreOptions::default(), size) {
            Err(StoreError::InvalidArgument { argument, .. }) => assert_eq!(argument, "page_size"),
            Err(other) => panic!("{size}: {other:?}"),
            Ok(_) => panic!("{size} accepted"),
        }
    }
}
