//! What copper writes: `copper bench`'s build script and output
//! directory, `--write` through links, with modes, hard links and edits
//! made during the run, and outputs that would replace an input.

use super::*;

// ---- command injection in `copper bench` ----

#[test]
fn bench_build_script_does_not_run_a_file_name() {
    let scratch_dir = scratch("bench-inject");
    let dir = scratch_dir.path();
    copy_testdata("saxpy", dir, "$(touch PWNED)");
    let m = run(
        "bench on `$(touch PWNED).cu`",
        dir,
        &["bench", "$(touch PWNED).cu", "--out", "out"],
        &[],
    );
    assert_eq!(code(&m), 0, "{}", text(&m.out));
    let script = dir.join("out/build-$(touch PWNED).sh");
    assert!(script.exists(), "{}", text(&m.out));
    // A stand-in compiler: the script must run to its end without running
    // anything the name says.
    let built = Command::new("sh")
        .arg(&script)
        .env("NVCC", "true")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built));
    let planted: Vec<PathBuf> = files_below(dir)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "PWNED"))
        .collect();
    assert!(planted.is_empty(), "the script ran the name: {planted:?}");
    assert!(
        String::from_utf8_lossy(&built.stdout).contains("$(touch PWNED)_bench"),
        "{}",
        text(&built)
    );
}

#[test]
fn bench_refuses_a_newline_in_a_file_name() {
    let scratch_dir = scratch("bench-newline");
    let dir = scratch_dir.path();
    copy_testdata("saxpy", dir, "a\n#include <evil>\nb");
    let m = run(
        "bench on a name with a newline",
        dir,
        &["bench", "a\n#include <evil>\nb.cu", "--out", "out"],
        &[],
    );
    assert_eq!(code(&m), 2, "{}", text(&m.out));
    assert!(stderr(&m).contains("control character"), "{}", stderr(&m));
    assert!(!dir.join("out").exists(), "nothing is written");
}

// ---- items 3, 4, 5: `--write` and every other file copper writes ----

