//! CP2K (cp2k.psmp) in the application suite: the input
//! (bench/apps/cp2k/h2o.inp with the data directory), its own timer and the
//! physics compared (SCF steps, energy terms, forces).

use super::*;

pub(super) const CP2K_DATA_DIRS: &[&str] = &["/usr/share/cp2k", "/usr/share/cp2k/data"];

pub(super) fn prepare_cp2k(ctx: &Ctx, spec: &AppSpec, bin: PathBuf) -> Result<Prepared, String> {
    let data = std::env::var("CP2K_DATA_DIR")
        .ok()
        .into_iter()
        .chain(CP2K_DATA_DIRS.iter().map(|s| s.to_string()))
        .find(|d| {
            Path::new(d).join("BASIS_MOLOPT").is_file()
                && Path::new(d).join("GTH_POTENTIALS").is_file()
        });
    let Some(data) = data else {
        return Err(not_installed(spec, "CP2K's BASIS_MOLOPT / GTH_POTENTIALS"));
    };
    let input = ctx.src.join("cp2k/h2o.inp");
    if !input.is_file() {
        return Err(format!("{} missing", input.display()));
    }
    Ok(Prepared {
        bin,
        args: vec!["-i".into(), "h2o.inp".into(), "-o".into(), "h2o.out".into()],
        env: vec![("CP2K_DATA_DIR".into(), data)],
        files: vec![(input, "h2o.inp".into())],
        what: "cp2k.psmp Quickstep energy + forces: water dimer, PBE, DZVP-MOLOPT-SR-GTH, \
               280 Ry, 9 A box"
            .into(),
    })
}

/// The SCF and forces of a CP2K output, without the per-step timings.
pub fn cp2k_physics(out: &str) -> Vec<String> {
    let mut v = vec![];
    let mut scf = false;
    let mut forces = false;
    for l in out.lines() {
        let t = l.trim();
        if t.contains("SCF WAVEFUNCTION OPTIMIZATION") {
            scf = true;
        }
        if t.starts_with("ATOMIC FORCES in") {
            forces = true;
        }
        if scf {
            let f: Vec<&str> = t.split_whitespace().collect();
            if f.first().is_some_and(|x| x.parse::<u64>().is_ok()) {
                // a step line: drop its time column (F6.1: one decimal)
                let kept: Vec<&str> = f
                    .into_iter()
                    .filter(|x| {
                        let mut it = x.split('.');
                        !matches!((it.next(), it.next(), it.next()),
                            (Some(a), Some(b), None) if !a.is_empty()
                                && a.chars().all(|c| c.is_ascii_digit())
                                && b.len() == 1
                                && b.chars().all(|c| c.is_ascii_digit()))
                    })
                    .collect();
                v.push(kept.join(" "));
            } else if !t.is_empty() && !t.starts_with("----") {
                v.push(norm(t));
            }
            if t.starts_with("ENERGY| Total FORCE_EVAL") {
                scf = false;
            }
        } else if forces {
            if !t.is_empty() {
                v.push(norm(t));
            }
            if t.starts_with("SUM OF ATOMIC FORCES") {
                forces = false;
            }
        }
    }
    v
}

pub(super) fn extract_cp2k(out: &str) -> Result<Extract, String> {
    let physics = cp2k_physics(out);
    if !physics
        .iter()
        .any(|l| l.starts_with("ENERGY| Total FORCE_EVAL"))
    {
        return Err("no 'ENERGY| Total FORCE_EVAL' line in h2o.out".into());
    }
    let mut metrics = vec![];
    // timing report: " CP2K   1  1.0   0.250   0.265   44.295   44.296"
    if let Some(t) = out
        .lines()
        .rev()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() == 7 && f[0] == "CP2K")
        .and_then(|f| f[6].parse::<f64>().ok())
    {
        metrics.push((
            AppMetric::new("cp2k", "CP2K total (own timer)", "s", false),
            t,
        ));
    }
    Ok(Extract { physics, metrics })
}
