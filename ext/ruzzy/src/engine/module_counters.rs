//! The inline 8-bit counters of the instrumented shared objects loaded in
//! the process: the `__sancov_cntrs` section of each (a C extension built
//! with `-fsanitize=fuzzer-no-link`), which its constructor registers with
//! libFuzzer (`__sanitizer_cov_8bit_counters_init`). libFuzzer keeps its
//! list to itself, so it is read here from each object's section headers,
//! in its file (section headers are not loaded), and a section is believed
//! only where it lies in a writable segment of the object as loaded, whose
//! segments are those of the file (a file replaced since it was loaded is
//! skipped). 64-bit little-endian ELF only (x86_64, aarch64).
//!
//! Invariants: used on the fuzzing thread only; the list is read again only
//! when the loader's counts of objects loaded and unloaded have changed (it
//! allocates then, never otherwise).

use std::cell::RefCell;
use std::ffi::{c_int, c_void, CStr};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The name of the section that holds an object's inline 8-bit counters.
const SECTION: &[u8] = b"__sancov_cntrs";

/// The loader's counts of objects loaded and unloaded, and the counters'
/// `[start, end)` ranges they were read with.
#[derive(Default)]
struct Sections {
    counts: Option<(u64, u64)>,
    ranges: Vec<(usize, usize)>,
}

thread_local! {
    static SECTIONS: RefCell<Sections> = RefCell::new(Sections::default());
}

/// Zeroes the inline 8-bit counters of every instrumented object loaded (as
/// libFuzzer does before each input). Returns how many sections.
pub fn clear() -> usize {
    SECTIONS.with_borrow_mut(|sections| {
        let counts = loader_counts();
        if sections.counts != Some(counts) {
            sections.ranges = read_all();
            sections.counts = Some(counts);
        }
        for &(start, end) in &sections.ranges {
            // SAFETY: a counters section of a loaded object, inside one of
            // its writable segments (checked when read); objects were
            // neither loaded nor unloaded since. Instrumented code writes
            // these bytes without synchronisation, as libFuzzer's own
            // clearing does.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
        }
        sections.ranges.len()
    })
}

/// `(dlpi_adds, dlpi_subs)`: the same in every object's entry.
fn loader_counts() -> (u64, u64) {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the tuple passed below; `info` is valid during
        // the call.
        unsafe {
            let info = &*info;
            *data.cast::<(u64, u64)>() = (info.dlpi_adds, info.dlpi_subs);
        }
        1
    }
    let mut counts = (0u64, 0u64);
    // SAFETY: the callback writes the counts and stops the walk.
    unsafe { libc::dl_iterate_phdr(Some(first), std::ptr::from_mut(&mut counts).cast()) };
    counts
}

/// The counters sections of every loaded object.
fn read_all() -> Vec<(usize, usize)> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the Vec passed below; `info` and the program
        // headers it points at are valid during the call.
        let (ranges, info) = unsafe { (&mut *data.cast::<Vec<(usize, usize)>>(), &*info) };
        let name = if info.dlpi_name.is_null() {
            c""
        } else {
            // SAFETY: a NUL-terminated file name owned by the loader.
            unsafe { CStr::from_ptr(info.dlpi_name) }
        };
        let path = match name.to_str() {
            Ok("") => "/proc/self/exe",
            Ok(path) if path.starts_with('/') => path,
            _ => return 0, // linux-vdso.so.1, or a name that is no path
        };
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
        let loaded = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
        if let Ok(found) = sections_of(path, info.dlpi_addr as usize, loaded) {
            ranges.extend(found);
        }
        0
    }
    let mut ranges = Vec::new();
    // SAFETY: the callback only reads the loader's entries and files.
    unsafe { libc::dl_iterate_phdr(Some(visit), std::ptr::from_mut(&mut ranges).cast()) };
    ranges
}

fn u16_at(bytes: &[u8], at: usize) -> usize {
    u16::from_le_bytes([bytes[at], bytes[at + 1]]).into()
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(bytes: &[u8], at: usize) -> usize {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default()) as usize
}

