//! The Agent-local store conformance suite (`replay::suite`) on the in-memory store.

use missionweaveprotocol_agent::replay::MemoryAgentStore;

missionweaveprotocol_agent::agent_store_test_suite!(MemoryAgentStore::new);
