//! The application suite's catalogue: each application's `--apps` name and
//! aliases, the Debian packages bench/run installs for it, the programs it
//! runs and the physics its check compares. Options (`--apps`) and the
//! suite's runner (`app/`) both read it; it needs neither.

/// One application of the suite.
#[derive(Debug)]
pub struct AppSpec {
    /// `--apps` name, also the directory in bench/apps/ and the results
    pub name: &'static str,
    pub title: &'static str,
    /// other names `--apps` accepts
    pub aliases: &'static [&'static str],
    /// Debian packages bench/run installs for it
    pub packages: &'static [&'static str],
    /// the MPI program, first one found on PATH
    pub binaries: &'static [&'static str],
    /// what the identical-results check compares
    pub physics: &'static str,
}

pub const APPS: &[AppSpec] = &[
    AppSpec {
        name: "lammps",
        title: "LAMMPS",
        aliases: &["lmp"],
        packages: &["lammps"],
        binaries: &["lmp", "lmp_stable", "lmp_mpi", "lmp_openmpi", "lmp_mpich"],
        physics: "the thermo table (every column, about 30 rows)",
    },
    AppSpec {
        name: "hpcc",
        title: "HPC Challenge",
        aliases: &["hpc-challenge"],
        packages: &["hpcc"],
        binaries: &["hpcc"],
        physics: "HPCC's verification lines (HPL, PTRANS residual checks PASSED/FAILED, \
                  RandomAccess errors found, MPIFFT max error)",
    },
    AppSpec {
        name: "qe",
        title: "Quantum ESPRESSO",
        aliases: &["quantum-espresso", "espresso", "pw", "pw.x"],
        packages: &["quantum-espresso", "quantum-espresso-data"],
        binaries: &["pw.x"],
        physics: "total energy and scf accuracy of every SCF iteration, the energy terms, \
                  forces, stress",
    },
    AppSpec {
        name: "openfoam",
        title: "OpenFOAM",
        aliases: &["foam", "simplefoam"],
        packages: &["openfoam", "openfoam-examples"],
        binaries: &["simpleFoam"],
        physics: "every solver's residuals and iterations, continuity errors, and every \
                  value of the final fields of every subdomain",
    },
    AppSpec {
        name: "cp2k",
        title: "CP2K",
        aliases: &["cp2k.psmp", "cp2k.popt"],
        packages: &["cp2k", "cp2k-data"],
        binaries: &["cp2k.psmp", "cp2k.popt"],
        physics: "every SCF step (convergence, total energy, change), the energy terms, \
                  the atomic forces",
    },
    AppSpec {
        name: "gromacs",
        title: "GROMACS",
        aliases: &["gmx", "gmx_mpi"],
        packages: &["gromacs", "gromacs-data"],
        binaries: &["gmx_mpi"],
        physics: "the energies every 50 steps and their averages (md.log)",
    },
];

pub fn find(name: &str) -> Option<&'static AppSpec> {
    let n = name.to_ascii_lowercase();
    APPS.iter()
        .find(|a| a.name == n || a.aliases.iter().any(|x| *x == n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(find("pw.x").unwrap().name, "qe");
        assert_eq!(find("GMX").unwrap().name, "gromacs");
        assert!(find("nope").is_none());
    }
}
