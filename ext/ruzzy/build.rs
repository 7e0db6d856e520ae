//! Build script: exposes the Ruby version cfgs (`ruby_gte_3_1`, ...) and
//! makes GNU ld resolve libc's memcmp/strcmp before libFuzzer's interceptor
//! object, which would otherwise be pulled in and refused in a shared object
//! (`.preinit_array section is not allowed in DSO`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _ = rb_sys_env::activate()?;
    println!("cargo:rustc-link-lib=dylib=c");
    Ok(())
}
