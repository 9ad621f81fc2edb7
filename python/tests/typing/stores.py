"""A user file opening a durable store and a Core over it; `mypy --strict` must accept it
(scripts/test-python.sh). Never run: it types the calls a user writes."""

from __future__ import annotations

from pathlib import Path
from typing import List, Union

from missionweaveprotocol.core import Core
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.models import Event, Principal
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.store import InMemoryStore, PostgreSQLStore, SQLiteStore, SQLStore


async def serve(path: Path, registry: AgentRegistryKeyResolver, key: SigningKey,
                commands: List[bytes]) -> List[Event]:
    store: SQLStore = SQLiteStore(path, echo=False)
    await store.initialize()
    dialect: str = store.dialect_name
    shown: str = store.url
    assert dialect and shown
    core = Core(store, registry=registry, authority_key=key,
                authority=Principal.service("urn:missionweaveprotocol:service:authority"))
    events = [await core.perform(raw) for raw in commands]
    last: int = store.last_sequence("urn:missionweaveprotocol:group:g")
    assert last >= 0
    await store.close()
    return events


def stores(url: str) -> List[Union[InMemoryStore, SQLStore]]:
    return [InMemoryStore(), SQLStore(url), SQLiteStore(), SQLiteStore(":memory:"),
            PostgreSQLStore("postgresql://localhost/mwp")]
