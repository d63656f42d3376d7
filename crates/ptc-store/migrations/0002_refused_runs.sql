-- Runs a worker refused (its settings do not fit the run's): parked with the reason, and
-- claimed again only by a worker whose settings are not among those that refused it, or once
-- requeued.
ALTER TABLE ptc_runs
    -- Why the run was last refused, and by which worker; NULL when it was not, or requeued.
    ADD COLUMN refused_reason TEXT,
    ADD COLUMN refused_worker TEXT,
    -- The settings keys of the workers that refused it: none of them claims it again.
    ADD COLUMN refused_settings TEXT[] NOT NULL DEFAULT '{}';
