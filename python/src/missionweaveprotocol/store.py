"""The authoritative store seam (the reference's ``store``, ``reference-python.md`` §1.14).

Every store is a handle to a Rust store of the engine's per-aggregate shape: one append-only
Event log per Group, aggregates (Mission, Group, Membership, WorkItem, Work Proposal,
Artifact, …) each with its own revision, deduplication receipts (``docs/store.md``). A
:class:`~missionweaveprotocol.core.Core` takes any of them; several Cores (threads) may share
one.

- :class:`InMemoryStore`: in memory; nothing survives the process.
- :class:`SQLStore` (``SQLStore(url)``, a ``sqlite://`` or ``postgresql://`` URL),
  :class:`SQLiteStore` (``SQLiteStore(path=":memory:")``) and :class:`PostgreSQLStore`
  (``PostgreSQLStore(url)``): durable stores, as the reference names them. ``await
  store.initialize()`` opens the database and brings its schema to the current version;
  ``await store.close()`` releases it. Database I/O never holds the GIL and never runs on the
  event loop's thread: ``initialize`` and ``close`` run the native call (GIL released) on a
  worker thread, and the Core runs every Command on its executor with the GIL released. A
  SQLite file runs in WAL mode; a Command whose ``perform`` returned is on disk. On PostgreSQL
  it is in the server's flushed WAL, and several processes may run Cores over one database.

URLs are parsed by the Rust core (one parser for every binding): ``sqlite:///relative.db``,
``sqlite:////absolute/path.db``, ``sqlite:///:memory:`` (or ``sqlite://``),
``postgresql://user:password@host:port/database`` (also ``postgres://``), and the reference's
driver spellings ``sqlite+aiosqlite://``, ``postgresql+asyncpg://`` (the driver changes
nothing here: ``postgresql+asyncpg://app:pw@db/mwp`` connects as ``postgresql://app:pw@db/mwp``;
the part after ``://`` is read by libpq's URL rules: percent-encoded user and password,
``?application_name=…&connect_timeout=…`` options; no TLS). Anything else is a ``ValueError``
(``InvalidInputError``); ``url`` shows the password as ``***``. A PostgreSQL server that cannot be
reached, a refused login or a missing database makes ``initialize()`` raise ``RuntimeError``
("the store could not be opened: …", ``reason`` ``backend_failure``); the store stays unopened.
The tables are created in the connection's current schema (normally ``public``).

:class:`AuthoritativeStore` is the reference's Protocol name, describing these stores.
**Not offered, on purpose: its** ``transact(operation)`` **and** ``inspect(operation)``. They hand one whole-state
``AuthoritativeState`` document to every operation, so every Command costs O(state): the
reference deep-copies (in memory) or re-parses and rewrites (SQL, one row) all of its state per
Command, and its latency grows linearly with history (reference gap §7.7: 11.5 ms → 208 ms over
1,500 Commands in memory, 103 ms → 536 ms over 1,000 on SQLite). This store has no such
document to hand out: a Command reads and writes only the aggregates it touches, through the
engine's per-aggregate store trait with optimistic revisions. Read through the Core instead
(``query``, ``replay``, ``replay_page``).
"""

from __future__ import annotations

import asyncio
import os
from typing import Optional, Protocol, Union, runtime_checkable

from . import _native


class InMemoryStore:
    """``InMemoryStore()``: the engine's in-memory, per-aggregate store (no whole-state document;
    see the module docstring). Reads go through :class:`~missionweaveprotocol.core.Core`'s
    ``query`` and ``replay``."""

    __slots__ = ("_native",)

    def __init__(self) -> None:
        self._native = _native.InMemoryStore()

    def last_sequence(self, group_id: str) -> int:
        """The last sequence of ``group_id``'s Event log (0 when it has no Events)."""
        return self._native.last_sequence(group_id)

    async def close(self) -> None:
        """Nothing to release (the reference's ``close``)."""


