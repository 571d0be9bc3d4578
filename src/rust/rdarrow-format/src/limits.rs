//! The machine's limits that reads respect: the memory one read may
//! decode ([`crate::ReadOptions::max_memory`], ALTREP expansion and the
//! checks before R builds an object default to the physical memory).

/// The machine's physical memory, in bytes.
pub fn physical_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && size > 0 {
        pages as u64 * size as u64
    } else {
        u64::MAX
    }
}
