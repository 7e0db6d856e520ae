/*
 * The interpreter's current execution context, for locating the Ruby frame
 * that called a comparison hook (see location.rs). `ruby_current_ec` is a
 * thread-local variable exported by libruby; Rust cannot name foreign
 * thread-locals on stable, C can.
 */
extern __thread void *ruby_current_ec;

void *ruzzy_current_ec(void) { return ruby_current_ec; }
