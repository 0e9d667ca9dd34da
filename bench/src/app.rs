//! Application check: LAMMPS (Debian package `lammps`, examples from
//! `lammps-examples`) at 2 ranks, stock and under heapmpi: wall-time ratio
//! and proof that the physics output (the thermo table) is identical.

use crate::opts::Opts;
use crate::runner::{self, Runner, Variant};
use crate::Progress;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const RANKS: usize = 2;

#[derive(Debug, Default)]
pub struct AppResult {
    /// what was run, one line
    pub title: String,
    pub mpi: String,
    /// set when the check could not run at all
    pub skipped: Option<String>,
    /// wall time of the whole launch (s), per variant, per repetition
    pub wall: BTreeMap<Variant, Vec<f64>>,
    /// LAMMPS's own "Loop time" (s), summed over the runs of the input
    pub loop_time: BTreeMap<Variant, Vec<f64>>,
    /// thermo rows compared (header lines included)
    pub thermo_rows: usize,
    /// every run's thermo output equals the first stock run's
    pub identical: bool,
    /// the first difference, if any
    pub difference: Option<String>,
    pub failures: Vec<String>,
}

const BINARIES: &[&str] = &["lmp", "lmp_stable", "lmp_mpi", "lmp_openmpi", "lmp_mpich"];
const EXAMPLE_DIRS: &[&str] = &[
    "/usr/share/lammps/examples/melt",
    "/usr/share/doc/lammps/examples/melt",
];

