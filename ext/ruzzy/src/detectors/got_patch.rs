//! Redirects the calls that loaded shared objects make to one libc function
//! (by name) to a function of ours, by rewriting their global offset table
//! entries: the PLT slot (`JUMP_SLOT`) and the address-taken slot
//! (`GLOB_DAT`) that the dynamic loader filled with the function's address.
//! Code that reaches the function through either (every C extension, every
//! library it links) then calls ours instead; code that calls it through a
//! pointer it looked up itself (`dlsym`) or with a raw system call does not.
//!
//! Only x86-64 and AArch64 are known (their relocation numbers); elsewhere
//! nothing is patched and [`redirect`] says so.
//!
//! Invariants: runs with no other thread loading or unloading objects
//! (called with the GVL held, from set-up code; the loader's own lock is
//! held by `dl_iterate_phdr` meanwhile); a slot inside an object's
//! read-only-after-relocation region (`PT_GNU_RELRO`) is made writable for
//! the write and read-only again after it; each slot is written once, with
//! one aligned pointer-sized store, so a thread calling through it sees the
//! old or the new function, both of which work.

use std::ffi::{c_int, c_void, CStr};

/// The relocation types of a GOT slot that holds a function's address.
#[cfg(target_arch = "x86_64")]
const SLOT_RELOCATIONS: [u32; 2] = [6, 7]; // R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT
#[cfg(target_arch = "aarch64")]
const SLOT_RELOCATIONS: [u32; 2] = [1025, 1026]; // R_AARCH64_GLOB_DAT, R_AARCH64_JUMP_SLOT
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SLOT_RELOCATIONS: [u32; 0] = [];

const PT_DYNAMIC: u32 = 2;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_JMPREL: i64 = 23;

#[repr(C)]
struct Dyn {
    tag: i64,
    value: u64,
}

#[repr(C)]
struct Rela {
    offset: u64,
    info: u64,
    addend: i64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    section: u16,
    value: u64,
    size: u64,
}

/// What one pass patches.
struct Request<'a> {
    symbol: &'a CStr,
    replacement: usize,
    /// Objects whose file name ends with one of these are left alone.
    skip: &'a [&'a str],
    patched: usize,
}

/// Points every GOT slot of `symbol` in the loaded objects (except those
/// whose file name ends with one of `skip`, and the object defining
/// `replacement`) at `replacement`. Returns how many slots were written,
/// or None on an architecture whose relocations are not known.
pub fn redirect(symbol: &CStr, replacement: *const c_void, skip: &[&str]) -> Option<usize> {
    if SLOT_RELOCATIONS.is_empty() {
        return None;
    }
    let mut request = Request {
        symbol,
        replacement: replacement as usize,
        skip,
        patched: 0,
    };
    // SAFETY: the callback only reads the loader's program headers and the
    // dynamic sections they point at, for the duration of the call.
    unsafe {
        libc::dl_iterate_phdr(
            Some(visit_object),
            (&mut request as *mut Request).cast::<c_void>(),
        )
    };
    Some(request.patched)
}

unsafe extern "C" fn visit_object(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the Request passed to dl_iterate_phdr; `info` is the
    // loader's description of one object, valid during this call.
    let (request, info) = unsafe { (&mut *(data as *mut Request), &*info) };
    let name = if info.dlpi_name.is_null() {
        ""
    } else {
        // SAFETY: a NUL-terminated file name owned by the loader.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_str()
            .unwrap_or("")
    };
    if request.skip.iter().any(|skipped| name.ends_with(skipped)) || name.contains("linux-vdso") {
        return 0;
    }
    // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let base = info.dlpi_addr as usize;
    if owns(headers, base, request.replacement) {
        return 0;
    }
    let relro = headers
        .iter()
        .find(|header| header.p_type == PT_GNU_RELRO)
        .map(|header| (base + header.p_vaddr as usize, header.p_memsz as usize));
    for header in headers.iter().filter(|header| header.p_type == PT_DYNAMIC) {
        // SAFETY: a loaded object's dynamic section, mapped at base + vaddr.
        unsafe {
            patch_object(
                request,
                base,
                (base + header.p_vaddr as usize) as *const Dyn,
                relro,
            )
        };
    }
    0
}

