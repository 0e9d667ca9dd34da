//! LAMMPS in the application suite: the input (LAMMPS's own
//! examples/melt physics on a small box, bench/apps/lammps/in.melt), and
//! what a run printed (the thermo table; loop time).

use super::*;

/// fcc unit cells per edge of the LAMMPS box: 4^3 cells, 256 atoms.
pub const LAMMPS_CELLS: usize = 4;

pub(super) fn prepare_lammps(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    let input = ctx.src.join("lammps/in.melt");
    if !input.is_file() {
        return Err(format!("{} missing", input.display()));
    }
    let steps = ctx.opts.app_steps;
    // About 30 thermo rows to compare, at least 100 steps apart.
    let every = (steps / 30 / 100 * 100).max(100);
    let cells = LAMMPS_CELLS;
    let var = |k: &str, v: String| ["-var".to_string(), k.to_string(), v];
    let mut args = vec!["-in".to_string(), input.to_string_lossy().into()];
    args.extend(var("cells", cells.to_string()));
    args.extend(var("steps", steps.to_string()));
    args.extend(var("every", every.to_string()));
    args.extend(["-log", "log.lammps", "-screen", "none"].map(String::from));
    Ok(Prepared {
        args,
        what: format!(
            "{} 3d Lennard-Jones melt (examples/melt on {cells}^3 fcc cells: {} atoms), \
             {steps} steps",
            bin.file_name().unwrap_or_default().to_string_lossy(),
            4 * cells * cells * cells
        ),
        bin,
        env: vec![],
        files: vec![],
    })
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
            rows.push(norm(t));
            continue;
        }
        if t.starts_with("Loop time of") {
            inside = false;
            continue;
        }
        if inside && !t.is_empty() {
            rows.push(norm(t));
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

pub(super) fn extract_lammps(log: &str) -> Result<Extract, String> {
    let physics = thermo(log);
    if physics.is_empty() {
        return Err("no thermo table in log.lammps".into());
    }
    let mut metrics = vec![];
    if let Some(t) = loop_time(log) {
        metrics.push((AppMetric::new("loop", "LAMMPS loop time", "s", false), t));
    }
    Ok(Extract { physics, metrics })
}
