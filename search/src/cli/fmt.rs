//! `copper fmt`: print a file's kernels in copper's style.

use copper::shown::Shown;
use std::path::Path;

use copper::cuda::include::in_user_file;
use copper::cuda::parse::parse_path_with;
use copper::cuda::print;
use copper::cuda::rewrite::{kept_as_written, named_template_structs, rewrite_functions};

use super::output;
use super::settings::Settings;

/// Runs `copper fmt` on `file`: the functions (or only `only`), or with
/// `whole` the whole file with every function that parsed reprinted.
pub fn run(file: &Path, only: Option<&str>, whole: bool, s: &Settings) -> u8 {
    let parsed = match parse_path_with(file, &s.preprocess) {
        Ok(p) => p,
        Err(d) => {
            output::diagnostic(&d);
            return 2;
        }
    };
    let mut status = 0;
    if whole {
        // A struct's member functions stay as written, in their struct.
        let funcs: Vec<_> = (parsed.functions.iter())
            .filter(|f| f.item.owner.is_none())
            .filter_map(|f| f.result.as_ref().ok())
            .cloned()
            .collect();
        for d in parsed.all_diagnostics() {
            output::diagnostic(&d);
            status = 1;
        }
        for f in parsed
            .extracted
            .functions
            .iter()
            .filter(|f| in_user_file(f.span))
        {
            let text = parsed.source.slice(f.span);
            let why = kept_as_written(text).map(str::to_string).or_else(|| {
                let t = named_template_structs(&parsed, text);
                (!t.is_empty()).then(|| format!("it names the template struct `{}`", t[0]))
            });
            if let Some(why) = why {
                let (path, line, col) = parsed.source.locate(f.span.start);
                eprintln!(
                    "{}:{line}:{col}: note: `{}` is printed as written: {why}",
                    path.shown(),
                    f.name
                );
            }
        }
        print!("{}", rewrite_functions(&parsed, &funcs));
        return status;
    }
    let mut printed = Vec::new();
    for f in parsed
        .functions
        .iter()
        .filter(|f| in_user_file(f.item.span))
    {
        if only.is_some_and(|n| n != f.item.name) {
            continue;
        }
        match &f.result {
            // A struct's member function, as written (copper reads it with
            // its object as a parameter).
            Ok(_) if f.item.owner.is_some() => {
                printed.push(parsed.source.slice(f.item.span).to_string())
            }
            // A function naming a template struct, as written (a reprint
            // would write its instances' struct names).
            Ok(_)
                if !named_template_structs(&parsed, parsed.source.slice(f.item.span))
                    .is_empty() =>
            {
                printed.push(parsed.source.slice(f.item.span).to_string())
            }
            Ok(func) => printed.push(print::function(func)),
            Err(d) => {
                output::diagnostic(d);
                status = 1;
            }
        }
    }
    if let Some(name) = only {
        let own = |f: &&copper::cuda::parse::ParsedFunction| in_user_file(f.item.span);
        if !parsed
            .functions
            .iter()
            .filter(own)
            .any(|f| f.item.name == name)
        {
            eprintln!(
                "{}: error: no kernel or device function named `{name}`",
                file.shown()
            );
            return 2;
        }
    }
    println!("{}", printed.join("\n\n"));
    status
}