fn which(cmd: &str) -> Option<PathBuf> {
    let p = std::env::var_os("PATH")?;
    std::env::split_paths(&p)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// The MPI a binary is linked against, from ldd.
fn mpi_of(bin: &Path) -> Option<String> {
    let out = Command::new("ldd")
        .arg(bin)
        .env_remove("LD_PRELOAD")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mpich = text.contains("libmpich") || text.contains("libmpi.so.12");
    let ompi = text.contains("libmpi.so.40") || text.contains("libopen-pal");
    match (ompi, mpich) {
        (true, false) => Some("openmpi".into()),
        (false, true) => Some("mpich".into()),
        _ => None,
    }
}

/// The thermo table(s) of a LAMMPS log: each header line starting with
/// "Step" and the rows up to "Loop time of".
pub fn thermo(log: &str) -> Vec<String> {
    let mut rows = vec![];
    let mut inside = false;
    for l in log.lines() {
        let t = l.trim();
        if t.starts_with("Step ") || t == "Step" {
            inside = true;
            rows.push(t.split_whitespace().collect::<Vec<_>>().join(" "));
            continue;
        }
        if t.starts_with("Loop time of") {
            inside = false;
            continue;
        }
        if inside && !t.is_empty() {
            rows.push(t.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    rows
}

/// Sum of "Loop time of X on N procs" of a log.
pub fn loop_time(log: &str) -> Option<f64> {
    let v: Vec<f64> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Loop time of "))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum())
    }
}

pub fn run(opts: &Opts, runner: &Runner, out: &Path, progress: &mut Progress) -> Option<AppResult> {
    let mut r = AppResult {
        identical: true,
        ..Default::default()
    };
    let Some(bin) = BINARIES.iter().find_map(|b| which(b)) else {
        r.skipped =
            Some("LAMMPS not installed (Debian: apt-get install lammps lammps-examples)".into());
        eprintln!(
            "heapmpi-bench: application check skipped: {}",
            r.skipped.as_ref().unwrap()
        );
        return Some(r);
    };
    let Some(example) = EXAMPLE_DIRS
        .iter()
        .map(|d| Path::new(d).join("in.melt"))
        .find(|p| p.is_file())
    else {
        r.skipped = Some(
            "LAMMPS example inputs not found (Debian: apt-get install lammps-examples)".into(),
        );
        eprintln!(
            "heapmpi-bench: application check skipped: {}",
            r.skipped.as_ref().unwrap()
        );
        return Some(r);
    };
    let Some(mpi) = mpi_of(&bin) else {
        r.skipped = Some(format!(
            "cannot tell which MPI {} is linked against",
            bin.display()
        ));
        eprintln!(
            "heapmpi-bench: application check skipped: {}",
            r.skipped.as_ref().unwrap()
        );
        return Some(r);
    };
    if !runner::have_command(runner::launcher(&mpi)) {
        r.skipped = Some(format!(
            "{} is linked against {mpi}, whose launcher is missing",
            bin.display()
        ));
        eprintln!(
            "heapmpi-bench: application check skipped: {}",
            r.skipped.as_ref().unwrap()
        );
        return Some(r);
    }
    r.mpi = mpi.clone();

    // The bundled 3d Lennard-Jones melt (4000 atoms, 250 steps); in the full
    // run then replicated 2x2x2 (32000 atoms) and run longer, so that the
    // run takes seconds rather than a fraction of one.
    let dir = out.join("app");
    let _ = fs::create_dir_all(&dir);
    let input = dir.join("in.melt-heapmpi");
    let mut text = String::from(
        "# heapmpi-bench application check: LAMMPS's bundled 3d Lennard-Jones melt\n\
         # example (examples/melt/in.melt, 4000 atoms, 250 steps), then the box\n\
         # replicated 2x2x2 (32000 atoms) and run for more steps.\n\
         include ${example}\n",
    );
    if opts.app_steps > 0 {
        text.push_str(&format!(
            "replicate 2 2 2\nthermo 100\nrun {}\n",
            opts.app_steps
        ));
        r.title = format!(
            "LAMMPS {} examples/melt (LJ melt) + replicate 2x2x2 (32000 atoms) + {} steps, {} ranks, {}",
            bin.file_name().unwrap_or_default().to_string_lossy(),
            opts.app_steps,
            RANKS,
            runner::mpi_title(&mpi)
        );
    } else {
        r.title = format!(
            "LAMMPS {} examples/melt (LJ melt, 4000 atoms, 250 steps), {} ranks, {}",
            bin.file_name().unwrap_or_default().to_string_lossy(),
            RANKS,
            runner::mpi_title(&mpi)
        );
    }
    if let Err(e) = fs::write(&input, text) {
        r.skipped = Some(format!("cannot write {}: {e}", input.display()));
        return Some(r);
    }

    let mut reference: Option<(String, Vec<String>)> = None;
    for rep in 0..opts.app_reps {
        let order = if rep % 2 == 0 {
            [Variant::Stock, Variant::Heapmpi]
        } else {
            [Variant::Heapmpi, Variant::Stock]
        };
        for v in order {
            let name = format!("lammps-{}-r{}", v.name(), rep + 1);
            let wd = dir.join(&name);
            let _ = fs::create_dir_all(&wd);
            let args: Vec<String> = vec![
                "-in".into(),
                input.to_string_lossy().into(),
                "-var".into(),
                "example".into(),
                example.to_string_lossy().into(),
                "-log".into(),
                "log.lammps".into(),
                "-screen".into(),
                "none".into(),
            ];
            progress.begin(&format!(
                "rep {}/{}  lammps  {:<8} {:<7}",
                rep + 1,
                opts.app_reps,
                mpi,
                v.name()
            ));
            let o = runner.run(&mpi, v, RANKS, &bin, &args, &name, Some(&wd));
            let mut note = String::new();
            if v == Variant::Heapmpi && o.ok && o.active_ranks < RANKS {
                note = format!("  (heapmpi active in {}/{} ranks!)", o.active_ranks, RANKS);
                r.failures.push(format!(
                    "{name}: heapmpi active in {}/{} ranks",
                    o.active_ranks, RANKS
                ));
            }
            progress.end(&o, &note);
            let log = fs::read_to_string(wd.join("log.lammps")).unwrap_or_default();
            if !o.ok {
                r.failures
                    .push(format!("{name}: {}\n{}", o.error, runner::tail(&log, 6)));
                continue;
            }
            let th = thermo(&log);
            if th.is_empty() {
                r.failures.push(format!(
                    "{name}: no thermo output in {}",
                    wd.join("log.lammps").display()
                ));
                continue;
            }
            r.wall.entry(v).or_default().push(o.secs);
            if let Some(lt) = loop_time(&log) {
                r.loop_time.entry(v).or_default().push(lt);
            }
            match &reference {
                None => {
                    r.thermo_rows = th.len();
                    reference = Some((name.clone(), th));
                }
                Some((ref_name, ref_th)) => {
                    if *ref_th != th && r.difference.is_none() {
                        r.identical = false;
                        let first = ref_th
                            .iter()
                            .zip(th.iter())
                            .position(|(a, b)| a != b)
                            .unwrap_or(ref_th.len().min(th.len()));
                        r.difference = Some(format!(
                            "{name} differs from {ref_name} at thermo row {}: '{}' vs '{}' ({} vs {} rows)",
                            first + 1,
                            th.get(first).map(String::as_str).unwrap_or("<none>"),
                            ref_th.get(first).map(String::as_str).unwrap_or("<none>"),
                            th.len(),
                            ref_th.len()
                        ));
                    }
                }
            }
        }
    }
    if reference.is_none() {
        r.identical = false;
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "LAMMPS (7 Jan 2022)\nStep Temp E_pair E_mol TotEng Press \n       0            3   -6.7733681            0   -2.2744931   -3.7033504 \n      50    1.6842865   -4.8082494            0   -2.2824513    5.5666131 \nLoop time of 0.27803 on 2 procs for 250 steps with 4000 atoms\n\nPerformance: 1\nStep Temp\n 250 1.6 \nLoop time of 1.5 on 2 procs\n";

    #[test]
    fn thermo_rows() {
        let t = thermo(LOG);
        assert_eq!(t.len(), 5);
        assert_eq!(t[0], "Step Temp E_pair E_mol TotEng Press");
        assert_eq!(t[1], "0 3 -6.7733681 0 -2.2744931 -3.7033504");
        assert!((loop_time(LOG).unwrap() - 1.77803).abs() < 1e-9);
    }
}
