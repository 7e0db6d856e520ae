//! Build script: exposes the Ruby version cfgs (`ruby_gte_3_1`, ...) and
//! makes GNU ld resolve libc's memcmp/strcmp before libFuzzer's interceptor
//! object, which would otherwise be pulled in and refused in a shared object
//! (`.preinit_array section is not allowed in DSO`). Also compiles the C
//! helpers: sanitizer callbacks that must stay local to the extension.
//!
//! `ruby_layout` names the interpreter layout `rb/interpreter_layout.rs` reads
//! for the Ruby being built for: set only for versions whose headers were
//! read (3.1, 3.3, 3.4), so any other Ruby gets the public API.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = rb_sys_env::activate()?;
    println!("cargo:rustc-check-cfg=cfg(ruby_layout, values(\"3.1\", \"3.3\", \"3.4\"))");
    let layout = match env.ruby_major_minor() {
        (3, 1) => Some("3.1"),
        (3, 3) => Some("3.3"),
        (3, 4) => Some("3.4"),
        _ => None,
    };
    if let Some(layout) = layout {
        println!("cargo:rustc-cfg=ruby_layout=\"{layout}\"");
    }
    println!("cargo:rustc-link-lib=dylib=c");
    println!("cargo:rerun-if-changed=src/engine/sanitizer_callbacks.c");
    println!("cargo:rerun-if-changed=src/input/custom_mutator.c");
    cc::Build::new()
        .file("src/engine/sanitizer_callbacks.c")
        .file("src/input/custom_mutator.c")
        .warnings(true)
        .compile("ruzzy_c_helpers");
    Ok(())
}