#[test]
fn write_goes_through_a_symlink_to_its_target() {
    let scratch_dir = scratch("write-symlink");
    let dir = scratch_dir.path();
    std::fs::create_dir(dir.join("real")).unwrap();
    let real = copy_testdata("addSub0", &dir.join("real"), "k");
    std::fs::copy(dir.join("real/k.toml"), dir.join("link.toml")).unwrap();
    std::os::unix::fs::symlink("real/k.cu", dir.join("link.cu")).unwrap();
    let m = run(
        "optimize --write on a symlink",
        dir,
        &["optimize", "link.cu", "--write"],
        &[],
    );
    assert_eq!(code(&m), 1, "{}", text(&m.out));
    let link = std::fs::symlink_metadata(dir.join("link.cu")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    assert!(
        std::fs::read_to_string(&real).unwrap().contains("B_elem"),
        "the target is rewritten"
    );
}

#[test]
fn write_keeps_mode_and_crlf_line_endings() {
    use std::os::unix::fs::PermissionsExt;
    let scratch_dir = scratch("write-crlf");
    let dir = scratch_dir.path();
    let original = std::fs::read_to_string(root().join("testdata/addSub0.cu")).unwrap();
    let cu = dir.join("k.cu");
    std::fs::write(&cu, original.replace('\n', "\r\n")).unwrap();
    std::fs::copy(root().join("testdata/addSub0.toml"), dir.join("k.toml")).unwrap();
    std::fs::set_permissions(&cu, std::fs::Permissions::from_mode(0o640)).unwrap();
    let m = run(
        "optimize --write on a CRLF file",
        dir,
        &["optimize", "k.cu", "--write"],
        &[],
    );
    assert_eq!(code(&m), 1, "{}", text(&m.out));
    let now = std::fs::read_to_string(&cu).unwrap();
    assert!(now.contains("B_elem"));
    assert_eq!(
        now.matches('\n').count(),
        now.matches("\r\n").count(),
        "{now:?}"
    );
    let mode = std::fs::metadata(&cu).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let left: Vec<_> = files_below(dir)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains("tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn a_planted_link_at_the_old_temporary_name_is_not_followed() {
    let scratch_dir = scratch("dump-planted");
    let dir = scratch_dir.path();
    copy_testdata("saxpy", dir, "k");
    std::fs::write(dir.join("victim"), "precious").unwrap();
    // `simulate --dump` used `.NAME.copper-tmp` for its temporary file.
    std::os::unix::fs::symlink(dir.join("victim"), dir.join(".dump.json.copper-tmp")).unwrap();
    let m = run(
        "simulate --dump beside a planted link",
        dir,
        &["simulate", "k.cu", "--dump", "dump.json"],
        &[],
    );
    assert_eq!(code(&m), 0, "{}", text(&m.out));
    assert_eq!(
        std::fs::read_to_string(dir.join("victim")).unwrap(),
        "precious"
    );
    assert!(!std::fs::symlink_metadata(dir.join("dump.json"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn an_edit_made_during_the_run_is_not_overwritten() {
    let scratch_dir = scratch("lost-edit");
    let dir = scratch_dir.path();
    let cu = copy_testdata("addSub0", dir, "k");
    let mut text_now = std::fs::read_to_string(&cu).unwrap();
    text_now.push_str(&slow_kernel(28));
    std::fs::write(&cu, &text_now).unwrap();
    let edited = format!("{text_now}// the user's edit\n");
    let gone = copy_testdata("addSub0", dir, "gone");
    let mut gone_text = std::fs::read_to_string(&gone).unwrap();
    gone_text.push_str(&slow_kernel(28));
    std::fs::write(&gone, &gone_text).unwrap();
    let edit = {
        let (cu, gone, edited) = (cu.clone(), gone.clone(), edited.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            std::fs::write(&cu, edited).unwrap();
            std::fs::remove_file(&gone).unwrap();
        })
    };
    let m = run(
        "optimize --write, file edited and one deleted during the run",
        dir,
        &["optimize", "k.cu", "gone.cu", "--write", "--budget", "3"],
        &[],
    );
    edit.join().unwrap();
    assert!(
        m.wall > Duration::from_millis(1500),
        "the run was too quick for the test"
    );
    assert_eq!(
        std::fs::read_to_string(&cu).unwrap(),
        edited,
        "{}",
        text(&m.out)
    );
    assert!(!gone.exists(), "a deleted file is not re-created");
    assert!(
        stderr(&m).contains("changed after copper read it"),
        "{}",
        stderr(&m)
    );
    assert!(
        stderr(&m).contains("deleted after copper read it"),
        "{}",
        stderr(&m)
    );
}

// ---- untrusted checkouts: bench replaces links, never writes through ----

#[cfg(unix)]
#[test]
fn bench_replaces_links_in_its_output_directory() {
    use std::os::unix::fs::PermissionsExt;
    let scratch_dir = scratch("bench-links");
    let dir = scratch_dir.path();
    copy_testdata("saxpy", dir, "k");
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    for victim in ["bashrc", "victim.cu"] {
        std::fs::write(dir.join(victim), "precious").unwrap();
        std::fs::set_permissions(dir.join(victim), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::os::unix::fs::symlink(dir.join("bashrc"), out.join("build-k.sh")).unwrap();
    std::os::unix::fs::symlink(dir.join("victim.cu"), out.join("k_bench.cu")).unwrap();
    let m = run(
        "bench into a directory with planted links",
        dir,
        &["bench", "k.cu", "--out", "out"],
        &[],
    );
    assert_eq!(code(&m), 0, "{}", text(&m.out));
    for victim in ["bashrc", "victim.cu"] {
        assert_eq!(
            std::fs::read_to_string(dir.join(victim)).unwrap(),
            "precious"
        );
        let mode = std::fs::metadata(dir.join(victim))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644, "{victim}");
    }
    for written in ["build-k.sh", "k_bench.cu"] {
        let meta = std::fs::symlink_metadata(out.join(written)).unwrap();
        assert!(meta.file_type().is_file(), "{written} is a file now");
    }
    let script = std::fs::metadata(out.join("build-k.sh")).unwrap();
    assert_eq!(script.permissions().mode() & 0o111, 0o111);
    // An output directory that is itself a link is refused.
    std::fs::create_dir(dir.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("linked")).unwrap();
    let m = run(
        "bench --out a link to a directory",
        dir,
        &["bench", "k.cu", "--out", "linked"],
        &[],
    );
    assert_eq!(code(&m), 2, "{}", text(&m.out));
    assert!(
        stderr(&m).contains("linked: is a symbolic link"),
        "{}",
        stderr(&m)
    );
    assert_eq!(std::fs::read_dir(dir.join("elsewhere")).unwrap().count(), 0);
}

// ---- untrusted checkouts: an output never replaces an input ----

#[test]
fn an_output_onto_an_input_is_refused() {
    let scratch_dir = scratch("output-onto-input");
    let dir = scratch_dir.path();
    copy_testdata("saxpy", dir, "k");
    let before: Vec<(PathBuf, Vec<u8>)> = ["k.cu", "k.toml"]
        .iter()
        .map(|f| (dir.join(f), std::fs::read(dir.join(f)).unwrap()))
        .collect();
    for (case, args, input) in [
        (
            "optimize --report onto the source",
            &["optimize", "k.cu", "--report", "k.cu"][..],
            "k.cu",
        ),
        (
            "optimize --report onto the parameter file",
            &["optimize", "k.cu", "--report", "./k.toml"],
            "./k.toml",
        ),
        (
            "simulate --dump onto the parameter file",
            &["simulate", "k.cu", "--dump", "k.toml"],
            "k.toml",
        ),
        (
            "simulate --dump onto the source",
            &["simulate", "k.cu", "--dump", "k.cu"],
            "k.cu",
        ),
    ] {
        let m = run(case, dir, args, &[]);
        assert_eq!(code(&m), 2, "{case}: {}", text(&m.out));
        assert!(
            stderr(&m).contains(&format!("{input}: is an input of this run")),
            "{case}: {}",
            stderr(&m)
        );
        for (path, bytes) in &before {
            assert_eq!(
                &std::fs::read(path).unwrap(),
                bytes,
                "{case}: {}",
                path.display()
            );
        }
    }
}

// ---- untrusted checkouts: --write keeps permissions and hard links ----

#[cfg(unix)]
#[test]
fn write_refuses_read_only_and_hard_linked_files() {
    use std::os::unix::fs::PermissionsExt;
    let scratch_dir = scratch("write-perms");
    let dir = scratch_dir.path();
    let ro = copy_testdata("addSub0", dir, "ro");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let linked = copy_testdata("addSub0", dir, "linked");
    std::fs::hard_link(&linked, dir.join("other-name.cu")).unwrap();
    let before = std::fs::read_to_string(&ro).unwrap();
    let m = run(
        "optimize --write on a 0444 file and a hard-linked one",
        dir,
        &["optimize", "ro.cu", "linked.cu", "--write"],
        &[],
    );
    assert_eq!(code(&m), 1, "{}", text(&m.out));
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), before);
    assert_eq!(std::fs::read_to_string(&linked).unwrap(), before);
    let mode = std::fs::metadata(&ro).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&linked).unwrap().nlink(),
        2,
        "the links stay one file"
    );
    let err = stderr(&m);
    assert!(
        err.contains("ro.cu: not rewritten: it is read-only"),
        "{err}"
    );
    assert!(
        err.contains("linked.cu: not rewritten: it has 2 hard links"),
        "{err}"
    );
}
