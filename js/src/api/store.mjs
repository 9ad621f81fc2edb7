// The authoritative stores (reference `store`): the in-memory store and, napi only, the durable
// stores by URL (`SQLStore`, `SQLiteStore`, `PostgreSQLStore`). The URL rules and the open/close
// life cycle are the core's (`missionweaveprotocol-store-open`), shared with the Python package;
// this converts arguments. A `Core` reads a store's native object through `storeNative`.

import { ArgumentError, open } from './errors.mjs';
import { checkString } from './convert.mjs';
import { NativeTable, adopt, disposable, settle } from './native.mjs';

export function storeApi(ctx) {
  const { raw } = ctx;
  const stores = new NativeTable(raw);

  /**
   * The in-memory authoritative store (per-aggregate records, the Group logs, receipts). Give
   * one to several `Core`s to share it (as several Group Authority threads would).
   */
  class InMemoryStore {
    constructor() { stores.set(this, new raw.InMemoryStore()); }
  }
  disposable(stores, [InMemoryStore]);

  // Durable stores by URL (napi only: a database on this machine's disk or network). The URL
  // rules and the open/close life cycle are the core's (`missionweaveprotocol-store-open`), shared
  // with the Python package; this converts arguments. `SQLiteStore` and `PostgreSQLStore` pass
  // their argument to the `SQLStore` constructor wrapped in a module-private `StoreTarget`.
  const sqlStores = new NativeTable(raw);
  class StoreTarget {
    // `make(text)`: the native store of this target (a URL, a SQLite path or a PostgreSQL URL).
    constructor(make, text) { this.make = make; this.text = text; }
  }

  function checkEcho(options) {
    if (options === null || typeof options !== 'object') throw new ArgumentError('options must be an object');
    const { echo = false } = options;
    if (typeof echo !== 'boolean') throw new ArgumentError('echo must be a boolean', { fields: { argument: 'echo' } });
    return echo;
  }

  /**
   * A durable authoritative store named by a `sqlite://` or `postgresql://` URL (the reference's
   * `store.SQLStore`): `await initialize()` opens the database and migrates its schema on the
   * libuv thread pool, `await close()` releases it. A `Core` takes it once initialized.
   */
  class SQLStore {
    #echo;

    constructor(url, options = {}) {
      if (typeof raw.SqlStore !== 'function') {
        throw new ArgumentError(`${new.target?.name ?? 'SQLStore'} needs a database: use the Node (napi) entry, not the WebAssembly build`);
      }
      const target = url instanceof StoreTarget ? url : new StoreTarget((text) => new raw.SqlStore(text), checkString(url, 'url'));
      this.#echo = checkEcho(options);
      adopt(sqlStores, this, target.make(target.text));
    }

    /** `'sqlite'` or `'postgresql'`. */
    get dialectName() { return open(sqlStores.get(this, 'SQLStore').info()).dialectName; }

    /** The URL with its password replaced by `***`. */
    get url() { return open(sqlStores.get(this, 'SQLStore').info()).url; }

    /** The `echo` option (kept for the reference's signature: no SQL is issued from JavaScript). */
    get echo() { return this.#echo; }

    /** Opens (creating if needed) the database and migrates its schema; idempotent while open. */
    async initialize() {
      const handle = sqlStores.get(this, 'SQLStore');
      await settle(() => handle.initialize());
    }

    /** Releases the connection (idempotent); Cores built over the store then refuse every call. */
    async close() {
      const handle = sqlStores.get(this, 'SQLStore');
      await settle(() => handle.close());
    }
  }
  disposable(sqlStores, [SQLStore]);

  /** The embedded durable store: one SQLite file (`':memory:'`: a private in-memory database). */
  class SQLiteStore extends SQLStore {
    constructor(path = ':memory:', options = {}) {
      super(new StoreTarget(raw.sqlStoreSqlite, checkString(path, 'path')), options);
    }
  }

  /** A PostgreSQL server (`postgresql://` or `postgres://` URL only). */
  class PostgreSQLStore extends SQLStore {
    constructor(url, options = {}) {
      super(new StoreTarget(raw.sqlStorePostgresql, checkString(url, 'url')), options);
    }
  }

  /** The native store of an `InMemoryStore` or an `SQLStore` (for `new Core({store})`). */
  ctx.storeNative = (store) => (store instanceof SQLStore ? sqlStores.get(store, 'SQLStore') : stores.get(store, 'InMemoryStore'));
  ctx.isStore = (store) => store instanceof InMemoryStore || store instanceof SQLStore;
  /** The native `SqlStore` of an `SQLStore`, else null. */
  ctx.sqlStoreNative = (store) => (store instanceof SQLStore ? sqlStores.get(store, 'SQLStore') : null);

  return { InMemoryStore, SQLStore, SQLiteStore, PostgreSQLStore };
}