class SQLStore:
    """``SQLStore(url, *, echo=False)``: a durable store named by a sqlite or postgres URL
    (``ValueError`` for any other URL; see the module docstring for the forms).

    Use it after ``await initialize()`` and until ``await close()``: before or after, every use
    (``last_sequence``, building a ``Core`` over it) raises ``RuntimeError``, as the
    reference's does. A Core built over the store and still running when the store is closed
    answers every later call with a refusal (``wire_code`` ``INTERNAL_ERROR``, reason
    ``backend_failure``, "the store was closed"); nothing half-applied.

    ``echo`` is accepted for the reference's signature (where it logs SQLAlchemy's SQL); this
    store issues no SQL through Python and has nothing to echo.
    """

    __slots__ = ("_native", "_echo")

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self._native = _native.SQLStore(url)
        self._echo = echo

    @property
    def dialect_name(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._native.dialect_name

    @property
    def url(self) -> str:
        """The URL with its password replaced by ``***``."""
        return self._native.url

    @property
    def echo(self) -> bool:
        """The ``echo`` argument (kept for the reference's signature; see the class docstring)."""
        return self._echo

    async def initialize(self) -> None:
        """Opens (creating if needed) the database and migrates its schema to the current
        version, on a worker thread with the GIL released. Idempotent while open;
        ``RuntimeError`` after :meth:`close` or if the database cannot be opened (the message
        says why)."""
        await asyncio.to_thread(self._native.initialize)

    async def close(self) -> None:
        """Releases the connection (idempotent), on a worker thread with the GIL released."""
        await asyncio.to_thread(self._native.close)

    def last_sequence(self, group_id: str) -> int:
        """The last sequence of ``group_id``'s Event log (0 when it has no Events); a read with
        the GIL released. ``RuntimeError`` unless initialized and not closed."""
        return self._native.last_sequence(group_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class SQLiteStore(SQLStore):
    """``SQLiteStore(path=":memory:", *, echo=False, integrity_key=None)``: the embedded
    durable store, one SQLite file (``:memory:``: a private in-memory database that nothing
    else sees). The path is taken as it is (relative to the working directory, or absolute);
    the file is created by ``initialize``.

    ``integrity_key`` (``bytes``, at least 32; keep it outside the database) authenticates
    every row with HMAC-SHA256, so rows edited behind the store's back are refused even when
    the tamperer recomputed the unkeyed hashes; the file then opens with that key only
    (otherwise ``initialize`` raises ``RuntimeError`` whose ``reason`` is
    ``integrity_key_refused``). A file keyed since it was created is
    replayed without re-verifying each Event's signature (the key already authenticates it).
    An extension: the reference's ``SQLiteStore`` has no such argument."""

    __slots__ = ()

    def __init__(self, path: Union[str, "os.PathLike[str]"] = ":memory:", *,
                 echo: bool = False, integrity_key: Optional[bytes] = None) -> None:
        self._native = _native.SQLStore.sqlite(os.fspath(path), integrity_key)
        self._echo = echo


class PostgreSQLStore(SQLStore):
    """``PostgreSQLStore(url, *, echo=False)``: a PostgreSQL server (``ValueError`` for a URL
    that is not ``postgresql://`` or ``postgres://``, with or without a driver). ``initialize``
    connects (GIL released, off the event loop) and creates or migrates the store's tables;
    ``RuntimeError`` when the server cannot be reached or refuses."""

    __slots__ = ()

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self._native = _native.SQLStore.postgresql(url)
        self._echo = echo


@runtime_checkable
class AuthoritativeStore(Protocol):
    """The reference's store seam, describing this package's per-aggregate stores
    (:class:`InMemoryStore`, :class:`SQLStore` and its subclasses): what every one offers.

    Unlike the reference's Protocol it has no ``transact(operation)`` / ``inspect(operation)``
    over one whole-state document (see the module docstring: reference gap §7.7); a
    :class:`~missionweaveprotocol.core.Core` reads and writes the aggregates through the
    engine. ``Core`` accepts the package's stores only: the engine's store trait is Rust's,
    so a Python object satisfying this Protocol is not a store the Core can run on."""

    def last_sequence(self, group_id: str) -> int:
        """The sequence of the Group's last Event (0 for an unknown Group)."""
        ...

    async def close(self) -> None:
        """Releases the store's resources."""
        ...


__all__ = ["AuthoritativeStore", "InMemoryStore", "PostgreSQLStore", "SQLStore", "SQLiteStore"]
