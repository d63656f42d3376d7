//! Against `@modelcontextprotocol/server-everything` serving streamable HTTP on 127.0.0.1.

use crate::support;

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ptc_mcp::ServerConfig;
use support::Session;

/// The server process, ended when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> HttpServer {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    start_on(port)
}

/// The server listening on `port` of 127.0.0.1.
fn start_on(port: u16) -> HttpServer {
    let command = ptc_mcp_testkit::server_command(ptc_mcp_testkit::EVERYTHING)
        .unwrap_or_else(|e| panic!("{e}"));
    let child = Command::new(command)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the HTTP server");
    let server = HttpServer { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the HTTP server did not start listening"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[test]
fn tools_over_streamable_http() {
    let server = start();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let session = Session::start(vec![
        ServerConfig::http("remote", &url).with_timeout(Duration::from_secs(4)),
    ]);
    assert_eq!(session.servers.mcp_tools().len(), 13);
    session.check(&[
        (r#"(tool/echo "over http")"#, Ok(r#""Echo: over http""#)),
        ("(tool/get-sum {:a 40 :b 2})", Ok(r#""The sum of 40 and 2 is 42.""#)),
        (
            r#"(tool/get-structured-content "New York")"#,
            Ok(r#"{:conditions "Cloudy", :humidity 82, :temperature 33}"#),
        ),
        (
            "(tool/trigger-long-running-operation {:duration 0.4 :steps 2})",
            Ok(r#""Long running operation completed. Duration: 0.4 seconds, Steps: 2.""#),
        ),
        (
            "(tool/trigger-long-running-operation 30 3)",
            Err("tool/trigger-long-running-operation failed: no answer within 4 s; the call was cancelled"),
        ),
        (r#"(tool/echo "still here")"#, Ok(r#""Echo: still here""#)),
    ]);
    let server = &session.servers.servers()[0];
    assert!(
        support::eventually(|| server.stats().progress == 2),
        "{:?}",
        server.stats()
    );
    session.close();
}

/// The server is stopped and started again on the same port: it has forgotten the client's
/// session, and answers its next request with `400 Bad Request: No valid session ID provided`,
/// naming no request. The call is sent again on a new session (the request was refused
/// unrun) and succeeds; a call made while the server is away fails saying it cannot be reached.
#[test]
fn a_server_stopped_and_started_again_is_reached_again() {
    support::logs::keep();
    let server = start();
    let port = server.port;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let session = Session::start(vec![
        ServerConfig::http("restarted", &url)
            .with_timeout(Duration::from_secs(4))
            .with_restart_backoff(Duration::from_millis(200), Duration::from_millis(800)),
    ]);
    let handle = session.servers.servers()[0].clone();
    session.check(&[(r#"(tool/echo "before")"#, Ok(r#""Echo: before""#))]);
    drop(server);
    assert_eq!(
        session.run(r#"(tool/echo "while away")"#),
        Err(format!(
            "tool/echo failed: the MCP server restarted cannot be reached at {url}: Client \
             error: error sending request for url ({url}); the next call tries again"
        ))
    );
    let server = start_on(port);
    let asked = Instant::now();
    session.check(&[
        (r#"(tool/echo "after")"#, Ok(r#""Echo: after""#)),
        (
            r#"(tool/echo "after, again")"#,
            Ok(r#""Echo: after, again""#),
        ),
    ]);
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "the calls took {:?}",
        asked.elapsed()
    );
    assert_eq!(handle.restarts(), 1);
    assert_eq!(handle.failed_starts(), 0);
    let warnings: Vec<String> = support::logs::warnings("restarted")
        .into_iter()
        .map(|w| w.message)
        .collect();
    assert_eq!(
        warnings,
        vec![
            "the MCP server restarted no longer knows this session (Bad Request: No valid \
             session ID provided); reaching it again"
                .to_string()
        ]
    );
    session.close();
    drop(server);
}

#[test]
fn an_unreachable_url_is_a_connect_error() {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let runtime = support::runtime();
    let error = runtime
        .block_on(ptc_mcp::McpServers::connect([ServerConfig::http(
            "nobody",
            format!("http://127.0.0.1:{port}/mcp"),
        )]))
        .unwrap_err();
    assert_eq!(error.server, "nobody");
    assert!(
        error.message.starts_with(&format!(
            "the initialize handshake with `http://127.0.0.1:{port}/mcp` failed: "
        )),
        "{}",
        error.message
    );
}
