-- A scratch table for the storage probe (PushRelayDatabase.probe): a row is inserted and deleted in one transaction
-- to learn whether the database can take a new row (disk full, read-only) without touching real data.
CREATE TABLE storage_probe (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL
);
