//! Stored budget accounts (§12): the ledger of [`missionweaveprotocol_kernel::budget`] kept
//! per account as store aggregates, charged in the transaction of the Command that spends.

pub mod account;
