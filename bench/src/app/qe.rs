//! Quantum ESPRESSO (pw.x) in the application suite: the input
//! (bench/apps/qe/si8.in with the pseudopotential directory), its wall time
//! and the physics compared (energies, forces, stress).

use super::*;

pub(super) const QE_PSEUDO_DIRS: &[&str] = &[
    "/usr/share/espresso/pseudo",
    "/usr/share/quantum-espresso/pseudo",
];

pub(super) fn prepare_qe(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    let Some(pseudo) = QE_PSEUDO_DIRS
        .iter()
        .find(|d| Path::new(d).join("Si.pz-vbc.UPF").is_file())
    else {
        return Err(
            "pseudopotential Si.pz-vbc.UPF not found in /usr/share/espresso/pseudo: \
                    Debian package quantum-espresso-data not installed"
                .into(),
        );
    };
    let text = template(
        &ctx.src.join("qe/si8.in"),
        &[("PSEUDO_DIR", pseudo.to_string())],
    )?;
    let input = ctx.dir.join("si8.in");
    write(&input, &text)?;
    Ok(Prepared {
        bin,
        args: vec!["-in".into(), "si8.in".into()],
        env: vec![],
        files: vec![(input, "si8.in".into())],
        what: "pw.x SCF + forces + stress: Si 8-atom cubic cell, LDA, ecutwfc 20 Ry, \
               2x2x2 k-points, FFT 30^3 over the ranks"
            .into(),
    })
}

/// Seconds from QE's "PWSCF : 6.65s CPU 41.80s WALL" (also "1m41.35s",
/// "1h 2m").
pub(super) fn qe_wall(out: &str) -> Option<f64> {
    let l = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("PWSCF") && l.contains("WALL"))?;
    let mid = l.split("CPU").nth(1)?.split("WALL").next()?;
    let mut secs = 0.0;
    let mut num = String::new();
    for c in mid.chars() {
        match c {
            '0'..='9' | '.' => num.push(c),
            'h' | 'm' | 's' => {
                let x: f64 = num.parse().ok()?;
                secs += x * match c {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => {}
        }
    }
    Some(secs)
}

pub fn qe_physics(out: &str) -> Vec<String> {
    let mut v = vec![];
    let mut stress = 0;
    for l in out.lines() {
        let t = l.trim();
        if stress > 0 {
            v.push(norm(t));
            stress -= 1;
            continue;
        }
        if t.contains("total   stress") {
            v.push(norm(t));
            stress = 3;
        } else if t.contains("total energy")
            || t.contains("estimated scf accuracy")
            || t.contains("force =")
            || t.starts_with("Total force")
            || t.contains("contribution =")
            || t.contains("highest occupied")
            || t.contains("Fermi energy")
            || t.starts_with("convergence has been achieved")
        {
            v.push(norm(t));
        }
    }
    v
}

pub(super) fn extract_qe(out: &str) -> Result<Extract, String> {
    let physics = qe_physics(out);
    if !physics.iter().any(|l| l.starts_with("! total energy")) {
        return Err("no final total energy ('!    total energy') in pw.x's output".into());
    }
    let mut metrics = vec![];
    if let Some(t) = qe_wall(out) {
        metrics.push((
            AppMetric::new("pwscf", "PWSCF wall (own timer)", "s", false),
            t,
        ));
    }
    Ok(Extract { physics, metrics })
}
