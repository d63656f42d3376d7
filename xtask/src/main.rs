//! Project automation: `cargo xtask ci`, `cargo xtask bench`.

fn main() {}
