//! `cargo xtask mcp-servers`: the pinned MCP servers the tests and missions use.

/// Installs the MCP servers of `crates/ptc-mcp-testkit/servers` (once per lock file).
pub fn run() -> Result<(), String> {
    let dir = ptc_mcp_testkit::ensure_installed()?;
    eprintln!("==> MCP test servers are installed in {}", dir.display());
    Ok(())
}
