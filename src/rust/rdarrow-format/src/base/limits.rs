//! The machine's limits that reads respect: the memory one read may
//! decode ([`crate::ReadOptions::max_memory`], ALTREP expansion and the
//! checks before R builds an object default to the physical memory), and
//! the stack a thread has left (whether a parse may run on it).

/// The machine's physical memory, in bytes: asked of the system once per
/// process (glibc answers `_SC_PHYS_PAGES` with a `sysinfo` call, a cost
/// every small read paid several times over).
pub fn physical_memory() -> u64 {
    static MEMORY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(ask_physical_memory)
}

#[cfg(unix)]
fn ask_physical_memory() -> u64 {
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

#[cfg(windows)]
fn ask_physical_memory() -> u64 {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // SAFETY: the structure is zeroed with its length set, as the call asks.
    unsafe {
        let mut status: MEMORYSTATUSEX = std::mem::zeroed();
        status.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
        if GlobalMemoryStatusEx(&mut status) != 0 && status.ullTotalPhys > 0 {
            status.ullTotalPhys
        } else {
            u64::MAX
        }
    }
}

/// This thread's stack: its highest address (where it starts, growing
/// down) and its size, from the thread's own attributes (R's API does not
/// publish its stack bounds). `None` where the platform does not say.
#[cfg(target_os = "linux")]
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: the attributes are initialised by pthread_getattr_np and
    // destroyed once read.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut low: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut low, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        (ok && size > 0).then(|| (low as usize + size, size))
    }
}

#[cfg(target_os = "macos")]
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: plain queries of the current thread.
    unsafe {
        let me = libc::pthread_self();
        let top = libc::pthread_get_stackaddr_np(me) as usize;
        let size = libc::pthread_get_stacksize_np(me);
        (size > 0).then_some((top, size))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn stack_bounds() -> Option<(usize, usize)> {
    None
}

/// The bytes of this thread's stack left below here, and its whole size
/// (`None` where the platform does not say).
pub fn stack_left() -> Option<(usize, usize)> {
    let (top, size) = STACK_BOUNDS.with(|b| *b)?;
    let here = 0u8;
    let used = top.saturating_sub(&here as *const u8 as usize);
    Some((size.saturating_sub(used), size))
}

thread_local! {
    static STACK_BOUNDS: Option<(usize, usize)> = stack_bounds();
}

/// The machine's cores, asked once per process: the question reads the
/// cgroup's files on Linux (tens of microseconds, paid by every small call
/// otherwise), and its answer does not change while the process runs.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
}
