//! A small per-user cache of communicator infos, so that the per-call path
//! (every send and receive) does not ask MPI for the attribute: its owner
//! keeps it under its own lock and drops entries from a [`super::on_free`]
//! hook.

use mpi_sys as ffi;

use super::CommInfo;
use crate::raw::RawHandle;

/// Entries kept (the most recently looked-up communicators).
const ENTRIES: usize = 16;

/// Communicator handle bits → info, most recent last.
pub struct Cache {
    entries: Vec<(usize, &'static CommInfo)>,
}

impl Cache {
    /// An empty cache.
    pub const fn new() -> Cache {
        Cache {
            entries: Vec::new(),
        }
    }

    /// The info of `comm`, if heapmpi knows the communicator.
    #[inline]
    pub fn get(&mut self, comm: ffi::MPI_Comm) -> Option<&'static CommInfo> {
        let bits = comm.0.to_bits();
        if let Some(e) = self.entries.iter().find(|e| e.0 == bits) {
            return Some(e.1);
        }
        let info = super::lookup(comm)?;
        if self.entries.len() >= ENTRIES {
            self.entries.remove(0);
        }
        self.entries.push((bits, info));
        Some(info)
    }

    /// Drops the entry of the communicator with handle bits `bits`.
    pub fn forget(&mut self, bits: usize) {
        self.entries.retain(|e| e.0 != bits);
    }
}

impl Default for Cache {
    fn default() -> Self {
        Cache::new()
    }
}
