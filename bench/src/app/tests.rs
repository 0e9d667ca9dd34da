//! Unit tests of the application suite's parsers and comparisons.

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

#[test]
fn grid_shapes() {
    assert_eq!(grid(2), (1, 2));
    assert_eq!(grid(4), (2, 2));
    assert_eq!(grid(3), (1, 3));
    assert_eq!(grid(6), (2, 3));
}

const HPCC: &str = "Found 0 errors in 524288 locations (passed).\n\
TIME   M     N    MB  NB  P   Q     TIME   CHECK   GB/s   RESID\n\
WALL   500   500  80  80   1   2     0.04 PASSED    0.050  0.00\n\
CPU    500   500  80  80   1   2     0.00 PASSED    0.517  0.00\n\
5 tests completed and passed residual checks.\n\
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0072510 ...... PASSED\n\
Begin of Summary section.\nSuccess=1\nHPL_Tflops=0.000544117\nPTRANS_residual=0\n\
MaxPingPongLatency_usec=0.36\nEnd of Summary section.\n";

#[test]
fn hpcc_parse() {
    let v = hpcc_verification(HPCC);
    assert_eq!(v[0], "Found 0 errors in 524288 locations (passed).");
    assert_eq!(v[1], "PTRANS WALL 500 500 80 80 1 2 PASSED 0.00");
    assert_eq!(v[2], "5 tests completed and passed residual checks.");
    assert!(v[3].starts_with("||Ax-b||"));
    assert_eq!(v[4], "Success=1");
    assert_eq!(v[5], "PTRANS_residual=0");
    // a CPU row missing (CPU time 0) is no difference
    let no_cpu: String = HPCC
        .lines()
        .filter(|l| !l.starts_with("CPU"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(hpcc_verification(&no_cpu), v);
    let x = extract_hpcc(HPCC).unwrap();
    let hpl = x.metrics.iter().find(|m| m.0.key == "HPL_Tflops").unwrap();
    assert!((hpl.1 - 0.544117).abs() < 1e-9);
    let lat = x
        .metrics
        .iter()
        .find(|m| m.0.key.starts_with("MaxPing"))
        .unwrap();
    assert!(!lat.0.higher_is_better);
}

#[test]
fn qe_parse() {
    let out = "     total energy              =     -63.32367433 Ry\n\
 estimated scf accuracy    <       0.06 Ry\n\
 total cpu time spent up to now is        1.2 secs\n\
!    total energy              =     -63.33809343 Ry\n\
 atom    1 type  1   force =     0.00697661    0.00458985    0.00458985\n\
 Total force =     0.034096     Total SCF correction =     0.000003\n\
      total   stress  (Ry/bohr**3)                   (kbar)     P=       -8.61\n\
  -0.00005852   0.00000000   0.00000000           -8.61        0.00        0.00\n\
   0.00000000  -0.00005852   0.00000000            0.00       -8.61        0.00\n\
   0.00000000   0.00000000  -0.00005852            0.00        0.00       -8.61\n\
 PWSCF        :      6.65s CPU  1m41.80s WALL\n";
    let p = qe_physics(out);
    assert_eq!(p.len(), 9);
    assert_eq!(p[2], "! total energy = -63.33809343 Ry");
    assert!((qe_wall(out).unwrap() - 101.8).abs() < 1e-9);
    assert!(extract_qe(out).is_ok());
}

#[test]
fn cp2k_parse() {
    let out = "  SCF WAVEFUNCTION OPTIMIZATION\n\
  Step     Update method      Time    Convergence         Total energy    Change\n\
  ------------------------------------------------------------------------------\n\
 1 P_Mix/Diag. 0.40E+00    2.5     0.68561837       -16.9634186472 -1.70E+01\n\
10 DIIS/Diag.  0.25E-05   14.8     0.00000190       -17.2196584865 -2.62E-09\n\
  Total energy:                                               -17.21965848654233\n\
 ENERGY| Total FORCE_EVAL ( QS ) energy [a.u.]:              -17.219658486542333\n\
 some timing 1.5\n\
 ATOMIC FORCES in [a.u.]\n\
  1      1      O           0.00000000     0.00000000    -0.02004098\n\
 SUM OF ATOMIC FORCES           0.00000000     0.00000000    -0.00474591     0.00474591\n\
 CP2K                                 1  1.0    0.250    0.265   44.295   44.296\n";
    let p = cp2k_physics(out);
    assert_eq!(
        p[2],
        "1 P_Mix/Diag. 0.40E+00 0.68561837 -16.9634186472 -1.70E+01"
    );
    assert_eq!(
        p[3],
        "10 DIIS/Diag. 0.25E-05 0.00000190 -17.2196584865 -2.62E-09"
    );
    assert!(p.iter().all(|l| !l.contains("timing")));
    assert!(p.last().unwrap().starts_with("SUM OF ATOMIC FORCES"));
    let x = extract_cp2k(out).unwrap();
    assert_eq!(x.metrics[0].1, 44.296);
}

#[test]
fn gromacs_parse() {
    let log = "           Step           Time\n              0        0.00000\n\n\
   Energies (kJ/mol)\n        LJ (SR)   Coulomb (SR)\n    3.79644e+03   -2.32391e+04\n\n\
 Performance stuff\n               Core t (s)   Wall t (s)        (%)\n\
   Time:       68.320       34.179      199.9\n";
    let p = gromacs_physics(log);
    assert_eq!(
        p,
        [
            "Step Time",
            "0 0.00000",
            "Energies (kJ/mol)",
            "LJ (SR) Coulomb (SR)",
            "3.79644e+03 -2.32391e+04"
        ]
    );
    assert_eq!(extract_gromacs(log).unwrap().metrics[0].1, 34.179);
}

#[test]
fn openfoam_parse() {
    let out = "Time = 1\n\nsmoothSolver:  Solving for Ux, Initial residual = 1, Final residual = 0.0538101, No Iterations 1\nExecutionTime = 0.24 s  ClockTime = 3 s\n";
    assert_eq!(openfoam_log(out).len(), 2);
}

fn runs(v: &[(&str, Variant, &[&str])]) -> Vec<(String, Variant, Vec<String>)> {
    v.iter()
        .map(|(n, var, l)| {
            (
                n.to_string(),
                *var,
                l.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn compare_exact_and_spread() {
    use Variant::*;
    let same = runs(&[
        ("s1", Stock, &["E = 1.5", "x"]),
        ("h1", Heapmpi, &["E = 1.5", "x"]),
    ]);
    let v = compare(&same, true);
    assert!(v.ok && v.heap_identical && v.stock_identical && v.difference.is_none());
    let diff = runs(&[
        ("s1", Stock, &["E = 1.5", "x"]),
        ("h1", Heapmpi, &["E = 1.6", "x"]),
    ]);
    let v = compare(&diff, true);
    assert!(!v.ok);
    assert!(v.difference.unwrap().contains("line 1"));
    assert!((v.max_rel_heap - 0.1 / 1.6).abs() < 1e-12);
    // spread mode: within [1.5, 1.7] passes, outside fails
    let spread = runs(&[
        ("s1", Stock, &["E = 1.5,"]),
        ("s2", Stock, &["E = 1.7,"]),
        ("h1", Heapmpi, &["E = 1.6,"]),
    ]);
    let v = compare(&spread, false);
    assert!(v.ok && !v.heap_identical && !v.stock_identical);
    let out = runs(&[
        ("s1", Stock, &["E = 1.5"]),
        ("s2", Stock, &["E = 1.5"]),
        ("h1", Heapmpi, &["E = 1.6"]),
    ]);
    assert!(!compare(&out, false).ok);
    let words = runs(&[("s1", Stock, &["PASSED"]), ("h1", Heapmpi, &["FAILED"])]);
    assert!(!compare(&words, false).ok);
    assert!(!compare(&runs(&[("h1", Heapmpi, &["a"])]), true).ok);
}
