//! Test probes: what the interpreter layout reads, handed to Ruby so the
//! test suite can compare it with the public API on every supported Ruby.
//!
//! `Ruzzy::Native._probe_iseq(iseq)` reads a `RubyVM::InstructionSequence`'s
//! fields through the layout; `Ruzzy::Native._probe_caller` reads the calling Ruby
//! frame the way comparison hooks do. Both return nil when no layout is
//! compiled in. Never called while fuzzing.

use crate::rb::interpreter_layout;
use magnus::rb_sys::FromRawValue;
use magnus::{Error, RHash, Ruby, Value};

/// `Ruzzy::Native._probe_iseq(iseq)`: a Hash of the fields read, or nil.
pub fn probe_iseq(ruby: &Ruby, iseq: Value) -> Result<Option<RHash>, Error> {
    let iseq = crate::rb::instruction_sequence(ruby, iseq)?;
    // SAFETY: checked to be a live RubyVM::InstructionSequence.
    let Some(fields) = (unsafe { interpreter_layout::probe_iseq(iseq) }) else {
        return Ok(None);
    };
    let hash = ruby.hash_new();
    hash.aset(ruby.to_symbol("wrapper_matches"), fields.wrapper_matches)?;
    hash.aset(ruby.to_symbol("type"), fields.kind)?;
    // SAFETY: the VALUEs read are the iseq's own live objects.
    unsafe {
        hash.aset(ruby.to_symbol("path"), Value::from_raw(fields.path))?;
        hash.aset(ruby.to_symbol("label"), Value::from_raw(fields.label))?;
        hash.aset(
            ruby.to_symbol("base_label"),
            Value::from_raw(fields.base_label),
        )?;
    }
    hash.aset(ruby.to_symbol("first_lineno"), fields.first_lineno)?;
    hash.aset(ruby.to_symbol("node_id"), fields.node_id)?;
    hash.aset(
        ruby.to_symbol("code_location"),
        fields.code_location.to_vec(),
    )?;
    Ok(Some(hash))
}

/// `Ruzzy::Native._probe_caller`: [path, first line, column] of the Ruby method or
/// block that called it, or nil.
pub fn probe_caller() -> Option<(Value, i32, i32)> {
    // SAFETY: called as a C method by the interpreter; the path read is a
    // live String owned by the caller's iseq.
    unsafe {
        interpreter_layout::probe_caller()
            .map(|(path, line, column)| (Value::from_raw(path), line, column))
    }
}
