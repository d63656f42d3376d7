-- Runs, their turns, the leases workers hold on them, and the intent log of their tool calls.
-- Records (tasks, turns, outcomes, usage, arguments, tool outcomes) are kept as the JSON text
-- they serialize to, so a row reads back byte for byte as it was written.

-- Fencing tokens: every claim takes the next one, so a later lease always has a larger token.
CREATE SEQUENCE ptc_lease_tokens AS BIGINT;

CREATE TABLE ptc_runs (
    id TEXT PRIMARY KEY,
    -- Submission order: workers claim the oldest runnable run first.
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    task TEXT NOT NULL,
    -- Submitted to the fleet (claimed and written under leases), or started by one process.
    fleet BOOLEAN NOT NULL,
    -- How many turns are committed: the next turn's number is one more.
    turns INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    usage TEXT,
    -- The last lease given on the run; it is live while lease_expires_at is in the future.
    lease_worker TEXT,
    lease_token BIGINT,
    lease_expires_at TIMESTAMPTZ,
    claims INTEGER NOT NULL DEFAULT 0,
    started_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    ended_at TIMESTAMPTZ
);

-- The runs a claim looks at: the fleet's runs that have not ended, in submission order.
CREATE INDEX ptc_runs_open_fleet ON ptc_runs (seq) WHERE fleet AND outcome IS NULL;

CREATE TABLE ptc_turns (
    run_id TEXT NOT NULL REFERENCES ptc_runs (id),
    number INTEGER NOT NULL,
    turn TEXT NOT NULL,
    -- The lease it was committed under; NULL for a run started by one process.
    lease_token BIGINT,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (run_id, number)
);

CREATE TABLE ptc_tool_intents (
    run_id TEXT NOT NULL REFERENCES ptc_runs (id),
    turn INTEGER NOT NULL,
    call INTEGER NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    -- 1, and one more each time the call is recorded again (retried).
    attempts INTEGER NOT NULL DEFAULT 1,
    -- The lease of the latest record; NULL for a run started by one process.
    lease_token BIGINT,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    -- NULL while the call is in flight.
    outcome TEXT,
    completed_at TIMESTAMPTZ,
    PRIMARY KEY (run_id, turn, call)
);
