//! Build script: exposes the Ruby version cfgs (`ruby_gte_3_1`, ...) and
//! makes GNU ld resolve libc's memcmp/strcmp before libFuzzer's interceptor
//! object, which would otherwise be pulled in and refused in a shared object
//! (`.preinit_array section is not allowed in DSO`). Also compiles the C
//! sanitizer callbacks that must stay local to the extension.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = rb_sys_env::activate()?;
    // The interpreter layouts location.rs reads are those of Ruby 3.0-3.4.
    println!("cargo:rustc-check-cfg=cfg(internal_layout)");
    let version = env.ruby_major_minor();
    if ((3, 0)..(3, 5)).contains(&version) {
        println!("cargo:rustc-cfg=internal_layout");
    }
    println!("cargo:rustc-link-lib=dylib=c");
    println!("cargo:rerun-if-changed=src/sanitizer_callbacks.c");
    cc::Build::new()
        .file("src/sanitizer_callbacks.c")
        .warnings(true)
        .compile("ruzzy_sanitizer_callbacks");
    Ok(())
}
