//! OpenFOAM (simpleFoam on the pitzDaily tutorial) in the application
//! suite: the case meshed and decomposed once, the solver's residuals and
//! every final field of every subdomain as the physics compared.

use super::*;

pub(super) const OPENFOAM_DIRS: &[&str] = &["/usr/share/openfoam", "/usr/lib/openfoam/openfoam"];
pub(super) const PITZDAILY: &[&str] = &[
    "/usr/share/doc/openfoam-examples/examples/incompressible/simpleFoam/pitzDaily",
    "/usr/share/openfoam/tutorials/incompressible/simpleFoam/pitzDaily",
];

pub(super) fn prepare_openfoam(
    ctx: &Ctx,
    spec: &AppSpec,
    bin: PathBuf,
) -> Result<Prepared, String> {
    let Some(project) = OPENFOAM_DIRS
        .iter()
        .find(|d| Path::new(d).join("etc/controlDict").is_file())
    else {
        return Err(not_installed(spec, "OpenFOAM's etc/controlDict"));
    };
    let Some(tutorial) = PITZDAILY
        .iter()
        .map(Path::new)
        .find(|d| d.join("system/blockMeshDict").is_file())
    else {
        return Err(
            "the pitzDaily tutorial (simpleFoam) not found: Debian package \
                    openfoam-examples not installed"
                .into(),
        );
    };
    let (Some(block_mesh), Some(decompose)) = (which("blockMesh"), which("decomposePar")) else {
        return Err(not_installed(spec, "blockMesh / decomposePar"));
    };
    let env = vec![("WM_PROJECT_DIR".to_string(), project.to_string())];
    // The case, meshed and decomposed once (serial), then copied into
    // every run's directory.
    let case = ctx.dir.join("case");
    let _ = fs::remove_dir_all(&case);
    copy(tutorial, &case)?;
    let vars = [
        ("ITERS", OPENFOAM_ITERS.to_string()),
        ("RANKS", ctx.ranks.to_string()),
    ];
    for f in ["controlDict", "decomposeParDict"] {
        let t = template(&ctx.src.join("openfoam").join(f), &vars)?;
        write(&case.join("system").join(f), &t)?;
    }
    for (tool, log) in [
        (&block_mesh, "openfoam-blockMesh"),
        (&decompose, "openfoam-decomposePar"),
    ] {
        let mut cmd = Command::new(tool);
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let o = ctx.runner.run_plain_in(cmd, log, &case);
        if !o.ok {
            return Err(format!(
                "{} failed ({}):\n{}",
                tool.display(),
                o.error,
                runner::tail(&format!("{}{}", o.stdout, o.stderr), 6)
            ));
        }
    }
    let mut files = vec![
        (case.join("system"), "system".to_string()),
        (case.join("constant"), "constant".to_string()),
    ];
    for k in 0..ctx.ranks {
        let p = format!("processor{k}");
        if !case.join(&p).is_dir() {
            return Err(format!("decomposePar made no {p} in {}", case.display()));
        }
        files.push((case.join(&p), p));
    }
    Ok(Prepared {
        bin,
        args: vec!["-parallel".into()],
        env,
        files,
        what: format!(
            "simpleFoam pitzDaily (12225 cells, k-epsilon), {OPENFOAM_ITERS} SIMPLE iterations, \
             decomposePar simple ({} 1 1)",
            ctx.ranks
        ),
    })
}

/// The solver lines of an OpenFOAM log (without the clock lines).
pub fn openfoam_log(out: &str) -> Vec<String> {
    out.lines()
        .map(str::trim)
        .filter(|t| {
            t.starts_with("Time = ")
                || t.contains("Solving for")
                || t.starts_with("time step continuity errors")
                || t.contains("solution converged")
        })
        .map(norm)
        .collect()
}

pub(super) fn extract_openfoam(out: &str, wd: &Path, ranks: usize) -> Result<Extract, String> {
    let mut physics = openfoam_log(out);
    if !physics.iter().any(|l| l.contains("Solving for")) {
        return Err("no solver lines ('Solving for') in simpleFoam's output".into());
    }
    if !out.lines().any(|l| l.trim() == "End") {
        return Err("simpleFoam did not reach 'End'".into());
    }
    for k in 0..ranks {
        let pdir = wd.join(format!("processor{k}"));
        // the latest time directory
        let last = fs::read_dir(&pdir)
            .map_err(|e| format!("cannot read {}: {e}", pdir.display()))?
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                n.parse::<f64>().ok().map(|t| (t, n))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let Some((t, tname)) = last.filter(|x| x.0 > 0.0) else {
            return Err(format!("no time directory written in {}", pdir.display()));
        };
        let _ = t;
        let tdir = pdir.join(&tname);
        let mut fields: Vec<PathBuf> = fs::read_dir(&tdir)
            .map_err(|e| format!("cannot read {}: {e}", tdir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        fields.sort();
        for f in fields {
            let text =
                fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            let fname = f
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            physics.push(format!("== processor{k}/{tname}/{fname}"));
            physics.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(norm),
            );
        }
    }
    Ok(Extract {
        physics,
        metrics: vec![],
    })
}
