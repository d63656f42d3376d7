-- Runs announced as they become claimable: submitted, handed back, refused (claimable by
-- workers with other settings), requeued or reopened. Workers LISTEN on the channel
-- `ptc_runs_claimable` (the payload is the run's id) and claim at once, instead of waiting for
-- their next look; a lease that expires is not announced, and is found by that look.
CREATE FUNCTION ptc_announce_claimable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ptc_runs_claimable', NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER ptc_runs_claimable
    AFTER INSERT OR UPDATE ON ptc_runs
    FOR EACH ROW
    WHEN (NEW.fleet AND NEW.outcome IS NULL AND NEW.lease_expires_at IS NULL)
    EXECUTE FUNCTION ptc_announce_claimable();
