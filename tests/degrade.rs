//! Degradation tests: when the shared heap cannot be had as asked (address
//! conflicts, a small `/dev/shm`, an address-space limit), the job still runs
//! correctly, with at most one clear warning, under real `mpirun`.
//!
//! Run: `cargo test --release --test degrade`.

use heapmpi_testkit as common;

use common::*;
use std::process::Command;

/// Runs the case like `run_mpi`, but through `sh -c SCRIPT sh LAUNCHER...`,
/// where `script` ends by running `"$@"`; what it sets up first (a ulimit, a
/// private mount) applies to the launcher and the ranks alike.
fn run_wrapped(case: &Case, script: &str) -> Result<Output, String> {
    let prog = compile(case.program, case.flavour, case.mode)?;
    let inner = mpi_command(case.flavour, case.mode, case.nranks, &prog, case.args);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg("sh")
        .arg(inner.get_program())
        .args(inner.get_args())
        .current_dir(repo_root());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    for (k, v) in case.env {
        cmd.env(k, v);
    }
    run_command(cmd, job_timeout())
}

fn one_warning_containing(out: &Output, needle: &str) -> Result<(), String> {
    let w = warning_lines(&out.stderr);
    if w.len() != 1 || !w[0].contains(needle) {
        return Err(format!(
            "expected exactly one warning mentioning {needle:?}, got {w:?}"
        ));
    }
    Ok(())
}

#[test]
fn address_conflicts_are_retried_elsewhere() {
    let mut fl = Failures::new();
    let env = [("HEAPMPI_TEST_ADDR_CONFLICTS", "3"), ("HEAPMPI_STATS", "1")];
    for (f, mode) in heapmpi_matrix() {
        fl.run(Case::new("share_pointers", f, mode, 2).env(&env), |o| {
            check_success(o)?;
            check_status_lines(o, 2, HeapState::Active)?;
            // Three refused proposals, then the one that succeeds; under
            // ASLR a proposal is now and then taken by chance in some rank,
            // which adds rounds: at least 4, the same in every rank.
            let rounds = stats_numbers(&o.stderr, "rounds")?;
            if rounds.len() != 2 || rounds[0] < 4 || rounds[0] != rounds[1] {
                return Err(format!(
                    "expected the same number of rounds (at least 4) in both ranks, got {rounds:?}"
                ));
            }
            if !warning_lines(&o.stderr).is_empty() {
                return Err("a retried address needs no warning".into());
            }
            Ok(())
        });
    }
    fl.finish("address_conflicts_are_retried_elsewhere");
}

#[test]
fn no_common_address_runs_unaccelerated_with_one_warning() {
    let mut fl = Failures::new();
    let env = [
        ("HEAPMPI_TEST_ADDR_CONFLICTS", "1000"),
        ("HEAPMPI_STATS", "1"),
    ];
    for f in available_flavours() {
        let n = 4;
        fl.run(
            Case::new("alloc_stress", f, Mode::Preload, n).env(&env),
            |o| {
                check_ok(o, &per_rank_lines(n, "ok"))?;
                check_status_lines(o, n, HeapState::Inactive)?;
                one_warning_containing(o, "no address range free")
            },
        );
    }
    fl.finish("no_common_address_runs_unaccelerated_with_one_warning");
}

/// Fails `test` unless this process may make a private mount namespace.
fn require_unshare_mounts(test: &str) {
    assert!(
        can_unshare_mounts(),
        "{test} cannot run: `unshare --mount` failed (the test suite runs as root on Linux)"
    );
}