/// Reads `len` bytes at `offset` of `file` (at most 16 MiB).
fn read(file: &File, offset: usize, len: usize) -> std::io::Result<Vec<u8>> {
    if len > 16 << 20 {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let mut bytes = vec![0; len];
    file.read_exact_at(&mut bytes, offset as u64)?;
    Ok(bytes)
}

/// The `[start, end)` ranges, in memory, of the counters sections of the
/// object in file `path`, loaded at `base` with program headers `loaded`.
fn sections_of(
    path: &str,
    base: usize,
    loaded: &[libc::Elf64_Phdr],
) -> std::io::Result<Vec<(usize, usize)>> {
    let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidData);
    let file = File::open(path)?;
    let header = read(&file, 0, 64)?;
    // ELF, 64-bit, little-endian.
    if header[0..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err(invalid());
    }
    let (phoff, phentsize, phnum) = (
        u64_at(&header, 0x20),
        u16_at(&header, 0x36),
        u16_at(&header, 0x38),
    );
    let (shoff, shentsize, shnum) = (
        u64_at(&header, 0x28),
        u16_at(&header, 0x3a),
        u16_at(&header, 0x3c),
    );
    let shstrndx = u16_at(&header, 0x3e);
    if phentsize < 56 || shentsize < 64 || shstrndx >= shnum {
        return Err(invalid());
    }
    // The file's loadable segments must be those in memory.
    let program = read(&file, phoff, phentsize * phnum)?;
    let in_file = (0..phnum)
        .map(|index| &program[index * phentsize..])
        .filter(|entry| u32_at(entry, 0) == libc::PT_LOAD)
        .map(|entry| (u64_at(entry, 0x10), u64_at(entry, 0x28), u32_at(entry, 4)));
    let in_memory = loaded
        .iter()
        .filter(|segment| segment.p_type == libc::PT_LOAD)
        .map(|segment| {
            (
                segment.p_vaddr as usize,
                segment.p_memsz as usize,
                segment.p_flags,
            )
        });
    if !in_file.eq(in_memory) {
        return Err(invalid());
    }
    let sections = read(&file, shoff, shentsize * shnum)?;
    let section = |index: usize| &sections[index * shentsize..(index + 1) * shentsize];
    let names = section(shstrndx);
    let names = read(&file, u64_at(names, 0x18), u64_at(names, 0x20))?;
    let writable = |start: usize, end: usize| {
        loaded.iter().any(|segment| {
            let from = segment.p_vaddr as usize;
            segment.p_type == libc::PT_LOAD
                && segment.p_flags & libc::PF_W != 0
                && from <= start
                && end <= from + segment.p_memsz as usize
        })
    };
    Ok((0..shnum)
        .map(section)
        .filter(|entry| {
            let name = names.get(u32_at(entry, 0) as usize..).unwrap_or_default();
            name.starts_with(SECTION) && name.get(SECTION.len()) == Some(&0)
        })
        .map(|entry| {
            (
                u64_at(entry, 0x10),
                u64_at(entry, 0x10) + u64_at(entry, 0x20),
            )
        })
        .filter(|&(start, end)| start > 0 && end > start && writable(start, end))
        .map(|(start, end)| (base + start, base + end))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary itself is no instrumented object: it is read (its
    /// segments match) and has no counters section.
    #[test]
    fn an_object_without_counters_has_no_sections() {
        assert_eq!(clear(), 0);
        // A second call reads nothing again.
        assert_eq!(clear(), 0);
    }

    /// The test program's own program headers, and where it is loaded.
    fn this_program() -> (usize, &'static [libc::Elf64_Phdr]) {
        // SAFETY: the auxiliary vector's program headers of the running
        // program, mapped for its lifetime.
        let loaded = unsafe {
            std::slice::from_raw_parts(
                libc::getauxval(libc::AT_PHDR) as *const libc::Elf64_Phdr,
                libc::getauxval(libc::AT_PHNUM) as usize,
            )
        };
        let table = loaded
            .iter()
            .find(|segment| segment.p_type == libc::PT_PHDR);
        let base = loaded.as_ptr() as usize - table.map_or(0, |segment| segment.p_vaddr as usize);
        (base, loaded)
    }

    #[test]
    fn the_running_program_is_read_and_has_no_counters() {
        let (base, loaded) = this_program();
        assert_eq!(sections_of("/proc/self/exe", base, loaded).unwrap(), vec![]);
    }

    /// A file whose segments are not those loaded (replaced since) is not
    /// believed.
    #[test]
    fn a_file_that_does_not_match_what_is_loaded_is_skipped() {
        let (base, loaded) = this_program();
        let fewer: Vec<_> = loaded
            .iter()
            .filter(|segment| segment.p_type != libc::PT_LOAD || segment.p_flags & libc::PF_W == 0)
            .copied()
            .collect();
        assert!(sections_of("/proc/self/exe", base, &fewer).is_err());
    }

    #[test]
    fn a_file_that_is_no_elf_object_is_skipped() {
        assert!(sections_of("/proc/self/cmdline", 0, &[]).is_err());
        assert!(sections_of("/nonexistent/object.so", 0, &[]).is_err());
    }
}
