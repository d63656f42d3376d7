//! The PostgreSQL store against a real server: every test in a database of its own, made on
//! the cluster `PTC_POSTGRES_URL` names (the outage test stops its server, so it makes a
//! cluster of its own).

mod chaos;
mod fleet;
mod intents;
mod migrations;
mod outage;
mod run_store;
mod worker;

use ptc_store::PgStore;
use tokio_postgres::NoTls;

/// A fresh database on the test cluster, named for its test.
pub struct TestDb {
    pub url: String,
}

/// The test cluster's URL; `cargo xtask postgres run -- COMMAND` and `cargo xtask ci` set it.
fn cluster_url() -> String {
    std::env::var("PTC_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "PTC_POSTGRES_URL is not set: the tests of the PostgreSQL store need a server; run \
             them with `cargo xtask postgres run -- cargo test -p ptc-store --features postgres`"
        )
    })
}

/// An administrative connection to the cluster's own database.
pub async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
    tokio::spawn(connection);
    client
}

impl TestDb {
    /// Drops what an earlier run of the test left, and makes the database anew.
    pub async fn new(test: &str) -> TestDb {
        let cluster = cluster_url();
        let name = format!("ptc_test_{test}");
        let client = admin(&cluster).await;
        // One statement a query: several in one are a transaction block, which neither
        // statement may run in.
        for statement in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            client
                .batch_execute(&statement)
                .await
                .unwrap_or_else(|e| panic!("cannot make the database {name}: {e:?}"));
        }
        let (base, _) = cluster
            .split('?')
            .next()
            .and_then(|u| u.rsplit_once('/'))
            .expect("the cluster URL names a database");
        TestDb {
            url: format!("{base}/{name}"),
        }
    }

    pub async fn store(&self) -> PgStore {
        PgStore::connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("cannot open the store at {}: {e}", self.url))
    }
}
