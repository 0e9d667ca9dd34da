//! Which MPI library heapmpi runs on, from its `MPI_Get_library_version`
//! (read once). Where the stock MPIs answer differently by version (how
//! the neighbourhood collectives pair repeated neighbours, what
//! `MPI_Win_shared_query` reports on a shared window without memory),
//! heapmpi follows the version it finds, not only the family it was built
//! for: one build serves every release of the family whose library it
//! loads.

use core::ffi::c_int;

use mpi_sys as ffi;

/// The library's family and `(major, minor, patch)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// "Open MPI vX.Y.Z, ..."
    OpenMpi((u32, u32, u32)),
    /// "MPICH Version: X.Y.Z ..." (MPICH's own string).
    Mpich((u32, u32, u32)),
    /// "Intel(R) MPI Library 2021.18 for Linux* OS" (of the MPICH family).
    IntelMpi((u32, u32, u32)),
    /// Anything else (Cray MPICH, MVAPICH, ...), or a string without a
    /// version.
    Other,
}

/// The MPI's `MPI_Get_library_version`, asked once.
pub fn library_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let mut buf = vec![0u8; ffi::MPI_MAX_LIBRARY_VERSION_STRING as usize + 1];
        let mut len: c_int = 0;
        // SAFETY: the buffer holds MPI_MAX_LIBRARY_VERSION_STRING bytes;
        // callable at any time, even before MPI_Init.
        let rc = unsafe { ffi::PMPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len) };
        if rc != 0 {
            return String::new();
        }
        buf.truncate((len.max(0) as usize).min(buf.len()));
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// The library heapmpi runs on (parsed once).
pub fn library() -> Library {
    static L: std::sync::OnceLock<Library> = std::sync::OnceLock::new();
    *L.get_or_init(|| parse(library_version()))
}

/// Whether the MPI in use follows Open MPI's conventions where heapmpi
/// must behave as it does (reduction order, window creation, errors).
/// Fixed by the build (`cfg(heapmpi_openmpi)`), except in the build for
/// the MPI-5 standard ABI (`cfg(heapmpi_abi)`), which serves every MPI
/// implementing that ABI and asks the library it runs on.
pub fn open_mpi() -> bool {
    if cfg!(heapmpi_abi) {
        matches!(library(), Library::OpenMpi(_))
    } else {
        cfg!(heapmpi_openmpi)
    }
}

/// Whether the MPI in use is of the MPICH family (MPICH, Intel MPI), as
/// [`open_mpi`] decides it.
pub fn mpich() -> bool {
    if cfg!(heapmpi_abi) {
        !open_mpi()
    } else {
        cfg!(heapmpi_mpich)
    }
}

/// The family and version in a library version string.
pub fn parse(lib: &str) -> Library {
    if let Some(v) = lib.strip_prefix("Open MPI v") {
        return version_of(v).map_or(Library::Other, Library::OpenMpi);
    }
    if let Some(v) = lib.strip_prefix("MPICH Version:") {
        return version_of(v).map_or(Library::Other, Library::Mpich);
    }
    if let Some(v) = lib.strip_prefix("Intel(R) MPI Library") {
        return version_of(v).map_or(Library::Other, Library::IntelMpi);
    }
    Library::Other
}

/// `(major, minor, patch)` of a version string's first `x.y[.z]`.
pub fn version_of(s: &str) -> Option<(u32, u32, u32)> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let mut parts = s[start..]
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strings_of_the_mpis_seen() {
        assert_eq!(
            parse("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"),
            Library::OpenMpi((4, 1, 4))
        );
        assert_eq!(parse("Open MPI v5.0.11, ..."), Library::OpenMpi((5, 0, 11)));
        assert_eq!(
            parse("MPICH Version:\t4.0.2\nMPICH Release date: ..."),
            Library::Mpich((4, 0, 2))
        );
        assert_eq!(
            parse("MPICH Version:      5.0.2\nMPICH Release date: ..."),
            Library::Mpich((5, 0, 2))
        );
        assert_eq!(
            parse("Intel(R) MPI Library 2021.18 for Linux* OS\n"),
            Library::IntelMpi((2021, 18, 0))
        );
        assert_eq!(parse("Cray MPICH"), Library::Other);
        assert_eq!(parse("MPICH Version: unknown"), Library::Other);
        assert_eq!(version_of("v5.1"), Some((5, 1, 0)));
    }
}
