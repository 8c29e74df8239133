//! Links the examples (`md5sum`, `sha256sum`, …) as position-dependent executables on Linux.
//!
//! A `sum` program starts once per invocation, often for one small file, so its start-up is
//! part of its speed. As a position-independent executable the 9 MB program carries about
//! 12,000 relative relocations that the dynamic loader applies on every start, copying the
//! pages they touch; linked at a fixed address it has none (`notes/md5-mb.md`, md5sum timing).
//! The objects stay position-independent, so nothing else about them changes.

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo:rustc-link-arg-examples=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
