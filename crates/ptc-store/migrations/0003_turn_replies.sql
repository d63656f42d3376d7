-- The model's reply to each turn, recorded before the turn's program runs, beside the turn's
-- tool calls: a turn run again after a crash takes its program from it instead of asking the
-- model anew.
CREATE TABLE ptc_turn_replies (
    run_id TEXT NOT NULL REFERENCES ptc_runs (id),
    turn INTEGER NOT NULL,
    reply TEXT NOT NULL,
    -- The lease it was recorded under; NULL for a run started by one process.
    lease_token BIGINT,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (run_id, turn)
);
