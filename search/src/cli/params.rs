//! `copper params`: the parameter file copper would test a file's kernels
//! with — the parameter file beside it, the launch its host code
//! evaluates to, or a launch inferred from the kernel — written as TOML
//! with `#` comments saying where each part came from, for a user to read,
//! edit and save as `FILE.toml`.

use copper::shown::Shown;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::sim::params::{InitKind, LaunchSpec, ParamFile};
use copper_search::driver::params::{kernel_launch, kernel_names};

use super::output;
use super::settings::Settings;

/// Runs `copper params` on `file` (only kernel `only` when given). Exit
/// status: 0 when every kernel got a launch (one the original does not run
/// cleanly on says so in a comment and on stderr), 1 when some did not, 2
/// on bad input.
pub fn run(file: &Path, only: Option<&str>, s: &Settings) -> u8 {
    let (parsed, params) = match parse_with_params(file, s) {
        Ok(x) => x,
        Err(status) => return status,
    };
    let only = only.map(|k| parsed.kernel_name(k));
    let only = only.as_deref();
    let names = kernel_names(&parsed, only);
    if let Some(n) = only.filter(|_| names.is_empty()) {
        eprintln!("{}: error: no kernel named `{n}`", file.shown());
        return 2;
    }
    let mut out = format!(
        "# Parameter file for {}, written by `copper params`: the launch copper\n\
         # tests each kernel on. Edit it and save it beside the file as {}.\n",
        file.shown(),
        file.with_extension("toml")
            .file_name()
            .map_or_else(String::new, |n| Path::new(n).shown())
    );
    let mut status = 0;
    for name in names {
        let t = match kernel_launch(&parsed, &name, params.as_deref()) {
            Ok(t) => t,
            Err(d) => {
                output::diagnostic(&d);
                status = 1;
                continue;
            }
        };
        out.push('\n');
        for a in &t.assumptions {
            let _ = writeln!(out, "# {a}");
        }
        if let Some(why) = &t.unclean {
            let _ = writeln!(out, "# the original does not run cleanly on it: {why}");
            eprintln!("{}: kernel `{name}`: {why}", file.shown());
        }
        match t.spec {
            Some(s) => out.push_str(&toml_of(&name, &s)),
            None => {
                let _ = writeln!(out, "# kernel `{name}`: no launch could be built");
                status = 1;
            }
        }
    }
    print!("{out}");
    status
}

/// `file` parsed, and its parameter file (when there is one); `Err` is
/// the exit status after saying on stderr why either cannot be read.
pub(super) fn parse_with_params<'s>(
    file: &Path,
    s: &'s Settings,
) -> Result<(ParsedFile, Option<Cow<'s, ParamFile>>), u8> {
    let parsed = parse_path_with(file, &s.preprocess).map_err(|d| {
        output::diagnostic(&d);
        2
    })?;
    let params = s.params.of(file).map_err(|e| {
        eprintln!("copper: error: {e}");
        2
    })?;
    Ok((parsed, params))
}

/// A launch as a parameter-file table.
fn toml_of(name: &str, s: &LaunchSpec) -> String {
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let name = copper::sim::params::kernel_key(name);
    let mut out = format!(
        "[kernel.{name}]\ngrid = [{}]\nblock = [{}]\n",
        list(&s.grid),
        list(&s.block)
    );
    if s.shared_bytes > 0 {
        let _ = writeln!(out, "shared_bytes = {}", s.shared_bytes);
    }
    if !s.args.is_empty() {
        let _ = writeln!(out, "[kernel.{name}.args]");
        for (k, v) in &s.args {
            let _ = writeln!(out, "{k} = {}", number(*v));
        }
    }
    for (k, a) in &s.arrays {
        let _ = writeln!(out, "[kernel.{name}.arrays.{k}]");
        match &a.len_expr {
            Some(e) => {
                let _ = writeln!(out, "len = \"{e}\"");
            }
            None => {
                let _ = writeln!(out, "len = {}", a.len);
            }
        }
        match a.init {
            InitKind::Zero => out.push_str("init = \"zero\"\n"),
            InitKind::Random => {
                let _ = writeln!(
                    out,
                    "init = \"random\"\nseed = {}\nmin = {}\nmax = {}",
                    a.seed,
                    number(a.min),
                    number(a.max)
                );
            }
            InitKind::Const => {
                let _ = writeln!(out, "init = \"const\"\nvalue = {}", number(a.value));
            }
            InitKind::Values => {
                let values: Vec<String> = a.values.iter().map(|v| number(*v)).collect();
                let _ = writeln!(out, "init = \"values\"\nvalues = [{}]", values.join(", "));
            }
        }
    }
    out
}

/// A number as TOML writes it (an integer when it is one).
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:?}")
    }
}