/// Whether this process may make a private mount namespace (root, unshare).
fn can_unshare_mounts() -> bool {
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs the job's launcher and ranks in a private mount namespace whose
/// `/dev/shm` is a tmpfs of `size`; after the job, lists what heapmpi
/// left there on stdout ("left: ..." lines).
fn dev_shm_of(size: &str) -> String {
    format!(
        "exec unshare --mount --propagation private sh -c \
         'mount -t tmpfs -o size={size} tmpfs /dev/shm && \"$@\"; rc=$?; \
         for f in /dev/shm/heapmpi-*; do [ -e \"$f\" ] && echo \"left: $f\"; done; \
         exit $rc' sh \"$@\""
    )
}

#[test]
fn small_dev_shm_falls_back_to_private_memory() {
    require_unshare_mounts("small_dev_shm_falls_back_to_private_memory");
    let mut fl = Failures::new();
    // heap_full allocates 64 MiB per rank; a 48 MiB /dev/shm cannot hold
    // both ranks' heaps (the MPI libraries' own segments need a few MiB),
    // when the heap lives there (HEAPMPI_SHM=posix; by default it is a
    // memfd, see the next test).
    const POSIX: [(&str, &str); 2] = [("HEAPMPI_STATS", "1"), ("HEAPMPI_SHM", "posix")];
    for (f, mode) in heapmpi_matrix() {
        let n = 2;
        let case = Case::new("heap_full", f, mode, n).env(&POSIX);
        let name = format!("{} /dev/shm=48M", case.name());
        fl.record(&name, run_wrapped(&case, &dev_shm_of("48m")), |o| {
            check_ok(o, &per_rank_lines(n, "allocated 64 MiB ok"))?;
            check_status_lines(o, n, HeapState::Active)?;
            let fb = stats_numbers(&o.stderr, "fallbacks")?;
            if fb.iter().sum::<u64>() == 0 {
                return Err(format!("expected fallbacks > 0, got {fb:?}"));
            }
            let w = warning_lines(&o.stderr);
            if w.is_empty() || w.len() > n || !w.iter().all(|l| l.contains("/dev/shm")) {
                return Err(format!(
                    "expected 1..={n} warnings naming /dev/shm, got {w:?}"
                ));
            }
            Ok(())
        });
    }
    fl.finish("small_dev_shm_falls_back_to_private_memory");
}

/// Docker gives a container a 64 MiB `/dev/shm`. The heap's memory is a
/// memfd, not a file there: 8 ranks (both MPIs, both ways in) run with
/// every rank active and no warning, `heap_full`'s 64 MiB per rank at 2
/// ranks come from the heap (no fallback), and nothing of heapmpi is in
/// that `/dev/shm` after the job. With the heap in `/dev/shm` (the POSIX
/// object heapmpi used before) MPICH ran 8 ranks unaccelerated there.
#[test]
fn container_dev_shm_of_64_mib() {
    require_unshare_mounts("container_dev_shm_of_64_mib");
    let mut fl = Failures::new();
    let script = dev_shm_of("64m");
    for (f, mode) in heapmpi_matrix() {
        let n = 8;
        let case = Case::new("share_pointers", f, mode, n).env(&STATS);
        let name = format!("{} /dev/shm=64M", case.name());
        fl.record(&name, run_wrapped(&case, &script), |o| {
            check_success(o)?;
            check_status_lines(o, n, HeapState::Active)?;
            let w = warning_lines(&o.stderr);
            if !w.is_empty() {
                return Err(format!("warnings: {w:?}"));
            }
            if let Some(l) = o.stdout.lines().find(|l| l.starts_with("left: ")) {
                return Err(format!("{l} in the container's /dev/shm after the job"));
            }
            Ok(())
        });
        let n = 2;
        let case = Case::new("heap_full", f, mode, n).env(&STATS);
        let name = format!("{} /dev/shm=64M", case.name());
        fl.record(&name, run_wrapped(&case, &script), |o| {
            check_ok(o, &per_rank_lines(n, "allocated 64 MiB ok"))?;
            check_status_lines(o, n, HeapState::Active)?;
            let fb = stats_numbers(&o.stderr, "fallbacks")?;
            if fb.iter().sum::<u64>() != 0 {
                return Err(format!("fallbacks to private memory: {fb:?}"));
            }
            Ok(())
        });
    }
    fl.finish("container_dev_shm_of_64_mib");
}

#[test]
fn address_space_limit_shrinks_the_heap() {
    let mut fl = Failures::new();
    for (f, mode) in heapmpi_matrix() {
        let n = 2;
        let case = Case::new("share_pointers", f, mode, n).env(&STATS);
        let name = format!("{} ulimit -v 8000000", case.name());
        let res = run_wrapped(&case, "ulimit -v 8000000; exec \"$@\"");
        fl.record(&name, res, |o| {
            check_success(o)?;
            check_status_lines(o, n, HeapState::Active)?;
            let parts = stats_values(&o.stderr, "part_size");
            if parts.len() != n || parts.iter().any(|p| p.starts_with("64.0")) {
                return Err(format!("expected a shrunk part_size, got {parts:?}"));
            }
            one_warning_containing(o, "ulimit -v")
        });
    }
    fl.finish("address_space_limit_shrinks_the_heap");
}

/// Ranks launched with different point-to-point settings (an MPMD job, a
/// wrapper script that sets variables per rank) must still speak one
/// protocol: `HEAPMPI_P2P=0` or `HEAPMPI_QUEUE=lock` on one rank applies to
/// all (agreed in `MPI_Init`). Before the agreement the first hung and the
/// second corrupted messages.
#[test]
fn point_to_point_switches_set_on_one_rank_apply_to_all() {
    let mut fl = Failures::new();
    let n = 2;
    for f in available_flavours() {
        for (var, p2p_traffic) in [("HEAPMPI_QUEUE=lock", true), ("HEAPMPI_P2P=0", false)] {
            let mode = Mode::Preload;
            let case = Case::new("p2p_order", f, mode, n).env(&STATS);
            // Only world rank 0 gets the setting.
            let script = format!(
                "r=${{OMPI_COMM_WORLD_RANK:-$PMI_RANK}}; \
                 if [ \"$r\" = 0 ]; then export {var}; fi; exec \"$@\""
            );
            let name = format!("{} with {var} on rank 0 only", case.name());
            fl.record(&name, run_mpi_per_rank(&case, &script), |o| {
                check_success(o)?;
                for r in 0..n {
                    if !o.stdout.contains(&format!("rank {r}: order ok")) {
                        return Err(format!("rank {r} did not report \"order ok\""));
                    }
                }
                // "immediate=<messages>/<bytes>B", only while p2p is on.
                let imm: Vec<u64> = stats_values(&o.stderr, "immediate")
                    .iter()
                    .filter_map(|v| v.split('/').next()?.parse().ok())
                    .collect();
                let want = if p2p_traffic { n } else { 0 };
                if imm.len() != want || imm.contains(&0) {
                    return Err(format!(
                        "immediate messages per rank {imm:?}: expected some on {want} ranks"
                    ));
                }
                Ok(())
            });
        }
    }
    fl.finish("point_to_point_switches_set_on_one_rank_apply_to_all");
}
