//! GROMACS (gmx_mpi mdrun) in the application suite: the system built
//! once (gmx solvate, grompp), the run, and the energies compared.

use super::*;

pub(super) fn prepare_gromacs(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    // serial tools: gmx (or gmx_mpi as a singleton)
    let gmx = which("gmx").unwrap_or_else(|| bin.clone());
    let prep = ctx.dir.join("prep");
    let _ = fs::remove_dir_all(&prep);
    fs::create_dir_all(&prep).map_err(|e| format!("cannot create {}: {e}", prep.display()))?;
    let step = |args: &[&str], log: &str| -> Result<String, String> {
        let mut cmd = Command::new(&gmx);
        cmd.args(args).env("GMX_MAXBACKUP", "-1");
        let o = ctx.runner.run_plain_in(cmd, log, &prep);
        let text = format!("{}{}", o.stdout, o.stderr);
        if !o.ok {
            return Err(format!(
                "{} {} failed ({}):\n{}",
                gmx.display(),
                args.join(" "),
                o.error,
                runner::tail(&text, 8)
            ));
        }
        Ok(text)
    };
    let mut solvate = vec!["solvate", "-cs", "spc216.gro", "-box"];
    solvate.extend(GROMACS_BOX);
    solvate.extend(["-o", "water.gro"]);
    let text = step(&solvate, "gromacs-solvate")?;
    let nsol = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Number of solvent molecules:")
                .and_then(|r| r.trim().parse::<usize>().ok())
        })
        .ok_or("gmx solvate did not say how many water molecules it placed")?;
    let top = template(
        &ctx.src.join("gromacs/topol.top"),
        &[("NSOL", nsol.to_string())],
    )?;
    write(&prep.join("topol.top"), &top)?;
    let mdp = template(
        &ctx.src.join("gromacs/md.mdp"),
        &[("STEPS", GROMACS_STEPS.to_string())],
    )?;
    write(&prep.join("md.mdp"), &mdp)?;
    step(
        &[
            "grompp",
            "-f",
            "md.mdp",
            "-c",
            "water.gro",
            "-p",
            "topol.top",
            "-o",
            "md.tpr",
        ],
        "gromacs-grompp",
    )?;
    Ok(Prepared {
        bin,
        args: [
            "mdrun",
            "-s",
            "md.tpr",
            "-g",
            "md.log",
            "-ntomp",
            "1",
            "-npme",
            "0",
            "-dlb",
            "no",
            "-notunepme",
            "-reprod",
            "-nb",
            "cpu",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        env: vec![("GMX_MAXBACKUP".into(), "-1".into())],
        files: vec![(prep.join("md.tpr"), "md.tpr".into())],
        what: format!(
            "gmx_mpi mdrun: {nsol} SPC/E waters ({} atoms), PME, {GROMACS_STEPS} steps of 2 fs, \
             domain decomposition, -reprod -dlb no",
            nsol * 3
        ),
    })
}

/// The energy blocks of an md.log (every nstlog step and the averages),
/// with their step and time.
pub fn gromacs_physics(log: &str) -> Vec<String> {
    let mut v = vec![];
    let mut block = false;
    let mut step_next = false;
    for l in log.lines() {
        let t = l.trim();
        if step_next {
            v.push(norm(t));
            step_next = false;
            continue;
        }
        if t == "Step Time" || norm(t) == "Step Time" {
            v.push("Step Time".into());
            step_next = true;
            continue;
        }
        if t.starts_with("Energies (") {
            block = true;
            v.push(norm(t));
            continue;
        }
        if block {
            if t.is_empty() {
                block = false;
            } else {
                v.push(norm(t));
            }
        }
    }
    v
}

pub(super) fn extract_gromacs(log: &str) -> Result<Extract, String> {
    let physics = gromacs_physics(log);
    if !physics.iter().any(|l| l.starts_with("Energies")) {
        return Err("no energies in md.log".into());
    }
    let mut metrics = vec![];
    // "       Time:       68.320       34.179      199.9"
    if let Some(t) = log
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() == 4 && f[0] == "Time:")
        .and_then(|f| f[2].parse::<f64>().ok())
    {
        metrics.push((
            AppMetric::new("mdrun", "mdrun wall (own timer)", "s", false),
            t,
        ));
    }
    Ok(Extract { physics, metrics })
}
