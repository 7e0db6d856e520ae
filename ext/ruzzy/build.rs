//! Build script: exposes the Ruby version cfgs (`ruby_gte_3_1`, ...) and
//! makes GNU ld resolve libc's memcmp/strcmp before libFuzzer's interceptor
//! object, which would otherwise be pulled in and refused in a shared object
//! (`.preinit_array section is not allowed in DSO`). Also compiles the C
//! helpers: sanitizer callbacks that must stay local to the extension, and
//! access to the interpreter's thread-local execution context.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = rb_sys_env::activate()?;
    // The interpreter layouts location.rs reads are those of Ruby 3.0-3.4.
    println!("cargo:rustc-check-cfg=cfg(internal_layout)");
    println!("cargo:rustc-check-cfg=cfg(ruby_caller_frame_words, values(\"7\", \"8\"))");
    let version = env.ruby_major_minor();
    if ((3, 0)..(3, 5)).contains(&version) {
        println!("cargo:rustc-cfg=internal_layout");
        // rb_control_frame_t gained jit_return in 3.1 and lost __bp__ in 3.2.
        let words = if version == (3, 1) { "8" } else { "7" };
        println!("cargo:rustc-cfg=ruby_caller_frame_words=\"{words}\"");
    }
    println!("cargo:rustc-link-lib=dylib=c");
    println!("cargo:rerun-if-changed=src/sanitizer_callbacks.c");
    println!("cargo:rerun-if-changed=src/current_ec.c");
    println!("cargo:rerun-if-changed=src/custom_mutator.c");
    cc::Build::new()
        .file("src/sanitizer_callbacks.c")
        .file("src/current_ec.c")
        .file("src/custom_mutator.c")
        .warnings(true)
        .compile("ruzzy_c_helpers");
    Ok(())
}