/// Whether the object loaded at `base` with `headers` maps `address`.
fn owns(headers: &[libc::Elf64_Phdr], base: usize, address: usize) -> bool {
    headers.iter().any(|header| {
        let start = base + header.p_vaddr as usize;
        header.p_type == libc::PT_LOAD
            && (start..start + header.p_memsz as usize).contains(&address)
    })
}

/// Patches the slots of one object whose dynamic section is at `dynamic`.
///
/// # Safety
/// `dynamic` must be the DT_NULL-terminated dynamic section of an object
/// loaded at `base`.
unsafe fn patch_object(
    request: &mut Request,
    base: usize,
    dynamic: *const Dyn,
    relro: Option<(usize, usize)>,
) {
    let (mut strtab, mut symtab, mut rela, mut rela_size, mut jmprel, mut jmprel_size) =
        (0, 0, 0, 0, 0, 0);
    let mut entry = dynamic;
    loop {
        // SAFETY: within the dynamic section, which ends at DT_NULL.
        let Dyn { tag, value } = unsafe { entry.read() };
        let value = value as usize;
        match tag {
            DT_NULL => break,
            DT_STRTAB => strtab = absolute(base, value),
            DT_SYMTAB => symtab = absolute(base, value),
            DT_RELA => rela = absolute(base, value),
            DT_RELASZ => rela_size = value,
            DT_JMPREL => jmprel = absolute(base, value),
            DT_PLTRELSZ => jmprel_size = value,
            _ => {}
        }
        // SAFETY: the next entry; DT_NULL has not been reached.
        entry = unsafe { entry.add(1) };
    }
    if strtab == 0 || symtab == 0 {
        return;
    }
    for (table, size) in [(rela, rela_size), (jmprel, jmprel_size)] {
        if table == 0 {
            continue;
        }
        // SAFETY: the object's relocation table of `size` bytes.
        let relocations = unsafe {
            std::slice::from_raw_parts(table as *const Rela, size / std::mem::size_of::<Rela>())
        };
        for relocation in relocations {
            if !SLOT_RELOCATIONS.contains(&(relocation.info as u32)) {
                continue;
            }
            let index = (relocation.info >> 32) as usize;
            // SAFETY: a relocation's symbol index is within the symbol
            // table, whose names are offsets into the string table.
            let name = unsafe {
                let symbol = &*(symtab as *const Sym).add(index);
                CStr::from_ptr((strtab + symbol.name as usize) as *const std::ffi::c_char)
            };
            if name == request.symbol {
                // SAFETY: the slot this relocation filled, in the object's
                // data at base + offset.
                if unsafe {
                    write_slot(
                        base + relocation.offset as usize,
                        request.replacement,
                        relro,
                    )
                } {
                    request.patched += 1;
                }
            }
        }
    }
}

/// A dynamic-section address: glibc relocates most of them in place when
/// it loads the object, the vDSO's and some architectures' stay relative.
fn absolute(base: usize, value: usize) -> usize {
    if value < base {
        base + value
    } else {
        value
    }
}

/// Writes `value` into the GOT slot at `slot`, lifting the RELRO
/// protection around the write if the slot lies in `relro`.
///
/// # Safety
/// `slot` must be a pointer-aligned GOT slot of a loaded object.
unsafe fn write_slot(slot: usize, value: usize, relro: Option<(usize, usize)>) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let page_start = slot & !(page - 1);
    let protected = relro.is_some_and(|(start, size)| (start..start + size).contains(&slot));
    if protected {
        // SAFETY: the page holding the slot belongs to the object's mapping.
        let unprotected = unsafe {
            libc::mprotect(
                page_start as *mut c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if unprotected != 0 {
            return false;
        }
    }
    // SAFETY: an aligned, writable pointer slot (see above).
    unsafe { std::ptr::write_volatile(slot as *mut usize, value) };
    if protected {
        // SAFETY: the same page, back to read-only as the loader left it.
        unsafe { libc::mprotect(page_start as *mut c_void, page, libc::PROT_READ) };
    }
    true
}
