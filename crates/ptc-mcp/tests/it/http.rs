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
    let command = ptc_mcp_testkit::server_command(ptc_mcp_testkit::EVERYTHING)
        .unwrap_or_else(|e| panic!("{e}"));
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
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
